//! Arrays one phase writes in order and a later phase reads back, kept in an unlinked
//! temporary file meanwhile, so that they take no memory while the phases between run.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};

use crate::idx::Idx;

/// Values appended in order, held in a temporary file (in memory when none can be made). A
/// file that cannot be written or read back stops the work with [`crate::TempFileFailed`].
pub(crate) struct Spill<I> {
    file: Option<BufWriter<File>>,
    memory: Vec<I>,
    len: usize,
}

impl<I: Idx> Spill<I> {
    /// An empty spill in the temporary directory `dir` (the system's for `None`).
    pub(crate) fn new(dir: Option<&std::path::Path>) -> Spill<I> {
        let file = crate::place::temp_file_in(dir).ok().map(|f| BufWriter::with_capacity(1 << 20, f));
        Spill { file, memory: Vec::new(), len: 0 }
    }

    /// Appends `v`.
    #[inline]
    pub(crate) fn push(&mut self, v: I) {
        self.len += 1;
        match &mut self.file {
            Some(w) => {
                if let Err(e) = w.write_all(&v.to_bytes()[..I::BYTES]) {
                    crate::place::temp_file_failed("write", e);
                }
            }
            None => self.memory.push(v),
        }
    }

    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Calls `f` with every value's position and value, in order, reading the file in blocks.
    pub(crate) fn for_each(&mut self, mut f: impl FnMut(usize, I)) {
        let len = self.len;
        match self.reader() {
            Some(mut r) => {
                let mut buf = vec![0u8; I::BYTES * 8192];
                let mut at = 0;
                while at < len {
                    let k = (len - at).min(8192);
                    r.read_exact(&mut buf[..k * I::BYTES])
                        .unwrap_or_else(|e| crate::place::temp_file_failed("read back", e));
                    for (i, b) in buf[..k * I::BYTES].chunks_exact(I::BYTES).enumerate() {
                        f(at + i, I::from_bytes(b));
                    }
                    at += k;
                }
            }
            None => self.memory.iter().enumerate().for_each(|(i, &v)| f(i, v)),
        }
    }

    /// The values, read back into a column placed as `place` says.
    pub(crate) fn into_column(mut self, place: &crate::Placement) -> crate::Column<I> {
        if self.file.is_none() {
            return crate::Column::from_vec(std::mem::take(&mut self.memory), place);
        }
        let mut out = crate::Column::zeros(self.len, place);
        self.for_each(|i, v| out[i] = v);
        out
    }

    /// A reader from the file's start, after flushing what is buffered; `None` in memory.
    fn reader(&mut self) -> Option<BufReader<&mut File>> {
        let w = self.file.as_mut()?;
        w.flush().unwrap_or_else(|e| crate::place::temp_file_failed("write", e));
        let f = w.get_mut();
        f.rewind().unwrap_or_else(|e| crate::place::temp_file_failed("read back", e));
        Some(BufReader::with_capacity(1 << 20, f))
    }
}
