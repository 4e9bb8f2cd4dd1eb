//! What a snapshot is read from: its bytes, and a way to give back the pages already parsed.

/// The bytes of a snapshot file, which the heap keeps for its strings.
pub trait SnapshotBytes: AsRef<[u8]> + Send + Sync {
    /// Says that `len` bytes from `offset` will not be read again soon: a mapped file may take
    /// them out of the process's resident memory (the integer arrays, once in columns, are
    /// most of the file).
    fn done_with(&self, _offset: usize, _len: usize) {}
}

impl SnapshotBytes for Vec<u8> {}
