//! The heap crate's error type.

use std::path::PathBuf;

/// Why a dump could not be turned into a census or a snapshot.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or mapping the file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A gzip dump could not be unpacked because its copy could not be written (a full or
    /// read-only `--tmp-dir`): the dump itself may be fine.
    #[error("cannot write the unpacked dump into {}: {source}", dir.display())]
    Unpack {
        /// Where the copy was being written.
        dir: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a readable HPROF dump.
    #[error(transparent)]
    Format(#[from] hprof::Error),
    /// The file is HPROF but holds no heap dump (for example an allocation profile).
    #[error("offset {offset}: the file holds no heap dump records (HEAP DUMP or HEAP DUMP SEGMENT)")]
    NoHeapDump {
        /// End of the records read.
        offset: u64,
    },
    /// `--dump N` names no dump of the file.
    #[error("there is no heap dump {asked}: the file holds {dumps} (count from 1)")]
    NoSuchDump {
        /// The dump asked for.
        asked: usize,
        /// How many the file holds.
        dumps: usize,
    },
    /// More objects than the live trace of a summary indexes (32-bit object numbers).
    #[error("{objects} objects: the growth summary traces at most 4,294,967,294 objects per heap")]
    TooManyObjects {
        /// Objects in the dump.
        objects: u64,
    },
    /// Not one object of the heap dump could be read.
    #[error("{first}; not one object of the heap could be read")]
    NothingReadable {
        /// The first problem met.
        first: hprof::Error,
    },
    /// So much of the dump is unreadable that a result would mislead.
    #[error("{first}; {unread_bytes} of {file_bytes} bytes could not be read, too much for a meaningful result")]
    MostlyUnreadable {
        /// The first problem met.
        first: hprof::Error,
        /// Bytes skipped.
        unread_bytes: u64,
        /// File size.
        file_bytes: u64,
    },
}

impl Error {
    /// The byte offset the error points at, when it has one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Io { .. } | Error::Unpack { .. } | Error::TooManyObjects { .. } | Error::NoSuchDump { .. } => None,
            Error::Format(e) => Some(e.offset()),
            Error::NoHeapDump { offset } => Some(*offset),
            Error::MostlyUnreadable { first, .. } | Error::NothingReadable { first } => Some(first.offset()),
        }
    }
}
