//! Unlinked temporary files, mapped into memory: what an out-of-core array is kept in, and
//! the error that stops the work when one cannot be written or read back.

use std::path::Path;

/// An unlinked temporary file in `dir`, or in the system's temporary directory.
pub fn temp_file_in(dir: Option<&Path>) -> std::io::Result<std::fs::File> {
    match dir {
        Some(d) => tempfile::tempfile_in(d),
        None => tempfile::tempfile(),
    }
}

/// A temporary file that could not be written or read back: the disk (or `--tmp-dir`) is
/// full or failing. Work that spills to temporary files raises it as a panic payload
/// ([`std::panic::panic_any`]) rather than threading an error through every phase; the
/// program's entry point turns it into an error message.
#[derive(Debug)]
pub struct TempFileFailed {
    /// What was being done: `write`, `read back`, `grow`.
    pub what: &'static str,
    /// The operating system's error.
    pub error: std::io::Error,
}

impl std::fmt::Display for TempFileFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot {} a temporary file: {}", self.what, self.error)
    }
}

/// Stops the work with a [`TempFileFailed`] payload.
pub(crate) fn temp_file_failed(what: &'static str, error: std::io::Error) -> ! {
    std::panic::panic_any(TempFileFailed { what, error })
}

/// Gives `file` its blocks up to `bytes` now: a mapped file whose pages find the disk full
/// when written kills the process (SIGBUS); an allocation that fails here is an error the
/// caller can handle. Filesystems that cannot preallocate are left sparse.
pub(crate) fn reserve(file: &std::fs::File, from: u64, bytes: u64) -> std::io::Result<()> {
    if bytes <= from {
        return Ok(());
    }
    match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), from, bytes - from) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::OPNOTSUPP || e == rustix::io::Errno::NOSYS => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// `bytes` zeros in an unlinked temporary file in `dir`, mapped into memory (the file is
/// returned too, to grow it later).
#[allow(unsafe_code)] // maps a file of our own; see SAFETY below
pub(crate) fn map_temp(bytes: usize, dir: Option<&Path>) -> std::io::Result<(std::fs::File, memmap2::MmapMut)> {
    let file = temp_file_in(dir)?;
    reserve(&file, 0, bytes as u64)?;
    file.set_len(bytes as u64)?;
    // SAFETY: the file is unlinked and only this mapping refers to it.
    let map = unsafe { memmap2::MmapMut::map_mut(&file)? };
    Ok((file, map))
}

/// Tells the kernel that a mapped temporary file will be read in random order, so that a page
/// fault reads that page alone. Its default reads the pages around a fault too: when the file
/// does not fit the memory left, each fault then evicted pages still needed, and a depth-first
/// search of a 30 M-object heap under a 203 MiB cgroup read 58 GB from the disk in minutes
/// without finishing (18 s with this advice).
pub(crate) fn advise_random(map: &memmap2::MmapMut) {
    // Advice only: a kernel that refuses it reads ahead as before.
    let _ = map.advise(memmap2::Advice::Random);
}
