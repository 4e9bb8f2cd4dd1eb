//! `leakscope report`: everything about a leak in one self-contained HTML page.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use render::Html;

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;
use crate::series_args::ViewArgs;

/// Write one HTML file that shows a leak: heap occupancy over the series, the volume curves of
/// the growing and the biggest classes, each candidate's slice as a diagram with the holders'
/// paths from GC roots, and for the last dump the leak suspects, the dominator tree, the bytes
/// per GC root and the histogram.
///
/// The file has no script and loads nothing from the network: it opens offline and can be
/// attached to a bug. It holds class and field names but no string or array contents. Inputs
/// are read as `growth` reads them: dumps or saved summaries oldest first (the last dump is
/// fully indexed), one agent run store, or a single dump (no growth section).
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope report day1.hprof day2.hprof day3.hprof -o leak.html
  # one heap: suspects, dominators, roots
  leakscope report app.hprof -o app.html
  # a run recorded by `leakscope run` or `leakscope attach`
  leakscope report run.db -o run.html
  # the same model, as JSON
  leakscope report *.hprof --json > report.json")]
pub struct ReportArgs {
    /// Heap dumps (.hprof), V8 heap snapshots (.heapsnapshot) or saved summaries (.json), oldest first; or one agent run store (RUN.db).
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// Write the HTML report to FILE.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub view: ViewArgs,
    /// Print the report's model as one JSON document on stdout: {"inputs","growth":{…as growth --json…},"class_curves":[{"class","volumes"}],"heap":{"source","live_bytes","suspects","dominator_tree":[{"id","class","shallow_bytes","retained_bytes","share","children","nodes","more"}],"roots","histogram"},"show_values","notes"}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// Runs the command.
pub fn run(args: &ReportArgs) -> anyhow::Result<Exit> {
    if args.output.is_none() && !args.json {
        anyhow::bail!("say where the report goes: -o FILE.html (or --json for the model on stdout)");
    }
    if let Some(out) = &args.output {
        dump_args::check_writable(out)?;
    }
    let bar = Bar::new(args.dump_args.quiet);
    let view = args.view.view()?;
    let mut gathered = app::leak_report::gather(&args.inputs, &view, &args.dump_args.settings(), &bar)?;
    let last = gathered.last.take();
    let analyses = last.as_ref().map(|snap| app::leak_report::Analyses::of_last(snap, args.inputs.len(), &bar));
    let report = app::leak_report::model(&args.inputs, &view, gathered, analyses.as_ref(), &bar);
    if let Some(out) = &args.output {
        app::partial::write_whole(out, report.to_html().as_bytes())
            .with_context(|| format!("cannot write {}", out.display()))?;
        if !args.dump_args.quiet {
            eprintln!("wrote {} (open it in a browser: it needs no network)", out.display());
        }
    }
    if args.json {
        dump_args::emit(true, &report, bar.read_warnings(), |_| String::new())?;
    }
    Ok(Exit::Success)
}
