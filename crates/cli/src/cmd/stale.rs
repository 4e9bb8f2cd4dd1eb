//! `leakscope stale`: which watched objects are still held but no longer used.

use std::time::{SystemTime, UNIX_EPOCH};

use clap::Args;

use render::Text;

use crate::exit::Exit;

/// Watched objects still held but no longer used, for a run recorded with `--watch`: per
/// reference path from a GC root to the watched objects, how many there are and how long ago
/// they were last used (longest, median, most recent), with where the stalest one was last
/// used. The path unused the longest comes first: a leak is a path whose objects are held but
/// never used again.
///
/// An object counts as used when one of its class's instance methods is entered (the agent
/// instruments them); reading its fields directly from other classes does not count. Paths are
/// named by the agent's heap walks, whole from the second walk on (`…` marks a part not known
/// yet); an object not used since it was created is aged from its creation.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope run --watch 'rule:SessionRegistry>Session' --out run.db \\
      -- java -jar app.jar
  leakscope stale run.db
  # a JVM recording with --watch
  leakscope stale 12345 --older-than 10m --json")]
pub struct StaleArgs {
    /// A run store written with --watch, or the process id of a JVM recording one.
    pub target: String,
    /// Count only objects unused for at least this long (30s, 10m, 2h).
    #[arg(long, value_name = "DURATION", value_parser = crate::dump_args::parse_duration)]
    pub older_than: Option<std::time::Duration>,
    /// Print one JSON document: {"source","rules","at_ms","older_than_ms","paths":[{"path","fields","count","last_access":{"longest_ms","median_ms","most_recent_ms"},"location"}],"unmatched","not_followed","notes"}.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: &StaleArgs) -> anyhow::Result<Exit> {
    let older_than = args.older_than.unwrap_or_default();
    let path = app::jvm::store_of(&args.target)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let report = app::staleness::of_store(&path, older_than.as_millis() as u64, now)?;
    crate::dump_args::emit(args.json, &report, None, |r| r.to_text())
}
