//! `leakscope growth`: which data structure keeps growing over a series of heaps.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use render::{Dot, TextWith};

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;
use crate::series_args::RankingArgs;

/// Find the data structures that keep growing across heaps of one program, what piles up in
/// them, the objects that hold them in the last heap (with their share, retained size and path
/// from a GC root), and applications loaded again and again (class-loader leaks).
///
/// Give the heaps oldest first: dumps taken after each phase of a workload, or summaries
/// saved with `leakscope summary`. Only live objects count (reachable from GC roots: heap
/// fillers and garbage do not). First, classes: a class is a candidate when the bytes it keeps
/// (those still there in every later heap) grew enough (--rank-threshold), often enough
/// (--min-phases), more than they fluctuate, and still grow over the last third of the series;
/// dumps taken at uneven times are judged per unit of time. Then each candidate's objects are
/// followed up their reference paths to the structure they pile up in (a place matched across
/// heaps by its path, such as `StandardManager.sessions`), whose growth is judged the same
/// way: each growing structure is one finding. No finding and no candidate means no leak was
/// found. The method comes from the Cork paper (docs/papers.md).
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
    /// Heap dumps (.hprof), V8 heap snapshots (.heapsnapshot) or saved summaries (.json), oldest first; or one agent run store (RUN.db).
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
    /// Exit with code 1 when there is a candidate (a leak regression test); 2 when the series cannot be judged (too few heaps, a dump not read whole, heaps of another process).
    #[arg(long)]
    pub fail_on_growth: bool,
    /// Print one JSON document: {"snapshots":[…],"candidates":[{"class","rank","volumes","slice",…}],"findings":[{"structure","class","path","members","growing_paths","holders",…}],"loader_leaks":[…],…}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// Runs the command.
pub fn run(args: &GrowthArgs) -> anyhow::Result<Exit> {
    let opts = args.ranking.options()?;
    if let Some(store) = app::inputs::run_store(&args.inputs)? {
        let run = app::series::read_run(store)?;
        if args.fail_on_growth {
            app::series::gate_can_judge(&opts, run.samples.len(), "sampled snapshot")?;
        }
        let mut report = app::series::run_report(&run, &opts, &args.explain);
        let bar = Bar::new(args.dump_args.quiet);
        if args.holders > 0 && !run.captures.is_empty() {
            let settings = args.dump_args.settings();
            app::series::explain_with_capture(
                &mut report,
                &run,
                &settings,
                &bar,
                dump_args::top_n(args.top),
                args.holders,
            )?;
        }
        return finish(args, &report, &bar);
    }
    if args.fail_on_growth {
        app::series::gate_can_judge(&opts, args.inputs.len(), "heap")?;
    }
    if let Some(dot) = &args.dot {
        dump_args::check_writable(dot)?;
    }
    let bar = Bar::new(args.dump_args.quiet);
    let settings = args.dump_args.settings();
    let req = app::series::SeriesRequest {
        inputs: &args.inputs,
        settings: &settings,
        options: &opts,
        explain: &args.explain,
        keep_last: false,
    };
    let report = app::series::growth_of_series(req, dump_args::top_n(args.top), args.holders, &bar)?;
    finish(args, &report, &bar)
}

/// Writes the graph if asked, prints the report with the warnings of the dumps `bar` read,
/// and judges the gate.
fn finish(args: &GrowthArgs, report: &report::GrowthReport, bar: &Bar) -> anyhow::Result<Exit> {
    if let Some(dot) = &args.dot {
        app::partial::write_whole(dot, report.to_dot(dump_args::top_n(args.top)).as_bytes())
            .with_context(|| format!("cannot write {}", dot.display()))?;
    }
    dump_args::emit(args.json, report, bar.read_warnings(), |r| r.to_text(dump_args::top_n(args.top)))?;
    if args.fail_on_growth && report.candidates.is_empty() {
        app::series::gate_has_evidence(report)?;
    }
    Ok(if args.fail_on_growth && !report.candidates.is_empty() { Exit::CheckFailed } else { Exit::Success })
}
