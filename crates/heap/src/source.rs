//! The bytes of a dump: memory-mapped from a file, or owned (tests, fuzzing).

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

impl Dump {
    /// Maps the file at `path` read-only.
    #[allow(unsafe_code)] // the one mmap of the project; see SAFETY below
    pub fn open(path: &Path) -> Result<Dump, Error> {
        let io = |source| Error::Io { path: path.to_owned(), source };
        let file = std::fs::File::open(path).map_err(io)?;
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
