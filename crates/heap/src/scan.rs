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
use crate::raw::{Pair, RawKind};
use crate::refs::{RefsOut, SegmentRefs};
use crate::source::Dump;
use crate::warnings::{WarningKind, Warnings};

/// How many array gaps one segment keeps as layout evidence.
const EVIDENCE_PER_SEGMENT: usize = 512;

/// No object of any JVM is smaller than this (a header alone); a smaller gap between two
/// objects' ids means the ids are not addresses.
const MIN_OBJECT_BYTES: u64 = 8;

/// Instance counts and the smallest gap seen after one of them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct InstanceAcc {
    pub count: u64,
    pub gaps: Option<GapEvidence>,
    /// The class's segment-local kind key, with [`Keep::Kinds`].
    pub key: Option<u32>,
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

/// Android's heaps (HEAP DUMP INFO): `None` until a segment names one, which after the merge
/// means objects written before any heap was named (ART calls that heap "default").
pub(crate) type HeapId = Option<u32>;

/// An array Android writes just before a class's record to stand for storage the class object
/// embeds (Dalvik's `$staticOverhead`, ART's `$classOverhead`); the id is the class id + 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overhead {
    pub class_id: u64,
    pub array_id: u64,
    pub elem: BasicType,
    pub len: u32,
    pub heap: HeapId,
}

/// What the heap pass keeps of each object besides the per-class counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Nothing (the census).
    Nothing,
    /// (address, file offset): the snapshot reads each object again later.
    Offsets,
    /// (address, kind word): the class points-from graph needs each referent's class and
    /// size, not the record. The word is a segment-local [`RawKind`] key in the high half and
    /// the array length in the low half.
    Kinds,
}

/// What a segment (or all of them, merged) holds.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub classes: Vec<(u64, Box<ClassDump>)>,
    pub roots: Vec<(u64, Root)>,
    pub instances: FxHashMap<u64, InstanceAcc>,
    pub obj_arrays: FxHashMap<u64, LenCounts>,
    pub prim_arrays: FxHashMap<BasicType, LenCounts>,
    pub evidence: Vec<ArrayGap>,
    /// Gaps between consecutive objects, and how many of them were smaller than any object
    /// can be (ids that are sequence numbers rather than addresses).
    pub gaps: u64,
    pub tiny_gaps: u64,
    /// Android only: objects per heap, by kind and length (instances under length 0).
    pub by_heap: FxHashMap<(HeapId, RawKind), LenCounts>,
    /// Android only: the heap of each class object.
    pub class_heaps: Vec<(u64, HeapId)>,
    /// Android only: heap id → name string id.
    pub heap_names: FxHashMap<u32, u64>,
    /// Android only: the heap named last (carried into the next segment).
    pub last_heap: HeapId,
    /// Android only: class-overhead arrays, kept out of the counts above.
    pub overhead: Vec<Overhead>,
    /// (address, offset or kind word) of every object, as [`Keep`] asked (set by `run` only):
    /// each segment's in its piece ([`Self::pieces`]) until [`Self::compact`] moves them
    /// together.
    pub objects: graph::Column<Pair>,
    /// Where each segment's objects are in `objects`, in file order.
    pub pieces: Vec<std::ops::Range<usize>>,
    /// Per segment, in file order: how many objects it kept, and with [`Keep::Kinds`] the
    /// kind keys their words refer to.
    pub per_segment: Vec<(usize, Vec<RawKind>)>,
    pub warnings: Warnings,
    pub unread_bytes: u64,
    pub first_error: Option<hprof::Error>,
}

/// Bytes of the dump a walk reports at a time, and asks for ahead of itself.
pub(crate) const PREFETCH: usize = 32 << 20;

impl Scan {
    /// Scans every segment of `ix`, keeping per object what `keep` asks for, and writing every
    /// object's place and references into `refs` when given. Each segment's pages are
    /// released from the resident set once read.
    pub fn run(
        dump: &Dump,
        ix: &DumpIndex<'_>,
        keep: Keep,
        refs: Option<&RefsOut<'_>>,
        place: &graph::Placement,
        progress: &dyn Progress,
    ) -> Scan {
        let data = dump.data();
        // The index walked every record header and read the names: its pages can go (what
        // is read again comes back from the file), or a file of many segments and names keeps
        // tens of megabytes resident for nothing.
        dump.release(0, data.len());
        let id_size = ix.header.id_size;
        // The per-object list is the build's largest temporary. Each segment gets a slice of
        // one allocation, sized by the most objects its bytes can hold (the smallest record is
        // an empty primitive array): zeroed memory is only committed where written, so the
        // bound costs address space, not memory, and no pass is spent counting.
        let bounds: Vec<usize> = match keep {
            Keep::Nothing => vec![0; ix.segments.len()],
            _ => ix.segments.iter().map(|seg| seg.len / (10 + id_size.bytes()) + 1).collect(),
        };
        let mut objects: graph::Column<Pair> = graph::Column::zeros(bounds.iter().sum(), place);
        let mut sinks = Vec::with_capacity(bounds.len());
        let mut rest: &mut [Pair] = &mut objects;
        for &c in &bounds {
            let (mine, tail) = rest.split_at_mut(c);
            sinks.push(mine);
            rest = tail;
        }
        progress.start("reading heap", ix.heap_bytes());
        let last = ix.segments.len().saturating_sub(1);
        let truncated = ix.warnings.count(WarningKind::Truncated) > 0;
        let android = ix.header.version == hprof::Version::V103;
        // Reduced as the segments finish, in file order: a dump of a thousand segments would
        // otherwise hold a thousand per-class tables at once.
        let mut merged = ix
            .segments
            .par_iter()
            .zip(sinks.into_par_iter())
            .enumerate()
            .map(|(i, (seg, sink))| {
                // The walk reports every 32 MiB; the next 32 MiB are asked for in one request
                // then (out of core the dump is read from disk, 250 MB/s page fault by page
                // fault against 390 MB/s for `dd`). A segment shorter than that asks for the
                // bytes as far ahead of it as it is long, so that the file is asked for once:
                // each of H2's 1,600 segments of 1 MiB asking for 32 MiB had the kernel look
                // up 14 M cached pages, a sixth of the histogram's time.
                if i == 0 || seg.len as u64 >= PREFETCH as u64 {
                    dump.prefetch(seg.offset, PREFETCH);
                } else {
                    dump.prefetch(seg.offset + PREFETCH as u64, seg.len);
                }
                let read = |from: u64, to: u64| {
                    dump.release(from, (to - from) as usize);
                    dump.prefetch(to, PREFETCH);
                    progress.advance(to - from);
                };
                let mut refs = refs.map(|r| r.segment(i));
                let scan = Scan::segment(
                    data,
                    *seg,
                    id_size,
                    keep,
                    refs.as_mut(),
                    android,
                    sink,
                    truncated && i == last,
                    &read,
                );
                if let Some(refs) = refs {
                    refs.finish();
                }
                scan
            })
            .reduce(Scan::default, Scan::merge);
        progress.finish();
        let mut at = 0;
        merged.pieces = merged
            .per_segment
            .iter()
            .zip(&bounds)
            .map(|(&(n, _), &bound)| {
                at += bound;
                at - bound..at - bound + n
            })
            .collect();
        merged.objects = objects;
        merged
    }

    /// Moves the segments' pieces of `objects` together, in file order.
    pub fn compact(&mut self) {
        let len = compact(&mut self.objects, &self.pieces);
        self.pieces = std::iter::once(0..len).collect();
    }

    #[allow(clippy::too_many_arguments)] // one call site; a struct would only rename these
    fn segment(
        data: &[u8],
        seg: Segment,
        id_size: hprof::IdSize,
        keep: Keep,
        mut refs: Option<&mut SegmentRefs<'_, '_>>,
        android: bool,
        sink: &mut [Pair],
        cut_short: bool,
        read: &dyn Fn(u64, u64),
    ) -> Scan {
        let mut s = Scan::default();
        // Array kinds get their keys here; instances keep theirs in `instances`, which the
        // census needs anyway, so most objects cost no second lookup.
        let mut array_keys: FxHashMap<RawKind, u32> = FxHashMap::default();
        let mut kinds = Vec::new();
        let key_of = |raw: RawKind, kinds: &mut Vec<RawKind>| {
            kinds.push(raw);
            kinds.len() as u32 - 1
        };
        let start = seg.offset as usize;
        let body = data.get(start..start + seg.len).unwrap_or(&[]);
        let mut it = SubRecords::new(body, seg.offset, id_size);
        // Instances are counted by a dense index of their class: the gap after an instance is
        // then added to its class's evidence without a second lookup by class id (two hash
        // lookups an instance were a fifth of the histogram's time).
        let mut dense: FxHashMap<u64, u32> = FxHashMap::default();
        let mut accs: Vec<(u64, InstanceAcc)> = Vec::new();
        // The previous object: address, kind, length, and its class's dense index if an instance.
        let mut prev: Option<(u64, RawKind, u32, u32)> = None;
        let mut kept = 0;
        // Android: the heap objects are in, and the last record if it was a primitive array
        // (with whether it took a slot of `sink`), in case a class record claims it.
        let mut heap: HeapId = None;
        let mut last_prim: Option<(u64, BasicType, u32, bool)> = None;
        // Pages are given back every 32 MiB read: a segment can be gigabytes, and holding it all
        // would make the file's size, not the heap's, the scan's memory.
        let mut passing = crate::source::Passing::new(seg.offset, PREFETCH as u64, read);
        while let Some(item) = it.next() {
            let (off, rec) = match item {
                Ok(x) => x,
                Err(e) => {
                    s.fail(e, it.remaining() as u64, cut_short);
                    break;
                }
            };
            passing.at(off);
            if let Some(refs) = refs.as_mut() {
                refs.object(off, &rec);
            }
            // The object's address, kind and length (0 for instances), and with
            // `Keep::Kinds` its kind's segment-local key.
            let mut class = u32::MAX;
            let (addr, raw, len, key) = match rec {
                SubRecord::Instance { head, .. } => {
                    let raw = RawKind::Instance(head.class_id);
                    class = *dense.entry(head.class_id).or_insert_with(|| {
                        accs.push((head.class_id, InstanceAcc::default()));
                        accs.len() as u32 - 1
                    });
                    let acc = &mut accs[class as usize].1;
                    acc.count += 1;
                    let key = (keep == Keep::Kinds).then(|| *acc.key.get_or_insert_with(|| key_of(raw, &mut kinds)));
                    (head.object_id, raw, 0, key)
                }
                SubRecord::ObjArray { head, .. } => {
                    *s.obj_arrays.entry(head.class_id).or_default().entry(head.length).or_default() += 1;
                    let raw = RawKind::ObjArray(head.class_id);
                    let key = (keep == Keep::Kinds)
                        .then(|| *array_keys.entry(raw).or_insert_with(|| key_of(raw, &mut kinds)));
                    (head.object_id, raw, head.length, key)
                }
                SubRecord::PrimArray { head, elem, .. } => {
                    *s.prim_arrays.entry(elem).or_default().entry(head.length).or_default() += 1;
                    let raw = RawKind::PrimArray(elem);
                    let key = (keep == Keep::Kinds)
                        .then(|| *array_keys.entry(raw).or_insert_with(|| key_of(raw, &mut kinds)));
                    (head.object_id, raw, head.length, key)
                }
                SubRecord::Class(c) => {
                    if android {
                        let class_id = c.head.class_id;
                        if let Some((array_id, elem, len, took_slot)) = last_prim.take() {
                            if array_id == class_id.wrapping_add(1) {
                                s.uncount_prim(elem, len, heap);
                                kept -= usize::from(took_slot);
                                prev = None;
                                s.overhead.push(Overhead { class_id, array_id, elem, len, heap });
                            }
                        }
                        s.class_heaps.push((class_id, heap));
                    }
                    s.classes.push((off, c));
                    continue;
                }
                SubRecord::Root(r) => {
                    s.roots.push((off, r));
                    continue;
                }
                SubRecord::HeapDumpInfo(info) => {
                    heap = Some(info.heap_id);
                    s.heap_names.insert(info.heap_id, info.name_id);
                    continue;
                }
            };
            let took_slot = match sink.get_mut(kept) {
                Some(slot) => {
                    *slot = [addr, key.map_or(off, |key| u64::from(key) << 32 | u64::from(len))];
                    kept += 1;
                    true
                }
                None => false,
            };
            if android {
                *s.by_heap.entry((heap, raw)).or_default().entry(len).or_default() += 1;
                last_prim = match raw {
                    RawKind::PrimArray(elem) => Some((addr, elem, len, took_slot)),
                    _ => None,
                };
            }
            if let Some((prev_addr, prev_raw, prev_len, prev_class)) = prev {
                if addr > prev_addr {
                    let gap = addr - prev_addr;
                    match accs.get_mut(prev_class as usize) {
                        Some((_, acc)) => acc.gaps = fold_gap(acc.gaps, GapEvidence { min_gap: gap, at_min: 1 }),
                        None => s.observe_array_gap(prev_raw, prev_len, gap),
                    }
                }
                s.gaps += 1;
                s.tiny_gaps += u64::from(addr.abs_diff(prev_addr) < MIN_OBJECT_BYTES);
            }
            prev = Some((addr, raw, len, class));
        }
        s.instances = accs.into_iter().collect();
        s.per_segment.push((kept, kinds));
        s.last_heap = heap;
        passing.end(seg.offset + seg.len as u64);
        s
    }

    /// Takes back the count of a primitive array found to be a class's overhead.
    fn uncount_prim(&mut self, elem: BasicType, len: u32, heap: HeapId) {
        for lens in [self.prim_arrays.get_mut(&elem), self.by_heap.get_mut(&(heap, RawKind::PrimArray(elem)))]
            .into_iter()
            .flatten()
        {
            if let Some(n) = lens.get_mut(&len) {
                *n -= 1;
                if *n == 0 {
                    lens.remove(&len);
                }
            }
        }
    }

    /// Folds the gap after an array of `raw` (of `len` elements) into the evidence.
    fn observe_array_gap(&mut self, raw: RawKind, len: u32, gap: u64) {
        let elem = match raw {
            RawKind::Instance(_) => return,
            RawKind::ObjArray(_) => BasicType::Object,
            RawKind::PrimArray(elem) => elem,
        };
        if self.evidence.len() < EVIDENCE_PER_SEGMENT {
            self.evidence.push(ArrayGap { elem, len, gap });
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
        self.gaps += other.gaps;
        self.tiny_gaps += other.tiny_gaps;
        // Objects a segment wrote before naming a heap are in the heap named last before it.
        let carried = |h: HeapId| h.or(self.last_heap);
        for ((h, raw), lens) in other.by_heap {
            let dst = self.by_heap.entry((carried(h), raw)).or_default();
            for (len, n) in lens {
                *dst.entry(len).or_default() += n;
            }
        }
        self.class_heaps.extend(other.class_heaps.into_iter().map(|(c, h)| (c, carried(h))));
        self.overhead.extend(other.overhead.into_iter().map(|o| Overhead { heap: carried(o.heap), ..o }));
        self.heap_names.extend(other.heap_names);
        self.last_heap = other.last_heap.or(self.last_heap);
        self.per_segment.extend(other.per_segment);
        self.warnings.merge(other.warnings);
        self.unread_bytes += other.unread_bytes;
        self.first_error = match (self.first_error, other.first_error) {
            (Some(a), Some(b)) => Some(if b.offset() < a.offset() { b } else { a }),
            (a, b) => a.or(b),
        };
        self
    }
}

fn merge_lens<K: std::hash::Hash + Eq>(into: &mut FxHashMap<K, LenCounts>, from: FxHashMap<K, LenCounts>) {
    for (k, lens) in from {
        let dst = into.entry(k).or_default();
        for (len, n) in lens {
            *dst.entry(len).or_default() += n;
        }
    }
}

/// Moves `pieces` of `objects` together in their order and truncates to them, giving back the
/// pages each move leaves behind: else the moves commit the gaps' pages too, up to half again
/// the list. Returns the length.
pub(crate) fn compact(objects: &mut graph::Column<Pair>, pieces: &[std::ops::Range<usize>]) -> usize {
    let mut to = 0;
    for p in pieces {
        objects.copy_within(p.clone(), to);
        if p.start > to {
            discard(&mut objects[(to + p.len()).max(p.start)..p.end]);
        }
        to += p.len();
    }
    objects.truncate(to);
    to
}

/// Gives the whole pages inside `v` back to the system; they read as zeros afterwards. For
/// entries that are garbage (moved elsewhere) in a big allocation.
#[allow(unsafe_code)] // madvise on memory we own; see SAFETY below
fn discard(v: &mut [Pair]) {
    const PAGE: usize = 4096;
    let start = v.as_mut_ptr() as usize;
    let (first, end) = (start.div_ceil(PAGE) * PAGE, (start + std::mem::size_of_val(v)) / PAGE * PAGE);
    if end > first {
        // SAFETY: the range lies inside `v`, which this function borrows mutably; dropped
        // pages of private anonymous memory read back as zeros, a valid `Pair`; those of a
        // file mapping read back from the file.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED);
        }
    }
}
