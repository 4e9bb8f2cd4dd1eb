//! Bytecode instrumentation for staleness watching: a call to a static hook
//! (`hook(Object)`, with `this`) at the entry of every instance method of a class.
//!
//! The rewrite inserts `aload_0; invokestatic #hook` (4 bytes) in front of each method's
//! code, so every instruction moves by the same 4 bytes. That keeps it small and safe:
//! branch and switch offsets are relative and stay valid; `tableswitch`/`lookupswitch`
//! padding depends on the offset modulo 4, which a shift of 4 keeps; only absolute offsets
//! move (exception table, line numbers, local variable ranges, the first `StackMapTable`
//! frame). The inserted code runs in the method's implicit initial frame (empty stack, `this`
//! in local 0), so no frame is added. Constructors (whose `this` is uninitialised until the
//! super call), static, abstract and native methods are left alone, as are methods whose
//! code would outgrow 65535 bytes. Constant pool entries for the hook are appended.

use thiserror::Error;

/// Why a class file could not be instrumented; the class is then loaded unchanged.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ClassError {
    /// The bytes end before a structure does.
    #[error("class file truncated at byte {0}")]
    Truncated(usize),
    /// Not a class file.
    #[error("not a class file (bad magic)")]
    BadMagic,
    /// A constant pool tag this reader does not know (a newer class file format).
    #[error("unknown constant pool tag {tag} at byte {at}")]
    UnknownConstant {
        /// The tag.
        tag: u8,
        /// Its offset.
        at: usize,
    },
    /// The constant pool has no room for the hook's six entries.
    #[error("constant pool full")]
    PoolFull,
    /// A `StackMapTable` frame type reserved by the JVM specification.
    #[error("reserved stack map frame type {0}")]
    BadFrame(u8),
    /// A code offset that no method can have: moved by the hook, it would pass 65535.
    #[error("code offset {0} out of range")]
    BadOffset(u16),
}

type R<T> = Result<T, ClassError>;

/// The static method called at method entry: class (internal form), name, descriptor
/// (which must be `(Ljava/lang/Object;)V`).
#[derive(Debug, Clone, Copy)]
pub struct Hook<'a> {
    /// Owner, as `io/leakscope/LeakScope`.
    pub class: &'a str,
    /// Method name.
    pub name: &'a str,
}

/// The hook's descriptor.
const HOOK_DESC: &str = "(Ljava/lang/Object;)V";

const ACC_STATIC: u16 = 0x0008;
const ACC_NATIVE: u16 = 0x0100;
const ACC_ABSTRACT: u16 = 0x0400;
const ALOAD_0: u8 = 0x2a;
const INVOKESTATIC: u8 = 0xb8;
const SHIFT: u16 = 4;

/// The class-file reader: HPROF's cursor, which cannot panic (both formats are big-endian),
/// with a short read turned into this module's error at its offset.
struct In<'a> {
    c: hprof::Cursor<'a>,
}

impl<'a> In<'a> {
    fn new(b: &'a [u8]) -> In<'a> {
        In { c: hprof::Cursor::new(b, 0, hprof::IdSize::Four) }
    }
    fn at(&self) -> usize {
        self.c.offset() as usize
    }
    fn short(&self) -> ClassError {
        ClassError::Truncated(self.at())
    }
    fn bytes(&mut self, n: usize) -> R<&'a [u8]> {
        let at = self.at();
        self.c.bytes(n).map_err(|_| ClassError::Truncated(at))
    }
    fn u1(&mut self) -> R<u8> {
        self.c.u1().map_err(|_| self.short())
    }
    fn u2(&mut self) -> R<u16> {
        self.c.u2().map_err(|_| self.short())
    }
    fn u4(&mut self) -> R<u32> {
        self.c.u4().map_err(|_| self.short())
    }
}

/// Code offset `pc` once the hook is in front of the code.
fn shifted(pc: u16) -> R<u16> {
    pc.checked_add(SHIFT).ok_or(ClassError::BadOffset(pc))
}

fn put2(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put4(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Names of the attributes the rewrite must change, as constant pool indices.
#[derive(Default)]
struct Names {
    code: Option<u16>,
    stack_map: Option<u16>,
    lines: Option<u16>,
    locals: Option<u16>,
    local_types: Option<u16>,
}

/// The class file with a call to `hook` at the entry of every instance method with code, and
/// how many methods got one; `None` when no method qualifies (the class is left as it is).
pub fn add_entry_hooks(class: &[u8], hook: Hook<'_>) -> R<Option<(Vec<u8>, usize)>> {
    let mut r = In::new(class);
    if r.u4()? != 0xCAFE_BABE {
        return Err(ClassError::BadMagic);
    }
    r.bytes(4)?; // minor, major
    let pool_count = r.u2()?;
    let pool_start = r.at();
    let mut names = Names::default();
    // Where each Utf8 entry's bytes are, by index: method names are looked up later.
    let mut utf8_at: Vec<Option<std::ops::Range<usize>>> = vec![None; pool_count as usize];
    // Long and double constants take two slots: the index can step past the last one.
    let mut i: u32 = 1;
    while i < u32::from(pool_count) {
        let at = r.at();
        let tag = r.u1()?;
        match tag {
            1 => {
                let len = r.u2()? as usize;
                utf8_at[i as usize] = Some(r.at()..r.at() + len);
                let s = r.bytes(len)?;
                let slot = match s {
                    b"Code" => Some(&mut names.code),
                    b"StackMapTable" => Some(&mut names.stack_map),
                    b"LineNumberTable" => Some(&mut names.lines),
                    b"LocalVariableTable" => Some(&mut names.locals),
                    b"LocalVariableTypeTable" => Some(&mut names.local_types),
                    _ => None,
                };
                if let Some(slot) = slot {
                    slot.get_or_insert(i as u16);
                }
            }
            3 | 4 | 9 | 10 | 11 | 12 | 17 | 18 => {
                r.bytes(4)?;
            }
            5 | 6 => {
                r.bytes(8)?;
                i += 1;
            }
            7 | 8 | 16 | 19 | 20 => {
                r.bytes(2)?;
            }
            15 => {
                r.bytes(3)?;
            }
            tag => return Err(ClassError::UnknownConstant { tag, at }),
        }
        i += 1;
    }
    let pool_end = r.at();
    let Some(code_name) = names.code else { return Ok(None) };
    if pool_count > u16::MAX - 6 {
        return Err(ClassError::PoolFull);
    }
    // The hook's entries: Utf8 class, Class, Utf8 name, Utf8 descriptor, NameAndType, Methodref.
    let mut extra = Vec::new();
    let utf8 = |out: &mut Vec<u8>, s: &str| {
        out.push(1);
        put2(out, s.len() as u16);
        out.extend_from_slice(s.as_bytes());
    };
    let base = pool_count;
    utf8(&mut extra, hook.class);
    extra.push(7);
    put2(&mut extra, base);
    utf8(&mut extra, hook.name);
    utf8(&mut extra, HOOK_DESC);
    extra.push(12);
    put2(&mut extra, base + 2);
    put2(&mut extra, base + 3);
    extra.push(10);
    put2(&mut extra, base + 1);
    put2(&mut extra, base + 4);
    let methodref = base + 5;

    let mut out = Vec::with_capacity(class.len() + extra.len() + 64);
    out.extend_from_slice(&class[..8]);
    put2(&mut out, pool_count + 6);
    out.extend_from_slice(&class[pool_start..pool_end]);
    out.extend_from_slice(&extra);
    // access, this, super, interfaces
    let head_start = r.at();
    r.bytes(6)?;
    let interfaces = r.u2()? as usize;
    r.bytes(interfaces * 2)?;
    skip_members(&mut r)?; // fields
    out.extend_from_slice(&class[head_start..r.at()]);
    let methods = r.u2()?;
    put2(&mut out, methods);
    let mut hooked = 0;
    for _ in 0..methods {
        let access = r.u2()?;
        let name = r.u2()?;
        let desc = r.u2()?;
        put2(&mut out, access);
        put2(&mut out, name);
        put2(&mut out, desc);
        let is_init = utf8_at.get(name as usize).cloned().flatten().is_some_and(|n| class[n].starts_with(b"<"));
        let eligible = access & (ACC_STATIC | ACC_NATIVE | ACC_ABSTRACT) == 0 && !is_init;
        let attrs = r.u2()?;
        put2(&mut out, attrs);
        for _ in 0..attrs {
            let attr_name = r.u2()?;
            let len = r.u4()? as usize;
            let body = r.bytes(len)?;
            put2(&mut out, attr_name);
            match (attr_name == code_name && eligible).then(|| rewrite_code(body, methodref, &names)).transpose()? {
                Some(Some(code)) => {
                    put4(&mut out, code.len() as u32);
                    out.extend_from_slice(&code);
                    hooked += 1;
                }
                _ => {
                    put4(&mut out, len as u32);
                    out.extend_from_slice(body);
                }
            }
        }
    }
    // Class attributes, unchanged.
    out.extend_from_slice(&class[r.at()..]);
    Ok((hooked > 0).then_some((out, hooked)))
}

fn skip_members(r: &mut In<'_>) -> R<()> {
    let n = r.u2()?;
    for _ in 0..n {
        r.bytes(6)?;
        let attrs = r.u2()?;
        for _ in 0..attrs {
            r.bytes(2)?;
            let len = r.u4()? as usize;
            r.bytes(len)?;
        }
    }
    Ok(())
}

/// A `Code` attribute's body with the hook call in front; `None` if the code would be too long.
fn rewrite_code(body: &[u8], methodref: u16, names: &Names) -> R<Option<Vec<u8>>> {
    let mut r = In::new(body);
    let max_stack = r.u2()?;
    let max_locals = r.u2()?;
    let code_len = r.u4()? as usize;
    let code = r.bytes(code_len)?;
    if code_len + SHIFT as usize > 65535 {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(body.len() + 16);
    put2(&mut out, max_stack.max(1));
    put2(&mut out, max_locals);
    put4(&mut out, (code_len + SHIFT as usize) as u32);
    out.push(ALOAD_0);
    out.push(INVOKESTATIC);
    put2(&mut out, methodref);
    out.extend_from_slice(code);
    let handlers = r.u2()?;
    put2(&mut out, handlers);
    for _ in 0..handlers {
        for _ in 0..3 {
            put2(&mut out, shifted(r.u2()?)?);
        }
        put2(&mut out, r.u2()?); // catch type
    }
    let attrs = r.u2()?;
    put2(&mut out, attrs);
    for _ in 0..attrs {
        let name = r.u2()?;
        let len = r.u4()? as usize;
        let a = r.bytes(len)?;
        let body = if Some(name) == names.stack_map {
            shift_stack_map(a)?
        } else if Some(name) == names.lines {
            shift_table(a, 4, |e| {
                e[0] = shifted(e[0])?;
                Ok(())
            })?
        } else if Some(name) == names.locals || Some(name) == names.local_types {
            // start_pc, length, name, descriptor, index: a range from 0 (`this`, the
            // parameters) grows to cover the hook; the others move.
            shift_table(a, 10, |e| {
                if e[0] == 0 {
                    e[1] = shifted(e[1])?;
                } else {
                    e[0] = shifted(e[0])?;
                }
                Ok(())
            })?
        } else {
            a.to_vec()
        };
        put2(&mut out, name);
        put4(&mut out, body.len() as u32);
        out.extend_from_slice(&body);
    }
    Ok(Some(out))
}

/// A table of `u2 count` entries of `size` bytes, with `f` applied to each entry's first two
/// u2 fields.
fn shift_table(a: &[u8], size: usize, f: impl Fn(&mut [u16; 2]) -> R<()>) -> R<Vec<u8>> {
    let mut r = In::new(a);
    let n = r.u2()?;
    let mut out = Vec::with_capacity(a.len());
    put2(&mut out, n);
    for _ in 0..n {
        let mut e = [r.u2()?, r.u2()?];
        f(&mut e)?;
        put2(&mut out, e[0]);
        put2(&mut out, e[1]);
        out.extend_from_slice(r.bytes(size - 4)?);
    }
    Ok(out)
}

/// The `StackMapTable` with its first frame 4 bytes later: the others are relative to it.
/// A compact first frame whose delta no longer fits its tag becomes the extended form.
fn shift_stack_map(a: &[u8]) -> R<Vec<u8>> {
    let mut r = In::new(a);
    let n = r.u2()?;
    let mut out = Vec::with_capacity(a.len() + 2);
    put2(&mut out, n);
    if n == 0 {
        return Ok(out);
    }
    let ty = r.u1()?;
    match ty {
        0..=63 => {
            let delta = u16::from(ty) + SHIFT;
            if delta <= 63 {
                out.push(delta as u8);
            } else {
                out.push(251); // same_frame_extended
                put2(&mut out, delta);
            }
        }
        64..=127 => {
            let delta = u16::from(ty - 64) + SHIFT;
            if delta <= 63 {
                out.push(64 + delta as u8);
            } else {
                out.push(247); // same_locals_1_stack_item_frame_extended
                put2(&mut out, delta);
            }
        }
        247..=255 => {
            out.push(ty);
            put2(&mut out, shifted(r.u2()?)?);
        }
        other => return Err(ClassError::BadFrame(other)),
    }
    // The rest of the first frame and every later frame are unchanged.
    out.extend_from_slice(&a[r.at()..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOOK: Hook<'static> = Hook { class: "io/leakscope/LeakScope", name: "touched" };

    #[test]
    fn compact_first_frames_grow_into_extended_ones() {
        assert_eq!(shift_stack_map(&[0, 1, 10]).unwrap(), vec![0, 1, 14]);
        assert_eq!(shift_stack_map(&[0, 1, 62]).unwrap(), vec![0, 1, 251, 0, 66]);
        assert_eq!(shift_stack_map(&[0, 2, 64 + 61, 1, 3]).unwrap(), vec![0, 2, 247, 0, 65, 1, 3]);
        assert_eq!(shift_stack_map(&[0, 1, 255, 0, 7, 9]).unwrap(), vec![0, 1, 255, 0, 11, 9]);
        assert_eq!(shift_stack_map(&[0, 1, 200]), Err(ClassError::BadFrame(200)));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert_eq!(add_entry_hooks(b"nope", HOOK), Err(ClassError::BadMagic));
        assert_eq!(add_entry_hooks(&[0xCA, 0xFE, 0xBA, 0xBE, 0, 0], HOOK), Err(ClassError::Truncated(4)));
        let mut bad = vec![0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61, 0, 2, 99];
        assert_eq!(add_entry_hooks(&bad, HOOK), Err(ClassError::UnknownConstant { tag: 99, at: 10 }));
        bad.truncate(10);
        assert_eq!(add_entry_hooks(&bad, HOOK), Err(ClassError::Truncated(10)));
    }
}
