//! `leakscope top`: the live allocation view of a JVM running the agent (Modula-3's Shownew).

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use render::TextWith;

use crate::exit::Exit;

/// Watch a JVM that runs the leakscope agent: estimated live and allocated bytes per class,
/// and the classes that keep growing, refreshed until the JVM ends.
///
/// TARGET is a process id (the agent must be loaded: `leakscope run` or `leakscope attach`)
/// or a run store. The numbers are estimates from sampled allocations: a class allocated
/// rarely and kept may show nothing until one of its objects is sampled.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope top 12345
  leakscope top run.db --once
  # one refresh as JSON
  leakscope top 12345 --json")]
pub struct TopArgs {
    /// Process id of a JVM with the agent, or a run store (RUN.db).
    pub target: String,
    /// Classes shown (0 means all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Time between refreshes (2s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "2s")]
    pub every: String,
    /// Print one refresh and exit.
    #[arg(long)]
    pub once: bool,
    /// Print one refresh as JSON and exit: {"source","pid","gc_count","live_bytes","classes":[{"name","live_bytes","live_instances","allocated_bytes","allocated_bytes_per_s"}],"candidates":[{"class","rank","growth_bytes","held_by"}],…}.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: &TopArgs) -> anyhow::Result<Exit> {
    let path = app::jvm::store_of(&args.target)?;
    let every = runstore::options::parse_duration(&args.every)
        .filter(|d| !d.is_zero())
        .with_context(|| format!("--every {:?} is not a duration such as 2s", args.every))?;
    let tty = std::io::stdout().is_terminal();
    loop {
        let v = app::live::top_view(&path)?;
        if args.json {
            return crate::dump_args::emit(true, &v, |_| String::new());
        }
        let mut out = std::io::stdout().lock();
        if tty && !args.once {
            write!(out, "\x1b[H\x1b[2J")?;
        }
        write!(out, "{}", v.to_text(crate::dump_args::top_n(args.top)))?;
        out.flush()?;
        if args.once || v.status != "running" {
            return Ok(Exit::Success);
        }
        std::thread::sleep(every.max(Duration::from_millis(100)));
    }
}
