//! The dump's symbols (its UTF8 records): which are written, and with `--names`, the
//! application's class, field and method names replaced by pseudonyms.
//!
//! HotSpot writes its whole symbol table, not only the names the dump's records use: on a
//! small program 43,866 of 44,980 symbols were referenced by nothing, and among them were the
//! string literals of every loaded class (`"ghp_"`, `"jdbc:"`, any password written in the
//! code). No reader needs a symbol nothing references, so the copy leaves them out.
//!
//! Pseudonyms are per identifier (`com.example.Session$Entry` → `com.nq4…$Cb7…`, the same
//! `example` in every name), keyed, so one key gives the same pseudonyms in every dump of a
//! series. Names of the JDK and of the frameworks the analyses know by name stay (they are
//! public, and `growth` tells the application's frames from a framework's by them), and so
//! do the packages they share with the application (`com`, `org.apache`).

use std::collections::BTreeMap;

use hprof::{ClassDump, Record, Records};
use rustc_hash::{FxHashMap, FxHashSet};

use heap::DumpIndex;

/// Identifier parts the JVM or javac made, kept: synthetic fields (`this$0`, `val$x`),
/// constructors, lambdas, accessors, the static HotSpot adds for a constant pool.
const MARKERS: [&str; 9] =
    ["this", "val", "arg", "init", "clinit", "lambda", "Lambda", "access", "resolved_references"];

/// Pseudonyms are one letter and this many base-32 characters (50 bits).
const PSEUDONYM_CHARS: usize = 10;

/// What the copy writes for the dump's symbols.
#[derive(Debug, Default)]
pub(crate) struct Symbols {
    /// Symbols written with another text (every use renamed alike): id → text.
    pub rewrite: FxHashMap<u64, Vec<u8>>,
    /// Symbols written as they are.
    pub keep: FxHashSet<u64>,
    /// Symbols added, written first: a pseudonym for a symbol that a kept name shares (a
    /// field `value` of the application and `String.value` are one symbol).
    pub added: Vec<(u64, Vec<u8>)>,
    /// LOAD_CLASS name ids that change: class id → new name id.
    pub class_names: FxHashMap<u64, u64>,
    /// STACK_FRAME ids that change: frame id → (method name, signature, source file).
    pub frames: FxHashMap<u64, (u64, u64, u64)>,
    /// Field name ids that change in the class dumps of renamed classes: old → new.
    pub fields: FxHashMap<u64, u64>,
    /// Classes whose field names are renamed.
    pub renamed_classes: FxHashSet<u64>,
    /// Pseudonym → the identifier it stands for.
    pub pseudonyms: BTreeMap<String, String>,
}

/// What `--names` needs: the pseudonyms' key, and which classes keep their names.
pub(crate) type NamesKey<'a> = (&'a [u8; 32], &'a dyn Fn(&str) -> bool);

/// How one symbol is used: as it is, and with which replacements.
#[derive(Debug, Default)]
struct Uses {
    kept: bool,
    renamed: Vec<Vec<u8>>,
}

/// A pseudonym collided with another identifier's (a chance of about 2^-50 per pair).
#[derive(Debug)]
pub(crate) struct Collision(pub String, pub String);

/// Makes the pseudonyms: one per identifier, keyed.
struct Namer<'k> {
    key: &'k [u8; 32],
    /// Prefixes of platform classes' packages (`com`, `org.apache`): shared, kept.
    platform_packages: FxHashSet<String>,
    pseudonyms: BTreeMap<String, String>,
    collision: Option<Collision>,
}

impl Namer<'_> {
    fn pseudonym(&mut self, token: &str) -> String {
        let hash = blake3::keyed_hash(self.key, token.as_bytes());
        let first = if token.chars().next().is_some_and(char::is_uppercase) { 'C' } else { 'n' };
        let mut out = String::with_capacity(PSEUDONYM_CHARS + 1);
        out.push(first);
        let bits = u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"));
        for i in 0..PSEUDONYM_CHARS {
            out.push(b"abcdefghijklmnopqrstuvwxyz234567"[(bits >> (5 * i) & 31) as usize] as char);
        }
        match self.pseudonyms.get(&out) {
            Some(other) if other != token => {
                self.collision.get_or_insert(Collision(token.to_owned(), other.clone()));
            }
            Some(_) => {}
            None => {
                self.pseudonyms.insert(out.clone(), token.to_owned());
            }
        }
        out
    }

    /// Replaces every identifier in `text` but markers and numbers (`2`, `0x7f00…`).
    fn identifiers(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut token = String::new();
        for c in text.chars().chain(std::iter::once('\0')) {
            if c.is_alphanumeric() || c == '_' {
                token.push(c);
                continue;
            }
            if !token.is_empty() {
                let keep = token.starts_with(|c: char| c.is_ascii_digit()) || MARKERS.contains(&token.as_str());
                let t = std::mem::take(&mut token);
                out.push_str(&if keep { t } else { self.pseudonym(&t) });
            }
            if c != '\0' {
                out.push(c);
            }
        }
        out
    }

    /// A class name as the dump writes it (`com/example/Session$Entry`, `[Lcom/example/A;`),
    /// renamed, or `None` when it stays.
    fn class_name(&mut self, raw: &[u8], kept: &dyn Fn(&str) -> bool) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(raw).ok()?;
        let dims = text.bytes().take_while(|&b| b == b'[').count();
        if dims > 0 {
            let inner = text[dims..].strip_prefix('L')?.strip_suffix(';')?;
            let renamed = self.class_name(inner.as_bytes(), kept)?;
            let mut out = text.as_bytes()[..dims].to_vec();
            out.push(b'L');
            out.extend_from_slice(&renamed);
            out.push(b';');
            return Some(out);
        }
        if kept(&heap::names::java_name(raw)) {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        let mut package = String::new();
        let mut parts = text.split('/').peekable();
        let mut renaming = false;
        while let Some(part) = parts.next() {
            let last = parts.peek().is_none();
            if !last && !renaming {
                if !package.is_empty() {
                    package.push('.');
                }
                package.push_str(part);
                renaming = !self.platform_packages.contains(&package);
            }
            out.push_str(&if last || renaming { self.identifiers(part) } else { part.to_owned() });
            if !last {
                out.push('/');
            }
        }
        Some(out.into_bytes())
    }

    /// `(Lcom/example/A;I)V` with the application's class names renamed.
    fn signature(&mut self, raw: &[u8], kept: &dyn Fn(&str) -> bool) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(raw).ok()?;
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let mut changed = false;
        while let Some(at) = rest.find('L') {
            out.push_str(&rest[..=at]);
            let after = &rest[at + 1..];
            let Some(end) = after.find(';') else {
                rest = after;
                break;
            };
            match self.class_name(&after.as_bytes()[..end], kept) {
                Some(new) => {
                    out.push_str(std::str::from_utf8(&new).expect("renamed from text"));
                    changed = true;
                }
                None => out.push_str(&after[..end]),
            }
            out.push(';');
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        changed.then(|| out.into_bytes())
    }

    /// A source file (`Session.java`): its stem renamed, its extension kept.
    fn source_file(&mut self, raw: &[u8]) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(raw).ok()?;
        let (stem, ext) = text.rsplit_once('.').unwrap_or((text, ""));
        let mut out = self.identifiers(stem);
        if !ext.is_empty() {
            out.push('.');
            out.push_str(ext);
        }
        (out != text).then(|| out.into_bytes())
    }
}

impl Symbols {
    /// Decides every symbol's fate. With `names` (the pseudonyms' key, and which classes keep
    /// their names), the other classes' names are renamed.
    pub(crate) fn build(
        data: &[u8],
        ix: &DumpIndex<'_>,
        dumps: &[(u64, Box<ClassDump>)],
        info_names: &[u64],
        names: Option<NamesKey<'_>>,
    ) -> Result<Symbols, Collision> {
        let mut uses: FxHashMap<u64, Uses> = FxHashMap::default();
        let keep_use = |uses: &mut FxHashMap<u64, Uses>, id: u64| uses.entry(id).or_default().kept = true;
        let mut sym = Symbols::default();

        // Records that name things by symbol besides classes and frames: threads (hprof
        // agent dumps) and Android's heap names.
        for rec in Records::new(data, ix.header.len).flatten() {
            if rec.tag == hprof::tag::START_THREAD {
                if let Ok(t) = hprof::layout::StartThread::read(&mut rec.cursor(ix.header.id_size)) {
                    for id in [t.name_id, t.group_name_id, t.parent_group_name_id] {
                        keep_use(&mut uses, id);
                    }
                }
            }
        }
        for &id in info_names {
            keep_use(&mut uses, id);
        }

        // Without `--names` every class keeps its name, so nothing is renamed and the key is
        // never used: the same walk below only marks each use kept.
        let (key, kept) = names.unwrap_or((&[0; 32], &|_| true));
        let mut platform_packages = FxHashSet::default();
        for &name in ix.class_names.values() {
            let Some(raw) = ix.strings.get(&name) else { continue };
            let java = heap::names::java_name(raw);
            if kept(&java) {
                let mut prefix = String::new();
                for part in java.trim_end_matches("[]").split('.').rev().skip(1).collect::<Vec<_>>().into_iter().rev() {
                    if !prefix.is_empty() {
                        prefix.push('.');
                    }
                    prefix.push_str(part);
                    platform_packages.insert(prefix.clone());
                }
            }
        }
        let mut namer = Namer { key, platform_packages, pseudonyms: BTreeMap::new(), collision: None };
        let text = |id: u64| ix.strings.get(&id).copied().unwrap_or_default();
        let renamed = |uses: &mut FxHashMap<u64, Uses>, id: u64, new: Option<Vec<u8>>| -> Option<Vec<u8>> {
            let u = uses.entry(id).or_default();
            match new {
                Some(new) if new != text(id) => {
                    if !u.renamed.contains(&new) {
                        u.renamed.push(new.clone());
                    }
                    Some(new)
                }
                _ => {
                    u.kept = true;
                    None
                }
            }
        };

        let mut class_renames = Vec::new();
        let mut app_serials = FxHashSet::default();
        for (&class_id, &name) in &ix.class_names {
            let new = namer.class_name(text(name), kept);
            if let Some(new) = renamed(&mut uses, name, new) {
                class_renames.push((class_id, name, new));
                sym.renamed_classes.insert(class_id);
            }
        }
        for (&serial, class_id) in &ix.class_serials {
            if sym.renamed_classes.contains(class_id) {
                app_serials.insert(serial);
            }
        }
        let mut frame_renames = Vec::new();
        for (&frame, f) in &ix.frames {
            let app = app_serials.contains(&f.class_serial);
            let method =
                if app { Some(namer.identifiers(&String::from_utf8_lossy(text(f.method_name_id)))) } else { None };
            let method = renamed(&mut uses, f.method_name_id, method.map(String::into_bytes));
            let signature = namer.signature(text(f.signature_id), kept);
            let signature = renamed(&mut uses, f.signature_id, signature);
            let source = if app { namer.source_file(text(f.source_file_id)) } else { None };
            let source = renamed(&mut uses, f.source_file_id, source);
            if method.is_some() || signature.is_some() || source.is_some() {
                frame_renames.push((frame, *f, method, signature, source));
            }
        }
        let mut field_renames = Vec::new();
        for (_, d) in dumps {
            let app = sym.renamed_classes.contains(&d.head.class_id);
            for id in d.statics.iter().map(|s| s.name_id).chain(d.fields.iter().map(|f| f.name_id)) {
                let new = if app { Some(namer.identifiers(&String::from_utf8_lossy(text(id)))) } else { None };
                if let Some(new) = renamed(&mut uses, id, new.map(String::into_bytes)) {
                    field_renames.push((id, new));
                }
            }
        }
        if let Some(c) = namer.collision {
            return Err(c);
        }
        sym.pseudonyms = namer.pseudonyms;

        sym.resolve(uses, ix);
        for (class_id, name, new) in class_renames {
            sym.class_names.insert(class_id, sym.id_for(name, &new));
        }
        for (frame, f, method, signature, source) in frame_renames {
            let id = |sym: &Symbols, old: u64, new: &Option<Vec<u8>>| new.as_ref().map_or(old, |n| sym.id_for(old, n));
            let ids = (
                id(&sym, f.method_name_id, &method),
                id(&sym, f.signature_id, &signature),
                id(&sym, f.source_file_id, &source),
            );
            sym.frames.insert(frame, ids);
        }
        for (old, new) in field_renames {
            let id = sym.id_for(old, &new);
            sym.fields.insert(old, id);
        }
        Ok(sym)
    }

    /// Turns the uses into what is written: a symbol used only renamed, one way, is rewritten
    /// where it is; other renamings get new symbols; a symbol nothing uses is left out.
    fn resolve(&mut self, uses: FxHashMap<u64, Uses>, ix: &DumpIndex<'_>) {
        let mut next = ix.strings.keys().max().copied().unwrap_or(0) / 8 * 8 + 8;
        let mut ids: Vec<u64> = uses.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let u = &uses[&id];
            if !ix.strings.contains_key(&id) {
                continue;
            }
            let mut renamed = u.renamed.iter();
            if u.kept {
                self.keep.insert(id);
            } else if let Some(first) = renamed.next() {
                self.rewrite.insert(id, first.clone());
            }
            for new in renamed {
                self.added.push((next, new.clone()));
                next += 8;
            }
        }
    }

    /// The symbol that holds `new`, the renaming of symbol `old`.
    fn id_for(&self, old: u64, new: &[u8]) -> u64 {
        if self.rewrite.get(&old).is_some_and(|t| t == new) {
            return old;
        }
        // Added symbols are few (names shared with kept ones): a scan is enough.
        self.added.iter().find(|(_, t)| t == new).map_or(old, |(id, _)| *id)
    }

    /// Whether the copy writes the UTF8 record `id` (as it is or rewritten).
    pub(crate) fn writes(&self, id: u64) -> bool {
        self.keep.contains(&id) || self.rewrite.contains_key(&id)
    }

    /// Writes the added symbols' records.
    pub(crate) fn write_added(&self, w: &mut hprof::Writer) {
        for (id, text) in &self.added {
            let mut body = hprof::Writer::new(w.id_size());
            body.id(*id);
            body.bytes(text);
            hprof::write_record(w, hprof::tag::UTF8, &body.buf);
        }
    }

    /// A top-level record as the copy writes it: `None` to leave it out, else its bytes when
    /// they change.
    pub(crate) fn record(&self, rec: &hprof::RawRecord<'_>, id_size: hprof::IdSize) -> Option<Option<Vec<u8>>> {
        let rewrite = |body: Vec<u8>| {
            let mut w = hprof::Writer::new(id_size);
            hprof::layout::RecordHead { tag: rec.tag, time_delta: rec.time_delta, length: body.len() as u32 }
                .write(&mut w);
            w.bytes(&body);
            Some(Some(w.buf))
        };
        match rec.parse(id_size) {
            Ok(Record::Utf8 { id, .. }) if !self.writes(id) => None,
            Ok(Record::Utf8 { id, .. }) => match self.rewrite.get(&id) {
                Some(text) => {
                    let mut w = hprof::Writer::new(id_size);
                    w.id(id);
                    w.bytes(text);
                    rewrite(w.buf)
                }
                None => Some(None),
            },
            Ok(Record::LoadClass(mut l)) => match self.class_names.get(&l.class_id) {
                Some(&name) => {
                    l.name_id = name;
                    let mut w = hprof::Writer::new(id_size);
                    l.write(&mut w);
                    rewrite(w.buf)
                }
                None => Some(None),
            },
            Ok(Record::StackFrame(mut f)) => match self.frames.get(&f.frame_id) {
                Some(&(m, s, src)) => {
                    (f.method_name_id, f.signature_id, f.source_file_id) = (m, s, src);
                    let mut w = hprof::Writer::new(id_size);
                    f.write(&mut w);
                    rewrite(w.buf)
                }
                None => Some(None),
            },
            _ => Some(None),
        }
    }

    /// Renames the field names of a class dump of a renamed class; true when any changed.
    pub(crate) fn rename_fields(&self, c: &mut ClassDump) -> bool {
        if !self.renamed_classes.contains(&c.head.class_id) {
            return false;
        }
        let mut changed = false;
        for id in c.statics.iter_mut().map(|s| &mut s.name_id).chain(c.fields.iter_mut().map(|f| &mut f.name_id)) {
            if let Some(&new) = self.fields.get(id) {
                changed |= new != *id;
                *id = new;
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namer(key: &[u8; 32]) -> Namer<'_> {
        let platform_packages = ["com", "org", "org.apache"].iter().map(|s| s.to_string()).collect();
        Namer { key, platform_packages, pseudonyms: BTreeMap::new(), collision: None }
    }

    fn platform(java: &str) -> bool {
        java.starts_with("java.") || java.starts_with("org.apache.catalina.")
    }

    #[test]
    fn one_pseudonym_per_identifier_and_the_platform_kept() {
        let key = [7u8; 32];
        let mut n = namer(&key);
        let text = |b: Option<Vec<u8>>| b.map(|b| String::from_utf8(b).unwrap());
        let order = text(n.class_name(b"com/acme/Order$Line", &platform)).unwrap();
        let parts: Vec<&str> = order.split(['/', '$']).collect();
        assert_eq!(parts[0], "com", "a package the platform shares stays: {order}");
        assert!(parts[1].starts_with('n') && parts[2].starts_with('C') && parts[3].starts_with('C'), "{order}");
        // The same identifiers, the same pseudonyms: in an array's name and a signature.
        let array = text(n.class_name(b"[[Lcom/acme/Order;", &platform)).unwrap();
        assert_eq!(array, format!("[[Lcom/{}/{};", parts[1], parts[2]));
        let sig = text(n.signature(b"(Ljava/lang/String;Lcom/acme/Order;)V", &platform)).unwrap();
        assert_eq!(sig, format!("(Ljava/lang/String;Lcom/{}/{};)V", parts[1], parts[2]));
        // Lambdas keep their shape; the platform's names and signatures stay.
        let lambda = text(n.class_name(b"com/acme/Order$$Lambda+0x0000000800c03000", &platform)).unwrap();
        assert!(lambda.ends_with("$$Lambda+0x0000000800c03000"), "{lambda}");
        assert_eq!(n.class_name(b"org/apache/catalina/Session", &platform), None);
        assert_eq!(n.class_name(b"[I", &platform), None);
        assert_eq!(n.signature(b"(Ljava/lang/Object;)I", &platform), None);
        assert_eq!(n.identifiers("this$0"), "this$0");
        assert!(text(n.source_file(b"Order.java")).unwrap().ends_with(".java"));
        // The mapping gives every pseudonym back.
        for (pseudonym, name) in n.pseudonyms.clone() {
            assert_eq!(n.pseudonym(&name), pseudonym);
        }
        assert!(n.pseudonyms.values().any(|v| v == "acme"));
        // Another key, other pseudonyms.
        let other = [8u8; 32];
        assert_ne!(namer(&other).pseudonym("acme"), n.pseudonym("acme"));
    }
}
