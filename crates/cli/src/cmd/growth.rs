//! `leakscope growth`: which data structure keeps growing over a series of heaps.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::heap_series::{self, InputKind};
use crate::progress::Bar;

/// Find the data structures that keep growing across heaps of one program, what piles up in
/// them, the objects that hold them in the last heap (with their share, retained size and path
/// from a GC root), and applications loaded again and again (class-loader leaks).
///
/// Give the heaps oldest first: dumps taken after each phase of a workload, or summaries
/// saved with `leakscope summary`. Only live objects count (reachable from GC roots: heap
/// fillers and garbage do not). First, Cork's class ranking: a class is a candidate when the
/// ratio ranking (Figure 5) of its kept volume (the bytes still there in every later heap)
/// passes the rank threshold, after at least two growth phases, above its own fluctuation, and
/// still growing over the last third of the series; dumps taken at uneven times are judged per
/// unit of time. Then each candidate's objects are followed up their reference paths to the
/// structure they pile up in (a place matched across heaps by its path, such as
/// `StandardManager.sessions`), whose growth is judged the same way: each growing structure is
/// one finding. `--method cork` ranks raw volumes exactly as published; `--method slope`
/// applies Cork's slope ranking. No finding and no candidate means no leak was found.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope growth day1.hprof day2.hprof day3.hprof day4.hprof
  leakscope growth run-*.hprof --json > growth.json
  # in CI: exit 1 when something grows
  leakscope growth base.json p1.hprof p2.hprof p3.hprof --fail-on-growth
  # why a class is (or is not) reported
  leakscope growth *.hprof --explain com.example.Session
  leakscope growth *.hprof --dot slice.dot && dot -Tsvg slice.dot > slice.svg
  # a run recorded by `leakscope run` or `leakscope attach`
  leakscope growth run.db")]
pub struct GrowthArgs {
    /// Heap dumps (.hprof) or saved summaries (.json), oldest first; or one agent run store (RUN.db).
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub ranking: RankingArgs,
    /// Show the first N findings and candidates in text (all in JSON; 0 shows all).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,
    /// Also say why CLASS is or is not a candidate, and why each structure was chosen (repeatable).
    #[arg(long, value_name = "CLASS")]
    pub explain: Vec<String>,
    /// Holder objects shown per growing structure; 0 skips indexing the last dump.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub holders: usize,
    /// Write the slices of the shown candidates as a Graphviz graph to FILE.
    #[arg(long, value_name = "FILE")]
    pub dot: Option<PathBuf>,
    /// Exit with code 1 when there is a candidate (a leak regression test); 2 when there are too few heaps to judge.
    #[arg(long)]
    pub fail_on_growth: bool,
    /// Print one JSON document: {"snapshots":[…],"candidates":[{"class","rank","volumes","slice",…}],"findings":[{"structure","class","path","members","growing_paths","holders",…}],"loader_leaks":[…],…}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// How candidates are ranked, shared by `growth` and `report`.
#[derive(Debug, Args)]
pub struct RankingArgs {
    /// Ranking: ratio (Figure 5 on kept volumes, with noise and plateau tests), cork (Figure 5 as published), slope.
    #[arg(long, value_enum, default_value_t = MethodArg::Ratio)]
    pub method: MethodArg,
    /// Decay factor f of Figure 5, in percent: a volume that drops less than this still counts as growing.
    #[arg(long, value_name = "PERCENT", default_value_t = 15.0)]
    pub decay: f64,
    /// Rank threshold R of Figure 5 (rank in percentage points of growth, weighted by phase).
    #[arg(long, value_name = "R", default_value_t = 100.0)]
    pub rank_threshold: f64,
    /// Growth phases a candidate needs (Figure 5's MAX_LEAK_PHASES).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub min_phases: u32,
    /// Ignore classes that grew by less than this (64K, 2M, 1G or bytes).
    #[arg(long, value_name = "SIZE", default_value = "64K", value_parser = heap_series::parse_bytes)]
    pub min_growth: u64,
}

/// The ranking, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// Figure 5 on kept volumes, with noise and plateau tests.
    Ratio,
    /// Figure 5 on raw volumes, as published.
    Cork,
    /// Cork's slope ranking.
    Slope,
}

impl RankingArgs {
    /// The growth engine's options, checked.
    pub fn options(&self) -> anyhow::Result<growth::Options> {
        if !(0.0..100.0).contains(&self.decay) {
            anyhow::bail!("--decay must be a percentage from 0 to below 100, not {}", self.decay);
        }
        let method = match self.method {
            MethodArg::Ratio => growth::Method::Ratio,
            MethodArg::Cork => growth::Method::Cork,
            MethodArg::Slope => growth::Method::Slope,
        };
        let ratio = growth::RatioParams {
            decay: self.decay / 100.0,
            threshold: self.rank_threshold,
            min_phases: self.min_phases.max(1),
        };
        Ok(growth::Options { method, ratio, min_growth_bytes: self.min_growth, ..Default::default() })
    }
}

/// Sampled snapshots of a run store the ranking looks at (evenly spaced, the last included).
pub const RUN_SAMPLES: usize = 96;

/// Runs the command.
pub fn run(args: &GrowthArgs) -> anyhow::Result<Exit> {
    let opts = args.ranking.options()?;
    if let Some(store) = heap_series::run_store(&args.inputs)? {
        let run = heap_series::read_run(store, RUN_SAMPLES)?;
        gate_can_judge(args, &opts, run.samples.len(), "sampled snapshots in the run store")?;
        let report = run_report(&run, &opts, &args.explain);
        return finish(args, &report);
    }
    gate_can_judge(args, &opts, args.inputs.len(), "heaps")?;
    if let Some(dot) = &args.dot {
        dump_args::check_writable(dot)?;
    }
    let bar = Bar::new(args.dump_args.quiet);
    let (_, mut report, last) =
        read_series(&args.inputs, &args.dump_args, &opts, &args.explain, args.holders > 0, &bar)?;
    if let Some(last) = last.filter(|_| !report.findings.is_empty() || !report.loader_leaks.is_empty()) {
        let n = args.inputs.len();
        bar.set_prefix(&format!("{n}/{n} "));
        let snap = dump_args::snapshot_of(last.dump, &last.path, &args.dump_args, &bar)?;
        let retention = analysis::Retention::build(&snap, &bar);
        let paths = analysis::PathFinder::new(&snap, &bar);
        fill_holders(
            &mut report,
            &snap,
            Some(&last.live),
            &retention,
            &paths,
            dump_args::top_n(args.top),
            args.holders,
        );
    }
    finish(args, &report)
}

/// `--fail-on-growth` with fewer heaps than a class needs to be a candidate would always
/// pass: a gate that cannot judge is an error, before any dump is read.
fn gate_can_judge(args: &GrowthArgs, opts: &growth::Options, heaps: usize, what: &str) -> anyhow::Result<()> {
    let needed = opts.ratio.min_phases as usize + 1;
    if args.fail_on_growth && heaps < needed {
        anyhow::bail!(
            "--fail-on-growth needs at least {needed} heaps to judge growth (a class must grow over {} intervals), and {heaps} {what} were given",
            opts.ratio.min_phases
        );
    }
    Ok(())
}

/// The last heap of a series when it is a dump: where it is, the dump open (its warnings
/// already printed), and each object's place in its path tree with its search parent.
pub struct LastDump {
    /// The dump's path.
    pub path: PathBuf,
    /// The dump, open: its snapshot needs no second read (nor, for gzip, a second unpacking).
    pub dump: heap::Dump,
    /// Its live objects' places and parents, numbered as its snapshot numbers them.
    pub live: heap::Live,
}

/// Summarises dumps or saved summaries, oldest first, and ranks them. With `keep_last` and a
/// dump last, that dump's live objects' places are handed back, for holders and other
/// questions about the last heap.
pub fn read_series(
    inputs: &[PathBuf],
    dump_args: &DumpArgs,
    opts: &growth::Options,
    explain: &[String],
    keep_last: bool,
    bar: &Bar,
) -> anyhow::Result<(Vec<growth::HeapSummary>, report::GrowthReport, Option<LastDump>)> {
    let n = inputs.len();
    let mut series = Vec::with_capacity(n);
    let mut last = None;
    for (i, path) in inputs.iter().enumerate() {
        bar.set_prefix(&format!("{}/{n} ", i + 1));
        let kind = heap_series::kind(path)?;
        if i + 1 == n && keep_last && kind == InputKind::Dump {
            let (summary, kept) = heap_series::summarize_dump_with(path, dump_args, bar, true)?;
            series.push(summary);
            last = kept.map(|(dump, live)| LastDump { path: path.clone(), dump, live });
        } else {
            series.push(heap_series::summary_as(path, kind, dump_args, bar)?);
        }
    }
    heap_series::warn_if_unordered(&series, dump_args.quiet);
    let mut report = growth::analyze(&series, opts, explain);
    if series.iter().all(|s| s.gc_count.is_none()) {
        report.notes.push("heap dumps carry no allocation sites, so allocation_sites is empty".into());
    }
    Ok((series, report, last))
}

/// Finds, in the last heap, the objects of the first `top` growing structures (`max` each),
/// with their share of the growing objects and their paths from GC roots; each candidate
/// gets the holders of the structure it grows in most.
/// `live` is the dump's trace with parents when the series kept it; else it is traced again.
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

/// The growth report of an agent's run: candidates from the sampled snapshots, slices from
/// the walks, allocation sites from the samples.
pub fn run_report(run: &runstore::Run, opts: &growth::Options, explain: &[String]) -> report::GrowthReport {
    // Snapshots right after a walk count only objects the walk reached; the others also
    // count dead objects the collector has not freed yet (old-generation garbage), which
    // comes and goes in long waves. Rank on the first when there are enough of them.
    let interval = run.meta.get("interval").and_then(|i| i.parse::<u64>().ok()).unwrap_or(0);
    let opts = &opts.for_samples(interval);
    let needed = opts.ratio.min_phases as usize + 2;
    let clean: Vec<growth::HeapSummary> =
        run.samples.iter().zip(&run.clean).filter(|(_, &c)| c).map(|(s, _)| s.clone()).collect();
    let use_clean = clean.len() >= needed;
    let series = if use_clean { &clean[..] } else { &run.samples[..] };
    let mut report = growth::analyze_run(series, &run.walks, &run.holders, opts, explain);
    if !use_clean && !run.samples.is_empty() {
        report.notes.push(format!(
            "only {} walk-checked snapshots (fewer than {needed}): ranked on all sampled snapshots, which also count dead objects not yet collected; allow more walks with --budget or --max-pause",
            clean.len()
        ));
    }
    for c in &mut report.candidates {
        c.allocation_sites = run
            .sites
            .iter()
            .filter(|s| s.class == c.class)
            .take(3)
            .map(|s| {
                format!(
                    "{} ({} live, {} allocated)",
                    s.frames,
                    report::human_bytes(s.live_bytes),
                    report::human_bytes(s.allocated_bytes)
                )
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
        report.expected_dead = Some(crate::cmd::check::of_run(run, "the run"));
    }
    report
}

fn finish(args: &GrowthArgs, report: &report::GrowthReport) -> anyhow::Result<Exit> {
    if let Some(dot) = &args.dot {
        std::fs::write(dot, report.to_dot(dump_args::top_n(args.top)))
            .with_context(|| format!("cannot write {}", dot.display()))?;
    }
    dump_args::emit(args.json, report, |r| r.to_text(dump_args::top_n(args.top)))?;
    Ok(if args.fail_on_growth && !report.candidates.is_empty() { Exit::CheckFailed } else { Exit::Success })
}
