//! `leakscope roots`: what each GC root keeps reachable and retains.

use clap::Args;

use render::Text;

use crate::dump_args::{self, OneDump};
use crate::exit::Exit;

/// Bytes reachable from and retained by each GC root: per root kind, per static field, and
/// per thread with its frames.
///
/// Reachable bytes are everything a root's objects lead to; retained bytes are what the GC
/// would free if the root let go. A static field that retains much is a typical leak holder;
/// a thread whose frame retains much is holding a big local.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  leakscope roots app.hprof\n  leakscope roots app.hprof --top 50 --json")]
#[command(mut_arg("json", |a| a.help("Print one JSON document: {\"live_bytes\",\"kinds\":[{\"kind\",\"roots\",\"reachable_bytes\",\"retained_bytes\"}],\"statics\":[{\"field\",\"class\",\"id\",\"reachable_bytes\",\"retained_bytes\"}],\"more_statics\",\"threads\":[{\"serial\",\"name\",\"virtual_thread\",\"label\",\"id\",\"reachable_bytes\",\"retained_bytes\",\"frames\":[{\"depth\",\"method\",\"objects\",\"reachable_bytes\",\"retained_bytes\"}]}]}.")))]
pub struct RootsArgs {
    /// Show the N static fields that retain most (0 means all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    #[command(flatten)]
    pub input: OneDump,
}

/// Runs the command.
pub fn run(args: &RootsArgs) -> anyhow::Result<Exit> {
    let (bar, snap) = args.input.snapshot()?;
    let report = app::analyses::roots(&snap, args.top, &bar);
    dump_args::emit(args.input.json, &report, bar.read_warnings(), |r| r.to_text())
}
