//! Inputs of the commands that compare heaps: heap dumps, summaries saved by `leakscope
//! summary` (about a megabyte instead of a dump's gigabytes), or an agent's run store, told
//! apart by their first bytes (gzip dumps by what they unpack to).

use std::path::{Path, PathBuf};

use crate::{open_dump, Error, ReadSettings, Reporter, Result};

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

/// Tells what a file holds; anything else is an error that says what it should be.
pub fn kind(path: &Path) -> Result<InputKind> {
    if path.is_dir() {
        return Err(Error::Usage(format!("{} is a directory, not a heap dump or summary", path.display())));
    }
    let head = heap::Dump::head(path, 64).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let head = &head[..];
    if head.starts_with(b"JAVA PROFILE") || crate::v8::is_snapshot_data(head) {
        Ok(InputKind::Dump)
    } else if head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        Ok(InputKind::Summary)
    } else if runstore::is_sqlite(head) {
        Ok(InputKind::RunStore)
    } else {
        Err(Error::Usage(format!(
            "{} is neither an HPROF heap dump, a V8 heap snapshot, a summary written by `leakscope summary`, nor an agent run store",
            path.display()
        )))
    }
}

/// The run store among `inputs`, if there is one; an error if it is not alone (a run store
/// is a whole series).
pub fn run_store(inputs: &[PathBuf]) -> Result<Option<&Path>> {
    let Some(store) = inputs.iter().find(|p| kind(p).ok() == Some(InputKind::RunStore)) else {
        return Ok(None);
    };
    if inputs.len() > 1 {
        return Err(Error::Usage(format!("{} is a run store, a whole series: give it alone", store.display())));
    }
    Ok(Some(store))
}

/// Reads a saved summary.
pub fn read_summary(path: &Path) -> Result<growth::HeapSummary> {
    let f = std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    serde_json::from_reader(std::io::BufReader::new(f))
        .map_err(|source| Error::Summary { path: path.to_owned(), source })
}

/// The class points-from graph of a dump, read without building its object graph; with
/// `keep`, also the open dump (unpacked, if gzip) with each object's place in the path tree
/// and search parent, for the holders of growing structures in its snapshot.
pub fn summarize_dump(
    path: &Path,
    settings: &ReadSettings,
    reporter: &dyn Reporter,
    keep: bool,
) -> Result<(growth::HeapSummary, Option<(heap::Dump, heap::Live)>)> {
    let dump = open_dump(path, settings)?;
    if crate::v8::is_snapshot_data(dump.data()) {
        // A snapshot's summary is built from the snapshot read whole; the holders of its
        // structures come from its path tree alone.
        let h = crate::v8::read_dump(dump, path, settings, reporter)?;
        return Ok((crate::v8::summarize(&h, &path.display().to_string()), None));
    }
    let graph = if keep {
        heap::ClassGraph::build_keeping(&dump, &settings.read, reporter)
    } else {
        heap::ClassGraph::build(&dump, &settings.read, reporter)
    };
    let mut graph = graph.map_err(|source| Error::Dump { path: path.to_owned(), source })?;
    reporter.warnings(&graph.census.warnings);
    let summary = analysis::summarize(&graph, &path.display().to_string());
    Ok((summary, graph.objects.take().map(|live| (dump, live))))
}

/// The summary of a dump or of a saved summary file.
pub fn summary_of(path: &Path, settings: &ReadSettings, reporter: &dyn Reporter) -> Result<growth::HeapSummary> {
    summary_as(path, kind(path)?, settings, reporter)
}

/// The summary of `path`, already known to hold `kind`.
pub fn summary_as(
    path: &Path,
    kind: InputKind,
    settings: &ReadSettings,
    reporter: &dyn Reporter,
) -> Result<growth::HeapSummary> {
    match kind {
        InputKind::Dump => Ok(summarize_dump(path, settings, reporter, false)?.0),
        InputKind::Summary => read_summary(path),
        InputKind::RunStore => Err(Error::Usage(format!(
            "{} is a run store (a whole series): give it alone, as in `leakscope growth {}`",
            path.display(),
            path.display()
        ))),
    }
}

/// Says so when the heaps' own timestamps show they were not given oldest first.
pub fn unordered(series: &[growth::HeapSummary]) -> Option<String> {
    let w = series.windows(2).find(|w| matches!((w[0].time_ms, w[1].time_ms), (Some(a), Some(b)) if b < a))?;
    Some(format!(
        "{} was taken before {}, but comes after it: give the heaps oldest first (growth is judged in the order given)",
        w[1].source, w[0].source
    ))
}
