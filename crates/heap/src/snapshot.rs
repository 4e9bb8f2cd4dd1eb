//! The full heap model: dense objects sorted by address, CSR references, GC roots.
//!
//! Per object it keeps the class (4 bytes), shallow size in 8-byte units (4), the
//! sub-record's file offset (5), a CSR offset (5), a share of the address index (about 1)
//! and one bit for "the first edge is a Reference's referent": about 19 bytes per object,
//! plus 5 bytes per reference, with 40-bit indices, so heaps past 2^32 objects fit.
//! Addresses are not kept: each record holds its object's id right after its tag, so
//! [`Snapshot::address`] reads it from the mapped file; field names are not kept per edge
//! either: [`Snapshot::labeled_edges`] re-reads the object's record.

use graph::{Csr, Packed40, Progress};
use hprof::{Cursor, SubRecord, Value};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::addr_index::Buckets;
use crate::census::{Census, ReadOptions, Sizes};
use crate::classes::{Class, ClassIdx, ClassTable, RefStrength};
use crate::error::Error;
use crate::index::DumpIndex;
use crate::live::{self, Live, Traced, Via};
use crate::scan::{Keep, Scan};
use crate::source::Dump;
use crate::warnings::WarningKind;

/// Dense index of an object: its rank by address in the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjIdx(pub u64);

impl ObjIdx {
    /// As a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An outgoing reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// The referenced object.
    pub target: ObjIdx,
    /// Strong, or the strength of a `Reference.referent`.
    pub strength: RefStrength,
}

/// Where a reference comes from inside its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeLabel {
    /// An instance field, declared by `owner`.
    Field {
        /// Declaring class.
        owner: ClassIdx,
        /// Index in the owner's fields.
        field: u16,
    },
    /// An array element.
    Element(u64),
    /// A static field of the class this mirror represents.
    Static(u16),
    /// A class's superclass.
    Super,
    /// A class's defining loader.
    Loader,
}

/// A stack frame of a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Declaring class (Java name).
    pub class: String,
    /// Method name.
    pub method: String,
    /// Source file, if known.
    pub source_file: Option<String>,
    /// Line number, if known.
    pub line: Option<u32>,
}

/// A thread that holds roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// HPROF thread serial.
    pub serial: u32,
    /// The `java.lang.Thread` object, when the dump has it.
    pub object: Option<ObjIdx>,
    /// Its stack, innermost frame first.
    pub frames: Vec<Frame>,
}

/// Details of a GC root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootDetail {
    /// Nothing more is known.
    None,
    /// Held by a thread (index into [`Snapshot::threads`]), at a frame depth when known.
    Thread {
        /// Index into [`Snapshot::threads`].
        thread: usize,
        /// Frame depth (0 = innermost), for frame-held roots.
        frame: Option<u32>,
    },
    /// A JNI global reference.
    JniGlobal {
        /// The global reference's id.
        ref_id: u64,
    },
}

/// A GC root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Root {
    /// The rooted object.
    pub object: ObjIdx,
    /// The kind the dump declares.
    pub kind: hprof::RootKind,
    /// Thread, frame or JNI details.
    pub detail: RootDetail,
}

/// The heap of one dump, ready for graph analyses.
pub struct Snapshot {
    dump: Dump,
    /// Classes, layout, per-class totals of everything in the dump, warnings.
    pub census: Census,
    class: Vec<u32>,
    size8: Vec<u32>,
    offsets: Packed40,
    edges: Csr,
    referent_first: graph::BitSet,
    mirrors: Vec<(ObjIdx, ClassIdx)>,
    /// GC roots, as the dump declares them.
    pub roots: Vec<Root>,
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

/// Objects per chunk of the parallel edge pass.
pub(crate) const CHUNK: usize = 1 << 16;

impl Snapshot {
    /// Reads `dump` into a snapshot.
    pub fn build(dump: Dump, opts: &ReadOptions, progress: &dyn Progress) -> Result<Snapshot, Error> {
        let data = dump.data();
        let mut ix = DumpIndex::build(data)?;
        ix.select(opts.dump)?;
        let scan = Scan::run(&dump, &ix, Keep::Offsets, progress);
        let (mut census, mut scan) = Census::from_scan(&ix, scan, opts, data.len() as u64)?;
        let (addrs, offsets) = sort_objects(&mut census, std::mem::take(&mut scan.objects));
        let addr_index = Buckets::new(&addrs);
        let ctx = Ctx::new(data, &census, &addrs, &offsets, &addr_index);
        let n = addrs.len();
        // Pass 1: class, size, reference count and referent flag of every object, written in
        // place; chunks are multiples of 64 objects, so each owns whole words of the bitset.
        progress.start("reading objects", n as u64);
        let (mut class, mut size8, mut counts) = (vec![0u32; n], vec![0u32; n], vec![0u32; n]);
        let mut referent_first = vec![0u64; n.div_ceil(64)];
        let facts: Vec<ChunkFacts> = class
            .par_chunks_mut(CHUNK)
            .zip(size8.par_chunks_mut(CHUNK))
            .zip(counts.par_chunks_mut(CHUNK))
            .zip(referent_first.par_chunks_mut(CHUNK / 64))
            .enumerate()
            .map(|(k, (((class, size8), counts), referent))| {
                let f = ctx.describe(k * CHUNK, class, size8, counts, referent);
                release_block(&dump, &offsets, k * CHUNK..k * CHUNK + class.len());
                progress.advance(class.len() as u64);
                f
            })
            .collect();
        progress.finish();
        // Pass 2: the references themselves, each chunk into its own window of the targets.
        let mut edge_offsets = Packed40::with_capacity(n + 1);
        let mut total = 0u64;
        edge_offsets.push(0);
        for &c in &counts {
            total += u64::from(c);
            edge_offsets.push(total);
        }
        drop(counts);
        let mut targets = Packed40::zeros(total as usize);
        let cuts: Vec<usize> = (0..=n.div_ceil(CHUNK)).map(|k| edge_offsets.get((k * CHUNK).min(n)) as usize).collect();
        progress.start("indexing references", n as u64);
        targets.windows_mut(&cuts).into_par_iter().enumerate().for_each(|(k, window)| {
            let range = k * CHUNK..((k + 1) * CHUNK).min(n);
            ctx.fill(range.clone(), window);
            release_block(&dump, &offsets, range.clone());
            progress.advance(range.len() as u64);
        });
        progress.finish();
        drop(addrs);
        let mut mirrors = Vec::new();
        for (k, f) in facts.into_iter().enumerate() {
            for (i, id) in f.mirrors {
                if let Some(c) = census.classes.by_id(id) {
                    mirrors.push((ObjIdx((k * CHUNK + i as usize) as u64), c));
                }
            }
            census.warnings.merge(f.warnings);
        }
        let mut snap = Snapshot {
            dump: dump.clone(),
            census,
            class,
            size8,
            offsets,
            edges: Csr::from_parts(edge_offsets, targets),
            referent_first: graph::BitSet::from_words(referent_first),
            mirrors,
            roots: Vec::new(),
            threads: Vec::new(),
            addr_index,
        };
        snap.add_roots(&ix, std::mem::take(&mut scan.roots));
        Ok(snap)
    }

    fn add_roots(&mut self, ix: &DumpIndex<'_>, roots: Vec<(u64, hprof::Root)>) {
        let mut thread_of: FxHashMap<u32, usize> = FxHashMap::default();
        for (_, r) in roots.iter().filter(|(_, r)| r.kind == hprof::RootKind::ThreadObject) {
            let serial = r.thread_serial.unwrap_or(0);
            if thread_of.contains_key(&serial) {
                continue;
            }
            let frames = r.stack_serial.and_then(|s| ix.traces.get(&s)).map(|t| frames_of(ix, t)).unwrap_or_default();
            thread_of.insert(serial, self.threads.len());
            self.threads.push(Thread { serial, object: self.find(r.object_id), frames });
        }
        let mut dangling = (0u64, None);
        for (off, r) in roots {
            let Some(object) = self.find(r.object_id) else {
                dangling.0 += 1;
                dangling.1 = dangling.1.or(Some((off, r.object_id)));
                continue;
            };
            let detail = match (r.thread_serial.and_then(|s| thread_of.get(&s)), r.ref_id) {
                (Some(&thread), _) => RootDetail::Thread { thread, frame: r.frame.filter(|&f| f != u32::MAX) },
                (None, Some(ref_id)) => RootDetail::JniGlobal { ref_id },
                _ => RootDetail::None,
            };
            self.roots.push(Root { object, kind: r.kind, detail });
        }
        if let Some((off, id)) = dangling.1 {
            self.census.warnings.add(WarningKind::DanglingRoot, dangling.0, Some(off), || format!("object 0x{id:x}"));
        }
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
        ClassIdx(self.class[o.index()])
    }

    /// The object's shallow size in the JVM.
    pub fn shallow_bytes(&self, o: ObjIdx) -> u64 {
        u64::from(self.size8[o.index()]) * 8
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
        let text = match (elem, coder) {
            (hprof::BasicType::Char, _) => {
                let units = data.chunks_exact(2).map(|b| u16::from_be_bytes([b[0], b[1]]));
                char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}')).take(max_chars).collect()
            }
            (hprof::BasicType::Byte, 1) => {
                let units = data.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]));
                char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}')).take(max_chars).collect()
            }
            (hprof::BasicType::Byte, _) => data.iter().take(max_chars).map(|&b| char::from(b)).collect(),
            _ => return None,
        };
        Some(text)
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
        self.class.capacity() * 4
            + self.size8.capacity() * 4
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

/// What the first pass learns about a chunk besides the per-object arrays.
struct ChunkFacts {
    /// Class mirrors in this chunk: position in the chunk and class id.
    mirrors: Vec<(u32, u64)>,
    warnings: crate::warnings::Warnings,
}

/// Every object's (address, file offset), class records included, sorted by address and
/// without duplicates: the dense order of [`ObjIdx`]. Returns the addresses and the offsets.
pub(crate) fn sort_objects(census: &mut Census, mut objects: Vec<(u64, u64)>) -> (Vec<u64>, Packed40) {
    let mut classes: Vec<(u64, u64)> =
        census.classes.iter().filter_map(|(_, c)| c.dump_offset.map(|o| (c.id, o))).collect();
    classes.sort_unstable();
    let n = objects.len() + classes.len();
    // HotSpot writes objects in address order: then a linear merge with the class records, read
    // straight into the outputs, replaces a sort (and a copy) that took most of a summary's time.
    let merged: Box<dyn Iterator<Item = (u64, u64)>> = if objects.is_sorted() {
        Box::new(merge_sorted(objects, classes))
    } else {
        objects.extend(classes);
        objects.par_sort_unstable();
        Box::new(objects.into_iter())
    };
    let (mut addrs, mut offsets) = (Vec::with_capacity(n), Packed40::with_capacity(n));
    let mut duplicates = 0u64;
    for (addr, off) in merged {
        if addrs.last() == Some(&addr) {
            duplicates += 1;
            continue;
        }
        addrs.push(addr);
        offsets.push(off);
    }
    census.warnings.add(WarningKind::DuplicateId, duplicates, None, || "objects".into());
    (addrs, offsets)
}

/// Merges two sorted lists.
fn merge_sorted(a: Vec<(u64, u64)>, b: Vec<(u64, u64)>) -> impl Iterator<Item = (u64, u64)> {
    let mut b = b.into_iter().peekable();
    let mut a = a.into_iter().peekable();
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if y <= x => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

pub(crate) struct Ctx<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) id_size: hprof::IdSize,
    pub(crate) census: &'a Census,
    pub(crate) addrs: &'a [u64],
    pub(crate) offsets: &'a Packed40,
    pub(crate) index: &'a Buckets,
    pub(crate) sizes: Sizes<'a>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        data: &'a [u8],
        census: &'a Census,
        addrs: &'a [u64],
        offsets: &'a Packed40,
        index: &'a Buckets,
    ) -> Ctx<'a> {
        Ctx { data, id_size: census.header.id_size, census, addrs, offsets, index, sizes: Sizes::new(census) }
    }

    /// First pass over the objects from `start`: class, size in 8-byte units, number of
    /// references that resolve, and whether the first is a Reference's referent.
    fn describe(
        &self,
        start: usize,
        class: &mut [u32],
        size8: &mut [u32],
        counts: &mut [u32],
        referent: &mut [u64],
    ) -> ChunkFacts {
        let mut f = ChunkFacts { mirrors: Vec::new(), warnings: Default::default() };
        let classes = &self.census.classes;
        for i in 0..class.len() {
            let off = self.offsets.get(start + i);
            let Some(rec) = read_at(self.data, off, self.id_size) else { continue };
            let (c, bytes) = self.sizes.of_record(&rec);
            if let SubRecord::Class(d) = &rec {
                f.mirrors.push((i as u32, d.head.class_id));
            }
            class[i] = c.0;
            size8[i] = u32::try_from(bytes / 8).unwrap_or(u32::MAX);
            let has_referent = classes.get(c).referent_slot.is_some();
            let mut n = 0u32;
            for_each_ref(&rec, classes, self.id_size, |label, id| match self.index.find(|k| self.addrs[k], id) {
                Some(_) => {
                    if n == 0 && has_referent && is_referent_label(classes, c, label) {
                        referent[i / 64] |= 1 << (i % 64);
                    }
                    n += 1;
                }
                None => f.warnings.add(WarningKind::DanglingReference, 1, Some(off), || format!("id 0x{id:x}")),
            });
            counts[i] = n;
            if let SubRecord::Instance { values, .. } = &rec {
                let cls = classes.get(c);
                if values.len() as u32 != cls.values_bytes && cls.dump_offset.is_some() {
                    f.warnings.add(WarningKind::FieldLengthMismatch, 1, Some(off), || cls.name.clone());
                }
            }
        }
        f
    }

    /// Second pass: the resolved references of the objects in `range`, in the order the first
    /// pass counted them, into the chunk's window of the target array.
    fn fill(&self, range: std::ops::Range<usize>, mut window: graph::Window40<'_>) {
        let classes = &self.census.classes;
        let mut k = 0;
        for o in range {
            let Some(rec) = read_at(self.data, self.offsets.get(o), self.id_size) else { continue };
            for_each_ref(&rec, classes, self.id_size, |_, id| {
                if let Some(t) = self.index.find(|i| self.addrs[i], id) {
                    window.set(k, t as u64);
                    k += 1;
                }
            });
        }
        debug_assert_eq!(k, window.len());
    }
}

pub(crate) fn is_referent_label(classes: &ClassTable, class: ClassIdx, label: EdgeLabel) -> bool {
    let c = classes.get(class);
    match (label, c.referent_slot) {
        (EdgeLabel::Field { owner, field }, Some(s)) => c.ref_slots[s].owner == owner && c.ref_slots[s].field == field,
        _ => false,
    }
}

/// Releases the file pages a finished chunk of the edge pass read.
pub(crate) fn release_block(dump: &Dump, offsets: &Packed40, range: std::ops::Range<usize>) {
    let lo = range.clone().map(|o| offsets.get(o)).min().unwrap_or(0);
    let hi = range.map(|o| offsets.get(o)).max().unwrap_or(0);
    dump.release(lo, (hi - lo) as usize);
}

/// Reads the sub-record at absolute offset `off`.
pub(crate) fn read_at(data: &[u8], off: u64, id_size: hprof::IdSize) -> Option<SubRecord<'_>> {
    let start = usize::try_from(off).ok()?;
    let mut c = Cursor::new(data.get(start..)?, off, id_size);
    SubRecord::read(&mut c).ok()
}

/// Calls `f` with the slot (in `c.ref_slots`) and id of every non-null reference field of an
/// instance of `c` whose field bytes are `values`, a Reference's referent first.
pub(crate) fn for_each_field_ref(c: &Class, values: &[u8], id_size: hprof::IdSize, mut f: impl FnMut(usize, u64)) {
    let order = c.referent_slot.into_iter().chain((0..c.ref_slots.len()).filter(|&s| Some(s) != c.referent_slot));
    for s in order {
        let id = hprof::id_in(values, c.ref_slots[s].offset as usize, id_size);
        if id != 0 {
            f(s, id);
        }
    }
}

/// Calls `f` with every non-null reference of an object record, in edge order: a
/// Reference's referent first, then the other fields; elements; or a class's statics,
/// superclass and loader. The one place that decides what a reference is.
pub(crate) fn for_each_ref(
    rec: &SubRecord<'_>,
    classes: &ClassTable,
    id_size: hprof::IdSize,
    mut f: impl FnMut(EdgeLabel, u64),
) {
    match rec {
        SubRecord::Instance { head, values } => {
            let Some(class) = classes.by_id(head.class_id) else {
                return;
            };
            let c = classes.get(class);
            for_each_field_ref(c, values, id_size, |s, id| {
                f(EdgeLabel::Field { owner: c.ref_slots[s].owner, field: c.ref_slots[s].field }, id)
            });
        }
        SubRecord::ObjArray { elements, .. } => {
            for (i, id) in elements.iter().enumerate() {
                if id != 0 {
                    f(EdgeLabel::Element(i as u64), id);
                }
            }
        }
        SubRecord::Class(d) => {
            // Android's overhead pseudo-array is part of the class object, not a referent.
            let overhead = classes.by_id(d.head.class_id).and_then(|c| classes.get(c).overhead_static);
            for (i, s) in d.statics.iter().enumerate() {
                if let Value::Object(id) = s.value {
                    if id != 0 && overhead != Some(i as u16) {
                        f(EdgeLabel::Static(i as u16), id);
                    }
                }
            }
            if d.head.super_id != 0 {
                f(EdgeLabel::Super, d.head.super_id);
            }
            if d.head.loader_id != 0 {
                f(EdgeLabel::Loader, d.head.loader_id);
            }
        }
        _ => {}
    }
}

fn frames_of(ix: &DumpIndex<'_>, frame_ids: &[u64]) -> Vec<Frame> {
    let text = |id: u64| ix.string(id).map(|s| String::from_utf8_lossy(s).into_owned());
    frame_ids
        .iter()
        .filter_map(|id| ix.frames.get(id))
        .map(|f| Frame {
            class: ix
                .class_serials
                .get(&f.class_serial)
                .and_then(|c| ix.class_names.get(c))
                .and_then(|&n| ix.string(n))
                .map_or_else(|| "?".into(), crate::names::java_name),
            method: text(f.method_name_id).unwrap_or_else(|| "?".into()),
            source_file: text(f.source_file_id),
            line: u32::try_from(f.line).ok().filter(|&l| l > 0),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn merging_sorted_lists_sorts(mut a in proptest::collection::vec((0u64..1000, 0u64..9), 0..200), mut b in proptest::collection::vec((0u64..1000, 0u64..9), 0..50)) {
            a.sort_unstable();
            b.sort_unstable();
            let mut expect = [a.clone(), b.clone()].concat();
            expect.sort_unstable();
            prop_assert_eq!(merge_sorted(a, b).collect::<Vec<_>>(), expect);
        }
    }
}
