//! What can be wrong with a file read as a V8 heap snapshot.

/// Why a snapshot could not be read; every variant names the byte offset where it was seen.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Not a heap snapshot at all, or a part is not where the format puts it.
    #[error("not a V8 heap snapshot: {what} at byte {at}")]
    Format {
        /// What was expected or found.
        what: String,
        /// Byte offset in the file.
        at: usize,
    },
    /// The file ends inside the JSON document: written only in part.
    #[error("the heap snapshot is cut at byte {at}: it ends inside {inside} (the writer was stopped, or the copy is partial)")]
    Cut {
        /// Where the file ends.
        at: usize,
        /// The part it ends in.
        inside: &'static str,
    },
    /// `snapshot.meta` lacks a field this reader needs, or says something it cannot read.
    #[error("cannot read this heap snapshot's layout: {0}")]
    Meta(String),
    /// The arrays disagree with `meta` or with each other.
    #[error("inconsistent heap snapshot: {what} (at byte {at})")]
    Inconsistent {
        /// What disagrees.
        what: String,
        /// Byte offset in the file, or 0 when the whole array is concerned.
        at: usize,
    },
}
