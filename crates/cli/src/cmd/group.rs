//! `leakscope group`: AntTracks' multi-level classification tree.

use clap::Args;

use render::Text;

use crate::dump_args::{self, OneDump};
use crate::exit::Exit;

/// Group objects by classifiers applied in order, with count, shallow, deep and retained bytes
/// per group.
///
/// Classifiers: class, package, loader (defining class loader), hierarchy (one level per
/// superclass), directly-rooted (the GC root or static field that references the object
/// itself), indirectly-rooted (the GC root whose shortest path reaches it). Deep bytes are
/// what the group reaches; retained bytes what would be freed if the whole group became
/// unreachable, which for a group is not the sum of its members' retained sizes.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope group app.hprof --by package,class\n  leakscope group app.hprof --by indirectly-rooted,class --top 5\n  leakscope group app.hprof --by directly-rooted --json"
)]
#[command(mut_arg("json", |a| a.help("Print one JSON document: {\"by\":[...],\"tree\":{\"key\",\"count\",\"shallow_bytes\",\"deep_bytes\",\"retained_bytes\",\"children\":[...],\"more_children\"}}.")))]
pub struct GroupArgs {
    /// Classifiers, comma-separated, outermost first.
    #[arg(long, value_name = "K1,K2,...", value_delimiter = ',', required = true)]
    pub by: Vec<analysis::Classifier>,
    /// Show the N biggest sub-groups of each group (0 means all).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    #[command(flatten)]
    pub input: OneDump,
}

/// Runs the command.
pub fn run(args: &GroupArgs) -> anyhow::Result<Exit> {
    let (bar, snap) = args.input.snapshot()?;
    let report = app::analyses::group(&snap, &args.by, args.top, &bar);
    dump_args::emit(args.input.json, &report, bar.read_warnings(), |r| r.to_text())
}
