//! The one error type of the crate: what went wrong, and at which byte offset.

/// A problem with the dump's bytes, located by absolute file offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file is shorter than an HPROF header.
    #[error("offset 0: file is empty or too short to be an HPROF dump ({len} bytes)")]
    TooShort {
        /// The file length.
        len: u64,
    },
    /// The file does not start with `JAVA PROFILE 1.0.x`.
    #[error("offset 0: not an HPROF heap dump (no \"JAVA PROFILE 1.0.x\" header; starts with \"{start}\")")]
    NotHprof {
        /// The first bytes, printably escaped.
        start: String,
    },
    /// The identifier size in the header is neither 4 nor 8.
    #[error("offset {offset}: unsupported identifier size {size} (HPROF uses 4 or 8)")]
    BadIdSize {
        /// Where the field is.
        offset: u64,
        /// The value found.
        size: u32,
    },
    /// A record or sub-record ends past the bytes that hold it.
    #[error("offset {offset}: {what} is cut short (file truncated or length field corrupt)")]
    Truncated {
        /// Where the incomplete item starts.
        offset: u64,
        /// What was being read.
        what: &'static str,
    },
    /// A heap dump sub-record with a tag this reader does not know; its length is unknown,
    /// so the rest of its segment cannot be read.
    #[error("offset {offset}: unknown heap dump sub-record tag 0x{tag:02x}")]
    UnknownSubRecord {
        /// Where the sub-record starts.
        offset: u64,
        /// The tag byte.
        tag: u8,
    },
    /// A type code that is not one of HPROF's basic types.
    #[error("offset {offset}: invalid basic type code {code} in {what}")]
    BadType {
        /// Where the code is.
        offset: u64,
        /// The code found.
        code: u8,
        /// What was being read.
        what: &'static str,
    },
}

impl Error {
    /// The absolute file offset the error refers to.
    pub fn offset(&self) -> u64 {
        match self {
            Error::TooShort { .. } | Error::NotHprof { .. } => 0,
            Error::BadIdSize { offset, .. }
            | Error::Truncated { offset, .. }
            | Error::UnknownSubRecord { offset, .. }
            | Error::BadType { offset, .. } => *offset,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
