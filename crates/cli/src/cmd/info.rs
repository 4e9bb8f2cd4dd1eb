//! `leakscope info`: what a dump holds, how much of it is reachable, and the snapshot's cost.

use std::path::PathBuf;

use clap::Args;

use render::Text;

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;

/// Summarise a heap dump: format, layout, objects, references, GC roots, and how many
/// objects are reachable from the roots.
///
/// This reads the whole object graph (the snapshot every retention analysis starts from),
/// so it also shows what that costs in memory per object. "Reachable" follows every
/// reference from the dump's GC roots and from every loaded class; the rest is garbage the
/// JVM had not yet collected, heap fillers (JDK 25 writes them as int[]), or objects only
/// the VM itself holds, which `histogram` counts (as jcmd does) and reachability cannot.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope info app.hprof\n  leakscope info app.hprof --json | jq .reachable_bytes"
)]
pub struct InfoArgs {
    /// The heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one.
    pub dump: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// Runs the command.
pub fn run(args: &InfoArgs) -> anyhow::Result<Exit> {
    let bar = Bar::new(args.dump_args.quiet);
    let (info, warnings) = app::one_dump::info(&args.dump, &args.dump_args.settings(), &bar)?;
    bar.warnings_explained(&warnings);
    dump_args::emit(args.json, &info, bar.read_warnings(), |r| r.to_text())
}
