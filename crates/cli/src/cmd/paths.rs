//! `leakscope paths`: why objects are still alive — shortest paths from GC roots.

use clap::Args;

use render::TextWith;

use crate::dump_args::{self, OneDump};
use crate::exit::Exit;

/// Shortest paths from GC roots to the selected objects, with each root's kind and details
/// (static field, thread and frame, JNI global, system class).
///
/// Paths never pass through the referent of a weak, soft, phantom or final reference: those
/// do not keep objects alive. Objects whose paths have the same root, classes and fields
/// (array indices and repeated steps through one class aside) are merged into one path with
/// a count, so a million leaked entries
/// of one map print as one path.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope paths app.hprof --select class:com.acme.Session\n  leakscope paths app.hprof --select id:0x7ff012a40 --json"
)]
#[command(mut_arg("dump", |a| a.help("The heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one")))]
#[command(mut_arg("json", |a| a.help("Print one JSON document: {\"selector\",\"selected\",\"paths\":[{\"root\":{\"kind\",\"detail\",\"label\"},\"steps\":[{\"id\",\"class\",\"field\",\"folded\"}],\"count\"}],\"unreachable\",\"more_shapes\"}.")))]
pub struct PathsArgs {
    /// The objects (class:NAME, class:NAME+, id:0xADDR, static:CLASS.FIELD, rule:A>B>C).
    #[arg(long = "select", value_name = "SEL", value_parser = dump_args::parse_selector)]
    pub selector: analysis::Selector,
    /// Show at most N distinct path shapes.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max: usize,
    #[command(flatten)]
    pub input: OneDump,
}

/// Runs the command.
pub fn run(args: &PathsArgs) -> anyhow::Result<Exit> {
    let (bar, heap) = args.input.heap()?;
    let report = heap.paths(&args.selector, args.max, &bar)?;
    dump_args::emit(args.input.json, &report, bar.read_warnings(), |r| TextWith::to_text(r, heap.paths_weak_note()))
}
