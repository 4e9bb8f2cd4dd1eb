//! The bytes of a dump: memory-mapped from a file, or owned (tests, fuzzing). A gzip dump
//! (`jcmd PID GC.heap_dump -gz=1`, or a dump compressed to be moved) is unpacked into an
//! unlinked temporary file first, and that file is mapped: the rest of leakscope reads one
//! mapped HPROF file either way.

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Error;

enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

/// A heap dump's bytes, cheap to clone and shared between the snapshot and its readers.
#[derive(Clone)]
pub struct Dump {
    bytes: Arc<Bytes>,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for Dump {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dump").field("path", &self.path).field("len", &self.data().len()).finish()
    }
}

/// gzip's magic number.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Unpacks a gzip stream (all its members) into an unlinked temporary file in `tmp`. A stream
/// cut short keeps what was unpacked: the HPROF reader then reports the dump as truncated.
fn unpack(file: std::fs::File, tmp: Option<&Path>) -> std::io::Result<std::fs::File> {
    let dir = tmp.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let mut out = tempfile::tempfile_in(&dir)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot unpack into {}: {e}", dir.display())))?;
    let mut gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::with_capacity(1 << 20, file));
    match std::io::copy(&mut gz, &mut out) {
        Ok(_) => {}
        Err(e) if matches!(e.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidInput) => {}
        Err(e) => return Err(e),
    }
    out.rewind()?;
    Ok(out)
}

impl Dump {
    /// Maps the file at `path` read-only (unpacked into the temporary directory first when it
    /// is gzip-compressed).
    pub fn open(path: &Path) -> Result<Dump, Error> {
        Self::open_in(path, None)
    }

    /// The first `n` bytes of the file at `path` (or fewer), unpacked when it is gzip: enough to
    /// tell what it holds without unpacking the rest.
    pub fn head(path: &Path, n: usize) -> std::io::Result<Vec<u8>> {
        let mut file = std::fs::File::open(path)?;
        let mut head = Vec::with_capacity(n);
        (&mut file).take(n as u64).read_to_end(&mut head)?;
        if Self::is_gzip(&head) {
            file.rewind()?;
            head.clear();
            let gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file));
            // A corrupt stream unpacks to nothing recognisable, which callers report.
            let _ = gz.take(n as u64).read_to_end(&mut head);
        }
        Ok(head)
    }

    /// Whether the first bytes of a file are gzip's magic number.
    pub fn is_gzip(head: &[u8]) -> bool {
        head.starts_with(&GZIP_MAGIC)
    }

    /// Maps the file at `path` read-only. A gzip-compressed file (told by its magic number,
    /// not its name; multi-member, as HotSpot writes it) is first unpacked into an unlinked
    /// temporary file in `tmp` (default: `TMPDIR`, else `/tmp`), which costs the unpacked size
    /// there while the dump is open and nothing once it is closed.
    #[allow(unsafe_code)] // the one mmap of the project; see SAFETY below
    pub fn open_in(path: &Path, tmp: Option<&Path>) -> Result<Dump, Error> {
        let io = |source| Error::Io { path: path.to_owned(), source };
        let mut file = std::fs::File::open(path).map_err(io)?;
        let mut head = [0u8; 2];
        let n = file.read(&mut head).map_err(io)?;
        file.rewind().map_err(io)?;
        if Self::is_gzip(&head[..n]) {
            file = unpack(file, tmp).map_err(io)?;
        }
        let len = file.metadata().map_err(io)?.len();
        let bytes = if len == 0 {
            Bytes::Owned(Vec::new())
        } else {
            // SAFETY: the map is read-only and private to this process. Another process
            // truncating the file while we read it would fault (SIGBUS); heap dumps are written
            // once and not modified afterwards, which is the documented assumption here.
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
            #[cfg(unix)]
            let _ = map.advise(memmap2::Advice::Sequential);
            Bytes::Mapped(map)
        };
        Ok(Dump { bytes: Arc::new(bytes), path: Some(path.to_owned()) })
    }

    /// Wraps bytes already in memory.
    pub fn from_vec(v: Vec<u8>) -> Dump {
        Dump { bytes: Arc::new(Bytes::Owned(v)), path: None }
    }

    /// The whole file.
    pub fn data(&self) -> &[u8] {
        match &*self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }

    /// Tells the kernel this process is done with the whole pages inside `offset..offset+len`,
    /// so that they leave its resident set (they stay in the page cache). Reading them again
    /// later is still correct: it faults them back in from the file.
    #[allow(unsafe_code)] // the mmap wrapper; see SAFETY below
    pub fn release(&self, offset: u64, len: usize) {
        const PAGE: u64 = 4096;
        let Bytes::Mapped(map) = &*self.bytes else {
            return;
        };
        let start = offset.div_ceil(PAGE) * PAGE;
        let end = ((offset + len as u64) / PAGE * PAGE).min(map.len() as u64);
        if end > start {
            // SAFETY: MADV_DONTNEED on a read-only file mapping only drops this process's page
            // table entries; later reads repopulate them from the file, whose contents do not
            // change (see `open`), so no borrow can observe different bytes.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start as usize, (end - start) as usize)
            };
        }
    }

    /// Where the bytes came from, if a file.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}
