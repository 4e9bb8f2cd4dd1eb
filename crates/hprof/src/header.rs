//! The file header: `JAVA PROFILE 1.0.x\0`, identifier size, timestamp.

use crate::cursor::{Cursor, IdSize};
use crate::error::{Error, Result};
use crate::writer::Writer;

/// Which HPROF version the header names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// `JAVA PROFILE 1.0.1`.
    V101,
    /// `JAVA PROFILE 1.0.2` (HotSpot, segmented dumps).
    V102,
    /// `JAVA PROFILE 1.0.3` (Android).
    V103,
}

impl Version {
    /// The header text without the trailing NUL.
    pub fn text(self) -> &'static str {
        match self {
            Version::V101 => "JAVA PROFILE 1.0.1",
            Version::V102 => "JAVA PROFILE 1.0.2",
            Version::V103 => "JAVA PROFILE 1.0.3",
        }
    }
}

/// The parsed file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Format version.
    pub version: Version,
    /// Width of identifiers.
    pub id_size: IdSize,
    /// Milliseconds since the epoch when the dump was written.
    pub timestamp_ms: u64,
    /// Length of the header in bytes; records start here.
    pub len: usize,
}

impl Header {
    /// Parses the header at the start of `data`.
    pub fn parse(data: &[u8]) -> Result<Header> {
        const MIN: usize = 18 + 1 + 4 + 8;
        if data.len() < MIN {
            if !data.is_empty() && !b"JAVA PROFILE ".starts_with(&data[..data.len().min(13)]) {
                return Err(not_hprof(data));
            }
            return Err(Error::TooShort { len: data.len() as u64 });
        }
        let version = match &data[..19] {
            b"JAVA PROFILE 1.0.1\0" => Version::V101,
            b"JAVA PROFILE 1.0.2\0" => Version::V102,
            b"JAVA PROFILE 1.0.3\0" => Version::V103,
            _ => return Err(not_hprof(data)),
        };
        let mut c = Cursor::new(&data[19..], 19, IdSize::Eight);
        let short = |_| Error::Truncated { offset: 19, what: "header" };
        let size = c.u4().map_err(short)?;
        let id_size = IdSize::from_u32(size).ok_or(Error::BadIdSize { offset: 19, size })?;
        let timestamp_ms = c.u8().map_err(short)?;
        Ok(Header { version, id_size, timestamp_ms, len: MIN })
    }

    /// Writes this header.
    pub fn write(&self, w: &mut Writer) {
        w.bytes(self.version.text().as_bytes());
        w.u1(0);
        w.u4(self.id_size.bytes() as u32);
        w.u8(self.timestamp_ms);
    }
}

fn not_hprof(data: &[u8]) -> Error {
    let start: String =
        data[..data.len().min(16)].iter().flat_map(|b| std::ascii::escape_default(*b)).map(char::from).collect();
    Error::NotHprof { start }
}
