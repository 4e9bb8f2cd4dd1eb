//! The objects in address order: the heap pass's places sorted or merged from runs, and the
//! stream's entries taken in that order.

use graph::Ints;
use rayon::prelude::*;

use crate::census::Census;
use crate::refs::{Entry, Refs};
use crate::warnings::WarningKind;

use super::model::*;

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
pub(super) fn sorted_columns(
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
    pub(super) fn new(refs: &Refs, order: Order, n: usize) -> StreamOrder {
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
    pub(super) fn stream(refs: &'a Refs, order: &'a StreamOrder, chunk: usize) -> Objects<'a> {
        let start = (chunk * CHUNK) as u64;
        let next_class = order.class_at.partition_point(|&c| c < start);
        let readers = order.starts[chunk].iter().map(|&entry| refs.reader(entry)).collect();
        Objects::Stream { readers, order, next_class }
    }

    /// Object `at` (the one after the last asked for) decoded into `e`, or `None` where its
    /// record is to be read.
    pub(super) fn entry<'e>(&mut self, at: usize, e: &'e mut Entry) -> Option<&'e Entry> {
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
