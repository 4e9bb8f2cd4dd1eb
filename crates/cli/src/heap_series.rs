//! Inputs of the commands that compare heaps: heap dumps, or summaries saved by
//! `leakscope summary` (about a megabyte instead of a dump's gigabytes), told apart by their first bytes
//! (gzip dumps by what they unpack to).

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::dump_args::{self, DumpArgs};
use crate::progress::Bar;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// An HPROF heap dump.
    Dump,
    /// A `HeapSummary` JSON document.
    Summary,
    /// A run store written by the agent (SQLite).
    RunStore,
}

/// Tells a dump from a saved summary; anything else is an error that says what it looks like.
pub fn kind(path: &Path) -> anyhow::Result<InputKind> {
    if path.is_dir() {
        anyhow::bail!("{} is a directory, not a heap dump or summary", path.display());
    }
    let head = heap::Dump::head(path, 16).with_context(|| format!("cannot read {}", path.display()))?;
    let head = &head[..];
    if head.starts_with(b"JAVA PROFILE") {
        Ok(InputKind::Dump)
    } else if head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        Ok(InputKind::Summary)
    } else if runstore::is_sqlite(head) {
        Ok(InputKind::RunStore)
    } else {
        anyhow::bail!(
            "{} is neither an HPROF heap dump, a summary written by `leakscope summary`, nor an agent run store",
            path.display()
        )
    }
}

/// The run store among `inputs`, if there is one; an error if it is not alone (a run store
/// is a whole series).
pub fn run_store(inputs: &[PathBuf]) -> anyhow::Result<Option<&Path>> {
    let Some(store) = inputs.iter().find(|p| kind(p).ok() == Some(InputKind::RunStore)) else {
        return Ok(None);
    };
    if inputs.len() > 1 {
        anyhow::bail!("{} is a run store, a whole series: give it alone", store.display());
    }
    Ok(Some(store))
}

/// Reads a saved summary.
pub fn read_summary(path: &Path) -> anyhow::Result<growth::HeapSummary> {
    let f = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_reader(std::io::BufReader::new(f))
        .with_context(|| format!("{} is not a summary written by `leakscope summary`", path.display()))
}

/// The class points-from graph of a dump, read without building its object graph.
pub fn summarize_dump(path: &Path, args: &DumpArgs, bar: &Bar) -> anyhow::Result<growth::HeapSummary> {
    Ok(summarize_dump_with(path, args, bar, false)?.0)
}

/// The same, and with `keep` the open dump (unpacked, if gzip) with each object's place in
/// the path tree and search parent, for the holders of growing structures in its snapshot.
pub fn summarize_dump_with(
    path: &Path,
    args: &DumpArgs,
    bar: &Bar,
    keep: bool,
) -> anyhow::Result<(growth::HeapSummary, Option<(heap::Dump, heap::Live)>)> {
    let dump = dump_args::open(path, args)?;
    let opts = args.read_options();
    let graph = if keep {
        heap::ClassGraph::build_keeping(&dump, &opts, bar)
    } else {
        heap::ClassGraph::build(&dump, &opts, bar)
    };
    let mut graph = graph.with_context(|| format!("cannot read {}", path.display()))?;
    args.print_warnings(&graph.census.warnings);
    let summary = analysis::summarize(&graph, &path.display().to_string());
    Ok((summary, graph.objects.take().map(|live| (dump, live))))
}

/// The summary of a dump or of a saved summary file.
pub fn summary_of(path: &Path, args: &DumpArgs, bar: &Bar) -> anyhow::Result<growth::HeapSummary> {
    summary_as(path, kind(path)?, args, bar)
}

/// The summary of `path`, already known to hold `kind`.
pub fn summary_as(path: &Path, kind: InputKind, args: &DumpArgs, bar: &Bar) -> anyhow::Result<growth::HeapSummary> {
    match kind {
        InputKind::Dump => summarize_dump(path, args, bar),
        InputKind::Summary => read_summary(path),
        InputKind::RunStore => anyhow::bail!(
            "{} is a run store (a whole series): give it alone, as in `leakscope growth {}`",
            path.display(),
            path.display()
        ),
    }
}

/// Reads an agent run store; `max_samples` evenly spaced sampled snapshots are kept.
pub fn read_run(path: &Path, max_samples: usize) -> anyhow::Result<runstore::Run> {
    Ok(runstore::read(path, max_samples)?)
}

/// Warns when the heaps' own timestamps say they were not given oldest first.
pub fn warn_if_unordered(series: &[growth::HeapSummary], quiet: bool) {
    let backwards = series.windows(2).find(|w| matches!((w[0].time_ms, w[1].time_ms), (Some(a), Some(b)) if b < a));
    if let (Some(w), false) = (backwards, quiet) {
        eprintln!(
            "warning: {} was taken before {}, but comes after it: give the heaps oldest first (growth is judged in the order given)",
            w[1].source, w[0].source
        );
    }
}

pub use runstore::options::parse_bytes;
