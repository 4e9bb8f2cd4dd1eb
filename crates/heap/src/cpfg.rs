//! Cork's class points-from graph of one dump, read without building the object graph.
//!
//! Two passes over the segments. The heap pass that counts the census also keeps each
//! object's address and a kind word (class key and array length). An address rank (a bitmap
//! over the heap, see [`AddrRank`]) then places each object's class and size at its rank, 8
//! bytes per object. The second pass reads the segments again in file order and adds, for
//! every reference, the referent's size to the (referrer class → referent class) edge in
//! per-segment maps merged at the end. No reference is stored and no record is read twice
//! out of order.

use graph::Progress;
use hprof::{BasicType, SubRecord, SubRecords};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::addr_rank::AddrRank;
use crate::census::{Census, ReadOptions, Sizes};
use crate::classes::ClassIdx;
use crate::error::Error;
use crate::index::{DumpIndex, Segment};
use crate::scan::{Keep, RawKind, Scan};
use crate::snapshot::{for_each_field_ref, for_each_ref};
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

/// The class points-from graph of a dump: nodes are the census's per-class totals (every
/// object in the dump, as `jcmd GC.class_histogram` counts them), edges every strong
/// reference. A Reference's referent is not an edge, nor are a class's superclass and loader.
#[derive(Debug)]
pub struct ClassGraph {
    /// Classes, layout and per-class totals.
    pub census: Census,
    /// Edges, sorted by referrer then referent.
    pub edges: Vec<ClassEdge>,
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
        let data = dump.data();
        let ix = DumpIndex::build(data)?;
        let scan = Scan::run(dump, &ix, Keep::Kinds, progress);
        let (mut census, scan) = Census::from_scan(&ix, scan, opts, data.len() as u64)?;
        let sizes = Sizes::new(&census);
        let mirrors: Vec<(u64, u64)> = census
            .classes
            .iter()
            .filter(|(_, c)| c.dump_offset.is_some())
            .map(|(_, c)| (c.id, kind_word(sizes.mirror(c.statics.iter().map(|s| s.value)))))
            .collect();
        let ranks = AddrRank::new(&[&scan.objects, &mirrors]);
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
            for &(addr, word) in &scan.objects[at..at + n] {
                let (c, size) = classes[(word >> 32) as usize];
                let bytes = size.unwrap_or_else(|elem| census.layout.array_bytes(elem, word & u64::from(u32::MAX)));
                if let Some(r) = ranks.rank(addr) {
                    kind[r].store(kind_word((c, bytes)), Ordering::Relaxed);
                }
            }
        });
        for &(addr, word) in &mirrors {
            if let Some(r) = ranks.rank(addr) {
                kind[r].store(word, Ordering::Relaxed);
            }
        }
        let duplicates = (scan.objects.len() + mirrors.len() - ranks.len()) as u64;
        census.warnings.add(WarningKind::DuplicateId, duplicates, None, || "objects".into());
        drop(scan);
        let ctx = EdgeCtx { census: &census, id_size: ix.header.id_size, ranks: &ranks, kind: &kind };
        progress.start("summing references by class", ix.heap_bytes());
        let merged = ix
            .segments
            .par_iter()
            .fold(EdgeMap::default, |mut acc, seg| {
                ctx.add_segment(data, *seg, &mut acc);
                dump.release(seg.offset, seg.len);
                progress.advance(seg.len as u64);
                acc
            })
            .reduce(EdgeMap::default, merge);
        progress.finish();
        let mut edges: Vec<ClassEdge> = merged
            .into_iter()
            .map(|(key, (bytes, references))| {
                let (from, to) = edge_of_key(key);
                ClassEdge { from, to, bytes, references }
            })
            .collect();
        edges.sort_unstable_by_key(|e| (e.from, e.to));
        Ok(ClassGraph { census, edges })
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
    kind: &'a [AtomicU64],
}

impl EdgeCtx<'_> {
    /// Adds the strong references of the objects in `seg` to `acc`. The scan has already
    /// reported whatever in the segment cannot be read; this pass stops at the same place.
    fn add_segment(&self, data: &[u8], seg: Segment, acc: &mut EdgeMap) {
        let classes = &self.census.classes;
        let start = seg.offset as usize;
        let body = data.get(start..start + seg.len).unwrap_or(&[]);
        let mut add = |from: Referrer, id: u64| {
            if let Some(t) = self.ranks.rank(id) {
                let kind = self.kind[t].load(Ordering::Relaxed);
                let e = acc.entry(edge_key(from, (kind >> 32) as u32)).or_default();
                e.0 += (kind & u64::from(u32::MAX)) * 8;
                e.1 += 1;
            }
        };
        for (_, rec) in SubRecords::new(body, seg.offset, self.id_size).map_while(Result::ok) {
            match &rec {
                // Instances are the bulk: their class is looked up once, and a Reference's
                // referent slot is skipped by index.
                SubRecord::Instance { head, values } => {
                    let Some(class) = classes.by_id(head.class_id) else { continue };
                    let c = classes.get(class);
                    let skip = c.referent_slot.filter(|_| c.ref_strength != RefStrength::Strong);
                    for_each_field_ref(c, values, self.id_size, |s, id| {
                        if Some(s) != skip {
                            add(Referrer::Instances(class), id);
                        }
                    });
                }
                SubRecord::ObjArray { head, .. } => {
                    let Some(class) = classes.by_id(head.class_id) else { continue };
                    for_each_ref(&rec, classes, self.id_size, |_, id| add(Referrer::Instances(class), id));
                }
                SubRecord::Class(d) => {
                    let Some(class) = classes.by_id(d.head.class_id) else { continue };
                    for_each_ref(&rec, classes, self.id_size, |label, id| {
                        if !matches!(label, EdgeLabel::Super | EdgeLabel::Loader) {
                            add(Referrer::Statics(class), id);
                        }
                    });
                }
                _ => {}
            }
        }
    }
}
