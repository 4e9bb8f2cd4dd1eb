//! `leakscope dominators`: the objects that keep the most memory alive, and what they dominate.

use std::path::PathBuf;

use clap::Args;
use heap::ObjIdx;

use render::Text;

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;

/// Show the dominator tree: which objects keep the most memory alive.
///
/// An object's retained size is what the GC would free if that object became unreachable:
/// itself and everything only reachable through it (the objects it dominates). Without
/// --children, the list is the top of the tree: objects that only GC roots keep alive. With
/// --children ID, it is the objects that ID dominates, each with its share of ID's retained
/// size, to descend step by step toward the data structure that holds the memory (the
/// accumulation point). With --flat, the biggest retained sizes anywhere in the tree, nested
/// holders included. Dominators are exact (Semi-NCA over the whole object graph).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope dominators app.hprof\n  leakscope dominators app.hprof --children 0x7ff012a40 --top 10\n  leakscope dominators app.hprof --json"
)]
pub struct DominatorsArgs {
    /// The heap dump (.hprof).
    pub dump: PathBuf,
    /// Show the N biggest (default 20; 0 means all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// List the objects this one dominates, instead of the top of the tree.
    #[arg(long, value_name = "ID", value_parser = dump_args::parse_id, conflicts_with = "flat")]
    pub children: Option<u64>,
    /// List the biggest retained sizes anywhere in the tree (a holder and the objects inside it
    /// all appear), instead of the top of the tree.
    #[arg(long)]
    pub flat: bool,
    /// Print one JSON document: {"parent","live_bytes","objects":[{"id","class","shallow_bytes","retained_bytes","share","children","represents"}],"more","flat"}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// Runs the command.
pub fn run(args: &DominatorsArgs) -> anyhow::Result<Exit> {
    let bar = Bar::new(args.dump_args.quiet);
    let snap = dump_args::load_snapshot(&args.dump, &args.dump_args, &bar)?;
    let parent = match args.children {
        Some(id) => Some(snap.find(id).ok_or_else(|| anyhow::anyhow!("no object at address 0x{id:x} in the dump"))?),
        None => None,
    };
    let r = analysis::Retention::build(&snap, &bar);
    let counts = r.child_counts();
    let row = |o: ObjIdx, of: u64| analysis::dominator_row(&snap, &r, &counts, o, of);
    if let Some(p) = parent.filter(|p| !r.is_live(*p)) {
        anyhow::bail!(
            "object {} is not strongly reachable from any GC root: it retains nothing",
            report::hex_id(snap.address(p))
        );
    }
    let of = parent.map_or(r.live_bytes(), |p| r.retained_bytes(p));
    let (children, more) = if args.flat {
        let shown = r.top(if args.top == 0 { usize::MAX } else { args.top });
        let more = r.live_count() - shown.len() as u64;
        (shown, more)
    } else {
        let mut all = r.children(parent);
        let more = if args.top > 0 && all.len() > args.top { all.len() - args.top } else { 0 };
        all.truncate(all.len() - more);
        (all, more as u64)
    };
    let report = report::DominatorReport {
        parent: parent.map(|p| row(p, r.live_bytes())),
        live_bytes: r.live_bytes(),
        objects: children.into_iter().map(|o| row(o, of)).collect(),
        more,
        flat: args.flat,
    };
    dump_args::emit(args.json, &report, |r| r.to_text())
}
