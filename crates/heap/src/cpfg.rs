//! Cork's class points-from graph of one dump, read without building the object graph.
//!
//! Two passes over the segments. The heap pass that counts the census also keeps each
//! object's address and a kind word (class key and array length). An address rank (a bitmap
//! over the heap, see [`AddrRank`]) then places each object's class and size at its rank, 8
//! bytes per object. The second pass reads the segments again in file order and keeps, per
//! segment, every reference as the referent's rank and the field it comes from (6 bytes a
//! reference, no addresses, no offsets, no labels beyond 16 bits). A breadth-first search over
//! those from the GC roots ([`crate::live`]) finds the live objects and their path tree; then
//! each live object's references are added, per (referrer class → referent class) edge, in
//! per-segment maps merged at the end. Unreachable objects (JDK 19+ heap fillers, garbage in
//! dumps taken without a collection) count in the census, as jcmd counts them, but in none of
//! the live totals, edges or paths.

use graph::Progress;
use hprof::{BasicType, SubRecord, SubRecords};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::addr_index::AddrRank;
use crate::census::ClassTotals;
use crate::census::{Census, ReadOptions, Sizes};
use crate::classes::for_each_field_ref;
use crate::classes::ClassIdx;
use crate::error::Error;
use crate::index::{DumpIndex, Segment};
use crate::live::{self, Live, PathNode, Traced, Via, LOADER_SLOT, NONE, REFERENT_SLOT, SUPER_SLOT};
use crate::process::{ProcessMark, ThreadFields};
use crate::raw::RawKind;
use crate::scan::{Keep, Scan};
use crate::snapshot::{for_each_ref, CHUNK};
use crate::source::Dump;
use crate::warnings::WarningKind;
use crate::{EdgeLabel, RefStrength};

/// What holds a reference in the class points-from graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Referrer {
    /// Instances of a class (arrays included).
    Instances(ClassIdx),
    /// The static fields of a class.
    Statics(ClassIdx),
}

/// Referent bytes over one (referrer → referent class) edge, counted once per reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassEdge {
    /// Who holds the references.
    pub from: Referrer,
    /// The referents' class.
    pub to: ClassIdx,
    /// Their shallow bytes, once per reference.
    pub bytes: u64,
    /// Number of references.
    pub references: u64,
}

/// The class points-from graph of a dump's live objects: nodes are per-class totals of the
/// objects reachable from GC roots, edges their strong references. A Reference's referent is
/// not an edge, nor are a class's superclass and loader.
#[derive(Debug)]
pub struct ClassGraph {
    /// Classes, layout and per-class totals of every object in the dump (as jcmd counts them).
    pub census: Census,
    /// Per-class totals of the live objects, by class index.
    pub live: Vec<ClassTotals>,
    /// Edges between live objects, sorted by referrer then referent.
    pub edges: Vec<ClassEdge>,
    /// The path tree of the live objects (see [`crate::live`]).
    pub paths: Vec<PathNode>,
    /// Applications loaded more than once (see [`crate::loader_groups`]).
    pub loaders: Vec<crate::LoaderGroup>,
    /// Each object's path node and search parent, by rank (the [`crate::ObjIdx`] of the
    /// same dump's snapshot), when [`ClassGraph::build_keeping`] asked for them.
    pub objects: Option<Live>,
    /// The process the dump came from, as far as it tells (see [`crate::process`]).
    pub process: ProcessMark,
}

/// (referrer, referent class) packed by [`edge_key`] → (bytes, references).
type EdgeMap = FxHashMap<u64, (u64, u64)>;

/// Marks a statics referrer in an edge key; class indexes stay far below it.
const STATICS: u64 = 1 << 63;

/// One word per edge, so that the hot map hashes a single integer.
fn edge_key(from: Referrer, to: u32) -> u64 {
    match from {
        Referrer::Instances(c) => u64::from(c.0) << 32 | u64::from(to),
        Referrer::Statics(c) => STATICS | u64::from(c.0) << 32 | u64::from(to),
    }
}

fn edge_of_key(key: u64) -> (Referrer, ClassIdx) {
    let class = ClassIdx(((key & !STATICS) >> 32) as u32);
    let from = if key & STATICS != 0 { Referrer::Statics(class) } else { Referrer::Instances(class) };
    (from, ClassIdx(key as u32))
}

impl ClassGraph {
    /// Reads the class points-from graph of `dump`.
    pub fn build(dump: &Dump, opts: &ReadOptions, progress: &dyn Progress) -> Result<ClassGraph, Error> {
        Self::build_with(dump, opts, progress, false)
    }

    /// Reads the class points-from graph of `dump` and keeps each object's place in the path
    /// tree and its search parent ([`ClassGraph::objects`]): 8 bytes per object, for the
    /// holders of growing structures in the same dump's snapshot.
    pub fn build_keeping(dump: &Dump, opts: &ReadOptions, progress: &dyn Progress) -> Result<ClassGraph, Error> {
        Self::build_with(dump, opts, progress, true)
    }

    fn build_with(dump: &Dump, opts: &ReadOptions, progress: &dyn Progress, keep: bool) -> Result<ClassGraph, Error> {
        let data = dump.data();
        let mut ix = DumpIndex::of(dump)?;
        ix.select(opts.dump)?;
        let mut scan = Scan::run(dump, &ix, Keep::Kinds, None, &graph::Placement::memory(), progress);
        scan.compact();
        let (mut census, scan) = Census::from_scan(&ix, scan, opts, data.len() as u64)?;
        let sizes = Sizes::new(&census);
        let mirrors: Vec<[u64; 2]> = census
            .classes
            .iter()
            .filter(|(_, c)| c.dump_offset.is_some())
            .map(|(i, c)| [c.id, kind_word(sizes.mirror(i))])
            .collect();
        let ranks = AddrRank::from_pairs(&[&scan.objects, &mirrors]);
        // Each object's kind word at its rank, segments in parallel. A repeated address keeps
        // one of its records' words.
        let kind: Vec<AtomicU64> = std::iter::repeat_with(AtomicU64::default).take(ranks.len()).collect();
        let starts = scan.per_segment.iter().scan(0, |at, (n, _)| {
            *at += n;
            Some(*at - n)
        });
        let segments: Vec<(usize, &(usize, Vec<RawKind>))> = starts.zip(&scan.per_segment).collect();
        segments.into_par_iter().for_each(|(at, (n, keys))| {
            // Per key: the class, and the instance size or the array's element type.
            let classes: Vec<(ClassIdx, Result<u64, BasicType>)> = keys
                .iter()
                .map(|&raw| {
                    let (c, bytes) = sizes.of_raw(raw, 0);
                    match raw {
                        RawKind::Instance(_) => (c, Ok(bytes)),
                        RawKind::ObjArray(_) => (c, Err(BasicType::Object)),
                        RawKind::PrimArray(elem) => (c, Err(elem)),
                    }
                })
                .collect();
            for &[addr, word] in &scan.objects[at..at + n] {
                let (c, size) = classes[(word >> 32) as usize];
                let bytes = size.unwrap_or_else(|elem| census.layout.array_bytes(elem, word & u64::from(u32::MAX)));
                if let Some(r) = ranks.rank(addr) {
                    kind[r].store(kind_word((c, bytes)), Ordering::Relaxed);
                }
            }
        });
        for &[addr, word] in &mirrors {
            if let Some(r) = ranks.rank(addr) {
                kind[r].store(word, Ordering::Relaxed);
            }
        }
        let duplicates = (scan.objects.len() + mirrors.len() - ranks.len()) as u64;
        census.warnings.add(WarningKind::DuplicateId, duplicates, None, || "objects".into());
        let scan_roots = scan.roots;
        drop(scan.objects);
        let n = ranks.len();
        if n >= NONE as usize {
            return Err(Error::TooManyObjects { objects: n as u64 });
        }
        let mut mirror_of: FxHashMap<u32, ClassIdx> = FxHashMap::default();
        for (i, c) in census.classes.iter().filter(|(_, c)| c.dump_offset.is_some()) {
            if let Some(r) = ranks.rank(c.id) {
                mirror_of.insert(r as u32, i);
            }
        }
        let threads = ThreadFields::new(&census.classes, ix.header.id_size);
        let ctx = EdgeCtx { census: &census, id_size: ix.header.id_size, ranks: &ranks, threads: &threads };
        progress.start("reading references", ix.heap_bytes());
        let segs: Vec<SegEdges> = ix
            .segments
            .par_iter()
            .map(|seg| {
                let e = ctx.read_segment(data, *seg);
                dump.release(seg.offset, seg.len);
                progress.advance(seg.len as u64);
                e
            })
            .collect();
        progress.finish();
        let mut process = ProcessMark { threads: Vec::new(), main_class: crate::process::main_class(&ix) };
        for seg in &segs {
            process.threads.extend_from_slice(&seg.threads);
        }
        process.threads.sort_unstable();
        let refs = Refs::by_rank(n, segs);
        let roots: Vec<(u32, hprof::RootKind)> =
            scan_roots.iter().filter_map(|(_, r)| Some((ranks.rank(r.object_id)? as u32, r.kind))).collect();
        let mirrors: Vec<u32> = mirror_of.keys().copied().collect();
        let mut bits = graph::BitSet::new(n);
        mirrors.iter().for_each(|&m| {
            bits.insert(m as usize);
        });
        let g =
            StreamGraph { classes: &census.classes, kind: &kind, mirror_of: &mirror_of, mirrors: bits, refs: &refs };
        progress.start("tracing from GC roots", 0);
        let mut traced = live::trace(&g, &roots, &mirrors, keep);
        progress.finish();
        progress.start("summing references by class", n as u64);
        let merged = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .fold(EdgeMap::default, |mut acc, k| {
                let range = k * CHUNK..((k + 1) * CHUNK).min(n);
                progress.advance(range.len() as u64);
                g.add_objects(range, &traced, &mut acc);
                acc
            })
            .reduce(EdgeMap::default, merge);
        progress.finish();
        drop(refs);
        let mut live_totals = vec![ClassTotals::default(); census.classes.len()];
        for (o, w) in kind.iter().enumerate() {
            if traced.is_live(o) {
                let w = w.load(Ordering::Relaxed);
                let t = &mut live_totals[(w >> 32) as usize];
                t.instances += 1;
                t.shallow_bytes += (w & u64::from(u32::MAX)) * 8;
            }
        }
        let mut edges: Vec<ClassEdge> = merged
            .into_iter()
            .map(|(key, (bytes, references))| {
                let (from, to) = edge_of_key(key);
                ClassEdge { from, to, bytes, references }
            })
            .collect();
        edges.sort_unstable_by_key(|e| (e.from, e.to));
        let loaders = crate::loader_groups(&census.classes, |id| {
            let r = ranks.rank(id)?;
            traced.is_live(r).then(|| ClassIdx((kind[r].load(Ordering::Relaxed) >> 32) as u32))
        });
        let paths = if keep { traced.nodes.clone() } else { std::mem::take(&mut traced.nodes) };
        Ok(ClassGraph { census, live: live_totals, edges, paths, loaders, objects: keep.then_some(traced), process })
    }
}

/// Class in the high half, size in 8-byte units in the low half.
fn kind_word((class, bytes): (ClassIdx, u64)) -> u64 {
    u64::from(class.0) << 32 | (bytes / 8).min(u64::from(u32::MAX))
}

fn merge(mut a: EdgeMap, b: EdgeMap) -> EdgeMap {
    if a.len() < b.len() {
        return merge(b, a);
    }
    for (k, (bytes, refs)) in b {
        let e = a.entry(k).or_default();
        e.0 += bytes;
        e.1 += refs;
    }
    a
}

struct EdgeCtx<'a> {
    census: &'a Census,
    id_size: hprof::IdSize,
    ranks: &'a AddrRank,
    threads: &'a ThreadFields,
}

/// The references of one segment's objects that have any: each object's rank, where its
/// references start, and per reference the referent's rank and its raw label
/// ([`live::via_of_slot`]).
#[derive(Default)]
struct SegEdges {
    objects: Vec<u32>,
    starts: Vec<u32>,
    targets: Vec<u32>,
    slots: Vec<u16>,
    /// The threads among the segment's objects: Java id and native handle.
    threads: Vec<(u64, u64)>,
}

impl EdgeCtx<'_> {
    /// Reads the references of the objects in `seg` (a weak referent marked as such). The
    /// scan has already reported whatever in the segment cannot be read; this pass stops at
    /// the same place.
    fn read_segment(&self, data: &[u8], seg: Segment) -> SegEdges {
        let classes = &self.census.classes;
        let start = seg.offset as usize;
        let body = data.get(start..start + seg.len).unwrap_or(&[]);
        let mut out = SegEdges::default();
        for (_, rec) in SubRecords::new(body, seg.offset, self.id_size).map_while(Result::ok) {
            let before = out.targets.len();
            let mut add = |id: u64, slot: u16| {
                if let Some(t) = self.ranks.rank(id) {
                    out.targets.push(t as u32);
                    out.slots.push(slot);
                }
            };
            let id = match &rec {
                // Instances are the bulk: their class is looked up once, and a Reference's
                // referent slot is skipped by index.
                SubRecord::Instance { head, values } => {
                    let Some(class) = classes.by_id(head.class_id) else { continue };
                    let c = classes.get(class);
                    let weak = c.referent_slot.filter(|_| c.ref_strength != RefStrength::Strong);
                    out.threads.extend(self.threads.read(class, values));
                    for_each_field_ref(c, values, self.id_size, |s, id| {
                        add(id, if Some(s) == weak { REFERENT_SLOT } else { s as u16 });
                    });
                    head.object_id
                }
                SubRecord::ObjArray { head, .. } => {
                    for_each_ref(&rec, classes, self.id_size, |_, id| add(id, 0));
                    head.object_id
                }
                SubRecord::Class(d) => {
                    for_each_ref(&rec, classes, self.id_size, |label, id| match label {
                        EdgeLabel::Static(i) => add(id, i),
                        EdgeLabel::Super => add(id, SUPER_SLOT),
                        _ => add(id, LOADER_SLOT),
                    });
                    d.head.class_id
                }
                _ => continue,
            };
            if out.targets.len() > before {
                if let Some(r) = self.ranks.rank(id) {
                    out.objects.push(r as u32);
                    out.starts.push(before as u32);
                } else {
                    out.targets.truncate(before);
                    out.slots.truncate(before);
                }
            }
        }
        out.starts.push(out.targets.len() as u32);
        out
    }
}

/// The heap as the streaming pass holds it, for [`live::trace`].
struct StreamGraph<'a> {
    classes: &'a crate::classes::ClassTable,
    kind: &'a [AtomicU64],
    mirror_of: &'a FxHashMap<u32, ClassIdx>,
    /// One bit per object: a class mirror.
    mirrors: graph::BitSet,
    refs: &'a Refs,
}

/// Every object's references, by rank (CSR): one lookup per object in the search, which
/// visits objects in no order the file has.
struct Refs {
    starts: Vec<u64>,
    targets: Vec<u32>,
    slots: Vec<u16>,
}

impl Refs {
    /// Gathers the segments' references by rank; each segment is freed once copied.
    fn by_rank(n: usize, segs: Vec<SegEdges>) -> Refs {
        let mut starts = vec![0u64; n + 1];
        for seg in &segs {
            for (k, &r) in seg.objects.iter().enumerate() {
                starts[r as usize + 1] = u64::from(seg.starts[k + 1] - seg.starts[k]);
            }
        }
        for i in 0..n {
            starts[i + 1] += starts[i];
        }
        let total = starts[n] as usize;
        let (mut targets, mut slots) = (vec![0u32; total], vec![0u16; total]);
        for seg in segs {
            for (k, &r) in seg.objects.iter().enumerate() {
                let from = seg.starts[k] as usize..seg.starts[k + 1] as usize;
                let at = starts[r as usize] as usize;
                targets[at..at + from.len()].copy_from_slice(&seg.targets[from.clone()]);
                slots[at..at + from.len()].copy_from_slice(&seg.slots[from]);
            }
        }
        Refs { starts, targets, slots }
    }

    fn of(&self, o: u32) -> impl Iterator<Item = (u32, u16)> + '_ {
        let range = self.starts[o as usize] as usize..self.starts[o as usize + 1] as usize;
        self.targets[range.clone()].iter().copied().zip(self.slots[range].iter().copied())
    }
}

impl StreamGraph<'_> {
    fn word(&self, o: u32) -> u64 {
        self.kind[o as usize].load(Ordering::Relaxed)
    }

    /// Adds the references of the live objects in `range` to `acc`: a mirror's statics (not
    /// its superclass and loader) as its class's statics, anything else by the object's class.
    fn add_objects(&self, range: std::ops::Range<usize>, traced: &Live, acc: &mut EdgeMap) {
        for o in range.map(|o| o as u32) {
            if !traced.is_live(o as usize) {
                continue;
            }
            let mirror = self.mirror(o);
            let from = match mirror {
                Some(c) => Referrer::Statics(c),
                None => Referrer::Instances(ClassIdx((self.word(o) >> 32) as u32)),
            };
            for (t, slot) in self.refs.of(o) {
                // Not class-graph edges: a mirror's superclass and loader, a weak referent.
                if (mirror.is_some() && slot >= SUPER_SLOT) || (mirror.is_none() && slot == REFERENT_SLOT) {
                    continue;
                }
                let kind = self.word(t);
                let e = acc.entry(edge_key(from, (kind >> 32) as u32)).or_default();
                e.0 += (kind & u64::from(u32::MAX)) * 8;
                e.1 += 1;
            }
        }
    }
}

impl Traced for StreamGraph<'_> {
    fn len(&self) -> usize {
        self.kind.len()
    }

    fn class_and_bytes(&self, o: u32) -> (ClassIdx, u64) {
        let w = self.word(o);
        (ClassIdx((w >> 32) as u32), (w & u64::from(u32::MAX)) * 8)
    }

    fn mirror(&self, o: u32) -> Option<ClassIdx> {
        if !self.mirrors.contains(o as usize) {
            return None;
        }
        self.mirror_of.get(&o).copied()
    }

    fn edges(&self, o: u32, f: &mut dyn FnMut(u32, u32, bool)) {
        let mirror = self.mirror(o).is_some();
        for (t, slot) in self.refs.of(o) {
            f(t, u32::from(slot), mirror || slot != REFERENT_SLOT);
        }
    }

    fn via(&self, o: u32, label: u32) -> Via {
        let (class, mirror) = match self.mirror(o) {
            Some(c) => (c, true),
            None => (self.class_and_bytes(o).0, false),
        };
        live::via_of_slot(self.classes, class, mirror, label as u16)
    }
}
