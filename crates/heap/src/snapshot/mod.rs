//! The full heap model: dense objects sorted by address, CSR references, GC roots.
//!
//! Per object it keeps the class (2 bytes while the dump has fewer than 65,536 classes, else
//! 4), the shallow size in 8-byte units (2; objects of 512 KiB and more are listed aside), the
//! record's file offset, the CSR offsets and the reference targets (4 bytes each while they
//! fit 32 bits, 5 beyond), a share of the address index (about 1) and one bit for "the first
//! edge is a Reference's referent". All but the last two live in unlinked temporary files
//! mapped into memory: the page cache holds them while memory allows, and a phase that does
//! not read them takes them out of the resident set ([`graph::Ints`],
//! [`Snapshot::release_columns`]).
//! Addresses are not kept: each record holds its object's id right after its tag, so
//! [`Snapshot::address`] reads it from the mapped file; field names are not kept per edge
//! either: [`Snapshot::labeled_edges`] re-reads the object's record.

mod build;
mod model;
mod order;
mod records;
#[cfg(test)]
mod tests;

use graph::{Csr, Ints};
use hprof::{SubRecord, Value};

use crate::addr_index::Buckets;
use crate::census::Census;
use crate::classes::{ClassIdx, ClassTable, RefStrength};
use crate::live::{self, Live, Traced, Via};
use crate::source::Dump;

use model::BIG_SIZE8;
pub(crate) use model::CHUNK;
pub use model::{
    decode_text, Edge, EdgeLabel, Frame, ObjIdx, Root, RootDetail, Slot, TextEncoding, Thread, ThreadIdentity,
};
pub(crate) use records::for_each_ref;
use records::read_at;

/// The heap of one dump, ready for graph analyses.
pub struct Snapshot {
    dump: Dump,
    /// Classes, layout, per-class totals of everything in the dump, warnings.
    pub census: Census,
    /// Each object's class, 2 bytes while the dump has fewer than 65,536 classes.
    class: Ints,
    /// Each object's shallow size in 8-byte units, 2 bytes each; [`BIG_SIZE8`] means the
    /// object is in `big_sizes`.
    size8: Ints,
    /// The objects of 512 KiB and more with their sizes in 8-byte units, by object.
    big_sizes: Vec<(u64, u64)>,
    /// Each object's record in the dump: read again only for an object's fields, kept in a
    /// temporary file ([`Ints::release`]).
    offsets: Ints,
    edges: Csr,
    referent_first: graph::BitSet,
    mirrors: Vec<(ObjIdx, ClassIdx)>,
    /// GC roots, as the dump declares them.
    pub roots: Vec<Root>,
    /// Where the snapshot's big arrays live, and the analyses' on it.
    placement: graph::Placement,
    /// Threads that hold roots or appear in root records.
    pub threads: Vec<Thread>,
    addr_index: Buckets,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("objects", &self.object_count())
            .field("edges", &self.edges.edge_count())
            .field("roots", &self.roots.len())
            .finish()
    }
}

/// The object pass's phase when it takes the objects from the heap pass's stream.
const READ_ONCE: &str = "reading objects (the dump read once)";

impl Snapshot {
    /// Where the snapshot's big arrays live; analyses on it put theirs there too.
    pub fn placement(&self) -> &graph::Placement {
        &self.placement
    }

    /// Says how the references will be read for a while: in object order (`true`), for a pass
    /// that reads them all, or in the order of the graph (`false`, the default), where out of
    /// core a page fault should read only its page when the references do not fit.
    pub fn reading_edges_in_order(&self, in_order: bool) {
        if in_order {
            self.edges.advise_sequential();
        } else if self.placement.reads_at_random(self.edges.bytes()) {
            self.edges.advise_random();
        }
    }

    /// Takes the per-object arrays (references, classes, sizes) out of resident memory until
    /// they are read again: for a phase of work that holds big arrays of its own and reads
    /// none of these (the dominator computation after its depth-first search).
    pub fn release_columns(&self) {
        self.edges.release();
        self.class.release();
        self.size8.release();
        // The dump's own pages too: what the roots and classes were read from stayed resident
        // (24 MB of a Tomcat dump's, through its whole dominator computation).
        self.dump.release(0, self.dump.data().len());
    }

    /// Number of objects (class mirrors included).
    pub fn object_count(&self) -> u64 {
        self.class.len() as u64
    }

    /// Number of references.
    pub fn edge_count(&self) -> u64 {
        self.edges.edge_count() as u64
    }

    /// The object at address `id`.
    pub fn find(&self, id: u64) -> Option<ObjIdx> {
        self.addr_index.find(|i| self.address(ObjIdx(i as u64)), id).map(|i| ObjIdx(i as u64))
    }

    /// The object's address (its id in the dump), read from its record: every object
    /// sub-record starts with a tag byte and then the id.
    pub fn address(&self, o: ObjIdx) -> u64 {
        let at = self.offsets.get(o.index()) as usize + 1;
        hprof::id_in(self.dump.data(), at, self.census.header.id_size)
    }

    /// The object's class (`java.lang.Class` for class mirrors).
    pub fn class_of(&self, o: ObjIdx) -> ClassIdx {
        ClassIdx(self.class.get(o.index()) as u32)
    }

    /// The object's shallow size in the JVM.
    pub fn shallow_bytes(&self, o: ObjIdx) -> u64 {
        let s = self.size8.get(o.index());
        if s != BIG_SIZE8 {
            return s * 8;
        }
        let at = self.big_sizes.partition_point(|b| b.0 < o.0);
        self.big_sizes.get(at).filter(|b| b.0 == o.0).map_or(0, |b| b.1 * 8)
    }

    /// The class table.
    pub fn classes(&self) -> &ClassTable {
        &self.census.classes
    }

    /// Outgoing references, a Reference's referent (if any) first.
    pub fn edges(&self, o: ObjIdx) -> impl Iterator<Item = Edge> + '_ {
        let range = self.edges.edge_range(o.index());
        let first_weak = self.referent_first.contains(o.index());
        let strength =
            if first_weak { self.census.classes.get(self.class_of(o)).ref_strength } else { RefStrength::Strong };
        let start = range.start;
        range.map(move |e| Edge {
            target: ObjIdx(self.edges.target(e)),
            strength: if e == start { strength } else { RefStrength::Strong },
        })
    }

    /// Outgoing references with the field or element each comes from, in [`Self::edges`] order.
    /// Reads the object's record again from the file.
    pub fn labeled_edges(&self, o: ObjIdx) -> Vec<(EdgeLabel, Edge)> {
        let off = self.offsets.get(o.index());
        let data = self.dump.data();
        let id_size = self.census.header.id_size;
        let mut ids = Vec::new();
        if let Some(rec) = read_at(data, off, id_size) {
            for_each_ref(&rec, &self.census.classes, id_size, |label, id| ids.push((label, id)));
        }
        let labels = ids.into_iter().filter_map(|(l, id)| self.find(id).map(|_| l));
        labels.zip(self.edges(o)).collect()
    }

    /// Human-readable name of an edge label of object `o` (`next`, `[3]`, `static cache`).
    pub fn label_name(&self, o: ObjIdx, label: EdgeLabel) -> String {
        let classes = &self.census.classes;
        match label {
            EdgeLabel::Field { owner, field } => classes.get(owner).fields[field as usize].name.clone(),
            EdgeLabel::Element(i) => format!("[{i}]"),
            EdgeLabel::Static(i) => {
                let c = self.mirror_class(o).unwrap_or(self.class_of(o));
                format!("static {}", classes.get(c).statics.get(i as usize).map_or("?", |s| s.name.as_str()))
            }
            EdgeLabel::Super => "<super>".into(),
            EdgeLabel::Loader => "<classloader>".into(),
        }
    }

    /// The class a mirror object stands for, if `o` is a class mirror.
    pub fn mirror_class(&self, o: ObjIdx) -> Option<ClassIdx> {
        self.mirrors.binary_search_by_key(&o, |m| m.0).ok().map(|i| self.mirrors[i].1)
    }

    /// Every non-null static reference field: the class, the field's index in
    /// [`crate::Class::statics`], and the object it holds. Loaded classes are alive, so these
    /// are the "static field" roots of the heap (class + field), reached through the mirror.
    pub fn static_refs(&self) -> Vec<(ClassIdx, u16, ObjIdx)> {
        let mut out = Vec::new();
        for &(mirror, class) in &self.mirrors {
            for (label, edge) in self.labeled_edges(mirror) {
                if let EdgeLabel::Static(i) = label {
                    out.push((class, i, edge.target));
                }
            }
        }
        out
    }

    /// What to call the object's type in reports: its class name, or `class NAME` for a class mirror.
    pub fn type_label(&self, o: ObjIdx) -> String {
        match self.mirror_class(o) {
            Some(c) => format!("class {}", self.census.classes.get(c).name),
            None => self.census.classes.get(self.class_of(o)).name.clone(),
        }
    }

    /// The value of instance field `name` of object `o` (the most derived class's field when
    /// several classes of its chain declare one), read from the dump.
    pub fn field(&self, o: ObjIdx, name: &str) -> Option<Value> {
        let classes = &self.census.classes;
        let id_size = self.census.header.id_size;
        let Some(SubRecord::Instance { values, .. }) = read_at(self.dump.data(), self.offsets.get(o.index()), id_size)
        else {
            return None;
        };
        let mut at = 0usize;
        for c in classes.chain(self.class_of(o)) {
            for f in &classes.get(c).fields {
                if f.name == name {
                    let bytes = values.get(at..at + f.ty.dump_bytes(id_size))?;
                    return Some(match f.ty {
                        hprof::BasicType::Object => Value::Object(hprof::id_in(bytes, 0, id_size)),
                        ty => Value::Primitive(ty, bytes.iter().fold(0u64, |v, &b| v << 8 | u64::from(b))),
                    });
                }
                at += f.ty.dump_bytes(id_size);
            }
        }
        None
    }

    /// Every field of `o` with its value, read from the dump: an instance's fields (its own
    /// class's first, then inherited ones, as the dump lays them out), or a class mirror's
    /// static fields. Empty for arrays.
    pub fn slots(&self, o: ObjIdx) -> Vec<Slot> {
        let classes = &self.census.classes;
        if let Some(c) = self.mirror_class(o) {
            let class = classes.get(c);
            return class
                .statics
                .iter()
                .enumerate()
                .filter(|(i, _)| class.overhead_static != Some(*i as u16))
                .map(|(_, st)| Slot { name: st.name.clone(), declared_by: c, is_static: true, value: st.value })
                .collect();
        }
        let id_size = self.census.header.id_size;
        let Some(SubRecord::Instance { values, .. }) = read_at(self.dump.data(), self.offsets.get(o.index()), id_size)
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut at = 0usize;
        for c in classes.chain(self.class_of(o)) {
            for f in &classes.get(c).fields {
                let n = f.ty.dump_bytes(id_size);
                let Some(bytes) = values.get(at..at + n) else { return out };
                let value = match f.ty {
                    hprof::BasicType::Object => Value::Object(hprof::id_in(bytes, 0, id_size)),
                    ty => Value::Primitive(ty, bytes.iter().fold(0u64, |v, &b| v << 8 | u64::from(b))),
                };
                out.push(Slot { name: f.name.clone(), declared_by: c, is_static: false, value });
                at += n;
            }
        }
        out
    }

    /// An array's element type, length, and the values of elements `from..from + limit`
    /// (object ids for arrays of references, raw bits for primitives); `None` for
    /// non-arrays.
    pub fn array_elements(&self, o: ObjIdx, from: u64, limit: usize) -> Option<(hprof::BasicType, u64, Vec<Value>)> {
        if self.mirror_class(o).is_some() {
            return None;
        }
        let id_size = self.census.header.id_size;
        match read_at(self.dump.data(), self.offsets.get(o.index()), id_size)? {
            SubRecord::ObjArray { elements, .. } => {
                let items = elements.iter().skip(from as usize).take(limit).map(Value::Object).collect::<Vec<Value>>();
                Some((hprof::BasicType::Object, elements.len() as u64, items))
            }
            SubRecord::PrimArray { head, elem, data } => {
                let w = elem.primitive_bytes() as usize;
                let items = data
                    .chunks_exact(w)
                    .skip(from as usize)
                    .take(limit)
                    .map(|b| Value::Primitive(elem, b.iter().fold(0u64, |v, &x| v << 8 | u64::from(x))))
                    .collect();
                Some((elem, u64::from(head.length), items))
            }
            _ => None,
        }
    }

    /// A primitive array's element type and its contents as the dump holds them (big-endian
    /// elements); `None` for other objects.
    pub fn primitive_array(&self, o: ObjIdx) -> Option<(hprof::BasicType, &[u8])> {
        if self.mirror_class(o).is_some() {
            return None;
        }
        match read_at(self.dump.data(), self.offsets.get(o.index()), self.census.header.id_size)? {
            SubRecord::PrimArray { elem, data, .. } => Some((elem, data)),
            _ => None,
        }
    }

    /// The object a reference field of `o` points to, if not null and in the dump.
    pub fn field_object(&self, o: ObjIdx, name: &str) -> Option<ObjIdx> {
        match self.field(o, name)? {
            Value::Object(id) if id != 0 => self.find(id),
            _ => None,
        }
    }

    /// The text of a `java.lang.String`, at most `max_chars` characters, read from its
    /// `value` array (`char[]` before JDK 9; `byte[]` with `coder` 0 for Latin-1 and 1 for
    /// UTF-16 in the byte order of the VM, taken as little-endian). `None` for other objects
    /// and for strings whose array is missing from the dump.
    pub fn string_value(&self, o: ObjIdx, max_chars: usize) -> Option<String> {
        if self.census.classes.get(self.class_of(o)).name != "java.lang.String" || self.mirror_class(o).is_some() {
            return None;
        }
        let coder = match self.field(o, "coder") {
            Some(Value::Primitive(_, c)) => c,
            _ => 0,
        };
        let id_size = self.census.header.id_size;
        let data = self.dump.data();
        let array = self.field_object(o, "value")?;
        let Some(SubRecord::PrimArray { elem, data, .. }) = read_at(data, self.offsets.get(array.index()), id_size)
        else {
            return None;
        };
        let encoding = match (elem, coder) {
            (hprof::BasicType::Char, _) => TextEncoding::Utf16Be,
            (hprof::BasicType::Byte, 1) => TextEncoding::Utf16Le,
            (hprof::BasicType::Byte, _) => TextEncoding::Latin1,
            _ => return None,
        };
        Some(decode_text(encoding, data, max_chars))
    }

    /// What the dump's `java.lang.Thread` object says of thread `t` (an index into
    /// [`Snapshot::threads`]): its name (at most 200 characters), its Java id, and whether it
    /// is a virtual thread (JDK 21+, often unnamed). Thread names are shown without
    /// `--show-values`: they are the server's configuration, not its users' data.
    pub fn thread_identity(&self, t: usize) -> ThreadIdentity {
        let Some(o) = self.threads.get(t).and_then(|t| t.object) else {
            return ThreadIdentity::default();
        };
        let classes = &self.census.classes;
        let is_virtual = classes
            .chain(self.class_of(o))
            .any(|c| matches!(classes.get(c).name.as_str(), "java.lang.VirtualThread" | "java.lang.BaseVirtualThread"));
        ThreadIdentity {
            name: self.field_object(o, "name").and_then(|n| self.string_value(n, 200)).filter(|n| !n.is_empty()),
            tid: match self.field(o, "tid") {
                Some(Value::Primitive(_, tid)) => Some(tid),
                _ => None,
            },
            is_virtual,
        }
    }

    /// Every class mirror object with the class it stands for, in object order.
    pub fn mirrors(&self) -> &[(ObjIdx, ClassIdx)] {
        &self.mirrors
    }

    /// All objects in address order.
    pub fn objects(&self) -> impl ExactSizeIterator<Item = ObjIdx> {
        (0..self.class.len()).map(|i| ObjIdx(i as u64))
    }

    /// The live objects and their path tree ([`crate::live`]): the same trace as the
    /// streaming class graph's. With `keep_parents`, each object's breadth-first parent too.
    /// `None` past 2^32 - 1 objects, which the trace does not number.
    pub fn live(&self, keep_parents: bool) -> Option<Live> {
        if self.object_count() >= u64::from(live::NONE) {
            return None;
        }
        let roots: Vec<(u32, hprof::RootKind)> = self.roots.iter().map(|r| (r.object.0 as u32, r.kind)).collect();
        let mirrors: Vec<u32> = self.mirrors.iter().map(|m| m.0 .0 as u32).collect();
        let g = SnapTraced { snap: self, labels: Default::default() };
        Some(live::trace(&g, &roots, &mirrors, keep_parents))
    }

    /// Approximate heap bytes this snapshot keeps per object, for the README's footprint figure.
    pub fn heap_bytes(&self) -> usize {
        self.class.heap_bytes()
            + self.size8.heap_bytes()
            + self.big_sizes.capacity() * 16
            + self.offsets.heap_bytes()
            + self.edges.heap_bytes()
            + self.referent_first.heap_bytes()
            + self.mirrors.capacity() * 16
            + self.addr_index.heap_bytes()
    }
}

/// A snapshot as [`live::trace`] walks it: references from the CSR, their labels from the
/// record (one buffer, reused).
struct SnapTraced<'a> {
    snap: &'a Snapshot,
    /// The object whose labels are read, and its labels in edge order.
    labels: std::cell::RefCell<(Option<u32>, Vec<EdgeLabel>)>,
}

impl Traced for SnapTraced<'_> {
    fn len(&self) -> usize {
        self.snap.object_count() as usize
    }

    fn class_and_bytes(&self, o: u32) -> (ClassIdx, u64) {
        (self.snap.class_of(ObjIdx(u64::from(o))), self.snap.shallow_bytes(ObjIdx(u64::from(o))))
    }

    fn mirror(&self, o: u32) -> Option<ClassIdx> {
        self.snap.mirror_class(ObjIdx(u64::from(o)))
    }

    fn edges(&self, o: u32, f: &mut dyn FnMut(u32, u32, bool)) {
        for (k, e) in self.snap.edges(ObjIdx(u64::from(o))).enumerate() {
            f(e.target.0 as u32, k as u32, e.strength == RefStrength::Strong);
        }
    }

    fn via(&self, o: u32, label: u32) -> Via {
        let s = self.snap;
        let obj = ObjIdx(u64::from(o));
        let mut labels = self.labels.borrow_mut();
        // The labels of one object's record, read once while the search takes its references.
        if labels.0 != Some(o) {
            labels.1.clear();
            let id_size = s.census.header.id_size;
            let mut ids = Vec::new();
            if let Some(rec) = read_at(s.dump.data(), s.offsets.get(obj.index()), id_size) {
                for_each_ref(&rec, &s.census.classes, id_size, |label, id| ids.push((label, id)));
            }
            // The CSR holds the references that resolve, in record order.
            let resolves = ids.len() as u64 == s.edges.edge_range(obj.index()).len() as u64;
            labels.1.extend(ids.into_iter().filter(|&(_, id)| resolves || s.find(id).is_some()).map(|(l, _)| l));
            labels.0 = Some(o);
        }
        match labels.1.get(label as usize) {
            Some(&EdgeLabel::Field { owner, field }) => Via::Field { owner, field },
            Some(&EdgeLabel::Static(i)) => Via::Static(i),
            Some(&EdgeLabel::Super) => Via::Super,
            Some(&EdgeLabel::Loader) => Via::Loader,
            Some(&EdgeLabel::Element(_)) | None => Via::Element,
        }
    }
}
