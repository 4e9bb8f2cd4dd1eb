//! Building a snapshot from a dump: the heap pass, the sort by address, the object pass over
//! records or the stream, the roots.

use graph::{Csr, Ints, Progress};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::addr_index::Buckets;
use crate::census::{Census, ReadOptions};
use crate::error::Error;
use crate::index::DumpIndex;
use crate::refs::{Layouts, RefsOut};
use crate::scan::{Keep, Scan};
use crate::source::Dump;
use crate::warnings::WarningKind;

use super::model::*;
use super::model::{BIG_SIZE8, CHUNK};
use super::order::{sort_objects, Kept, Objects, StreamOrder};
use super::records::ChunkFacts;
use super::records::{release_block, Ctx, Lookup};
use super::{Snapshot, READ_ONCE};

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
