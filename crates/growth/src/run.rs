//! A running JVM's record judged: candidates from its samples, slices from its walks, and
//! candidates the walks refute.

use rustc_hash::FxHashMap;

use crate::analyze::{analyze, head_by_application_class, mark_same_structures};
use crate::holders::{hold, ContainerHolder};
use crate::ranking::Options;
use crate::series::Series;
use crate::slice;
use crate::summary::HeapSummary;

/// Ranks a running JVM's record: candidates from `samples` (estimated live volumes after
/// collections, many and cheap), slices from `walks` (exact class points-from graphs, few and
/// budgeted). With fewer than two walks (or edges that did not grow) the slice holds the
/// heaviest referrers of the last walk instead of growing edges, and a note says so; where
/// that walk saw too little of a candidate to say what holds it, its slice is empty and a
/// note says that its holder is not known yet.
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
    let mut unseen = Vec::new();
    for c in &mut report.candidates {
        if walks.last().is_some_and(|last_walk| growing || saw_enough_of(last_walk, c)) {
            c.slice = slice::slice(&series, &holders, &c.class);
            if !growing {
                // The last walk's heaviest referrers: what held it then, not references seen
                // growing.
                c.slice.edges.iter_mut().for_each(|e| e.growth_bytes = 0);
            }
            hold(&mut c.slice, containers_held, from_ms);
            continue;
        }
        // A container read between walks that grew is still evidence (its own growth), and
        // so with no whole walk at all (found by walks filtered by class: on a loaded machine
        // a Tomcat shop's first whole walk stopped at its deadline, and its listener list,
        // followed to PriceService, was never said); the chains of the biggest containers of
        // its class, as walks before the growth saw them, are not (a Tomcat's session map
        // was "held by" a ValuesView of another map).
        let mut read = report::Slice { classes: vec![c.class.clone()], ..Default::default() };
        hold(&mut read, containers_held, from_ms);
        if read.structure.is_some() {
            c.slice = read;
            continue;
        }
        let Some(last_walk) = walks.last() else { continue };
        let seen = last_walk.classes.iter().find(|v| v.name == c.class).map_or(0, |v| v.bytes);
        let now = c.volumes.last().copied().unwrap_or(0);
        c.slice = report::Slice {
            classes: vec![c.class.clone()],
            not_known: Some(format!(
                "the last heap walk saw {} of the {} the samples give it now: it grew after that walk",
                report::human_bytes(seen),
                report::human_bytes(now)
            )),
            ..Default::default()
        };
        unseen.push(c.class.clone());
    }
    if let (Some(last_walk), false) = (walks.last(), unseen.is_empty()) {
        let ago = samples.last().and_then(|s| s.time_ms).zip(last_walk.time_ms).map(|(s, w)| s.saturating_sub(w));
        report.notes.push(format!(
            "what holds {} is not known yet: the last heap walk ({}) saw less than a quarter of the bytes the samples give {} now, and no two walks saw references to {} grow; a heap walk with the growth under way would tell",
            unseen.join(", "),
            ago.map_or_else(|| last_walk.source.clone(), |a| format!("{} before the last sample", report::human_ms(a))),
            if unseen.len() == 1 { "it" } else { "them" },
            if unseen.len() == 1 { "it" } else { "them" },
        ));
    }
    mark_same_structures(&mut report.candidates);
    head_by_application_class(&mut report.candidates);
    if report.candidates.iter().all(|c| c.slice.structure.is_none()) {
        report.notes.push(
            "no growing structure found yet: the agent follows the biggest containers its heap walks saw (reading their arrays between walks without a pause, or at each walk on a forked copy), and none of those that hold a candidate grew; the slices above are by class; for findings by reference path, take three or more dumps with jcmd PID GC.heap_dump and run growth on them"
                .into(),
        );
    }
    report.notes.push(match (walks.len(), growing) {
        (0, _) => "no whole heap walk yet: candidates are ranked from sampled allocations, without slices by class (the walks wait for their budget); a structure is named only where a walk filtered by class found it and its reading grew".into(),
        (n, true) => format!("candidates ranked from {} sampled snapshots; slices from the growing edges of {n} heap walks", samples.len()),
        (n, false) => format!(
            "candidates ranked from {} sampled snapshots; slices show the heaviest referrers in the last of {n} heap walks (edges are growth-tested from 2 walks on)",
            samples.len()
        ),
    });
    report
}

/// A walk whose edges did not grow shows what held a candidate only when it saw at least this
/// share of the candidate's sampled bytes now. A Tomcat service on a loaded machine had one
/// walk, before its traffic began, when `java.beans.PropertyChangeSupport` was 192 B of the
/// 2.0 MiB its sessions later made: that walk's heaviest referrers of it
/// (`StandardContext`, `java.lang.Module`, …) were given as its holders.
const LAST_WALK_SHARE: f64 = 0.25;

/// Whether `walk` saw at least [`LAST_WALK_SHARE`] of candidate `c`'s sampled bytes now.
fn saw_enough_of(walk: &HeapSummary, c: &report::Candidate) -> bool {
    let now = c.volumes.last().copied().unwrap_or(0);
    let seen = walk.classes.iter().find(|v| v.name == c.class).map_or(0, |v| v.bytes);
    seen as f64 >= now as f64 * LAST_WALK_SHARE
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
