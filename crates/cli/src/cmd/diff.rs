//! `leakscope diff`: what changed between two heaps, per class and per reference edge.

use std::path::PathBuf;

use clap::Args;

use render::TextWith;

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;

/// Per-class deltas of instances and bytes, and per-edge deltas of referent bytes
/// (referrer class → referent class), from OLD to NEW, biggest changes first. Inputs are heap
/// dumps or summaries saved with `leakscope summary`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope diff before.hprof after.hprof\n  leakscope diff before.json after.hprof --top 50 --json"
)]
pub struct DiffArgs {
    /// The older heap (.hprof, V8 .heapsnapshot, or saved summary).
    pub old: PathBuf,
    /// The newer heap.
    pub new: PathBuf,
    /// Show the N biggest class and edge changes in text (all in JSON; 0 means all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Print one JSON document: {"old","new","classes":[{"class","old_instances","new_instances","old_bytes","new_bytes","delta_bytes","delta_instances"}],"edges":[{"from","to","old_bytes","new_bytes","delta_bytes"}]}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// Runs the command.
pub fn run(args: &DiffArgs) -> anyhow::Result<Exit> {
    let bar = Bar::new(args.dump_args.quiet);
    bar.set_prefix("old ");
    let settings = args.dump_args.settings();
    let old = app::inputs::summary_of(&args.old, &settings, &bar)?;
    bar.set_prefix("new ");
    let new = app::inputs::summary_of(&args.new, &settings, &bar)?;
    if let Some(message) = app::inputs::unordered(&[old.clone(), new.clone()]) {
        app::Reporter::note(&bar, &message);
    }
    let report = growth::diff(&old, &new);
    dump_args::emit(args.json, &report, bar.read_warnings(), |r| r.to_text(dump_args::top_n(args.top)))
}
