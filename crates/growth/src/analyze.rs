//! A series of heaps judged: candidates ranked, their slices and notes, and the candidates
//! that head a structure.

use crate::diff::snapshot_row;
use crate::ranking::{grows_steadily, judge_at, Method, Options};
use crate::series::Series;
use crate::summary::HeapSummary;
use crate::{names, process, slice, structures};

/// Ranks a series of heaps (oldest first) and reports the growing classes with their slices;
/// `explain` names classes whose verdict to report whatever it is. Only the heaps of the last
/// heap's process are judged (a note says which were left out), and the heaps that could not
/// be read whole are listed ([`report::GrowthReport::incomplete`]).
pub fn analyze(summaries: &[HeapSummary], o: &Options, explain: &[String]) -> report::GrowthReport {
    let (mine, mixed) = process::last_process(summaries);
    let mut report = if mine.len() == summaries.len() {
        analyze_one_process(summaries, o, explain)
    } else {
        let judged: Vec<HeapSummary> = mine.iter().map(|&i| summaries[i].clone()).collect();
        analyze_one_process(&judged, o, explain)
    };
    report.other_processes =
        (0..summaries.len()).filter(|i| !mine.contains(i)).map(|i| summaries[i].source.clone()).collect();
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
            v.is_candidate().then(|| candidate(c, &v, slice::slice(&series, &holders, &c.name)))
        })
        .collect();
    candidates.sort_by(|a, b| b.rank.total_cmp(&a.rank).then(b.growth_bytes.cmp(&a.growth_bytes)));
    // A short series searches the places of every class that grew at a steady pace, and
    // judges each structure by all it holds: a session map's few bytes of sessions a step are
    // significant together with their strings and nodes, not one class at a time.
    let short = crate::ranking::is_short(summaries.len(), o);
    let seeds: Vec<&str> = if short {
        series
            .classes
            .iter()
            .filter(|c| grows_steadily(&c.bytes, series.at.as_deref(), o))
            .map(|c| c.name.as_str())
            .collect()
    } else {
        candidates.iter().map(|c| c.class.as_str()).collect()
    };
    let findings = structures::findings(summaries, &seeds, series.at.as_deref(), o);
    if short {
        // The classes that pile up in a growing structure are candidates with it.
        let members: Vec<&str> = findings.iter().flat_map(|f| f.members.iter().map(|m| m.class.as_str())).collect();
        for c in series.classes.iter().filter(|c| members.contains(&c.name.as_str())) {
            if candidates.iter().any(|x| x.class == c.name) {
                continue;
            }
            let v = judge_at(&c.bytes, &series.totals, series.at.as_deref(), o);
            candidates.push(candidate(c, &v, slice::slice(&series, &holders, &c.name)));
        }
        candidates.sort_by_key(|c| std::cmp::Reverse(c.growth_bytes));
    }
    if !findings.is_empty() {
        // Under findings the classes are read as what piles up: the application's classes and
        // the elements before the collections' internals (arrays, map nodes), each by rank.
        candidates.sort_by_key(|c| names::is_collection_part(&c.class));
    }
    mark_same_structures(&mut candidates);
    let mut report = report::GrowthReport {
        snapshots: summaries.iter().map(snapshot_row).collect(),
        ranking: if short {
            // No rank decides a short series: say what did.
            report::RankingInfo {
                method: report::RankingInfo::STEADY.into(),
                decay: 0.0,
                threshold: 0.0,
                min_phases: o.ratio.min_phases,
                min_growth_bytes: crate::ranking::short_floor(&series.totals, o),
            }
        } else {
            report::RankingInfo {
                method: o.method.name().into(),
                decay: o.ratio.decay,
                threshold: if o.method == Method::Slope { 0.0 } else { o.ratio.threshold },
                min_phases: o.ratio.min_phases,
                min_growth_bytes: o.min_growth_bytes,
            }
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
    if report.candidates.is_empty() && report.not_enough_data.is_none() {
        report.not_enough_data = crate::ranking::unexplained_heap_growth(&series.totals, series.at.as_deref(), o);
    }
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

/// A class's row in the ranking: its verdict's figures and its slice.
fn candidate(c: &crate::series::ClassSeries, v: &crate::ranking::Verdict, slice: report::Slice) -> report::Candidate {
    report::Candidate {
        class: c.name.clone(),
        rank: v.rank,
        phases: v.phases,
        volumes: c.bytes.clone(),
        instances: c.instances.clone(),
        growth_bytes: v.growth_bytes,
        slice,
        holders: Vec::new(),
        allocation_sites: Vec::new(),
        same_structure_as: None,
    }
}

/// The candidates that head a structure, as `top` and the agent's metrics show them: with
/// what holds each, only where a walk followed its objects' path to it (the slice's
/// structure) and at least one step beyond it. The class graph's edges and the heap's
/// containers are not a holder: they say which classes refer to which, and on a JDK 25 shop
/// whose walks never fitted the pause bound, `top` named fourteen class loaders and
/// `ApplicationContext` for a listener list's `byte[]`; a structure whose holder no walk
/// learned is named by its class alone, and `top` gave "held by CopyOnWriteArrayList" for the
/// same shop's listener list, the list's own class.
pub fn headline_candidates(report: &report::GrowthReport) -> Vec<report::TopCandidate> {
    report
        .candidates
        .iter()
        .filter(|c| c.same_structure_as.is_none())
        .map(|c| {
            let held = c.slice.structure.as_ref().filter(|s| s.path.first().is_some_and(|p| p != "…"));
            report::TopCandidate {
                class: c.class.clone(),
                rank: c.rank,
                growth_bytes: c.growth_bytes,
                held_by: held.map(|s| s.name.clone()),
                held_by_walked_ms: held.map(|s| s.walked_ms),
            }
        })
        .collect()
}

/// A later candidate whose containers equal an earlier one's grows in the same structure.
/// Two candidates with no containers are not known to share one: their holders are unknown.
pub(crate) fn mark_same_structures(candidates: &mut [report::Candidate]) {
    for i in 1..candidates.len() {
        let (before, rest) = candidates.split_at_mut(i);
        let c = &mut rest[0];
        let same = |b: &report::Candidate| match (&b.slice.structure, &c.slice.structure) {
            (Some(x), Some(y)) => x.name == y.name && x.class == y.class,
            (None, None) => !c.slice.containers.is_empty() && b.slice.containers == c.slice.containers,
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
pub(crate) fn head_by_application_class(candidates: &mut Vec<report::Candidate>) {
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
    if let Some(step) = o.per_heap_bytes {
        out.push(format!(
            "a class or structure that kept {} more at every heap than at the one before is a candidate whatever its rank (--per-heap)",
            report::human_bytes(step)
        ));
    } else if heaps > o.ratio.min_phases as usize && crate::ranking::is_short(heaps, o) {
        out.push(format!(
            "{heaps} heaps are fewer than the ranking needs: a structure is a finding when all it holds grew at every step at a steady pace (no step under half another), by {:.1}% of the last heap or more, and the classes piling up in it are the candidates; from so few heaps a working set that happened to rise twice evenly looks the same, so a heap taken after the same interval again confirms or clears it",
            crate::ranking::SHORT_SERIES_SHARE * 100.0
        ));
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
