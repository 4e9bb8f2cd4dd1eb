//! `leakscope dominators`: the objects that keep the most memory alive, and what they dominate.

use clap::Args;

use render::TextWith;

use crate::dump_args::{self, OneDump};
use crate::exit::Exit;

/// Show the dominator tree: which objects keep the most memory alive.
///
/// An object's retained size is what the GC would free if that object became unreachable:
/// itself and everything only reachable through it (the objects it dominates). Without
/// --children, the list is the top of the tree: objects that only GC roots keep alive. With
/// --children ID, it is the objects that ID dominates, each with its share of ID's retained
/// size, to descend step by step toward the data structure that holds the memory (the
/// accumulation point). With --flat, the biggest retained sizes anywhere in the tree, nested
/// holders included. Dominators are exact, computed over the whole object graph.
///
/// A V8 heap snapshot (.heapsnapshot of Node.js or Chrome) is read too: the tree is V8's,
/// from its root, weak edges not retaining (as DevTools counts retained sizes), and ids are
/// V8's object ids (DevTools' @123 is 0x7b here; --children takes either).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope dominators app.hprof\n  leakscope dominators app.hprof --children 0x7ff012a40 --top 10\n  leakscope dominators app.hprof --json"
)]
#[command(mut_arg("dump", |a| a.help("The heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one")))]
#[command(mut_arg("json", |a| a.help("Print one JSON document: {\"parent\",\"live_bytes\",\"objects\":[{\"id\",\"class\",\"shallow_bytes\",\"retained_bytes\",\"share\",\"children\",\"represents\"}],\"more\",\"flat\"}.")))]
pub struct DominatorsArgs {
    /// Show the N biggest (0 means all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// List the objects this one dominates, instead of the top of the tree.
    #[arg(long, value_name = "ID", value_parser = dump_args::parse_id, conflicts_with = "flat")]
    pub children: Option<u64>,
    /// List the biggest retained sizes anywhere in the tree (a holder and the objects inside it
    /// all appear), instead of the top of the tree.
    #[arg(long)]
    pub flat: bool,
    #[command(flatten)]
    pub input: OneDump,
}

/// Runs the command.
pub fn run(args: &DominatorsArgs) -> anyhow::Result<Exit> {
    let (bar, heap) = args.input.heap()?;
    let report = heap.dominators(args.children, args.top, args.flat, &bar)?;
    dump_args::emit(args.input.json, &report, bar.read_warnings(), |r| TextWith::to_text(r, heap.weak_note()))
}
