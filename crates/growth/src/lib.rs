//! Questions across a series of heaps: which data structure grows.
//!
//! Each heap is summarised as a [`HeapSummary`], Cork's class points-from graph (bytes per
//! class and per referrer → referent edge). [`analyze`] aligns a series of them by class
//! ([`Series`]), ranks every class and edge ([`ranking::judge`]: Cork's ratio ranking of
//! Figure 5 in [`ratio`], on kept volumes by default, or as published, or slope ranking), and
//! reports each candidate with its slice of growing edges up to the containing data structure.
//!
//! ```
//! use growth::{ClassVolume, HeapSummary};
//! let heap = |mb: u64| HeapSummary {
//!     source: format!("{mb} MB"),
//!     total_bytes: (mb + 100) << 20,
//!     classes: vec![ClassVolume { name: "Session".into(), instances: mb * 1000, bytes: mb << 20 }],
//!     ..Default::default()
//! };
//! let series: Vec<_> = [2, 4, 6, 8, 10].into_iter().map(heap).collect();
//! let report = growth::analyze(&series, &growth::Options::default(), &[]);
//! assert_eq!(report.candidates[0].class, "Session");
//! ```

pub mod names;
pub mod platform;
mod process;
pub mod ranking;
pub mod ratio;
mod series;
mod slice;
pub mod structures;
mod summary;

use rustc_hash::FxHashMap;

pub use process::{process_starts, same_process};
pub use ranking::{judge, judge_at, kept, positions, sampling_error, Method, Options, Verdict, RUN_MIN_SPAN_MS};
pub use ratio::{ratio_rank, RatioParams, RatioRank};
pub use series::{ClassSeries, EdgeSeries, Series};
pub use summary::{statics_of, ClassVolume, EdgeVolume, HeapSummary, LoaderCopies, PathVolume, ProcessMark};

/// Ranks a series of heaps (oldest first) and reports the growing classes with their slices;
/// `explain` names classes whose verdict to report whatever it is. Only the heaps of the last
/// heap's process are judged (a note says which were left out), and the heaps that could not
/// be read whole are listed ([`report::GrowthReport::incomplete`]).
pub fn analyze(summaries: &[HeapSummary], o: &Options, explain: &[String]) -> report::GrowthReport {
    let (last, mixed) = process::last_process(summaries);
    let mut report = analyze_one_process(&summaries[last..], o, explain);
    report.other_processes = summaries[..last].iter().map(|s| s.source.clone()).collect();
    report.notes.extend(mixed);
    report.incomplete =
        summaries.iter().filter_map(|s| Some(format!("{}: {}", s.source, s.incomplete.as_deref()?))).collect();
    report
}

fn analyze_one_process(summaries: &[HeapSummary], o: &Options, explain: &[String]) -> report::GrowthReport {
    let series = Series::new(summaries);
    let holders = slice::growing_holders(&series, o);
    let mut candidates: Vec<report::Candidate> = series
        .classes
        .iter()
        .filter_map(|c| {
            let v = judge_at(&c.bytes, &series.totals, series.at.as_deref(), o);
            v.is_candidate().then(|| report::Candidate {
                class: c.name.clone(),
                rank: v.rank,
                phases: v.phases,
                volumes: c.bytes.clone(),
                instances: c.instances.clone(),
                growth_bytes: v.growth_bytes,
                slice: slice::slice(&series, &holders, &c.name),
                holders: Vec::new(),
                allocation_sites: Vec::new(),
                same_structure_as: None,
            })
        })
        .collect();
    candidates.sort_by(|a, b| b.rank.total_cmp(&a.rank).then(b.growth_bytes.cmp(&a.growth_bytes)));
    let names: Vec<&str> = candidates.iter().map(|c| c.class.as_str()).collect();
    let findings = structures::findings(summaries, &names, series.at.as_deref(), o);
    if !findings.is_empty() {
        // Under findings the classes are read as what piles up: the application's classes and
        // the elements before the collections' internals (arrays, map nodes), each by rank.
        candidates.sort_by_key(|c| names::is_collection_part(&c.class));
    }
    mark_same_structures(&mut candidates);
    let mut report = report::GrowthReport {
        snapshots: summaries.iter().map(snapshot_row).collect(),
        ranking: report::RankingInfo {
            method: o.method.name().into(),
            decay: o.ratio.decay,
            threshold: if o.method == Method::Slope { 0.0 } else { o.ratio.threshold },
            min_phases: o.ratio.min_phases,
            min_growth_bytes: o.min_growth_bytes,
        },
        candidates,
        findings,
        loader_leaks: structures::loader_leaks(summaries, o.ratio.min_phases),
        explained: explain.iter().map(|name| explanation(&series, name, o)).collect(),
        notes: notes(summaries.len(), series.at.is_some(), o),
        not_enough_data: too_few(summaries.len(), o),
        expected_dead: None,
        incomplete: Vec::new(),
        other_processes: Vec::new(),
    };
    if report.not_enough_data.is_none() {
        report.not_enough_data = too_short(summaries, o);
        if report.not_enough_data.is_some() {
            report.candidates.clear();
            report.findings.clear();
            report.loader_leaks.clear();
        }
    }
    report
}

/// A container object seen by the agent's walk (it references a big array) and what holds
/// it, from the container outwards.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContainerHolder {
    /// The agent's number for the container object, the same in every walk and reading of it
    /// (0 in stores written before containers were numbered).
    pub id: u64,
    /// Class of the container.
    pub container: String,
    /// Class of its big array.
    pub array: String,
    /// The class most of the array's elements had, and how many had it, when the walk
    /// counted them (empty, 0 when not).
    pub element: String,
    /// See `element`.
    pub elements: u64,
    /// The container's field that holds the array, when known.
    pub array_field: String,
    /// Bytes of its big array.
    pub bytes: u64,
    /// Holders outwards: class names, `class NAME` for static fields, `root KIND`, `…`.
    pub path: Vec<String>,
    /// For each holder of `path`, its field that holds the step before it (`[]` for an array's
    /// element), or empty when not known.
    pub fields: Vec<String>,
    /// When the walk that last saw the chain ran, milliseconds since the Unix epoch (0 when not known).
    pub time_ms: u64,
    /// The array's bytes as read between walks, without a pause: (time, bytes), oldest first.
    pub sizes: Vec<(u64, u64)>,
}

impl ContainerHolder {
    /// A holder of the path as people name it: `Class.field` (`class Class.FIELD` for a static
    /// field), or the class alone when the field is not known.
    pub fn holder_name(&self, i: usize) -> String {
        match (self.path.get(i), self.fields.get(i).filter(|f| !f.is_empty() && f.as_str() != "[]")) {
            (Some(class), Some(field)) => format!("{class}.{field}"),
            (Some(class), None) => class.clone(),
            (None, _) => String::new(),
        }
    }
}

/// Adds to `slice` what holds each of its containers: the chain of the biggest container
/// object of that class, as non-growing edges (`growth_bytes` 0).
fn add_container_holders(slice: &mut report::Slice, holders: &[ContainerHolder]) {
    for container in slice.containers.clone() {
        // The container class itself, or the big array a container object holds.
        let Some(h) =
            holders.iter().filter(|h| h.container == container || h.array == container).max_by_key(|h| h.bytes)
        else {
            continue;
        };
        add_chain(slice, h, &container);
    }
}

/// Adds the chain of container `h` to `slice` as non-growing edges, from `start` (its
/// container's class, or its array's) outwards, each with the field that holds the step
/// before (an edge the slice has already, a growing one, is left as it is).
fn add_chain(slice: &mut report::Slice, h: &ContainerHolder, start: &str) {
    let mut steps: Vec<(String, Option<String>)> = Vec::new();
    if h.array == start && h.container != start {
        steps.push((h.container.clone(), Some(h.array_field.clone()).filter(|f| !f.is_empty())));
    }
    steps.extend(
        h.path
            .iter()
            .zip(h.fields.iter().map(Some).chain(std::iter::repeat(None)))
            .map(|(class, field)| (class.clone(), field.filter(|f| !f.is_empty()).cloned())),
    );
    let mut to = start.to_string();
    for (from, field) in steps {
        if let Some(e) = slice.edges.iter_mut().find(|e| e.from == from && e.to == to) {
            e.field = e.field.take().or(field);
            to = from;
            continue;
        }
        slice.edges.push(report::SliceEdge {
            from: from.clone(),
            to: to.clone(),
            bytes: h.bytes,
            growth_bytes: 0,
            field,
        });
        if !slice.classes.contains(&from) {
            slice.classes.push(from.clone());
        }
        to = from;
    }
}

/// A container whose array grew over the ranked snapshots (from `from_ms` on), read between
/// heap walks: by at least a quarter and [`MIN_STRUCTURE_GROWTH`] bytes, at
/// [`MIN_STRUCTURE_STEPS`] readings or more, and still at its largest when last read. The
/// walks' own sizes count as readings.
fn growth_of(h: &ContainerHolder, from_ms: u64) -> Option<(u64, u64, u64, u64)> {
    let mut readings: Vec<(u64, u64)> = h.sizes.iter().copied().filter(|&(t, _)| t >= from_ms).collect();
    if h.time_ms >= from_ms && h.time_ms > 0 {
        readings.push((h.time_ms, h.bytes));
        readings.sort_unstable();
    }
    let (&(first_ms, first), &(last_ms, last)) = (readings.first()?, readings.last()?);
    let peak = readings.iter().map(|r| r.1).max().unwrap_or(0);
    let steps = readings.windows(2).filter(|w| w[1].1 > w[0].1).count();
    let grew =
        last >= first + MIN_STRUCTURE_GROWTH && last * 4 >= first * 5 && last == peak && steps >= MIN_STRUCTURE_STEPS;
    grew.then_some((first, last, first_ms, last_ms))
}

/// A container's array must grow by this much to be a growing structure: a list's array
/// grows four bytes an element, so a thousand leaked listeners.
const MIN_STRUCTURE_GROWTH: u64 = 4096;
/// A growing structure's array grew at this many readings at least: a map's table that
/// doubled once while classes loaded (the application class loader's `parallelLockMap`, 4 to
/// 8 KiB in the first seconds) is no leak; a leaking map's table doubles again and again, a
/// list's array grows at every addition.
const MIN_STRUCTURE_STEPS: usize = 3;

/// The growing structure of a candidate's slice: among the containers that grew (see
/// [`growth_of`]), the one whose array or own class the slice holds, most growth first; else
/// the one that grew most, not seen holding it.
fn structure_of<'h>(
    slice: &report::Slice,
    holders: &'h [ContainerHolder],
    from_ms: u64,
) -> Option<(&'h ContainerHolder, report::HeldStructure)> {
    let growing = || holders.iter().filter_map(|h| Some((h, growth_of(h, from_ms)?)));
    let in_slice = |h: &ContainerHolder| slice.classes.iter().any(|c| *c == h.array || *c == h.container);
    let most = |a: &(&ContainerHolder, (u64, u64, u64, u64)), b: &(&ContainerHolder, (u64, u64, u64, u64))| {
        (a.1 .1 - a.1 .0).cmp(&(b.1 .1 - b.1 .0))
    };
    // One the slice holds; else the one that grew most over the same time, said as such (the
    // walks that linked classes ran before the leak began: the slice is of another heap).
    let linked = growing().filter(|(h, _)| in_slice(h)).max_by(most);
    let seen = linked.is_some();
    let (h, (first, last, first_ms, last_ms)) = linked.or_else(|| growing().max_by(most))?;
    let path: Vec<String> = (0..h.path.len()).map(|i| h.holder_name(i)).collect();
    let steps: Vec<names::Step<'_>> = h
        .path
        .iter()
        .zip(h.fields.iter().map(String::as_str).chain(std::iter::repeat("")))
        .take_while(|(class, _)| class.as_str() != "…")
        .map(|(class, field)| names::Step { owner: if class.starts_with("root ") { "" } else { class }, field })
        .collect();
    let name = names::person_name(&steps);
    Some((
        h,
        report::HeldStructure {
            name: name.as_ref().map_or_else(|| h.container.clone(), |n| n.name.clone()),
            library: name.as_ref().and_then(|n| n.library.clone()),
            known_as: name.as_ref().and_then(|n| n.known_as).map(str::to_string),
            seen_holding: seen,
            class: h.container.clone(),
            element: Some(h.element.clone()).filter(|e| !e.is_empty()),
            elements: h.elements,
            array_field: h.array_field.clone(),
            array: h.array.clone(),
            path,
            first_bytes: first,
            last_bytes: last,
            first_ms,
            last_ms,
            walked_ms: h.time_ms,
        },
    ))
}

/// Gives `slice` its growing structure, when a container read between walks grew where
/// it holds the candidate, with the chain that holds it; else the chains of its containers.
fn hold(slice: &mut report::Slice, holders: &[ContainerHolder], from_ms: u64) {
    let Some((h, structure)) = structure_of(slice, holders, from_ms) else {
        add_container_holders(slice, holders);
        return;
    };
    if structure.seen_holding {
        let start = if slice.classes.contains(&h.array) { h.array.clone() } else { h.container.clone() };
        add_chain(slice, h, &start);
    }
    slice.containers = vec![structure.class.clone()];
    slice.structure = Some(structure);
}

/// Ranks a running JVM's record: candidates from `samples` (estimated live volumes after
/// collections, many and cheap), slices from `walks` (exact class points-from graphs, few and
/// budgeted). With fewer than two walks the slice holds the heaviest referrers of the last
/// walk instead of growing edges, and a note says so.
pub fn analyze_run(
    samples: &[HeapSummary],
    walks: &[HeapSummary],
    containers_held: &[ContainerHolder],
    o: &Options,
    explain: &[String],
) -> report::GrowthReport {
    let mut report = analyze(samples, o, explain);
    refuted_by_walks(&mut report, samples, walks);
    if report.candidates.is_empty() {
        return report;
    }
    let series = Series::new(walks);
    let holders = if walks.len() >= 2 { slice::growing_holders(&series, o) } else { FxHashMap::default() };
    let growing = !holders.is_empty();
    // One walk (or edges that did not grow between walks): the heaviest referrers instead.
    let holders = if growing { holders } else { slice::heaviest_holders(&series) };
    let from_ms = samples.first().and_then(|s| s.time_ms).unwrap_or(0);
    for c in &mut report.candidates {
        if !walks.is_empty() {
            c.slice = slice::slice(&series, &holders, &c.class);
            hold(&mut c.slice, containers_held, from_ms);
        }
    }
    mark_same_structures(&mut report.candidates);
    head_by_application_class(&mut report.candidates);
    if report.candidates.iter().all(|c| c.slice.structure.is_none()) {
        report.notes.push(
            "no growing structure found yet: the agent follows the biggest containers its heap walks saw (reading their arrays between walks, without a pause), and none of those that hold a candidate grew; the slices above are by class; for findings by reference path, take three or more dumps with jcmd PID GC.heap_dump and run growth on them"
                .into(),
        );
    }
    report.notes.push(match (walks.len(), growing) {
        (0, _) => "no heap walk yet: candidates are ranked from sampled allocations, without slices (the walks wait for their budget)".into(),
        (n, true) => format!("candidates ranked from {} sampled snapshots; slices from the growing edges of {n} heap walks", samples.len()),
        (n, false) => format!(
            "candidates ranked from {} sampled snapshots; slices show the heaviest referrers in the last of {n} heap walks (edges are growth-tested from 2 walks on)",
            samples.len()
        ),
    });
    report
}

/// Between two heap walks, a class's exact reachable volume must have grown by at least this
/// share of what its sampled growth over the series predicts for their interval.
const WALK_GROWTH_SHARE: f64 = 0.5;

/// Drops the candidates whose growth the heap walks refute. Sampled volumes also count dead
/// objects until the collector frees them, and a collection that leaves the old generation
/// alone frees none of those there: on Serial, a steady program's `byte[]` read 16–37 MiB in
/// the samples after collections and 0.6–1.6 MiB in the walks, and its samples' noise now
/// and then passed every test of a growing series. A walk counts only what it reached from
/// the roots, so the first and the last walk inside the series, when they are a third of its
/// span apart or more, must show a share of the growth the samples claim between them; and so
/// must the first walk of the series' second half and the last. The second window is for a
/// structure that filled early and stopped: an LRU cache of 20,000 entries, full after 1 s of
/// a 22 s run, whose walks read 195 KB, then 800 KB at every later walk, while its samples'
/// jitter (64 KB each) ended high enough to rank it.
///
/// What the samples claim between two walks is read from the samples taken at those times
/// (the median of the nearest three at each end), not from the series' growth spread evenly
/// over its span: a leak grows as fast as the program runs, and a loaded machine runs it
/// unevenly: four runs of one 24 s listener leak beside three busy loops on two cores did
/// between 6.3 M and 17.2 M iterations. Spread evenly, a leak that slowed to about a quarter
/// of its rate halfway (the unit test below) was refuted as a cache that had filled up. Walks
/// that see no growth at all in a window refute it whatever the samples there say: a full
/// cache's samples jitter, and between two of its walks may read no growth either.
fn refuted_by_walks(report: &mut report::GrowthReport, samples: &[HeapSummary], walks: &[HeapSummary]) {
    let (Some(start), Some(end)) = (samples.first().and_then(|s| s.time_ms), samples.last().and_then(|s| s.time_ms))
    else {
        return;
    };
    if end <= start {
        return;
    }
    let inside = |w: &&HeapSummary| w.time_ms.is_some_and(|t| t >= start && t <= end);
    let middle = start + (end - start) / 2;
    let (Some(first), Some(half), Some(last)) = (
        walks.iter().find(inside),
        walks.iter().find(|w| inside(w) && w.time_ms.is_some_and(|t| t >= middle)),
        walks.iter().rfind(inside),
    ) else {
        return;
    };
    let time = |w: &HeapSummary| w.time_ms.unwrap_or(0);
    // Windows too short to speak for the series give no judgement.
    let windows: Vec<(&HeapSummary, &HeapSummary)> =
        [(first, last), (half, last)].into_iter().filter(|(a, b)| 3 * (time(b) - time(a)) >= end - start).collect();
    let bytes = |w: &HeapSummary, class: &str| w.classes.iter().find(|c| c.name == class).map_or(0, |c| c.bytes);
    let sampled_at = |t: u64, class: &str| -> f64 {
        let mut near: Vec<&HeapSummary> = samples.iter().collect();
        near.sort_by_key(|s| s.time_ms.unwrap_or(0).abs_diff(t));
        let mut v: Vec<u64> = near.iter().take(3).map(|s| bytes(s, class)).collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0) as f64
    };
    let refuted = |class: &str| -> Option<String> {
        windows.iter().find_map(|&(a, b)| {
            let (t1, t2) = (time(a), time(b));
            let expected = sampled_at(t2, class) - sampled_at(t1, class);
            let (v1, v2) = (bytes(a, class), bytes(b, class));
            // Walks that saw no growth at all refute whatever the samples' jitter says there.
            let short = v2 <= v1 || (v2 as f64 - v1 as f64) < WALK_GROWTH_SHARE * expected;
            short.then(|| {
                let during = if std::ptr::eq(a, first) { "" } else { " over the second half of the series" };
                let claim = if expected > 0.0 { format!("its samples at those times grew {expected:.0} B") } else { "the series grew".into() };
                format!(
                    "the heap walks {:.1} s apart{during} counted {v1} B then {v2} B reachable, where {claim}: the samples' growth is dead objects not yet freed, or a structure that stopped growing",
                    (t2 - t1) as f64 / 1000.0
                )
            })
        })
    };
    let mut dropped = Vec::new();
    report.candidates.retain(|c| match refuted(&c.class) {
        Some(why) => {
            dropped.push((c.class.clone(), why));
            false
        }
        None => true,
    });
    for e in &mut report.explained {
        if let Some((_, why)) = dropped.iter().find(|(class, _)| *class == e.class) {
            e.verdict = format!("not a candidate: {why}");
        }
    }
}

/// The candidates that head a structure, as `top` and the agent's metrics show them: with
/// what holds each (the slice's outermost non-growing holder, else its containers).
pub fn headline_candidates(report: &report::GrowthReport) -> Vec<report::TopCandidate> {
    report
        .candidates
        .iter()
        .filter(|c| c.same_structure_as.is_none())
        .map(|c| report::TopCandidate {
            class: c.class.clone(),
            rank: c.rank,
            growth_bytes: c.growth_bytes,
            held_by: c.slice.structure.as_ref().map(|s| s.name.clone()).or_else(|| {
                c.slice
                    .edges
                    .iter()
                    .rev()
                    .find(|e| e.growth_bytes == 0)
                    .map(|e| e.from.clone())
                    .or_else(|| (!c.slice.containers.is_empty()).then(|| c.slice.containers.join(", ")))
            }),
        })
        .collect()
}

/// A later candidate whose containers equal an earlier one's grows in the same structure.
fn mark_same_structures(candidates: &mut [report::Candidate]) {
    for i in 1..candidates.len() {
        let (before, rest) = candidates.split_at_mut(i);
        let c = &mut rest[0];
        let same = |b: &report::Candidate| match (&b.slice.structure, &c.slice.structure) {
            (Some(x), Some(y)) => x.name == y.name && x.class == y.class,
            (None, None) => b.slice.containers == c.slice.containers,
            _ => false,
        };
        if let Some(first) = before.iter().find(|b| b.same_structure_as.is_none() && same(b)) {
            c.same_structure_as = Some(first.class.clone());
        }
    }
}

/// Within each group of candidates that grow in one structure, the structure's element (see
/// [`report::HeldStructure::element`]), else the first class that is neither the JDK's nor an
/// array, heads it, at the group's place, as members head a finding:
/// in a Tomcat whose sessions leak, `StandardSession` says what grows where
/// `java.lang.String` (their ids, ranked first) did not.
fn head_by_application_class(candidates: &mut Vec<report::Candidate>) {
    let heads: Vec<String> =
        candidates.iter().filter(|c| c.same_structure_as.is_none()).map(|c| c.class.clone()).collect();
    for head in heads {
        let group: Vec<usize> = (0..candidates.len())
            .filter(|&i| candidates[i].class == head || candidates[i].same_structure_as.as_deref() == Some(&head))
            .collect();
        // The element the structure holds directly, when the walk counted it and it grows
        // there (a listener list's listener, not the items its carts hold); else, in a
        // structure read between walks, the application class that grew most (by rank, two
        // of a cart's classes took turns from one reading to the next); else the first
        // application class.
        let structure = candidates[group[0]].slice.structure.clone();
        let element = structure.as_ref().and_then(|s| s.element.clone());
        let direct = group.iter().find(|&&i| Some(&candidates[i].class) == element.as_ref());
        let apps = group.iter().filter(|&&i| structures::is_application(&candidates[i].class));
        let app = match (direct, structure) {
            (Some(&i), _) => i,
            (None, Some(_)) => match apps.max_by_key(|&&i| candidates[i].growth_bytes) {
                Some(&i) => i,
                None => continue,
            },
            (None, None) => match apps.copied().next() {
                Some(i) => i,
                None => continue,
            },
        };
        if candidates[app].class == head {
            continue;
        }
        let new_head = candidates[app].class.clone();
        for &i in &group {
            candidates[i].same_structure_as = (i != app).then(|| new_head.clone());
        }
        let c = candidates.remove(app);
        candidates.insert(group[0], c);
    }
}

fn explanation(series: &Series, name: &str, o: &Options) -> report::Explanation {
    match series.classes.iter().find(|c| c.name == name) {
        Some(c) => {
            let v = judge_at(&c.bytes, &series.totals, series.at.as_deref(), o);
            report::Explanation {
                class: name.into(),
                volumes: c.bytes.clone(),
                rank: v.rank,
                phases: v.phases,
                verdict: v.rejected.map_or_else(|| "candidate".into(), |r| format!("not a candidate: {r}")),
            }
        }
        None => report::Explanation {
            class: name.into(),
            volumes: vec![0; series.len()],
            rank: 0.0,
            phases: 0,
            verdict: "not in any of the heaps".into(),
        },
    }
}

fn notes(heaps: usize, uneven: bool, o: &Options) -> Vec<String> {
    let mut out = Vec::new();
    if uneven {
        out.push("the heaps were taken at uneven times: trends are judged per unit of time, not per heap".into());
    }
    out.extend(too_few(heaps, o));
    out
}

/// Why a series observed for too short a time is not judged yet, if it is not.
fn too_short(summaries: &[HeapSummary], o: &Options) -> Option<String> {
    let min = o.min_span_ms.unwrap_or(0);
    let first = summaries.first()?.time_ms?;
    let span = summaries.last()?.time_ms?.saturating_sub(first);
    (span < min).then(|| {
        format!(
            "observed for {}: growth is judged over at least {} (--min-span), so that a warm-up is not taken for a leak",
            report::human_ms(span),
            report::human_ms(min)
        )
    })
}

/// Why `heaps` heaps are too few to judge growth, if they are.
fn too_few(heaps: usize, o: &Options) -> Option<String> {
    let needed = o.ratio.min_phases as usize + 1;
    (heaps < needed).then(|| {
        format!(
            "{}: a class must grow over {} intervals after it first appears, so at least {needed} heaps are needed{}",
            report::count(heaps as u64, "heap"),
            o.ratio.min_phases,
            if heaps == 2 { " (to compare two heaps, use `leakscope diff OLD NEW`)" } else { "" }
        )
    })
}

/// Per-class and per-edge deltas from `old` to `new`, biggest changes first.
pub fn diff(old: &HeapSummary, new: &HeapSummary) -> report::DiffReport {
    let series = Series::new(&[old.clone(), new.clone()]);
    let mut classes: Vec<report::ClassDelta> = series
        .classes
        .iter()
        .map(|c| report::ClassDelta {
            class: c.name.clone(),
            old_instances: c.instances[0],
            new_instances: c.instances[1],
            old_bytes: c.bytes[0],
            new_bytes: c.bytes[1],
            delta_bytes: c.bytes[1] as i64 - c.bytes[0] as i64,
            delta_instances: c.instances[1] as i64 - c.instances[0] as i64,
        })
        .filter(|d| d.delta_bytes != 0 || d.delta_instances != 0)
        .collect();
    classes.sort_by(|a, b| b.delta_bytes.abs().cmp(&a.delta_bytes.abs()).then(a.class.cmp(&b.class)));
    let mut edges: Vec<report::EdgeDelta> = series
        .edges
        .iter()
        .map(|e| report::EdgeDelta {
            from: e.from.clone(),
            to: e.to.clone(),
            old_bytes: e.bytes[0],
            new_bytes: e.bytes[1],
            delta_bytes: e.bytes[1] as i64 - e.bytes[0] as i64,
        })
        .filter(|d| d.delta_bytes != 0)
        .collect();
    edges.sort_by(|a, b| b.delta_bytes.abs().cmp(&a.delta_bytes.abs()).then(a.from.cmp(&b.from)));
    report::DiffReport { old: snapshot_row(old), new: snapshot_row(new), classes, edges }
}

/// How a report names one heap.
fn snapshot_row(h: &HeapSummary) -> report::SnapshotRow {
    report::SnapshotRow {
        source: h.source.clone(),
        total_bytes: h.total_bytes,
        total_instances: h.total_instances,
        time_ms: h.time_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::{
        analyze_run, head_by_application_class, ClassVolume, ContainerHolder, EdgeVolume, HeapSummary, Options,
    };

    /// A heap at `ms` with `class` at `bytes`, beside a steady 50 MiB.
    fn heap(ms: u64, class: &str, bytes: u64) -> HeapSummary {
        HeapSummary {
            source: format!("gc {ms}"),
            time_ms: Some(1_000_000 + ms),
            total_bytes: bytes + (50 << 20),
            classes: vec![
                ClassVolume { name: class.into(), instances: bytes / 300, bytes },
                ClassVolume { name: "Other".into(), instances: 1000, bytes: 50 << 20 },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn walks_that_reach_no_growth_refute_the_growth_of_samples() {
        // Samples every 300 ms over 24 s whose byte[] climbs from 16 to 24 MiB, as samples that
        // count promoted garbage can; walks at 0.1 s and 16 s.
        let samples: Vec<HeapSummary> =
            (0..80u64).map(|i| heap(i * 300, "byte[]", (16 << 20) + i * (100 << 10) + (i % 3) * (40 << 10))).collect();
        let o = Options::default().for_samples(64 << 10);
        let explain = ["byte[]".to_string()];
        let growing = analyze_run(&samples, &[], &[], &o, &explain);
        assert_eq!(growing.candidates.len(), 1, "without walks the samples' growth stands");
        // Walks that found 1.5 MiB then 0.9 MiB reachable: not a leak.
        let walks = [heap(100, "byte[]", 1_536 << 10), heap(16_000, "byte[]", 900 << 10)];
        let refuted = analyze_run(&samples, &walks, &[], &o, &explain);
        assert!(refuted.candidates.is_empty(), "{:?}", refuted.candidates);
        assert!(refuted.explained[0].verdict.contains("dead objects"), "{}", refuted.explained[0].verdict);
        // Walks that found it growing as the samples do: the candidate stays.
        let walks = [heap(100, "byte[]", 1 << 20), heap(16_000, "byte[]", 6 << 20)];
        assert_eq!(analyze_run(&samples, &walks, &[], &o, &explain).candidates.len(), 1);
        // Walks too close together to speak for the series: no judgement from them.
        let walks = [heap(100, "byte[]", 1 << 20), heap(4_000, "byte[]", 1 << 20)];
        assert_eq!(analyze_run(&samples, &walks, &[], &o, &explain).candidates.len(), 1);
        // Walks every second that see it grow as the samples do, all along: the candidate stays.
        let walk_at = |i: u64, bytes: u64| heap(i * 1_000 + 50, "byte[]", bytes);
        let walks: Vec<HeapSummary> = (0..24).map(|i| walk_at(i, (1 << 20) + i * (340 << 10))).collect();
        assert_eq!(analyze_run(&samples, &walks, &[], &o, &explain).candidates.len(), 1);
        // Walks that see all of the growth in the first second and none after: a cache that
        // filled up (the agent test `run_reports_nothing_for_a_cache_that_filled_up`).
        let walks: Vec<HeapSummary> = (0..24).map(|i| walk_at(i, if i == 0 { 200 << 10 } else { 8 << 20 })).collect();
        let filled = analyze_run(&samples, &walks, &[], &o, &explain);
        assert!(filled.candidates.is_empty(), "{:?}", filled.candidates);
        assert!(filled.explained[0].verdict.contains("second half"), "{}", filled.explained[0].verdict);
    }

    #[test]
    fn a_leak_that_slows_down_is_judged_by_the_samples_of_each_window() {
        // A leak that grows 300 KiB per sample for 12 s, then 80 KiB per sample (the program
        // got less work): it still grows, and the walks every second see what the samples see.
        let at = |i: u64| if i < 40 { i * (300 << 10) } else { 40 * (300 << 10) + (i - 40) * (80 << 10) };
        let samples: Vec<HeapSummary> = (0..80u64).map(|i| heap(i * 300, "Widget", (1 << 20) + at(i))).collect();
        let walks: Vec<HeapSummary> =
            (0..24u64).map(|i| heap(i * 1_000 + 50, "Widget", (1 << 20) + at((i * 1_000 + 50) / 300))).collect();
        let o = Options::default().for_samples(64 << 10);
        let explain = ["Widget".to_string()];
        // Spread evenly over the span, the series' 14.8 MiB predicted 6.9 MiB over the second
        // half's 11 s of walks, which saw the 2.9 MiB that the samples of those 11 s saw: less
        // than half, and so refuted before.
        let report = analyze_run(&samples, &walks, &[], &o, &explain);
        assert_eq!(report.candidates.len(), 1, "{:?}", report.explained);
        // The same samples beside walks that stop growing at 12 s (a structure that filled
        // up while the samples counted garbage): refuted over the second half.
        let filled: Vec<HeapSummary> = (0..24u64)
            .map(|i| heap(i * 1_000 + 50, "Widget", (1 << 20) + at(((i * 1_000 + 50) / 300).min(40))))
            .collect();
        let refuted = analyze_run(&samples, &filled, &[], &o, &explain);
        assert!(refuted.candidates.is_empty(), "{:?}", refuted.candidates);
        assert!(refuted.explained[0].verdict.contains("second half"), "{}", refuted.explained[0].verdict);
    }

    fn candidate(class: &str, same: Option<&str>) -> report::Candidate {
        report::Candidate {
            class: class.into(),
            rank: 1.0,
            phases: 3,
            volumes: vec![],
            instances: vec![],
            growth_bytes: 1,
            slice: report::Slice::default(),
            holders: vec![],
            allocation_sites: vec![],
            same_structure_as: same.map(Into::into),
        }
    }

    #[test]
    fn an_application_class_heads_the_group_it_grows_in() {
        let mut c = vec![
            candidate("java.lang.String", None),
            candidate("byte[]", Some("java.lang.String")),
            candidate("java.util.HashMap$Node", None),
            candidate("org.apache.catalina.session.StandardSession", Some("java.lang.String")),
        ];
        head_by_application_class(&mut c);
        let order: Vec<(&str, Option<&str>)> =
            c.iter().map(|c| (c.class.as_str(), c.same_structure_as.as_deref())).collect();
        let session = "org.apache.catalina.session.StandardSession";
        assert_eq!(
            order,
            [
                (session, None),
                ("java.lang.String", Some(session)),
                ("byte[]", Some(session)),
                ("java.util.HashMap$Node", None),
            ]
        );
    }

    #[test]
    fn a_container_whose_array_grew_between_walks_is_the_structure_and_names_its_holder() {
        // Listeners pile up for 24 s; two walks at the start saw the list's array and the
        // classes holding them; after that no walk fits, and the array is read every second.
        let samples: Vec<HeapSummary> =
            (0..80u64).map(|i| heap(i * 300, "Listener", (1 << 20) + i * (200 << 10))).collect();
        let edge =
            |from: &str, to: &str, bytes: u64| EdgeVolume { from: from.into(), to: to.into(), bytes, references: 1 };
        let walk = |ms: u64, n: u64| HeapSummary {
            edges: vec![
                edge("java.lang.Object[]", "Listener", n * 32),
                edge("java.util.concurrent.CopyOnWriteArrayList", "java.lang.Object[]", n * 4),
            ],
            ..heap(ms, "Listener", n * 32)
        };
        let walks = [walk(100, 1_000), walk(900, 3_000)];
        let list = |id: u64, grows: bool| ContainerHolder {
            id,
            container: "java.util.concurrent.CopyOnWriteArrayList".into(),
            array: "java.lang.Object[]".into(),
            element: "Listener".into(),
            elements: 3_000,
            array_field: "array".into(),
            bytes: 12_000,
            path: vec!["Shop$PriceService".into(), "class Shop".into()],
            fields: vec!["listeners".into(), "PRICES".into()],
            time_ms: 1_000_900,
            sizes: (1..24).map(|i| (1_000_000 + i * 1_000, if grows { 12_000 + i * 6_000 } else { 12_000 })).collect(),
        };
        let o = Options::default().for_samples(64 << 10);
        let report = analyze_run(&samples, &walks, &[list(7, true), list(8, false)], &o, &[]);
        let s = report.candidates[0].slice.structure.as_ref().expect("a growing structure");
        assert_eq!(s.name, "Shop$PriceService.listeners");
        assert_eq!(s.path, ["Shop$PriceService.listeners", "class Shop.PRICES"]);
        assert_eq!((s.first_bytes, s.last_bytes), (12_000, 12_000 + 23 * 6_000));
        assert_eq!((s.element.as_deref(), s.elements), (Some("Listener"), 3_000));
        assert!(report.candidates[0]
            .slice
            .edges
            .iter()
            .any(|e| e.from == "Shop$PriceService" && e.field.as_deref() == Some("listeners")));
        assert!(s.seen_holding);
        // A list that stayed as the walk left it is no growing structure.
        let steady = analyze_run(&samples, &walks, &[list(8, false)], &o, &[]);
        assert!(steady.candidates[0].slice.structure.is_none());
        // Walks that ran before the leak began saw no edge to the list: the list that grew
        // over the same time is named, as not seen holding it.
        let before: Vec<HeapSummary> = [100, 900].iter().map(|&ms| heap(ms, "Listener", 0)).collect();
        let report = analyze_run(&samples, &before, &[list(7, true)], &o, &[]);
        let s = report.candidates[0].slice.structure.as_ref().expect("the list that grew");
        assert_eq!((s.name.as_str(), s.seen_holding), ("Shop$PriceService.listeners", false));
    }
}
