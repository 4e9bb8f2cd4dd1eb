//! A series of heaps (dumps or saved summaries, oldest first) or an agent's run, ranked by
//! the growth engine, with the holders of what grows found in the last dump.

use std::path::{Path, PathBuf};

use crate::inputs::{self, InputKind};
use crate::{snapshot_of, Error, ReadSettings, Reporter, Result};

/// Sampled snapshots of a run store the ranking looks at (evenly spaced, the last included).
pub const RUN_SAMPLES: usize = 96;

/// The last heap of a series when it is a dump: where it is, the dump open (its warnings
/// already reported), and each object's place in its path tree with its search parent.
pub struct LastDump {
    /// The dump's path.
    pub path: PathBuf,
    /// The dump, open: its snapshot needs no second read (nor, for gzip, a second unpacking).
    pub dump: heap::Dump,
    /// Its live objects' places and parents, numbered as its snapshot numbers them.
    pub live: heap::Live,
}

/// A series read and ranked.
pub struct Series {
    /// The heaps' summaries, oldest first.
    pub summaries: Vec<growth::HeapSummary>,
    /// The growth ranking.
    pub report: report::GrowthReport,
    /// The last heap, when asked for and a dump.
    pub last: Option<LastDump>,
}

/// What to read and how to rank it.
#[derive(Debug, Clone, Copy)]
pub struct SeriesRequest<'a> {
    /// Dumps or saved summaries, oldest first.
    pub inputs: &'a [PathBuf],
    /// How dumps are read.
    pub settings: &'a ReadSettings,
    /// How growth is judged.
    pub options: &'a growth::Options,
    /// Classes to explain (`--explain`).
    pub explain: &'a [String],
    /// Keep the last heap open when it is a dump, for questions about its objects.
    pub keep_last: bool,
}

/// A gate (`--fail-on-growth`) over fewer heaps than a class needs to be a candidate would
/// always pass: that is an error, before any dump is read. `what` names one of the inputs
/// counted (`heap`, `sampled snapshot`).
pub fn gate_can_judge(options: &growth::Options, heaps: usize, what: &str) -> Result<()> {
    let needed = options.ratio.min_phases as usize + 1;
    if heaps < needed {
        return Err(Error::Usage(format!(
            "--fail-on-growth needs at least {needed} heaps to judge growth (a class must grow over {} intervals), and {} {} given",
            options.ratio.min_phases,
            report::count(heaps as u64, what),
            if heaps == 1 { "was" } else { "were" }
        )));
    }
    Ok(())
}

/// A gate's verdict needs the whole evidence: a series with an input not read whole, heaps of
/// several processes, or too little data to judge gives an error (exit 2), not a pass.
pub fn gate_has_evidence(report: &report::GrowthReport) -> Result<()> {
    if let Some(why) = report.incomplete.first() {
        return Err(Error::Usage(format!(
            "--fail-on-growth cannot pass on input it could not read whole: {why}{}",
            if report.incomplete.len() > 1 {
                format!(" (and {} more)", report.incomplete.len() - 1)
            } else {
                String::new()
            }
        )));
    }
    if !report.other_processes.is_empty() {
        return Err(Error::Usage(format!(
            "--fail-on-growth needs the heaps of one JVM process, and {} come from another process than the last heap: give one process's heaps",
            report.other_processes.join(", ")
        )));
    }
    if let Some(why) = &report.not_enough_data {
        return Err(Error::Usage(format!("--fail-on-growth cannot judge this series: {why}")));
    }
    Ok(())
}

/// Summarises dumps or saved summaries, oldest first, and ranks them.
pub fn read_series(req: SeriesRequest<'_>, reporter: &dyn Reporter) -> Result<Series> {
    let n = req.inputs.len();
    let mut summaries = Vec::with_capacity(n);
    let mut last = None;
    // A V8 snapshot last in the series, taken with allocation tracking on, says where the
    // growing classes' live objects were allocated.
    let v8_sites = std::sync::Mutex::new(crate::v8::AllocationSites::default());
    let read = |i: usize| -> Result<(growth::HeapSummary, Option<LastDump>)> {
        let path = &req.inputs[i];
        reporter.input(i + 1, n);
        let kind = inputs::kind(path)?;
        if i + 1 == n && crate::v8::is_snapshot(path) {
            let h = crate::v8::load(path, req.settings, reporter)?;
            let (summary, sites) = crate::v8::summarize_with_sites(&h, &path.display().to_string());
            *v8_sites.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = sites;
            return Ok((summary, None));
        }
        if i + 1 == n && req.keep_last && kind == InputKind::Dump {
            let (summary, kept) = inputs::summarize_dump(path, req.settings, reporter, true)?;
            Ok((summary, kept.map(|(dump, live)| LastDump { path: path.clone(), dump, live })))
        } else {
            Ok((inputs::summary_as(path, kind, req.settings, reporter)?, None))
        }
    };
    // Two dumps at a time where two fit in memory: a summary's trace from the GC roots is
    // one thread's work, and the other dump's passes take the second core meanwhile.
    let pairs = two_at_a_time(req.inputs);
    let mut i = 0;
    while i < n {
        let done = if pairs && i + 1 < n {
            let (a, b) = rayon::join(|| read(i), || read(i + 1));
            vec![a?, b?]
        } else {
            vec![read(i)?]
        };
        i += done.len();
        for (summary, kept) in done {
            summaries.push(summary);
            last = kept.or(last);
        }
    }
    if let Some(message) = inputs::unordered(&summaries) {
        reporter.note(&message);
    }
    let mut report = growth::analyze(&summaries, req.options, req.explain);
    let v8_sites = v8_sites.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut unrecorded = Vec::new();
    for c in &mut report.candidates {
        if let Some(sites) = v8_sites.by_class.get(&c.class) {
            c.allocation_sites = sites.clone();
            if let Some(&(live, none)) = v8_sites.unrecorded.get(&c.class).filter(|u| u.1 > 0) {
                unrecorded.push(format!("{} of {} {}", report::thousands(none), report::thousands(live), c.class));
            }
        }
    }
    if !unrecorded.is_empty() {
        report.notes.push(format!(
            "V8 recorded no allocation site for part of the growing classes' live objects ({}; allocated before tracking began, or where its tracker does not see): the sites shown cover the others",
            unrecorded.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    // The agent's advice is for JVMs; a V8 snapshot's sites come from allocation tracking.
    if summaries.iter().all(|s| s.gc_count.is_none()) && !req.inputs.iter().any(|p| crate::v8::is_snapshot(p)) {
        report.notes.push("heap dumps carry no allocation sites: the agent's runs (leakscope run) record them".into());
    }
    Ok(Series { summaries, report, last })
}

/// Whether a series' dumps may be summarised two at a time: a summary takes less memory than
/// its dump's size, so two of the biggest dumps in half the memory available fit.
fn two_at_a_time(inputs: &[PathBuf]) -> bool {
    let biggest = inputs.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).max().unwrap_or(0);
    rayon::current_num_threads() > 1 && 4 * biggest < heap::memory_available()
}

/// The growth report of a series with the holders of its first `top` growing structures
/// (`holders` each) found in the last heap, when it is a dump; `holders` 0 skips that.
pub fn growth_of_series(
    req: SeriesRequest<'_>,
    top: usize,
    holders: usize,
    reporter: &dyn Reporter,
) -> Result<report::GrowthReport> {
    let Series { mut report, last, .. } = read_series(SeriesRequest { keep_last: holders > 0, ..req }, reporter)?;
    if let Some(last) = last.filter(|_| !report.findings.is_empty() || !report.loader_leaks.is_empty()) {
        let n = req.inputs.len();
        reporter.input(n, n);
        let snap = snapshot_of(last.dump, &last.path, req.settings, reporter, false)?;
        let retention = analysis::Retention::build(&snap, reporter);
        let paths = analysis::PathFinder::new(&snap, reporter);
        fill_holders(&mut report, &snap, Some(&last.live), &retention, &paths, top, holders);
    }
    Ok(report)
}

/// Finds, in the last heap, the objects of the first `top` growing structures (`max` each),
/// with their share of the growing objects and their paths from GC roots; each candidate
/// gets the holders of the structure it grows in most, and each class-loader leak what holds
/// its copies. `live` is the dump's trace with parents when the series kept it; else it is
/// traced again.
pub fn fill_holders(
    report: &mut report::GrowthReport,
    snap: &heap::Snapshot,
    live: Option<&heap::Live>,
    retention: &analysis::Retention,
    paths: &analysis::PathFinder<'_>,
    top: usize,
    max: usize,
) {
    for leak in &mut report.loader_leaks {
        analysis::loader_leak_details(snap, retention, paths, leak);
    }
    if report.findings.is_empty() {
        return;
    }
    let traced;
    let live = match live {
        Some(l) => l,
        None => match snap.live(true) {
            Some(l) => {
                traced = l;
                &traced
            }
            None => return,
        },
    };
    for f in report.findings.iter_mut().take(top.max(1)) {
        let Some(member) = f.members.first() else { continue };
        f.holders = analysis::structure_holders(snap, live, retention, paths, &f.path, &member.class, max);
    }
    for c in &mut report.candidates {
        let mut homes: Vec<(&report::Finding, u64)> = report
            .findings
            .iter()
            .filter_map(|f| Some((f, f.members.iter().find(|m| m.class == c.class)?.growth_bytes)))
            .collect();
        homes.sort_by_key(|h| std::cmp::Reverse(h.1));
        if let Some((f, _)) = homes.first() {
            c.holders = f.holders.iter().map(|h| h.holder.clone()).collect();
        }
    }
}

/// Names the holders of a run's first `top` candidates (`max` each) exactly, in the newest
/// heap dump the agent captured on a confirmed candidate (`capture_on_leak`): the structure
/// each piles up in there, and the objects at it with their retained sizes and paths from GC
/// roots. A note says which dump; a capture whose file is gone is noted and skipped.
pub fn explain_with_capture(
    report: &mut report::GrowthReport,
    run: &runstore::Run,
    settings: &ReadSettings,
    reporter: &dyn Reporter,
    top: usize,
    max: usize,
) -> Result<()> {
    let Some(capture) = run.captures.last() else { return Ok(()) };
    let at = run.meta.get("started_ms").and_then(|s| s.parse::<u64>().ok()).map_or_else(String::new, |start| {
        format!(" {} into the run", report::human_ms(capture.time_ms.saturating_sub(start)))
    });
    if !capture.path.exists() {
        report.notes.push(format!(
            "the heap dump the agent captured{at} ({}) is gone: holders are the walks' class chains",
            capture.path.display()
        ));
        return Ok(());
    }
    if report.candidates.is_empty() || max == 0 {
        return Ok(());
    }
    let (summary, kept) = inputs::summarize_dump(&capture.path, settings, reporter, true)?;
    let Some((dump, live)) = kept else { return Ok(()) };
    let snap = snapshot_of(dump, &capture.path, settings, reporter, false)?;
    let retention = analysis::Retention::build(&snap, reporter);
    let paths = analysis::PathFinder::new(&snap, reporter);
    let mut named = Vec::new();
    for c in report.candidates.iter_mut().take(top.max(1)) {
        let Some((path, structure)) = growth::structures::structure_in_one_heap(&summary, &c.class) else { continue };
        let holders = analysis::structure_holders(&snap, &live, &retention, &paths, &path, &c.class, max);
        if holders.is_empty() {
            continue;
        }
        named.push(format!("{} in {structure}", c.class));
        c.holders = holders.into_iter().map(|h| h.holder).collect();
    }
    report.notes.push(format!(
        "holders from the heap dump the agent captured{at} ({}, because {}){}",
        capture.path.display(),
        capture.reason,
        if named.is_empty() { String::new() } else { format!(": {}", named.join("; ")) }
    ));
    Ok(())
}

/// How many heap walks ran, their longest pause, and how many were skipped or stopped and
/// why (the agent's last event saying so).
fn walk_account(run: &runstore::Run) -> String {
    let longest = run.pauses_ms.iter().copied().fold(0.0, f64::max);
    let missed: Vec<&String> = run
        .events
        .iter()
        .filter(|e| e.starts_with("heap walk skipped") || e.starts_with("heap walk stopped"))
        .collect();
    let mut out = format!("{} (longest pause {longest:.0} ms)", report::count(run.walks.len() as u64, "heap walk"));
    if let Some(last) = missed.last() {
        out.push_str(&format!("; {} skipped or stopped, the last: {last}", missed.len()));
    }
    out
}

/// What a heap walk would take now, when the agent last found that none fits its
/// `max_pause` (and no walk has run since): the pause, the `--max-pause` that allows one, and
/// what a heap dump would cost instead.
pub fn walk_blocked(run: &runstore::Run) -> Option<&str> {
    run.meta.get("walk_blocked").map(String::as_str).filter(|s| !s.is_empty())
}

/// The sampled snapshots a run is ranked on, and a note when they are not the walk-checked
/// ones. A sampled estimate counts an object until the collector reports it freed, so it
/// also counts what died since the last collection (a sawtooth that looks like growth), and
/// what died in a generation that collection did not visit. Snapshots right after a walk
/// count only what the walk reached; those right after a collection, only what it kept.
/// The best checked series with enough snapshots for `opts` that reaches the run's end is used.
pub fn ranked_snapshots(run: &runstore::Run, opts: &growth::Options) -> (Vec<growth::HeapSummary>, Option<String>) {
    use runstore::Checked;
    let needed = opts.ratio.min_phases as usize + 2;
    let at_least = |level: Checked| -> Vec<growth::HeapSummary> { checked_at_least(run, level).cloned().collect() };
    let gap = |series: &[growth::HeapSummary]| gap_to_end(run, series.last());
    let usable = |series: &[growth::HeapSummary]| series.len() >= needed && reaches_end(run, series.last());
    let walked = at_least(Checked::Walk);
    if usable(&walked) {
        return (walked, None);
    }
    let why_not_walks = if walked.len() >= needed {
        format!(
            "the walk-checked snapshots end {} before the last sampled one (later walks were skipped or stopped)",
            report::human_ms(gap(&walked))
        )
    } else {
        format!(
            "only {} walk-checked (fewer than {needed}; allow more walks with --budget or --max-pause)",
            report::count(walked.len() as u64, "snapshot")
        )
    };
    let collected = at_least(Checked::Collection);
    if usable(&collected) {
        let note = format!(
            "{why_not_walks}: ranked on the {} snapshots sampled right after collections, which may still count dead objects in generations those collections did not visit",
            collected.len()
        );
        return (collected, Some(note));
    }
    let note = (!run.samples.is_empty()).then(|| {
        format!(
            "{why_not_walks}, and too few sampled right after collections: ranked on all sampled snapshots, which also count dead objects not yet collected"
        )
    });
    (run.samples.clone(), note)
}

/// When the agent found the JVM's heap full (`heap_full_ms`: the heap in use after several
/// collections in a row near its maximum) and it still is, `series` ends where it filled, and
/// the note says so: a heap that cannot grow holds a leak flat, and judged to the end the
/// ranking's decay took the flat part for a leak that stopped (Live's map, 157 of 160 MiB
/// after 56 full collections: "No growing class").
fn heap_full(run: &runstore::Run, series: &mut Vec<growth::HeapSummary>) -> Option<String> {
    let since: u64 = run.meta.get("heap_full_ms")?.parse().ok()?;
    let max = run.meta.get("heap_max_bytes").and_then(|m| m.parse::<u64>().ok()).unwrap_or(0);
    let kept = series.iter().take_while(|s| s.time_ms.is_none_or(|t| t <= since)).count();
    let after = series.len() - kept;
    series.truncate(kept);
    Some(format!(
        "the JVM's heap has been full since {} (after collections, near its maximum of {}): it can hardly grow, so a leak would look flat; growth is judged on the {kept} snapshots before it filled, {after} after left out",
        report::utc(since),
        report::human_bytes(max)
    ))
}

/// The sampled snapshots checked at least at `level`, oldest first.
fn checked_at_least(run: &runstore::Run, level: runstore::Checked) -> impl Iterator<Item = &growth::HeapSummary> {
    run.samples.iter().zip(&run.checked).filter(move |(_, &c)| c >= level).map(|(s, _)| s)
}

/// How long before the run's last sampled snapshot `last` was taken, milliseconds.
fn gap_to_end(run: &runstore::Run, last: Option<&growth::HeapSummary>) -> u64 {
    let time = |s: Option<&growth::HeapSummary>| s.and_then(|s| s.time_ms).unwrap_or(0);
    time(run.samples.last()).saturating_sub(time(last))
}

/// Whether a checked series whose newest snapshot is `last` still speaks for the end of the
/// run. Walks (and collections) come at least every walk_every while the budget allows, so a
/// gap of more than two of those (and a sampling period) after the last checked snapshot
/// means they stopped: a leak that grew afterwards would be missed (a Tomcat run whose later
/// walks were skipped for their pause was called "no leak" so).
fn reaches_end(run: &runstore::Run, last: Option<&growth::HeapSummary>) -> bool {
    // Stores written before walk_every was recorded had 60 s.
    let walk_every = run.meta.get("walk_every_ms").and_then(|w| w.parse::<u64>().ok()).unwrap_or(60_000);
    last.is_some() && gap_to_end(run, last) <= 2 * walk_every + 10_000
}

/// The snapshot whose sampled volumes best estimate what is live now: the newest one a walk
/// or a collection checked, if it still speaks for the end of the run (see [`reaches_end`]),
/// the newest walk-checked one when it is as recent (a walk also leaves out the dead objects
/// of the old generation); else the newest. `top` shows it, with its sampling error. A walk
/// 38 s old was preferred to a collection of a second ago on a shop whose leak grew 15 MiB a
/// second meanwhile: `top` read 27 MiB against jcmd's 173 MiB.
pub fn live_snapshot(run: &runstore::Run) -> Option<&growth::HeapSummary> {
    let time = |s: &growth::HeapSummary| s.time_ms.unwrap_or(0);
    let newest = checked_at_least(run, runstore::Checked::Collection).last().filter(|s| reaches_end(run, Some(s)));
    let walked = checked_at_least(run, runstore::Checked::Walk).last();
    let period = run.meta.get("period_ms").and_then(|p| p.parse::<u64>().ok()).unwrap_or(1_000);
    match (walked, newest) {
        (Some(w), Some(n)) if time(w) + 2 * period >= time(n) => Some(w),
        (_, Some(n)) => Some(n),
        _ => run.samples.last(),
    }
}

/// The agent's mean sampling interval in bytes (0 when the store does not say).
pub fn sampling_interval(run: &runstore::Run) -> u64 {
    run.meta.get("interval").and_then(|i| i.parse::<u64>().ok()).unwrap_or(0)
}

/// Reads an agent's run store, [`RUN_SAMPLES`] sampled snapshots evenly spaced.
pub fn read_run(path: &Path) -> Result<runstore::Run> {
    Ok(runstore::read(path, RUN_SAMPLES)?)
}

/// The growth report of an agent's run: candidates from the sampled snapshots, slices from
/// the walks, allocation sites from the samples, and what became of the objects declared dead.
pub fn run_report(run: &runstore::Run, opts: &growth::Options, explain: &[String]) -> report::GrowthReport {
    let opts = &growth::Options {
        min_span_ms: opts.min_span_ms.or(Some(growth::RUN_MIN_SPAN_MS)),
        ..opts.for_samples(sampling_interval(run))
    };
    let (mut series, note) = ranked_snapshots(run, opts);
    let full = heap_full(run, &mut series);
    let mut report = growth::analyze_run(&series, &run.walks, &run.holders, opts, explain);
    report.notes.extend(note);
    report.notes.extend(full);
    report.notes.push(walk_account(run));
    if let Some(blocked) = walk_blocked(run) {
        report.notes.push(format!("no heap walk fits now: {blocked}; holders are as the last walks left them"));
    }
    for c in &mut report.candidates {
        c.allocation_sites = run
            .sites
            .iter()
            .filter(|s| s.class == c.class)
            .take(3)
            .map(|s| report::AllocationSite {
                frames: s.frames.clone(),
                application_frame: growth::platform::application_frame(&s.frames),
                live_bytes: s.live_bytes,
                allocated_bytes: s.allocated_bytes,
            })
            .collect();
    }
    if run.samples.is_empty() {
        report.notes.push(
            "the run store holds no sampled snapshot yet: the JVM has not collected garbage since the agent started"
                .into(),
        );
    }
    if let Some(status) = run.meta.get("status").filter(|s| s.starts_with("disabled")) {
        report.notes.push(format!("the agent was {status}"));
    }
    if !run.expectations.is_empty() {
        report.expected_dead = Some(crate::expectations::of_run(run, "the run"));
    }
    report
}
