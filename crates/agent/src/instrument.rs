//! Bytecode instrumentation for staleness watching: a call to a static hook
//! (`hook(Object)`, with `this`) at the entry of every instance method of a class, and before
//! every `return` of its constructors, so that an object's clock starts when it is created.
//!
//! The rewrite inserts `aload_0; invokestatic #hook` (4 bytes) in front of each method's
//! code, so every instruction moves by the same 4 bytes. That keeps it small and safe:
//! branch and switch offsets are relative and stay valid; `tableswitch`/`lookupswitch`
//! padding depends on the offset modulo 4, which a shift of 4 keeps; only absolute offsets
//! move (exception table, line numbers, local variable ranges, the first `StackMapTable`
//! frame). The inserted code runs in the method's implicit initial frame (empty stack, `this`
//! in local 0), so no frame is added. Static, abstract and native methods are left alone, as
//! are methods whose code would outgrow 65535 bytes. Constant pool entries for the hook are
//! appended.
//!
//! A constructor's `this` is uninitialised until the super call, so its hook goes in front of
//! each `return` instead, where the verifier has proved `this` initialised. Those insertions
//! move later code by different amounts, so every code offset is mapped: branch offsets,
//! the exception table, line and local variable tables, and the `StackMapTable`, decoded and
//! re-encoded with its `Uninitialized(offset)` types moved too. A branch to a `return` lands on
//! the hook in front of it. Constructors the mapping cannot keep simple are left alone: with a
//! `tableswitch` or `lookupswitch` (their padding would change), `jsr`/`ret`, a store to local
//! 0 (then `this` might not be in it at the return), or a branch that would no longer fit.

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

/// The static methods called with `this`: class (internal form) and names; both take
/// `(Ljava/lang/Object;)V`.
#[derive(Debug, Clone, Copy)]
pub struct Hook<'a> {
    /// Owner, as `io/leakscope/LeakScope`.
    pub class: &'a str,
    /// Called at the entry of instance methods.
    pub entry: &'a str,
    /// Called before a constructor returns.
    pub created: &'a str,
}

/// The hooks of leakscope's Java API jar (`io.leakscope.LeakScope.touched` and `created`).
pub const LEAKSCOPE_HOOK: Hook<'static> =
    Hook { class: "io/leakscope/LeakScope", entry: "touched", created: "created" };

/// The hook's descriptor.
const HOOK_DESC: &str = "(Ljava/lang/Object;)V";

const ACC_STATIC: u16 = 0x0008;
const ACC_NATIVE: u16 = 0x0100;
const ACC_ABSTRACT: u16 = 0x0400;
const ALOAD_0: u8 = 0x2a;
const INVOKESTATIC: u8 = 0xb8;
const RETURN: u8 = 0xb1;
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

/// The class file with a call to `hook.entry` at the entry of every instance method with code
/// and to `hook.created` before each return of its constructors, and how many methods got
/// one; `None` when no method qualifies (the class is left as it is).
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
    if pool_count > u16::MAX - 9 {
        return Err(ClassError::PoolFull);
    }
    // The hooks' entries: Utf8 class, Class, Utf8 name, Utf8 descriptor, NameAndType, Methodref,
    // and for the constructors' hook Utf8 name, NameAndType, Methodref.
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
    utf8(&mut extra, hook.entry);
    utf8(&mut extra, HOOK_DESC);
    extra.push(12);
    put2(&mut extra, base + 2);
    put2(&mut extra, base + 3);
    extra.push(10);
    put2(&mut extra, base + 1);
    put2(&mut extra, base + 4);
    let methodref = base + 5;
    utf8(&mut extra, hook.created);
    extra.push(12);
    put2(&mut extra, base + 6);
    put2(&mut extra, base + 3);
    extra.push(10);
    put2(&mut extra, base + 1);
    put2(&mut extra, base + 7);
    let created_ref = base + 8;

    let mut out = Vec::with_capacity(class.len() + extra.len() + 64);
    out.extend_from_slice(&class[..8]);
    put2(&mut out, pool_count + 9);
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
        let method_name = utf8_at.get(name as usize).cloned().flatten().map(|n| &class[n]);
        let constructor = method_name == Some(b"<init>".as_slice());
        let eligible = access & (ACC_STATIC | ACC_NATIVE | ACC_ABSTRACT) == 0
            && (constructor || !method_name.is_some_and(|n| n.starts_with(b"<")));
        let attrs = r.u2()?;
        put2(&mut out, attrs);
        for _ in 0..attrs {
            let attr_name = r.u2()?;
            let len = r.u4()? as usize;
            let body = r.bytes(len)?;
            put2(&mut out, attr_name);
            let rewrite = |body| match constructor {
                true => rewrite_constructor(body, created_ref, &names),
                false => rewrite_code(body, methodref, &names),
            };
            match (attr_name == code_name && eligible).then(|| rewrite(body)).transpose()? {
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
    map_tables(&mut r, &mut out, names, &|pc: u16| pc.checked_add(SHIFT).ok_or(ClassError::BadOffset(pc)))?;
    Ok(Some(out))
}

/// The rest of a `Code` attribute after its code, read from `r` onto `out` with every code
/// offset moved by `map`: the exception table, and the stack map, line and local variable
/// tables. A local variable range from 0 (`this`, the parameters) stays at 0 and grows to
/// cover what was inserted there; the others move.
fn map_tables(r: &mut In<'_>, out: &mut Vec<u8>, names: &Names, map: &impl Fn(u16) -> R<u16>) -> R<()> {
    let handlers = r.u2()?;
    put2(out, handlers);
    for _ in 0..handlers {
        for _ in 0..3 {
            put2(out, map(r.u2()?)?);
        }
        put2(out, r.u2()?); // catch type
    }
    let attrs = r.u2()?;
    put2(out, attrs);
    for _ in 0..attrs {
        let name = r.u2()?;
        let len = r.u4()? as usize;
        let a = r.bytes(len)?;
        let body = if Some(name) == names.stack_map {
            map_stack_map(a, map)?
        } else if Some(name) == names.lines {
            shift_table(a, 4, |e| {
                e[0] = map(e[0])?;
                Ok(())
            })?
        } else if Some(name) == names.locals || Some(name) == names.local_types {
            shift_table(a, 10, |e| {
                let end = e[0].checked_add(e[1]).ok_or(ClassError::BadOffset(e[0]))?;
                let start = if e[0] == 0 { 0 } else { map(e[0])? };
                e[1] = map(end)? - start;
                e[0] = start;
                Ok(())
            })?
        } else {
            a.to_vec()
        };
        put2(out, name);
        put4(out, body.len() as u32);
        out.extend_from_slice(&body);
    }
    Ok(())
}

/// The length of the instruction at `pc`, or `None` for one a constructor's rewrite leaves
/// alone (switches, `jsr`, `ret`, a store to local 0) or that no class file may hold.
fn constructor_insn_len(code: &[u8], pc: usize) -> Option<usize> {
    let op = *code.get(pc)?;
    let len = match op {
        0x3a if code.get(pc + 1) == Some(&0) => return None, // astore 0
        0x4b => return None,                                 // astore_0
        0xa8 | 0xa9 | 0xaa | 0xab | 0xc9 => return None,     // jsr, ret, tableswitch, lookupswitch, jsr_w
        0xc4 => match code.get(pc + 1)? {
            0x84 => 6,                                                  // wide iinc
            0x3a if code.get(pc + 2..pc + 4)? == [0, 0] => return None, // wide astore 0
            0x15..=0x19 | 0x36..=0x3a => 4,
            _ => return None,
        },
        0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3a | 0xbc => 2,
        0x11 | 0x13 | 0x14 | 0x84 | 0x99..=0xa7 | 0xb2..=0xb8 | 0xbb | 0xbd | 0xc0 | 0xc1 | 0xc6 | 0xc7 => 3,
        0xc5 => 4,
        0xb9 | 0xba | 0xc8 => 5,
        0x00..=0xc3 => 1,
        _ => return None,
    };
    (pc + len <= code.len()).then_some(len)
}

/// A constructor's `Code` body with the hook call in front of each `return`; `None` when it
/// has no `return` or its shape is one [`constructor_insn_len`] refuses.
fn rewrite_constructor(body: &[u8], methodref: u16, names: &Names) -> R<Option<Vec<u8>>> {
    let mut r = In::new(body);
    let max_stack = r.u2()?;
    let max_locals = r.u2()?;
    let code_len = r.u4()? as usize;
    let code = r.bytes(code_len)?;
    let mut insns = Vec::new();
    let mut pc = 0;
    while pc < code_len {
        let Some(len) = constructor_insn_len(code, pc) else { return Ok(None) };
        insns.push((pc, len));
        pc += len;
    }
    let returns: Vec<usize> = insns.iter().filter(|&&(pc, _)| code[pc] == RETURN).map(|&(pc, _)| pc).collect();
    let grown = code_len + SHIFT as usize * returns.len();
    if returns.is_empty() || grown > 65535 || max_stack == u16::MAX {
        return Ok(None);
    }
    // Where old offset `pc` lands: after the hooks of the returns before it (a `return` itself
    // lands on its hook). Offsets past the code (`end_pc`) map like the end.
    let map = |pc: usize| pc + SHIFT as usize * returns.partition_point(|&ret| ret < pc);
    let map16 = |pc: u16| -> R<u16> { u16::try_from(map(usize::from(pc))).map_err(|_| ClassError::BadOffset(pc)) };
    let mut out = Vec::with_capacity(body.len() + 16 + SHIFT as usize * returns.len());
    // The hook needs one stack slot on top of whatever the return left there.
    put2(&mut out, max_stack + 1);
    put2(&mut out, max_locals);
    put4(&mut out, grown as u32);
    for &(pc, len) in &insns {
        let op = code[pc];
        if op == RETURN {
            out.push(ALOAD_0);
            out.push(INVOKESTATIC);
            put2(&mut out, methodref);
        }
        let at = out.len();
        out.extend_from_slice(&code[pc..pc + len]);
        let relocate = |offset: i64| -> Option<i64> {
            let target = usize::try_from(pc as i64 + offset).ok()?;
            Some(map(target) as i64 - map(pc) as i64)
        };
        match op {
            0x99..=0xa7 | 0xc6 | 0xc7 => {
                let old = i64::from(i16::from_be_bytes([code[pc + 1], code[pc + 2]]));
                let Some(new) = relocate(old).and_then(|n| i16::try_from(n).ok()) else { return Ok(None) };
                out[at + 1..at + 3].copy_from_slice(&new.to_be_bytes());
            }
            0xc8 => {
                let old = i64::from(i32::from_be_bytes([code[pc + 1], code[pc + 2], code[pc + 3], code[pc + 4]]));
                let Some(new) = relocate(old).and_then(|n| i32::try_from(n).ok()) else { return Ok(None) };
                out[at + 1..at + 5].copy_from_slice(&new.to_be_bytes());
            }
            _ => {}
        }
    }
    map_tables(&mut r, &mut out, names, &map16)?;
    Ok(Some(out))
}

/// A verification type, its `Uninitialized(offset)` moved by `map`.
fn map_verification_type(r: &mut In<'_>, out: &mut Vec<u8>, map: &impl Fn(u16) -> R<u16>) -> R<()> {
    let tag = r.u1()?;
    out.push(tag);
    match tag {
        0..=6 => {}
        7 => put2(out, r.u2()?),
        8 => put2(out, map(r.u2()?)?),
        other => return Err(ClassError::BadFrame(other)),
    }
    Ok(())
}

/// The `StackMapTable` with every frame's offset (absolute, then re-encoded as deltas) and
/// every `Uninitialized` offset moved by `map`. Deltas only grow, so a compact frame whose
/// delta no longer fits its tag becomes the extended form.
fn map_stack_map(a: &[u8], map: &impl Fn(u16) -> R<u16>) -> R<Vec<u8>> {
    let mut r = In::new(a);
    let n = r.u2()?;
    let mut out = Vec::with_capacity(a.len() + 16);
    put2(&mut out, n);
    let (mut old_at, mut new_at): (Option<u16>, Option<u16>) = (None, None);
    for _ in 0..n {
        let ty = r.u1()?;
        let delta = match ty {
            0..=63 => u16::from(ty),
            64..=127 => u16::from(ty - 64),
            247..=255 => r.u2()?,
            other => return Err(ClassError::BadFrame(other)),
        };
        let old = match old_at {
            None => delta,
            Some(prev) => prev.checked_add(delta).and_then(|o| o.checked_add(1)).ok_or(ClassError::BadOffset(prev))?,
        };
        let new = map(old)?;
        let new_delta = match new_at {
            None => new,
            Some(prev) => new.checked_sub(prev + 1).ok_or(ClassError::BadOffset(old))?,
        };
        (old_at, new_at) = (Some(old), Some(new));
        match ty {
            0..=63 if new_delta <= 63 => out.push(new_delta as u8),
            0..=63 => {
                out.push(251); // same_frame_extended
                put2(&mut out, new_delta);
            }
            64..=127 if new_delta <= 63 => out.push(64 + new_delta as u8),
            64..=127 => {
                out.push(247); // same_locals_1_stack_item_frame_extended
                put2(&mut out, new_delta);
            }
            _ => {
                out.push(ty);
                put2(&mut out, new_delta);
            }
        }
        let types = match ty {
            64..=127 | 247 => 1,
            252..=254 => usize::from(ty - 251),
            255 => {
                let locals = r.u2()?;
                put2(&mut out, locals);
                for _ in 0..locals {
                    map_verification_type(&mut r, &mut out, map)?;
                }
                let stack = r.u2()?;
                put2(&mut out, stack);
                usize::from(stack)
            }
            _ => 0,
        };
        for _ in 0..types {
            map_verification_type(&mut r, &mut out, map)?;
        }
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    const HOOK: Hook<'static> = LEAKSCOPE_HOOK;

    #[test]
    fn entry_hook_frames_move_by_four_and_compact_ones_grow_into_extended_ones() {
        let entry = |pc: u16| Ok(pc + SHIFT);
        assert_eq!(map_stack_map(&[0, 1, 10], &entry).unwrap(), vec![0, 1, 14]);
        assert_eq!(map_stack_map(&[0, 1, 62], &entry).unwrap(), vec![0, 1, 251, 0, 66]);
        assert_eq!(map_stack_map(&[0, 2, 64 + 61, 1, 3], &entry).unwrap(), vec![0, 2, 247, 0, 65, 1, 3]);
        // The second frame is relative to the first: it does not move again. A `new` at 5
        // on the stack (Uninitialized(5)) is at 9 once the hook is in front.
        assert_eq!(map_stack_map(&[0, 2, 3, 64 + 2, 8, 0, 5], &entry).unwrap(), vec![0, 2, 7, 64 + 2, 8, 0, 9]);
        assert_eq!(map_stack_map(&[0, 1, 200], &entry), Err(ClassError::BadFrame(200)));
    }

    #[test]
    fn constructor_frames_and_uninitialized_types_move_with_the_code() {
        // Returns at 5 and 9: code from 6 moves by 4, from 10 by 8.
        let map = |pc: u16| Ok(pc + 4 * u16::from(pc > 5) + 4 * u16::from(pc > 9));
        // same_frame at 3; same_locals_1 at 7 holding Uninitialized(6); full frame at 12.
        let table = [0, 3, 3, 64 + 3, 8, 0, 6, 255, 0, 4, 0, 1, 7, 0, 9, 0, 0];
        let moved = map_stack_map(&table, &map).unwrap();
        assert_eq!(moved, vec![0, 3, 3, 64 + 7, 8, 0, 10, 255, 0, 8, 0, 1, 7, 0, 9, 0, 0]);
        // A delta pushed past 63 takes the extended form.
        let far = |pc: u16| Ok(if pc > 5 { pc + 60 } else { pc });
        assert_eq!(map_stack_map(&[0, 2, 3, 10], &far).unwrap(), vec![0, 2, 3, 251, 0, 70]);
    }

    #[test]
    fn constructors_with_switches_or_a_store_to_this_are_left_alone() {
        assert_eq!(constructor_insn_len(&[0xaa], 0), None);
        assert_eq!(constructor_insn_len(&[0x4b], 0), None);
        assert_eq!(constructor_insn_len(&[0x3a, 0], 0), None);
        assert_eq!(constructor_insn_len(&[0x3a, 1], 0), Some(2));
        assert_eq!(constructor_insn_len(&[0xc4, 0x84, 0, 1, 0, 1], 0), Some(6));
        assert_eq!(constructor_insn_len(&[0xb7, 0], 0), None, "truncated");
        assert_eq!(constructor_insn_len(&[0xfe], 0), None, "reserved");
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
