//! What the leakscope agent and the `leakscope` binary exchange: the run store (one SQLite
//! file per JVM run, which the agent writes and every reader opens read-only), the pointer
//! file by which a JVM's store is found from its process id, and the agent's option string.
//!
//! The agent (a cdylib inside the JVM) and the binary both depend on this crate, and on
//! nothing of each other: a change of the store's schema is made here, once.

pub mod options;
mod reader;
mod schema;
mod writer;

pub use options::Options;
pub use reader::{
    read, Capture, Checked, ClassVolumeRow, EdgeRow, FieldsSeen, HolderRow, Run, SiteRow, SnapshotKind, SnapshotRow,
    StoredExpectation, WatchedObject,
};
pub use schema::SCHEMA_VERSION;
pub use writer::{HolderChain, SampledClass, Store, MAX_SAMPLES, MAX_WALKS};

/// A run store that cannot be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite said no.
    #[error("run store {path}: {source}")]
    Sqlite {
        /// The file.
        path: String,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The store's file could not be put in place.
    #[error("run store {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// A SQLite file that is not a leakscope run store.
    #[error("{0} is a SQLite file but not a leakscope run store (no leakscope format in its meta table)")]
    NotARunStore(String),
    /// A run store written by a newer leakscope.
    #[error("{path} is a run store of schema version {found}; this leakscope reads up to {SCHEMA_VERSION}")]
    TooNew {
        /// The file.
        path: String,
        /// Its schema version.
        found: i64,
    },
}

/// Maps a SQLite error of the store at `path` to a [`StoreError`].
fn err(path: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |source| StoreError::Sqlite { path: path.to_string(), source }
}

/// Separates the holders of a chain in the `holders`, `watched` and `expectations` tables.
const PATH_SEP: &str = " <- ";

/// A chain of holders as the store writes it, `A <- B <- C`, back into its parts.
fn split_path(text: &str) -> Vec<String> {
    text.split(PATH_SEP).filter(|h| !h.is_empty()).map(str::to_string).collect()
}

/// A list joined with [`PATH_SEP`] whose entries may be empty (fields not known), entry for entry.
fn split_keeping_empty(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    text.split(PATH_SEP).map(str::to_string).collect()
}

/// Whether `head` (a file's first bytes) is a SQLite database.
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(b"SQLite format 3\0")
}

/// The `n`th heap dump the agent captures for the run store at `store`: beside it, named
/// after it (`run.db` → `run-capture-1.hprof`; the JVM insists on `.hprof`).
pub fn capture_file(store: &std::path::Path, n: u32) -> std::path::PathBuf {
    let stem = store.file_stem().map_or_else(|| "run".into(), |s| s.to_string_lossy());
    store.with_file_name(format!("{stem}-capture-{n}.hprof"))
}

/// Where the agent of JVM `pid` says its run store is: a one-line file per JVM in the
/// temporary directory, so that `leakscope top PID` finds a store written to any path.
pub fn pointer_file(pid: u32) -> std::path::PathBuf {
    std::env::temp_dir().join("leakscope-runs").join(pid.to_string())
}
