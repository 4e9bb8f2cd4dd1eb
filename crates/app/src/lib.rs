//! What each leakscope command does, as library functions: typed inputs in, result models
//! out. The binary's command modules parse arguments, call one of these and print; the
//! functions never print, and report progress and warnings through a [`Reporter`].
//!
//! - [`one_dump`]: a dump's histogram and summary, and [`analyses`]: the questions on its
//!   snapshot (dominators, paths, retained sizes, groups, roots, suspects, one object);
//! - [`inputs`]: what a file holds (dump, saved summary, run store) and its summary;
//! - [`series`]: a series of heaps or an agent's run, ranked, with the holders of what grows;
//! - [`leak_report`]: everything the HTML report and the web UI show, and [`browse`]: the
//!   web UI's pages of the last dump;
//! - [`expectations`] and [`staleness`]: objects declared dead, and watched objects' last use;
//! - [`jvm`] and [`live`]: the JVMs of this machine, and the live view of one the agent records;
//! - [`tools`]: the MCP server's tools, each a page of one of these answers ([`page`]);
//! - [`v8`]: the commands that read V8 heap snapshots (Node.js, Chrome) so far.

use std::path::{Path, PathBuf};

pub mod analyses;
pub mod browse;
pub mod expectations;
pub mod inputs;
pub mod jvm;
pub mod leak_report;
pub mod live;
pub mod one_dump;
pub mod page;
pub mod partial;
pub mod schemas;
pub mod series;
pub mod share;
pub mod staleness;
pub mod tools;
pub mod v8;

/// What a caller hears while the work runs: progress, and the warnings of what was read.
pub trait Reporter: graph::Progress {
    /// The warnings met reading one input (the caller prints or keeps them).
    fn warnings(&self, w: &heap::Warnings);
    /// Input `i` of `n` (from 1) is being read.
    fn input(&self, i: usize, n: usize);
    /// Something the user should know at once, such as inputs given out of order.
    fn note(&self, message: &str);
    /// How the index will be held, said before it is built ([`heap::MemoryPlan::describe`]).
    fn plan(&self, message: &str);
}

impl Reporter for graph::NoProgress {
    fn warnings(&self, _: &heap::Warnings) {}
    fn input(&self, _: usize, _: usize) {}
    fn note(&self, _: &str) {}
    fn plan(&self, _: &str) {}
}

/// How dumps are read.
#[derive(Debug, Clone, Default)]
pub struct ReadSettings {
    /// Layout overrides and which dump of a file.
    pub read: heap::ReadOptions,
    /// Where a gzip dump is unpacked, and an index kept out of core (default: `TMPDIR`, else
    /// `/tmp`).
    pub tmp_dir: Option<PathBuf>,
    /// The memory an index may take before it goes out of core (default: what is available).
    pub memory_limit: Option<u64>,
}

/// Why a command could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The inputs do not go together, or do not say enough.
    #[error("{0}")]
    Usage(String),
    /// A file could not be opened or read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// An output file could not be written (nothing is left of it: see [`partial`]).
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A V8 heap snapshot could not be read.
    #[error("cannot read {}", path.display())]
    Snapshot {
        /// The snapshot.
        path: PathBuf,
        /// What the reader said.
        #[source]
        source: heapsnapshot::Error,
    },
    /// A dump could not be read.
    #[error("cannot read {}", path.display())]
    Dump {
        /// The dump.
        path: PathBuf,
        /// What the reader said.
        #[source]
        source: heap::Error,
    },
    /// A gzip dump's unpacked copy could not be written (a full or missing `--tmp-dir`).
    #[error("cannot unpack {} into {}", path.display(), dir.display())]
    Unpack {
        /// The dump.
        path: PathBuf,
        /// Where its copy was being written.
        dir: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A saved summary could not be parsed.
    #[error("{} is not a summary written by `leakscope summary`", path.display())]
    Summary {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A run store could not be read.
    #[error(transparent)]
    Store(#[from] runstore::StoreError),
}

/// The result of an application function.
pub type Result<T> = std::result::Result<T, Error>;

/// Opens a dump file (unpacking a gzip one into `settings.tmp_dir`), with the path in the error.
pub fn open_dump(path: &Path, settings: &ReadSettings) -> Result<heap::Dump> {
    if path.is_dir() {
        return Err(Error::Usage(format!("{} is a directory, not a heap dump", path.display())));
    }
    if heap::Dump::head(path, 16).is_ok_and(|head| runstore::is_sqlite(&head)) {
        return Err(Error::Usage(format!(
            "{} is a run store the agent wrote, not a heap dump: `leakscope growth`, `top`, `stale` and `check` read it",
            path.display()
        )));
    }
    heap::Dump::open_in(path, settings.tmp_dir.as_deref()).map_err(|e| match e {
        // The I/O error names the path already.
        heap::Error::Io { source, .. } => Error::Io { path: path.to_owned(), source },
        heap::Error::Unpack { dir, source } => Error::Unpack { path: path.to_owned(), dir, source },
        e => Error::Dump { path: path.to_owned(), source: e },
    })
}

/// Builds the snapshot of a dump already open (and, if gzip, already unpacked); its warnings
/// go to `reporter` only with `tell`, for a dump whose warnings were not yet reported.
pub fn snapshot_of(
    dump: heap::Dump,
    path: &Path,
    settings: &ReadSettings,
    reporter: &dyn Reporter,
    tell: bool,
) -> Result<heap::Snapshot> {
    if v8::is_snapshot_data(dump.data()) {
        return Err(v8::not_yet(path));
    }
    let plan = heap::MemoryPlan::new(&dump, settings.memory_limit, settings.tmp_dir.clone());
    // Before any work: under a limit no plan can meet, the build would thrash for minutes or
    // be killed by the kernel.
    if plan.too_little() {
        return Err(Error::Usage(format!("cannot index {}: {}", path.display(), plan.describe())));
    }
    // Said for big indexes and whenever out of core; a small one in memory is no news.
    if plan.out_of_core() {
        // The arrays would quietly stay in memory where no file can be made: say so instead.
        let dir = plan.placement.dir.clone().unwrap_or_else(std::env::temp_dir);
        graph::temp_file_in(Some(&dir)).map_err(|e| {
            Error::Usage(format!("cannot keep the index out of core: no temporary file in {}: {e}", dir.display()))
        })?;
    }
    if plan.out_of_core() || plan.estimate >= 1 << 30 {
        reporter.plan(&plan.describe());
    }
    let snap = heap::Snapshot::build_placed(dump, &settings.read, &plan.placement, reporter)
        .map_err(|source| Error::Dump { path: path.to_owned(), source })?;
    if tell {
        reporter.warnings(&snap.census.warnings);
    }
    Ok(snap)
}

/// Opens a dump and builds its snapshot, its warnings reported.
pub fn load_snapshot(path: &Path, settings: &ReadSettings, reporter: &dyn Reporter) -> Result<heap::Snapshot> {
    snapshot_of(open_dump(path, settings)?, path, settings, reporter, true)
}
