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

use graph::{Csr, Ints, Progress};
use hprof::{Cursor, SubRecord, Value};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::addr_index::{AddrRank, Buckets};
use crate::census::{Census, ReadOptions, Sizes};
use crate::classes::{for_each_field_ref, ClassIdx, ClassTable, RefStrength};
use crate::error::Error;
use crate::index::DumpIndex;
use crate::live::{self, Live, Traced, Via};
use crate::refs::{Entry, Layouts, Refs, RefsOut};
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

/// One field of an object and its value ([`Snapshot::slots`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// The field's name.
    pub name: String,
    /// The class that declares it.
    pub declared_by: ClassIdx,
    /// A static field (of a class mirror).
    pub is_static: bool,
    /// Its value: an object id (0 for null), or a primitive's raw bits.
    pub value: Value,
}

/// What a thread's `java.lang.Thread` object says of it ([`Snapshot::thread_identity`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadIdentity {
    /// `Thread.name`, when the dump has it and it is not empty.
    pub name: Option<String>,
    /// `Thread.tid`, Java's thread id (`#24` in `jstack`).
    pub tid: Option<u64>,
    /// A virtual thread (JDK 21+).
    pub is_virtual: bool,
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

/// Objects per chunk of the parallel edge pass.
pub(crate) const CHUNK: usize = 1 << 16;

/// The value of [`Snapshot`]'s 2-byte size column for an object listed with the big ones.
const BIG_SIZE8: u64 = u16::MAX as u64;

impl Snapshot {
    /// Reads `dump` into a snapshot, its arrays in memory.
    pub fn build(dump: Dump, opts: &ReadOptions, progress: &dyn Progress) -> Result<Snapshot, Error> {
        Self::build_placed(dump, opts, &graph::Placement::memory(), progress)
    }

    /// Reads `dump` into a snapshot whose big arrays, and those of the analyses on it, go
    /// where `place` says ([`crate::MemoryPlan`] chooses).
    pub fn build_placed(
        dump: Dump,
        opts: &ReadOptions,
        place: &graph::Placement,
        progress: &dyn Progress,
    ) -> Result<Snapshot, Error> {
        let data = dump.data();
        let mut ix = DumpIndex::of(&dump)?;
        ix.select(opts.dump)?;
        // Out of core, with the classes' layouts known before the heap pass, it keeps every
        // object's place and references in a stream, and the dump is read once: each pass over
        // it read it from the disk. Else the heap pass keeps each object's place, and its
        // record is read again below (in memory, from the page cache: faster than writing and
        // reading a stream).
        let layouts = place.files.then(|| Layouts::early(&dump, &ix)).flatten();
        // In memory, the stream has the objects' places alone (Android's dumps keep pairs: a
        // class record there takes back the array before it).
        let out = match &layouts {
            Some(l) => Some(RefsOut::new(l, place.dir.as_deref())),
            None if !place.files && ix.header.version != hprof::Version::V103 => Some(RefsOut::places_only()),
            None => None,
        };
        let keep = if out.is_some() { Keep::Nothing } else { Keep::Offsets };
        let scan = Scan::run(&dump, &ix, keep, out.as_ref(), place, progress);
        let refs = out.map(RefsOut::finish);
        // The stream has every instance's references only when no class came after it.
        let laid_out = layouts.as_ref().is_some_and(|l| l.dumps == scan.classes.len());
        let (mut census, mut scan) = Census::from_scan(&ix, scan, opts, data.len() as u64)?;
        progress.start("sorting objects", 1);
        let pieces = std::mem::take(&mut scan.pieces);
        let kept = match &refs {
            Some(refs) => Kept::Stream(refs),
            None => Kept::Pairs(std::mem::take(&mut scan.objects), &pieces),
        };
        let (addrs, offsets, order) = sort_objects(&mut census, kept, data.len() as u64, place);
        let n = addrs.len();
        // The object pass reads the stream where the objects' order comes from its runs.
        let stream = match (refs, order) {
            (Some(refs), Some(order)) if laid_out && refs.has_bodies() => {
                let order = StreamOrder::new(&refs, order, n);
                Some((refs, order))
            }
            _ => None,
        };
        let addr_index = Buckets::over(addrs.len(), |i| addrs.get(i));
        let lookup = Lookup::new(addrs, &addr_index);
        progress.finish();
        let ctx = Ctx::new(data, &census, &lookup, &offsets);
        // One pass over the objects: class, size, referent flag and reference count of each,
        // written in place, and the references themselves, appended in object order. Chunks
        // are multiples of 64 objects, so each owns whole words of the bitset; they are read
        // in parallel a batch at a time, and each batch's references appended when it is
        // done. The counts go where the edge offsets will be (a reference takes at least an
        // id's bytes in the dump, which bounds their total), and become the offsets in place.
        progress.start(if stream.is_some() { READ_ONCE } else { "reading objects" }, n as u64);
        let dir = place.dir.as_deref();
        // File-backed too: the dominator computation releases them while it does not read them.
        let mut class = Ints::zeros_placed(n, census.classes.len() as u64, true, dir);
        let mut size8 = Ints::zeros_placed(n, BIG_SIZE8, true, dir);
        let max_refs = data.len() as u64 / census.header.id_size.bytes() as u64;
        let mut edge_offsets = Ints::zeros_placed(n + 1, max_refs, true, dir);
        let mut targets = graph::IntsWriter::in_file(n as u64, dir);
        let mut referent_first = vec![0u64; n.div_ceil(64)];
        let cuts: Vec<usize> = (0..=n.div_ceil(CHUNK)).map(|k| (k * CHUNK).min(n)).collect();
        let mut facts: Vec<ChunkFacts> = Vec::with_capacity(cuts.len() - 1);
        let mut total = 0u64;
        let batch = 4 * rayon::current_num_threads().max(1);
        // The dump's records come in address order from HotSpot: the next batch's bytes are
        // asked for while this one is read, as the scan does.
        let ask = |first: usize| {
            let (from, to) = (cuts[first.min(cuts.len() - 1)], cuts[(first + batch).min(cuts.len() - 1)]);
            let (lo, hi) = if from < to { (offsets.get(from), offsets.get(to - 1)) } else { (0, 0) };
            if lo < hi {
                dump.prefetch(lo, ((hi - lo) as usize).min(crate::scan::PREFETCH * 2));
            }
        };
        if stream.is_none() {
            ask(0);
        }
        for first in (0..cuts.len() - 1).step_by(batch) {
            let last = (first + batch).min(cuts.len() - 1);
            if stream.is_none() {
                ask(first + batch);
            }
            let part = &cuts[first..=last];
            let shifted: Vec<usize> = part.iter().map(|c| c + 1).collect();
            let words = &mut referent_first[part[0] / 64..part[part.len() - 1].div_ceil(64)];
            let done: Vec<(ChunkFacts, Vec<u64>)> = class
                .windows_mut(part)
                .into_par_iter()
                .zip(size8.windows_mut(part))
                .zip(edge_offsets.windows_mut(&shifted))
                .zip(words.par_chunks_mut(CHUNK / 64))
                .enumerate()
                .map(|(j, (((mut class, mut size8), mut counts), referent))| {
                    let (start, len) = ((first + j) * CHUNK, class.len());
                    let mut objects = match &stream {
                        Some((refs, order)) => Objects::stream(refs, order, first + j),
                        None => Objects::Records,
                    };
                    let read = ctx.read_chunk(start, &mut objects, &mut class, &mut size8, &mut counts, referent);
                    if stream.is_none() {
                        release_block(&dump, &offsets, start..start + len);
                    }
                    progress.advance(len as u64);
                    read
                })
                .collect();
            for (f, t) in done {
                targets.extend(&t);
                facts.push(f);
            }
            // The batch's counts become offsets while their pages are at hand.
            for i in cuts[first] + 1..=cuts[last] {
                total += edge_offsets.get(i);
                edge_offsets.set(i, total);
            }
            edge_offsets.release_range(cuts[first]..cuts[last]);
        }
        progress.finish();
        drop(stream);
        // Both edge arrays are file-backed, so that the dominator computation can take them out
        // of memory while it does not read them ([`Snapshot::release_columns`]).
        let targets = targets.finish();
        debug_assert_eq!(targets.len() as u64, total);
        edge_offsets.release();
        offsets.release();
        drop(lookup);
        let mut mirrors = Vec::new();
        let mut big_sizes = Vec::new();
        for (k, f) in facts.into_iter().enumerate() {
            big_sizes.extend(f.big_sizes.iter().map(|&(i, s)| ((k * CHUNK) as u64 + u64::from(i), s)));
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
            big_sizes,
            offsets,
            edges: Csr::from_parts(edge_offsets, targets),
            referent_first: graph::BitSet::from_words(referent_first),
            mirrors,
            roots: Vec::new(),
            placement: place.clone(),
            threads: Vec::new(),
            addr_index,
        };
        snap.reading_edges_in_order(false);
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

/// What the first pass learns about a chunk besides the per-object arrays.
struct ChunkFacts {
    /// Class mirrors in this chunk: position in the chunk and class id.
    mirrors: Vec<(u32, u64)>,
    /// Objects of [`BIG_SIZE8`] units and more: position in the chunk and size in 8-byte units.
    big_sizes: Vec<(u32, u64)>,
    warnings: crate::warnings::Warnings,
}

/// What the heap pass kept of the objects: each segment's (address, offset) pairs in its
/// piece of one column, or the stream of every object's place and references.
pub(crate) enum Kept<'a> {
    Pairs(graph::Column<[u64; 2]>, &'a [std::ops::Range<usize>]),
    Stream(&'a Refs),
}

/// How the objects in address order come from the stream's runs: where the class records
/// are among them (in dense order), and, with several runs, the run each other object comes
/// from.
pub(crate) struct Order {
    pub(crate) class_at: Vec<u64>,
    pub(crate) run_of: Option<Vec<u8>>,
}

/// The most runs the object pass reads the stream in at once; a dump with more is read again
/// record by record.
const MAX_RUNS: usize = 64;

/// The objects' addresses and file offsets, class records merged in, in address order, each
/// address once (a warning counts the duplicates left out); and how that order comes from
/// the stream's runs, when it does, and no address repeats.
pub(crate) fn sort_objects(
    census: &mut Census,
    kept: Kept<'_>,
    dump_len: u64,
    place: &graph::Placement,
) -> (Ints, Ints, Option<Order>) {
    let mut classes: Vec<[u64; 2]> =
        census.classes.iter().filter_map(|(_, c)| c.dump_offset.map(|o| [c.id, o])).collect();
    classes.sort_unstable();
    let (addrs, offsets, duplicates, order) = sorted_columns(kept, &classes, dump_len, place);
    census.warnings.add(WarningKind::DuplicateId, duplicates, None, || "objects".into());
    (addrs, offsets, order.filter(|_| duplicates == 0))
}

/// The addresses and offsets of the kept objects and of the sorted `classes` together, in
/// address order, the first of each address only, how many were left out, and, when the kept
/// objects come in ascending runs, how the order comes from them. HotSpot writes objects in
/// address order (or in one ascending run per thread of a parallel dump): then one pass reads
/// what the heap pass kept where it lies (merging the runs), merges the few class records in
/// and writes both columns. It replaced moving the pieces together, a check, a merge in
/// place, a pass dropping duplicates and two splitting the pairs, each of which read the
/// pairs' file back from disk out of core (13.4 s of Tomcat's 30 M objects under a 203 MiB
/// limit).
fn sorted_columns(
    kept: Kept<'_>,
    classes: &[[u64; 2]],
    dump_len: u64,
    place: &graph::Placement,
) -> (Ints, Ints, u64, Option<Order>) {
    let dir = place.dir.as_deref();
    let mut objects = match kept {
        Kept::Stream(refs) => {
            if let Some(runs) = refs.runs().filter(|r| r.len() <= MAX_RUNS) {
                let merged = merge_runs(runs.iter().map(|r| Box::new(refs.places(r.clone())) as Places<'_>).collect());
                let done = split_ascending(merged, runs.len() > 1, refs.max_addr(), classes, dump_len, dir);
                return done.expect("merged runs ascend");
            }
            let mut objects = graph::Column::zeros(refs.len() as usize, place);
            objects.iter_mut().zip(refs.places(refs.all())).for_each(|(o, p)| *o = p);
            objects
        }
        Kept::Pairs(mut objects, pieces) => {
            let last = pieces.iter().rev().find(|p| !p.is_empty()).map_or(0, |p| objects[p.end - 1][0]);
            let pairs = pieces.iter().flat_map(|r| objects[r.clone()].iter().map(|&p| (p, 0)));
            if let Some(done) = split_ascending(pairs, false, last, classes, dump_len, dir) {
                return done;
            }
            crate::scan::compact(&mut objects, pieces);
            objects
        }
    };
    let n = objects.len();
    objects.resize(n + classes.len());
    objects[n..].copy_from_slice(classes);
    objects.par_sort_unstable();
    let max = objects.last().map_or(0, |p| p[0]);
    let (addrs, offsets, duplicates, _) =
        split_ascending(objects.iter().map(|&p| (p, 0)), false, max, &[], dump_len, dir).expect("sorted pairs ascend");
    (addrs, offsets, duplicates, None)
}

/// The (address, offset) pairs of one run of the stream.
type Places<'a> = Box<dyn Iterator<Item = [u64; 2]> + 'a>;

/// The pairs of ascending `runs` in one ascending sequence, each with its run's number.
fn merge_runs<'a>(runs: Vec<Places<'a>>) -> impl Iterator<Item = ([u64; 2], u8)> + 'a {
    let mut runs: Vec<std::iter::Peekable<Places<'a>>> = runs.into_iter().map(Iterator::peekable).collect();
    std::iter::from_fn(move || {
        if let [only] = runs.as_mut_slice() {
            return only.next().map(|p| (p, 0));
        }
        let mut least: Option<(usize, [u64; 2])> = None;
        for (r, run) in runs.iter_mut().enumerate() {
            if let Some(&p) = run.peek() {
                if least.is_none_or(|(_, l)| p < l) {
                    least = Some((r, p));
                }
            }
        }
        let (r, p) = least?;
        runs[r].next();
        Some((p, r as u8))
    })
}

/// [`sorted_columns`] while the `pairs` ascend, the last at most `last`; `None` at the first
/// out of order. With `runs`, each pair's run is kept for the object pass.
fn split_ascending(
    pairs: impl Iterator<Item = ([u64; 2], u8)>,
    runs: bool,
    last: u64,
    classes: &[[u64; 2]],
    dump_len: u64,
    dir: Option<&std::path::Path>,
) -> Option<(Ints, Ints, u64, Option<Order>)> {
    let max = classes.last().map_or(last, |c| c[0].max(last));
    let (mut addrs, mut offsets) = (graph::IntsWriter::in_file(max, dir), graph::IntsWriter::in_file(dump_len, dir));
    // Returns how many addresses are written: the index of the last one, plus one.
    let (mut duplicates, mut at, mut written) = (0u64, None, 0u64);
    let mut emit = |[addr, off]: [u64; 2]| {
        if at == Some(addr) {
            duplicates += 1;
        } else {
            at = Some(addr);
            addrs.push(addr);
            offsets.push(off);
            written += 1;
        }
        written
    };
    let (mut c, mut previous, mut class_at) = (0, [0, 0], Vec::with_capacity(classes.len()));
    let mut run_of = Vec::new();
    for (p, run) in pairs {
        // Above the last address, the pairs cannot ascend to it; nor could the writer hold it.
        if p < previous || p[0] > max {
            return None;
        }
        previous = p;
        while c < classes.len() && classes[c] <= p {
            class_at.push(emit(classes[c]) - 1);
            c += 1;
            if runs {
                run_of.push(0);
            }
        }
        emit(p);
        if runs {
            run_of.push(run);
        }
    }
    for &p in &classes[c..] {
        class_at.push(emit(p) - 1);
    }
    let order = Order { class_at, run_of: runs.then_some(run_of) };
    Some((addrs.finish(), offsets.finish(), duplicates, Some(order)))
}

/// How the build finds an object's index by address: a rank bitmap over the heap's span
/// when it is smaller than the sorted addresses (2 bits per aligned slot, one cache line per
/// lookup; the addresses are dropped before the passes), else a bucketed search of them.
/// Out of core the search's random reads of 8 bytes per object thrashed: Tomcat's 30 M
/// objects under a 203 MiB limit spent 208 s reading objects, 11 s in memory.
pub(crate) enum Lookup<'a> {
    Dense(AddrRank),
    Sorted(Ints, &'a Buckets),
}

impl<'a> Lookup<'a> {
    fn new(addrs: Ints, index: &'a Buckets) -> Lookup<'a> {
        // Only where the bitmap is smaller than the addresses (8 bytes an object).
        match AddrRank::dense_over(addrs.len(), |i| addrs.get(i), addrs.len() as u64 * 8) {
            Some(rank) => Lookup::Dense(rank),
            None => Lookup::Sorted(addrs, index),
        }
    }

    /// The index of the object at `addr`, if there is one.
    #[inline]
    fn find(&self, addr: u64) -> Option<usize> {
        match self {
            Lookup::Dense(rank) => rank.rank(addr),
            Lookup::Sorted(addrs, index) => index.find(|k| addrs.get(k), addr),
        }
    }
}

pub(crate) struct Ctx<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) id_size: hprof::IdSize,
    pub(crate) census: &'a Census,
    lookup: &'a Lookup<'a>,
    pub(crate) offsets: &'a Ints,
    pub(crate) sizes: Sizes<'a>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(data: &'a [u8], census: &'a Census, lookup: &'a Lookup<'a>, offsets: &'a Ints) -> Ctx<'a> {
        Ctx { data, id_size: census.header.id_size, census, lookup, offsets, sizes: Sizes::new(census) }
    }

    /// Reads the objects from `start`, from `objects`: class, size in 8-byte units, number of
    /// references that resolve and whether the first is a Reference's referent into the
    /// windows, and the references that resolve, in order, into the vector returned.
    fn read_chunk(
        &self,
        start: usize,
        objects: &mut Objects<'_>,
        class: &mut graph::IntsWindow<'_>,
        size8: &mut graph::IntsWindow<'_>,
        counts: &mut graph::IntsWindow<'_>,
        referent: &mut [u64],
    ) -> (ChunkFacts, Vec<u64>) {
        let mut f = ChunkFacts { mirrors: Vec::new(), big_sizes: Vec::new(), warnings: Default::default() };
        let mut targets = Vec::new();
        let classes = &self.census.classes;
        let mut entry = Entry::default();
        for i in 0..class.len() {
            let at = start + i;
            // The object's class and size, its references (non-null, in edge order), whether
            // the first is a Reference's referent, and whether an instance's field bytes have
            // another length than its class's fields.
            let (c, bytes, referent_first, length_mismatch) = match objects.entry(at, &mut entry) {
                Some(e) => {
                    // The stream is read only where the early class table is the census's.
                    let (c, bytes) = match e.class {
                        Some(c) => self.sizes.of_class(c, e.kind, e.len),
                        None => self.sizes.of_raw(e.kind, e.len),
                    };
                    (c, bytes, e.referent_first, e.length_mismatch)
                }
                None => {
                    let Some(rec) = read_at(self.data, self.offsets.get(at), self.id_size) else { continue };
                    let (c, bytes) = self.sizes.of_record(&rec);
                    if let SubRecord::Class(d) = &rec {
                        f.mirrors.push((i as u32, d.head.class_id));
                    }
                    entry.refs.clear();
                    let mut first = None;
                    for_each_ref(&rec, classes, self.id_size, |label, id| {
                        first = first.or(Some(label));
                        entry.refs.push(id);
                    });
                    let cls = classes.get(c);
                    let length_mismatch = match &rec {
                        SubRecord::Instance { values, .. } => {
                            values.len() as u32 != cls.values_bytes && cls.dump_offset.is_some()
                        }
                        _ => false,
                    };
                    (c, bytes, first.is_some_and(|l| is_referent_label(classes, c, l)), length_mismatch)
                }
            };
            class.set(i, u64::from(c.0));
            let units = bytes / 8;
            if units >= BIG_SIZE8 {
                f.big_sizes.push((i as u32, units));
            }
            size8.set(i, units.min(BIG_SIZE8));
            let mut n = 0u32;
            for (k, &id) in entry.refs.iter().enumerate() {
                match self.lookup.find(id) {
                    Some(t) => {
                        targets.push(t as u64);
                        if k == 0 && referent_first {
                            referent[i / 64] |= 1 << (i % 64);
                        }
                        n += 1;
                    }
                    None => {
                        let off = self.offsets.get(at);
                        f.warnings.add(WarningKind::DanglingReference, 1, Some(off), || format!("id 0x{id:x}"))
                    }
                }
            }
            counts.set(i, u64::from(n));
            if length_mismatch {
                let off = self.offsets.get(at);
                f.warnings.add(WarningKind::FieldLengthMismatch, 1, Some(off), || classes.get(c).name.clone());
            }
        }
        (f, targets)
    }
}

/// Where each object comes from in the stream, for the object pass: the class records' places
/// (in dense order), each other object's run when there are several, and the stream index at
/// which each run is at the start of each chunk.
pub(crate) struct StreamOrder {
    class_at: Vec<u64>,
    run_of: Option<Vec<u8>>,
    /// Per chunk, per run: the index in the stream of the run's next object.
    starts: Vec<Vec<u64>>,
}

impl StreamOrder {
    /// The order of `n` objects that `order` says comes from `refs`' runs.
    fn new(refs: &Refs, order: Order, n: usize) -> StreamOrder {
        let runs = refs.runs().unwrap_or_default();
        let mut next: Vec<u64> = runs.iter().map(|r| refs.first_entry(r.start)).collect();
        let mut starts = Vec::with_capacity(n.div_ceil(CHUNK));
        let mut classes = order.class_at.iter().peekable();
        for at in 0..n {
            if at % CHUNK == 0 {
                starts.push(next.clone());
            }
            if classes.next_if_eq(&&(at as u64)).is_some() {
                continue;
            }
            let run = order.run_of.as_ref().map_or(0, |r| usize::from(r[at]));
            if let Some(next) = next.get_mut(run) {
                *next += 1;
            }
        }
        StreamOrder { class_at: order.class_at, run_of: order.run_of, starts }
    }
}

/// Where the object pass finds a chunk's objects: every record in the dump, or the heap
/// pass's stream (one reader per run) with the class records in the dump.
pub(crate) enum Objects<'a> {
    Records,
    Stream { readers: Vec<crate::refs::Reader<'a>>, order: &'a StreamOrder, next_class: usize },
}

impl<'a> Objects<'a> {
    /// The stream's objects of chunk `chunk` on.
    fn stream(refs: &'a Refs, order: &'a StreamOrder, chunk: usize) -> Objects<'a> {
        let start = (chunk * CHUNK) as u64;
        let next_class = order.class_at.partition_point(|&c| c < start);
        let readers = order.starts[chunk].iter().map(|&entry| refs.reader(entry)).collect();
        Objects::Stream { readers, order, next_class }
    }

    /// Object `at` (the one after the last asked for) decoded into `e`, or `None` where its
    /// record is to be read.
    fn entry<'e>(&mut self, at: usize, e: &'e mut Entry) -> Option<&'e Entry> {
        let Objects::Stream { readers, order, next_class } = self else { return None };
        if order.class_at.get(*next_class) == Some(&(at as u64)) {
            *next_class += 1;
            return None;
        }
        let run = order.run_of.as_ref().map_or(0, |r| usize::from(r[at]));
        let read = readers.get_mut(run).is_some_and(|r| r.next(e, true));
        debug_assert!(read, "the stream ended before object {at}");
        read.then_some(e)
    }
}

pub(crate) fn is_referent_label(classes: &ClassTable, class: ClassIdx, label: EdgeLabel) -> bool {
    let c = classes.get(class);
    match (label, c.referent_slot) {
        (EdgeLabel::Field { owner, field }, Some(s)) => c.ref_slots[s].owner == owner && c.ref_slots[s].field == field,
        _ => false,
    }
}

/// Releases the file pages a finished chunk of the edge pass read, and the chunk's offsets.
pub(crate) fn release_block(dump: &Dump, offsets: &Ints, range: std::ops::Range<usize>) {
    let lo = range.clone().map(|o| offsets.get(o)).min().unwrap_or(0);
    let hi = range.clone().map(|o| offsets.get(o)).max().unwrap_or(0);
    dump.release(lo, (hi - lo) as usize);
    offsets.release_range(range);
}

/// Reads the sub-record at absolute offset `off`.
pub(crate) fn read_at(data: &[u8], off: u64, id_size: hprof::IdSize) -> Option<SubRecord<'_>> {
    let start = usize::try_from(off).ok()?;
    let mut c = Cursor::new(data.get(start..)?, off, id_size);
    SubRecord::read(&mut c).ok()
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

/// How a primitive array's bytes encode text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    /// One byte per character (a compact string's `byte[]` with coder 0).
    Latin1,
    /// UTF-16 units as the dump writes a `char[]`: big-endian.
    Utf16Be,
    /// UTF-16 units of a compact string's `byte[]` with coder 1: the VM's order, little-endian.
    Utf16Le,
}

/// An array's contents as text, at most `max_chars` characters; an unpaired surrogate reads
/// as U+FFFD.
pub fn decode_text(encoding: TextEncoding, data: &[u8], max_chars: usize) -> String {
    let utf16 = |unit: fn([u8; 2]) -> u16| -> String {
        let units = data.chunks_exact(2).map(|b| unit([b[0], b[1]]));
        char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}')).take(max_chars).collect()
    };
    match encoding {
        TextEncoding::Latin1 => data.iter().take(max_chars).map(|&b| char::from(b)).collect(),
        TextEncoding::Utf16Be => utf16(u16::from_be_bytes),
        TextEncoding::Utf16Le => utf16(u16::from_le_bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use testkit::{HeapBuilder, ObjRef, Ty};

    /// The phases a build goes through.
    #[derive(Default)]
    struct Phases(std::sync::Mutex<Vec<String>>);

    impl Progress for Phases {
        fn start(&self, phase: &str, _: u64) {
            self.0.lock().unwrap().push(phase.to_owned());
        }
        fn advance(&self, _: u64) {}
    }

    /// Builds `dump` reading its records twice (in memory) and, out of core, reading it once
    /// where the heap pass's stream serves; asserts that the snapshots are the same, and
    /// returns whether the second read the dump once.
    fn both_ways(dump: Dump) -> bool {
        let opts = ReadOptions::default();
        let twice = Snapshot::build(dump.clone(), &opts, &graph::NoProgress);
        let phases = Phases::default();
        let files = graph::Placement { files: true, ..graph::Placement::default() };
        let once = Snapshot::build_placed(dump, &opts, &files, &phases);
        let (a, b) = match (twice, once) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string());
                return false;
            }
            (a, b) => panic!("one build failed: {:?} / {:?}", a.err(), b.err()),
        };
        let n = a.object_count() as usize;
        assert_eq!(n, b.object_count() as usize);
        assert_eq!(a.class.iter().collect::<Vec<_>>(), b.class.iter().collect::<Vec<_>>(), "classes");
        assert_eq!(a.size8.iter().collect::<Vec<_>>(), b.size8.iter().collect::<Vec<_>>(), "sizes");
        assert_eq!(a.big_sizes, b.big_sizes);
        assert_eq!(a.offsets.iter().collect::<Vec<_>>(), b.offsets.iter().collect::<Vec<_>>(), "offsets");
        for v in 0..n {
            let (x, y) = (a.edges.successors(v).collect::<Vec<_>>(), b.edges.successors(v).collect::<Vec<_>>());
            assert_eq!(x, y, "references of object {v}");
        }
        assert_eq!(a.referent_first.iter().collect::<Vec<_>>(), b.referent_first.iter().collect::<Vec<_>>());
        assert_eq!(a.mirrors, b.mirrors);
        assert_eq!(a.roots, b.roots);
        assert_eq!(a.threads, b.threads);
        assert_eq!(a.census.warnings, b.census.warnings);
        let read_once = phases.0.lock().unwrap().iter().any(|p| p == READ_ONCE);
        read_once
    }

    fn fixture(name: &str) -> Dump {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
        Dump::open(&dir.join(name)).unwrap()
    }

    #[test]
    fn real_dumps_read_once_out_of_core_give_the_snapshot_read_twice() {
        // HotSpot's dumps have their classes first and objects in address order: read once.
        assert!(both_ways(fixture("demo-jdk17.hprof")));
        assert!(both_ways(fixture("corpus/openjdk_jdk11_04_x64.hprof.gz")));
        // The old hprof agent's (several dumps, classes among the objects) and Android's
        // (class records that claim the array before them) are read twice, and the same.
        both_ways(fixture("corpus/oracle_jdk7_21_hprofagent.hprof"));
        assert!(!both_ways(fixture("corpus/dialer.android-hprof")));
    }

    /// A heap of `shape`'s objects: nodes, weak references (a referent first in their
    /// references), object arrays and primitive arrays, pointing at each other by index or at
    /// ids that are not in the dump.
    fn random_heap(shape: &[(u8, u16, u16)], threads: usize, region: usize, segment: usize) -> Vec<u8> {
        let mut h = HeapBuilder::new();
        let node = h.class("com.example.Node", None, &[("next", Ty::Object), ("v", Ty::Int), ("other", Ty::Object)]);
        let reference = h.class("java.lang.ref.Reference", None, &[("referent", Ty::Object), ("queue", Ty::Object)]);
        let weak = h.class("java.lang.ref.WeakReference", Some(reference), &[("extra", Ty::Object)]);
        let target = |objs: &[ObjRef], k: u16| match k % 7 {
            0 => None,
            1 => Some(ObjRef(0x7777_0000 + u64::from(k))),
            _ => objs.get(usize::from(k) % objs.len().max(1)).copied(),
        };
        let mut objs = Vec::new();
        for &(kind, a, _) in shape {
            objs.push(match kind % 4 {
                0 => h.instance(node),
                1 => h.instance(weak),
                2 => {
                    let elements: Vec<Option<ObjRef>> =
                        (0..a % 6).map(|i| target(&objs, a.wrapping_mul(i + 3))).collect();
                    h.object_array("[Ljava/lang/Object;", &elements)
                }
                _ => h.primitive_array(Ty::Byte, u32::from(a % 40)),
            });
        }
        for (i, &(kind, a, b)) in shape.iter().enumerate() {
            let fields: &[&str] = match kind % 4 {
                0 => &["next", "other"],
                1 => &["referent", "queue", "extra"],
                _ => &[],
            };
            for (f, field) in fields.iter().enumerate() {
                if let Some(t) = target(&objs, if f == 0 { a } else { b.wrapping_add(f as u16) }) {
                    h.set(objs[i], field, t);
                }
            }
        }
        if let Some(&first) = objs.first() {
            h.root(hprof::RootKind::JniGlobal, first);
        }
        h.parallel(threads, region).segment_bytes(segment);
        h.build()
    }

    proptest! {
        #[test]
        fn random_heaps_read_once_give_the_snapshot_read_twice(
            shape in proptest::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 0..300),
            threads in 1usize..5,
            region in 1usize..40,
            segment in 64usize..4096,
        ) {
            let bytes = random_heap(&shape, threads, region, segment);
            prop_assert!(both_ways(Dump::from_vec(bytes)) || shape.is_empty());
        }

        #[test]
        fn damaged_heaps_read_once_give_the_snapshot_read_twice(
            shape in proptest::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 1..100),
            flips in proptest::collection::vec((any::<proptest::sample::Index>(), 1u8..=255), 1..4),
        ) {
            let mut bytes = random_heap(&shape, 2, 7, 512);
            for (at, x) in flips {
                let at = at.index(bytes.len());
                bytes[at] ^= x;
            }
            both_ways(Dump::from_vec(bytes));
        }
    }

    #[test]
    fn chunks_start_inside_pieces_and_runs() {
        // More objects than a chunk of the object pass, in pieces of small segments, written
        // by three threads of a parallel dump: every chunk starts inside a piece of each run.
        let shape: Vec<(u8, u16, u16)> =
            (0..(CHUNK as u32 * 5 / 2)).map(|i| ((i % 7) as u8, (i * 31 % 65_521) as u16, (i * 17) as u16)).collect();
        assert!(both_ways(Dump::from_vec(random_heap(&shape, 3, 5_000, 1 << 16))));
        assert!(both_ways(Dump::from_vec(random_heap(&shape, 1, 1, 1 << 16))));
    }

    proptest! {
        #[test]
        fn sorted_columns_merge_and_keep_the_first_of_each_address(
            mut a in proptest::collection::vec(proptest::array::uniform2(0u64..1000), 0..300),
            mut b in proptest::collection::vec(proptest::array::uniform2(0u64..1000), 0..50),
            sort in any::<bool>(),
            files in any::<bool>(),
            gap in 0usize..40,
        ) {
            if sort {
                a.sort_unstable();
            }
            b.sort_unstable();
            let mut expect = [a.clone(), b.clone()].concat();
            expect.sort_unstable();
            let before = expect.len();
            expect.dedup_by_key(|p| p[0]);
            let place = graph::Placement { files, ..graph::Placement::default() };
            // In pieces with gaps between them, as the scan leaves them.
            let mut pieces = Vec::new();
            let mut spaced = Vec::new();
            for (k, chunk) in a.chunks(gap.max(1)).enumerate() {
                spaced.extend(std::iter::repeat_n([u64::MAX - k as u64, 7], k % 3));
                pieces.push(spaced.len()..spaced.len() + chunk.len());
                spaced.extend_from_slice(chunk);
            }
            let objects = graph::Column::from_vec(spaced, &place);
            let (addrs, offsets, duplicates, order) =
                sorted_columns(Kept::Pairs(objects, &pieces), &b, 1000, &place);
            prop_assert_eq!(addrs.iter().collect::<Vec<_>>(), expect.iter().map(|p| p[0]).collect::<Vec<_>>());
            prop_assert_eq!(offsets.iter().collect::<Vec<_>>(), expect.iter().map(|p| p[1]).collect::<Vec<_>>());
            prop_assert_eq!(duplicates as usize, before - expect.len());
            // Where the pairs ascend, the class records' places in the result, one each.
            prop_assert_eq!(order.is_some(), a.is_sorted());
            if let (Some(order), 0) = (order, duplicates) {
                prop_assert_eq!(order.class_at.iter().map(|&i| expect[i as usize]).collect::<Vec<_>>(), b);
            }
        }
    }
}
