//! `leakscope summary`: save a heap's class points-from graph, to compare heaps later
//! without keeping the dumps.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crate::dump_args::DumpArgs;
use crate::exit::Exit;
use crate::progress::Bar;

/// Summarise a heap dump: bytes and instances per class, and the bytes each class holds of
/// each other class (per referrer class → referent class, counted once per reference).
/// The summary (JSON, about 0.5-1 MB for a heap of 13 M objects) can stand in for the dump in `growth` and
/// `diff`, so a series can be kept for weeks without keeping gigabytes of dumps.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope summary app.hprof -o app.json && rm app.hprof\n  leakscope growth mon.json tue.json wed.hprof"
)]
pub struct SummaryArgs {
    /// The heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one.
    pub dump: PathBuf,
    /// Write the summary to FILE (default: stdout).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// Runs the command.
pub fn run(args: &SummaryArgs) -> anyhow::Result<Exit> {
    if let Some(out) = &args.output {
        crate::dump_args::check_writable(out)?;
    }
    let bar = Bar::new(args.dump_args.quiet);
    let (summary, _) = app::inputs::summarize_dump(&args.dump, &args.dump_args.settings(), &bar, false)?;
    let json = serde_json::to_string(&summary)?;
    match &args.output {
        Some(p) => {
            app::partial::write_whole(p, json.as_bytes()).with_context(|| format!("cannot write {}", p.display()))?
        }
        None => outln!("{json}")?,
    }
    Ok(Exit::Success)
}
