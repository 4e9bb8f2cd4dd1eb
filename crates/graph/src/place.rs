//! Where the big arrays of an index live: in the process's memory, or in unlinked temporary
//! files mapped into memory, whose pages the kernel writes to disk and reads back as memory
//! runs short. The second lets a heap bigger than memory be indexed; the first is faster.

use std::ops::{Deref, DerefMut};
use std::path::PathBuf;

use crate::temp::{advise_random, map_temp, reserve, temp_file_failed};

/// Where an index's big arrays go, chosen once per heap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// Every big array in a temporary file (out of core), not only those a phase parks.
    pub files: bool,
    /// The directory of the temporary files; the system's (`TMPDIR`) when `None`.
    pub dir: Option<PathBuf>,
    /// The memory allowed, in bytes; 0 when not known.
    pub limit: u64,
}

impl Placement {
    /// Everything in memory, temporary files in the system's directory.
    pub fn memory() -> Placement {
        Placement::default()
    }

    /// True when a phase that reads `bytes` of arrays in random order should say so
    /// ([`advise_random`]): out of core, when they would not fit in three quarters of the
    /// memory allowed, the rest being for what the phase writes. When they fit, the kernel's
    /// reading around each fault loads them faster: under a limit of 407 MiB, the 30 M-object
    /// Tomcat dump took 48.6 s with every such array advised random, 41.3 s advised so.
    pub fn reads_at_random(&self, bytes: usize) -> bool {
        self.files && (self.limit == 0 || bytes as u64 > self.limit / 4 * 3)
    }

    /// Where an array of `bytes` that one phase writes or reads at random, and that does not
    /// outlive the phase, should go: in memory unless out of core, and out of core too while
    /// it takes at most five eighths of the memory allowed (the phase's other arrays are read
    /// or written in order, and need little of the page cache). A file's pages written at random are written
    /// to the disk and read back as the limit presses; under a 203 MiB cgroup, the 120 MB map
    /// from nodes to DFS numbers of a 30 M-object heap took 1.4 s to fill in a file, 0.2 s in
    /// memory.
    pub fn for_a_phase(&self, bytes: usize) -> Placement {
        if self.files && self.limit > 0 && bytes as u64 <= self.limit / 8 * 5 {
            Placement { files: false, ..self.clone() }
        } else {
            self.clone()
        }
    }
}

enum Store<T> {
    Heap(Vec<T>),
    File(std::fs::File, memmap2::MmapMut),
    /// Zeroed anonymous memory mapped without reserving swap: the kernel's default
    /// overcommit heuristic refuses one allocation bigger than memory and swap, though only
    /// the pages written are committed (a 10^9-object dump's per-object bound is 45 GB).
    Anon(memmap2::MmapMut),
}

/// Zeroed columns of this many bytes and more are mapped ([`Store::Anon`]), not allocated.
const ANON_BYTES: usize = 1 << 30;

/// A fixed-length array of plain integers, in memory or in a temporary file
/// ([`Placement::files`]); either way it reads and writes as a slice.
pub struct Column<T: bytemuck::Pod> {
    store: Store<T>,
    len: usize,
}

impl<T: bytemuck::Pod> Column<T> {
    /// `len` zeros where `place` says (in memory when no temporary file can be made).
    pub fn zeros(len: usize, place: &Placement) -> Column<T> {
        let bytes = len * std::mem::size_of::<T>();
        if place.files && bytes > 0 {
            if let Ok((f, map)) = map_temp(bytes, place.dir.as_deref()) {
                return Column { store: Store::File(f, map), len };
            }
        }
        if bytes >= ANON_BYTES {
            if let Ok(map) = memmap2::MmapOptions::new().len(bytes).no_reserve_swap().map_anon() {
                return Column { store: Store::Anon(map), len };
            }
        }
        Column { store: Store::Heap(vec![T::zeroed(); len]), len }
    }

    /// The values of `v`, moved into a file when `place` says so.
    pub fn from_vec(v: Vec<T>, place: &Placement) -> Column<T> {
        if !place.files {
            let len = v.len();
            return Column { store: Store::Heap(v), len };
        }
        let mut c = Column::zeros(v.len(), place);
        c.copy_from_slice(&v);
        c
    }

    /// Keeps the first `len` values only.
    pub fn truncate(&mut self, len: usize) {
        match &mut self.store {
            Store::Heap(v) => {
                v.truncate(len);
                v.shrink_to_fit();
            }
            // The pages past the end go back to the system; the address space stays.
            Store::Anon(m) => {
                let page = 4096;
                let from = (len * std::mem::size_of::<T>()).div_ceil(page) * page;
                if from < m.len() {
                    #[allow(unsafe_code)]
                    // SAFETY: the range lies inside this private mapping, past every value kept.
                    let _ =
                        unsafe { m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, m.len() - from) };
                }
            }
            Store::File(..) => {}
        }
        self.len = self.len.min(len);
    }

    /// Grows or shrinks to `len` values, new ones zero.
    #[allow(unsafe_code)] // maps a file of our own; see SAFETY below
    pub fn resize(&mut self, len: usize) {
        let old = self.len;
        match &mut self.store {
            Store::Heap(v) => v.resize(len, T::zeroed()),
            Store::Anon(m) => {
                if len * std::mem::size_of::<T>() > m.len() {
                    let mut v = self.to_vec();
                    v.resize(len, T::zeroed());
                    self.store = Store::Heap(v);
                } else if len > old {
                    self.len = len;
                    self[old..len].fill(T::zeroed());
                }
            }
            Store::File(f, m) => {
                let bytes = (len * std::mem::size_of::<T>()).max(1) as u64;
                if bytes > m.len() as u64 {
                    let grown = reserve(f, m.len() as u64, bytes).and_then(|()| f.set_len(bytes)).and_then(|()| {
                        // SAFETY: the file is unlinked and only this mapping refers to it.
                        unsafe { memmap2::MmapMut::map_mut(&*f) }
                    });
                    *m = grown.unwrap_or_else(|e| temp_file_failed("grow", e));
                }
                self.len = len;
                if len > old {
                    self[old..len].fill(T::zeroed());
                }
            }
        }
        self.len = len;
    }

    /// True when the values live in a temporary file.
    pub fn in_file(&self) -> bool {
        matches!(self.store, Store::File(..))
    }

    /// A second handle on the column's temporary file (`None` in memory): for a thread that
    /// reads it or gives the kernel advice while the column is borrowed elsewhere.
    pub(crate) fn file(&self) -> Option<std::fs::File> {
        match &self.store {
            Store::File(f, _) => f.try_clone().ok(),
            Store::Heap(_) | Store::Anon(_) => None,
        }
    }

    /// Says that the column will be read in random order: see [`advise_random`].
    pub fn advise_random(&self) {
        if let Store::File(_, m) = &self.store {
            advise_random(m);
        }
    }

    /// The column as [`crate::Ints`] of its values' width, its file adopted without a copy
    /// where it has one of exactly its values.
    pub(crate) fn into_ints(self) -> crate::Ints {
        let width = std::mem::size_of::<T>();
        debug_assert!(matches!(width, 2 | 4 | 8), "Ints take 2, 4 or 8 bytes a value, not {width}");
        match self.store {
            Store::File(_, m) if cfg!(target_endian = "little") && m.len() == self.len * width => {
                crate::Ints::from_map(m, width)
            }
            _ => {
                let bytes = self.iter().flat_map(|v| to_le(bytemuck::bytes_of(v))).collect();
                crate::Ints::from_le_bytes(bytes, width)
            }
        }
    }

    /// Bytes of process memory the column holds for good (none when in a file).
    pub fn heap_bytes(&self) -> usize {
        match &self.store {
            Store::Heap(v) => v.capacity() * std::mem::size_of::<T>(),
            Store::Anon(_) => self.len * std::mem::size_of::<T>(),
            Store::File(..) => 0,
        }
    }
}

/// A value's native bytes, little-endian.
fn to_le(native: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let big = cfg!(target_endian = "big");
    (0..native.len()).map(move |i| native[if big { native.len() - 1 - i } else { i }])
}

impl<T: bytemuck::Pod> Default for Column<T> {
    fn default() -> Column<T> {
        Column { store: Store::Heap(Vec::new()), len: 0 }
    }
}

impl<T: bytemuck::Pod> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Column").field("len", &self.len).field("in_file", &self.in_file()).finish()
    }
}

impl<T: bytemuck::Pod> Deref for Column<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.store {
            Store::Heap(v) => v,
            Store::File(_, m) | Store::Anon(m) => &bytemuck::cast_slice(m)[..self.len],
        }
    }
}

impl<T: bytemuck::Pod> DerefMut for Column<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.store {
            Store::Heap(v) => v,
            Store::File(_, m) | Store::Anon(m) => &mut bytemuck::cast_slice_mut(m)[..self.len],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_bigger_than_memory_is_address_space_until_written() {
        // 64 GiB zeroed: more than this machine's memory and swap, which the kernel's
        // overcommit heuristic refuses to one allocation; only the pages written count.
        let len = (64usize << 30) / 8;
        let mut c: Column<u64> = Column::zeros(len, &Placement::memory());
        c[0] = 1;
        c[len - 1] = 2;
        assert_eq!((c[0], c[len / 2], c[len - 1]), (1, 0, 2));
        c.truncate(3);
        assert_eq!(&c[..], &[1, 0, 0]);
        c.resize(5);
        assert_eq!(&c[..], &[1, 0, 0, 0, 0]);
    }

    #[test]
    fn a_column_in_a_file_reads_and_writes_as_one_in_memory() {
        let files = Placement { files: true, ..Placement::default() };
        for place in [Placement::memory(), files] {
            let mut c: Column<u64> = Column::zeros(10_000, &place);
            assert_eq!(c.in_file(), place.files);
            c.iter_mut().enumerate().for_each(|(i, v)| *v = (i as u64) << 33);
            assert!(c.iter().enumerate().all(|(i, &v)| v == (i as u64) << 33));
            let mut d = Column::from_vec(vec![7u32; 5], &place);
            assert_eq!(&d[..], &[7; 5]);
            d.resize(100_000);
            d[99_999] = 3;
            assert_eq!((d[4], d[5], d[99_999], d.len()), (7, 0, 3, 100_000));
            d.truncate(2);
            assert_eq!(&d[..], &[7, 7]);
        }
    }
}
