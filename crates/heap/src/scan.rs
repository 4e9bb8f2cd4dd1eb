//! The heap pass: every sub-record of every segment, segments in parallel.
//!
//! One pass serves both the census (counts per class, no per-object memory) and the
//! snapshot builder (which also keeps each object's address and file offset). Array lengths
//! are counted per distinct length, so that sizes can be computed once the layout is known;
//! gaps between consecutive objects are kept as layout evidence.

use graph::Progress;
use hprof::{BasicType, ClassDump, Root, SubRecord, SubRecords};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::index::{DumpIndex, Segment};
use crate::layout::{ArrayGap, GapEvidence};
use crate::source::Dump;
use crate::warnings::{WarningKind, Warnings};

/// How many array gaps one segment keeps as layout evidence.
const EVIDENCE_PER_SEGMENT: usize = 512;

/// Instance counts and the smallest gap seen after one of them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct InstanceAcc {
    pub count: u64,
    pub gaps: Option<GapEvidence>,
}

/// Folds one more observation into the smallest-gap evidence.
fn fold_gap(acc: Option<GapEvidence>, ev: GapEvidence) -> Option<GapEvidence> {
    Some(match acc {
        Some(a) if a.min_gap < ev.min_gap => a,
        Some(a) if a.min_gap == ev.min_gap => GapEvidence { min_gap: a.min_gap, at_min: a.at_min + ev.at_min },
        _ => ev,
    })
}

/// Array counts by length.
pub(crate) type LenCounts = FxHashMap<u32, u64>;

/// What a segment (or all of them, merged) holds.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub classes: Vec<(u64, Box<ClassDump>)>,
    pub roots: Vec<(u64, Root)>,
    pub instances: FxHashMap<u64, InstanceAcc>,
    pub obj_arrays: FxHashMap<u64, LenCounts>,
    pub prim_arrays: FxHashMap<BasicType, LenCounts>,
    pub evidence: Vec<ArrayGap>,
    /// (address, file offset) of every object, when the caller keeps objects (set by `run` only).
    pub objects: Vec<(u64, u64)>,
    pub warnings: Warnings,
    pub unread_bytes: u64,
    pub first_error: Option<hprof::Error>,
}

#[derive(Clone, Copy)]
enum Prev {
    Instance(u64),
    Array(BasicType, u32),
}

impl Scan {
    /// Scans every segment of `ix`; `keep_objects` also records each object's address and offset.
    /// Each segment's pages are released from the resident set once read.
    pub fn run(dump: &Dump, ix: &DumpIndex<'_>, keep_objects: bool, progress: &dyn Progress) -> Scan {
        let data = dump.data();
        let id_size = ix.header.id_size;
        // The (address, offset) list is the build's largest temporary: allocate it once at its
        // exact size, counted by a cheap pass, and let each segment fill its own slice. Growing
        // per-segment vectors in worker threads left hundreds of MB stranded in their arenas.
        let counts: Vec<usize> = if keep_objects {
            ix.segments.par_iter().map(|seg| count_objects(data, *seg, id_size)).collect()
        } else {
            vec![0; ix.segments.len()]
        };
        let mut objects = vec![(0u64, 0u64); counts.iter().sum()];
        let mut sinks = Vec::with_capacity(counts.len());
        let mut rest: &mut [(u64, u64)] = &mut objects;
        for &c in &counts {
            let (mine, tail) = rest.split_at_mut(c);
            sinks.push(mine);
            rest = tail;
        }
        progress.start("reading heap", ix.heap_bytes());
        let last = ix.segments.len().saturating_sub(1);
        let truncated = ix.warnings.count(WarningKind::Truncated) > 0;
        let parts: Vec<Scan> = ix
            .segments
            .par_iter()
            .zip(sinks.into_par_iter())
            .enumerate()
            .map(|(i, (seg, sink))| {
                let s = Scan::segment(data, *seg, id_size, sink, truncated && i == last);
                dump.release(seg.offset, seg.len);
                progress.advance(seg.len as u64);
                s
            })
            .collect();
        progress.finish();
        let mut merged = parts.into_iter().fold(Scan::default(), Scan::merge);
        merged.objects = objects;
        merged
    }

    fn segment(data: &[u8], seg: Segment, id_size: hprof::IdSize, sink: &mut [(u64, u64)], cut_short: bool) -> Scan {
        let mut s = Scan::default();
        let start = seg.offset as usize;
        let body = data.get(start..start + seg.len).unwrap_or(&[]);
        let mut it = SubRecords::new(body, seg.offset, id_size);
        let mut prev: Option<(u64, Prev)> = None;
        let mut kept = 0;
        while let Some(item) = it.next() {
            let (off, rec) = match item {
                Ok(x) => x,
                Err(e) => {
                    s.fail(e, it.remaining() as u64, cut_short);
                    break;
                }
            };
            let (addr, this) = match rec {
                SubRecord::Instance { head, .. } => {
                    s.instances.entry(head.class_id).or_default().count += 1;
                    (head.object_id, Prev::Instance(head.class_id))
                }
                SubRecord::ObjArray { head, .. } => {
                    *s.obj_arrays.entry(head.class_id).or_default().entry(head.length).or_default() += 1;
                    (head.object_id, Prev::Array(BasicType::Object, head.length))
                }
                SubRecord::PrimArray { head, elem, .. } => {
                    *s.prim_arrays.entry(elem).or_default().entry(head.length).or_default() += 1;
                    (head.object_id, Prev::Array(elem, head.length))
                }
                SubRecord::Class(c) => {
                    s.classes.push((off, c));
                    continue;
                }
                SubRecord::Root(r) => {
                    s.roots.push((off, r));
                    continue;
                }
                SubRecord::HeapDumpInfo(_) => continue,
            };
            if let Some(slot) = sink.get_mut(kept) {
                *slot = (addr, off);
                kept += 1;
            }
            if let Some((prev_addr, p)) = prev {
                if addr > prev_addr {
                    s.observe_gap(p, addr - prev_addr);
                }
            }
            prev = Some((addr, this));
        }
        s
    }

    fn observe_gap(&mut self, p: Prev, gap: u64) {
        match p {
            Prev::Instance(class_id) => {
                let acc = self.instances.entry(class_id).or_default();
                acc.gaps = fold_gap(acc.gaps, GapEvidence { min_gap: gap, at_min: 1 });
            }
            Prev::Array(elem, len) => {
                if self.evidence.len() < EVIDENCE_PER_SEGMENT {
                    self.evidence.push(ArrayGap { elem, len, gap });
                }
            }
        }
    }

    fn fail(&mut self, e: hprof::Error, remaining: u64, cut_short: bool) {
        self.unread_bytes += remaining;
        // The cut at the end of a truncated file is already reported by the record index.
        if !(cut_short && matches!(e, hprof::Error::Truncated { .. })) {
            let detail = e.to_string();
            self.warnings.add(WarningKind::UnreadableSegmentTail, 1, Some(e.offset()), || detail);
        }
        self.first_error.get_or_insert(e);
    }

    fn merge(mut self, other: Scan) -> Scan {
        self.classes.extend(other.classes);
        self.roots.extend(other.roots);
        for (k, v) in other.instances {
            let acc = self.instances.entry(k).or_default();
            acc.count += v.count;
            if let Some(ev) = v.gaps {
                acc.gaps = fold_gap(acc.gaps, ev);
            }
        }
        merge_lens(&mut self.obj_arrays, other.obj_arrays);
        merge_lens(&mut self.prim_arrays, other.prim_arrays);
        self.evidence.extend(other.evidence);
        self.warnings.merge(other.warnings);
        self.unread_bytes += other.unread_bytes;
        self.first_error = match (self.first_error, other.first_error) {
            (Some(a), Some(b)) => Some(if b.offset() < a.offset() { b } else { a }),
            (a, b) => a.or(b),
        };
        self
    }
}

/// Objects in a segment, read exactly as [`Scan::segment`] reads them (stopping at the same error).
fn count_objects(data: &[u8], seg: Segment, id_size: hprof::IdSize) -> usize {
    let start = seg.offset as usize;
    let body = data.get(start..start + seg.len).unwrap_or(&[]);
    SubRecords::new(body, seg.offset, id_size)
        .map_while(Result::ok)
        .filter(|(_, r)| {
            matches!(r, SubRecord::Instance { .. } | SubRecord::ObjArray { .. } | SubRecord::PrimArray { .. })
        })
        .count()
}

fn merge_lens<K: std::hash::Hash + Eq>(into: &mut FxHashMap<K, LenCounts>, from: FxHashMap<K, LenCounts>) {
    for (k, lens) in from {
        let dst = into.entry(k).or_default();
        for (len, n) in lens {
            *dst.entry(len).or_default() += n;
        }
    }
}
