//! Vectors of unsigned integers as narrow as their largest value allows: 2 bytes each while
//! values fit 16 bits, 4 bytes while they fit 32, 5 bytes up to 2^40, 8 bytes beyond. A heap
//! under 2^32 objects and references then pays 4 bytes per index, and no heap meets a 32-bit
//! limit.
//!
//! A vector lives in memory, or in an unlinked temporary file mapped into memory
//! ([`Ints::zeros_in_file`]). The kernel keeps a file-backed vector in its page cache while
//! memory allows and writes it to disk when not; [`Ints::release`] takes its pages out of the
//! process's resident memory while a phase of work does not need them, and the next read
//! maps them back from the page cache (or the disk).

use std::path::Path;

/// The byte width that holds every value up to `max`.
pub fn width_for(max: u64) -> usize {
    if max <= u64::from(u16::MAX) {
        2
    } else if max <= u64::from(u32::MAX) {
        4
    } else if max < 1 << 40 {
        5
    } else {
        8
    }
}

#[derive(Debug)]
enum Store {
    Heap(Vec<u8>),
    File(memmap2::MmapMut),
}

impl Store {
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Store::Heap(v) => v,
            Store::File(m) => m,
        }
    }

    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Store::Heap(v) => v,
            Store::File(m) => m,
        }
    }

    /// Takes the whole pages inside bytes `range` of a file-backed store out of the process's
    /// resident memory until they are read again; the bytes stay in the file. Nothing in
    /// memory.
    #[allow(unsafe_code)] // drops pages of a shared file mapping; see SAFETY below
    fn release(&self, range: std::ops::Range<usize>) {
        if let Store::File(m) = self {
            let start = range.start.div_ceil(PAGE) * PAGE;
            let end = range.end.min(m.len()) / PAGE * PAGE;
            if end > start {
                // SAFETY: a shared mapping of a file keeps its contents when its pages are
                // dropped: they are read back from the file on the next access.
                let _ = unsafe { m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
            }
        }
    }
}

/// A vector of unsigned integers of one byte width (2, 4, 5 or 8), in memory or in a file.
#[derive(Debug)]
pub struct Ints {
    store: Store,
    width: usize,
}

#[inline]
fn read(b: &[u8], width: usize, i: usize) -> u64 {
    match width {
        2 => u64::from(u16::from_le_bytes(b[i * 2..i * 2 + 2].try_into().unwrap())),
        4 => u64::from(u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap())),
        5 => {
            let s = &b[i * 5..i * 5 + 5];
            u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], 0, 0, 0])
        }
        _ => u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap()),
    }
}

#[inline]
fn write(b: &mut [u8], width: usize, i: usize, v: u64) {
    debug_assert!(width == 8 || v < 1 << (8 * width), "value {v} wider than {width} bytes");
    b[i * width..i * width + width].copy_from_slice(&v.to_le_bytes()[..width]);
}

impl Ints {
    /// The values `width` bytes each, little-endian, that `map` holds: a file another
    /// structure wrote, adopted without copying.
    pub(crate) fn from_map(map: memmap2::MmapMut, width: usize) -> Ints {
        debug_assert!(map.len().is_multiple_of(width));
        Ints { store: Store::File(map), width }
    }

    /// The values `width` bytes each, little-endian, in `bytes`.
    pub(crate) fn from_le_bytes(bytes: Vec<u8>, width: usize) -> Ints {
        debug_assert!(bytes.len().is_multiple_of(width));
        Ints { store: Store::Heap(bytes), width }
    }

    /// An empty vector for values up to `max`.
    pub fn new(max: u64) -> Ints {
        Ints { store: Store::Heap(Vec::new()), width: width_for(max) }
    }

    /// An empty vector for values up to `max`, with room for `n` of them.
    pub fn with_capacity(n: usize, max: u64) -> Ints {
        let width = width_for(max);
        Ints { store: Store::Heap(Vec::with_capacity(n.saturating_mul(width))), width }
    }

    /// `n` zeros, for values up to `max`, in memory.
    pub fn zeros(n: usize, max: u64) -> Ints {
        let width = width_for(max);
        Ints { store: Store::Heap(vec![0; n.saturating_mul(width)]), width }
    }

    /// `n` zeros, for values up to `max`, in an unlinked temporary file in `dir` (the system's
    /// temporary directory for `None`), mapped into memory.
    pub fn zeros_in_file(n: usize, max: u64, dir: Option<&Path>) -> std::io::Result<Ints> {
        let width = width_for(max);
        let bytes = n.saturating_mul(width);
        let store =
            if bytes == 0 { Store::Heap(Vec::new()) } else { Store::File(crate::temp::map_temp(bytes, dir)?.1) };
        Ok(Ints { store, width })
    }

    /// `n` zeros for values up to `max`: in a file in `dir` when `file` is set (see
    /// [`Self::zeros_in_file`]), else in memory; in memory also when no file can be made.
    pub fn zeros_placed(n: usize, max: u64, file: bool, dir: Option<&Path>) -> Ints {
        if file {
            if let Ok(v) = Self::zeros_in_file(n, max, dir) {
                return v;
            }
        }
        Self::zeros(n, max)
    }

    /// Bytes per value.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.store.bytes().len() / self.width
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.store.bytes().is_empty()
    }

    /// Appends `v` (to a vector in memory; values wider than the vector's width are a bug).
    #[inline]
    pub fn push(&mut self, v: u64) {
        debug_assert!(self.width == 8 || v < 1 << (8 * self.width), "value {v} wider than {} bytes", self.width);
        match &mut self.store {
            Store::Heap(b) => b.extend_from_slice(&v.to_le_bytes()[..self.width]),
            Store::File(_) => panic!("a file-backed Ints has a fixed length"),
        }
    }

    /// The value at `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        read(self.store.bytes(), self.width, i)
    }

    /// Overwrites the value at `i`.
    #[inline]
    pub fn set(&mut self, i: usize, v: u64) {
        let width = self.width;
        write(self.store.bytes_mut(), width, i, v);
    }

    /// Splits the vector into disjoint mutable windows at the given ascending value indices,
    /// so that threads can fill them in parallel: window `k` covers `cuts[k]..cuts[k + 1]`.
    pub fn windows_mut(&mut self, cuts: &[usize]) -> Vec<IntsWindow<'_>> {
        let width = self.width;
        let mut out = Vec::with_capacity(cuts.len().saturating_sub(1));
        let mut rest: &mut [u8] = self.store.bytes_mut();
        let mut consumed = 0;
        for pair in cuts.windows(2) {
            let (start, end) = (pair[0], pair[1]);
            let (_, tail) = rest.split_at_mut((start - consumed) * width);
            let (mine, tail) = tail.split_at_mut((end - start) * width);
            out.push(IntsWindow { bytes: mine, width });
            rest = tail;
            consumed = end;
        }
        out
    }

    /// Appends every value of `other`, which has the same width.
    pub fn extend_from(&mut self, other: &Ints) {
        assert_eq!(self.width, other.width, "Ints of different widths");
        match &mut self.store {
            Store::Heap(b) => b.extend_from_slice(other.store.bytes()),
            Store::File(_) => panic!("a file-backed Ints has a fixed length"),
        }
    }

    /// The values in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        let width = self.width;
        let b = self.store.bytes();
        (0..b.len() / width).map(move |i| read(b, width, i))
    }

    /// Bytes of process memory the vector holds for good (a file-backed one: none, its pages
    /// belong to the page cache and are released with [`Self::release`]).
    pub fn heap_bytes(&self) -> usize {
        match &self.store {
            Store::Heap(b) => b.capacity(),
            Store::File(_) => 0,
        }
    }

    /// True when the values live in a temporary file.
    pub fn in_file(&self) -> bool {
        matches!(self.store, Store::File(_))
    }

    /// Releases unused capacity.
    pub fn shrink_to_fit(&mut self) {
        if let Store::Heap(b) = &mut self.store {
            b.shrink_to_fit();
        }
    }

    /// Says that a file-backed vector will be read in random order, so that the kernel reads
    /// only the page each access needs ([`crate::temp::advise_random`]). Nothing in memory.
    pub fn advise_random(&self) {
        if let Store::File(m) = &self.store {
            crate::temp::advise_random(m);
        }
    }

    /// Says that a file-backed vector will be read in order for a while, so that the kernel
    /// reads well ahead of each access. Nothing in memory.
    pub fn advise_sequential(&self) {
        if let Store::File(m) = &self.store {
            // Advice only: a kernel that refuses it reads as before.
            let _ = m.advise(memmap2::Advice::Sequential);
        }
    }

    /// Takes a file-backed vector's pages out of the process's resident memory until they are
    /// read again; the values stay in the file. Nothing for a vector in memory.
    pub fn release(&self) {
        self.release_range(0..self.len());
    }

    /// [`Self::release`] for values `range` only (the whole pages inside it).
    pub fn release_range(&self, range: std::ops::Range<usize>) {
        self.store.release(range.start * self.width..range.end * self.width);
    }
}

impl Clone for Ints {
    /// A copy in memory.
    fn clone(&self) -> Ints {
        Ints { store: Store::Heap(self.store.bytes().to_vec()), width: self.width }
    }
}

impl PartialEq for Ints {
    fn eq(&self, other: &Ints) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Ints {}

impl Default for Ints {
    fn default() -> Ints {
        Ints::new(0)
    }
}

/// Values appended in order into an [`Ints`] whose length is not known in advance: in an
/// unlinked temporary file written in sequence and mapped when done (in memory when no file
/// can be made). A file that cannot be written stops the work with
/// [`crate::TempFileFailed`].
pub struct IntsWriter {
    width: usize,
    bytes: BytesWriter,
}

impl IntsWriter {
    /// An empty writer for values up to `max`, its file in `dir` (the system's temporary
    /// directory for `None`).
    pub fn in_file(max: u64, dir: Option<&Path>) -> IntsWriter {
        IntsWriter { width: width_for(max), bytes: BytesWriter::in_file(dir) }
    }

    /// Appends `v`.
    #[inline]
    pub fn push(&mut self, v: u64) {
        debug_assert!(self.width == 8 || v < 1 << (8 * self.width), "value {v} wider than {} bytes", self.width);
        self.bytes.push(&v.to_le_bytes()[..self.width]);
    }

    /// Appends `values`.
    pub fn extend(&mut self, values: &[u64]) {
        values.iter().for_each(|&v| self.push(v));
    }

    /// Number of values written.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.width
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values written, as a vector (file-backed when written to a file).
    pub fn finish(self) -> Ints {
        Ints { store: self.bytes.finish().0, width: self.width }
    }
}

/// Bytes appended in order to an unlinked temporary file, mapped when done (in memory when no
/// file can be made): what [`IntsWriter`], the packed successor lists and the heap pass's
/// reference stream are written with.
pub struct BytesWriter {
    sink: Sink,
    len: usize,
}

enum Sink {
    Heap(Vec<u8>),
    File(std::io::BufWriter<std::fs::File>),
}

impl BytesWriter {
    /// An empty writer, its file in `dir` (the system's temporary directory for `None`).
    pub fn in_file(dir: Option<&Path>) -> BytesWriter {
        let sink = match crate::temp::temp_file_in(dir) {
            Ok(f) => Sink::File(std::io::BufWriter::with_capacity(1 << 20, f)),
            Err(_) => Sink::Heap(Vec::new()),
        };
        BytesWriter { sink, len: 0 }
    }

    /// An empty writer in the process's memory.
    pub fn in_memory() -> BytesWriter {
        BytesWriter { sink: Sink::Heap(Vec::new()), len: 0 }
    }

    /// Appends `bytes`.
    #[inline]
    pub fn push(&mut self, bytes: &[u8]) {
        self.len += bytes.len();
        match &mut self.sink {
            Sink::Heap(b) => b.extend_from_slice(bytes),
            Sink::File(w) => {
                use std::io::Write;
                w.write_all(bytes).unwrap_or_else(|e| crate::temp::temp_file_failed("write", e));
            }
        }
    }

    /// Number of bytes written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes written (file-backed when written to a file).
    #[allow(unsafe_code)] // maps a file of our own; see SAFETY below
    pub fn finish(self) -> Bytes {
        Bytes(match self.sink {
            Sink::Heap(b) => Store::Heap(b),
            // An empty file cannot be mapped.
            Sink::File(_) if self.len == 0 => Store::Heap(Vec::new()),
            Sink::File(w) => {
                let file = w.into_inner().unwrap_or_else(|e| crate::temp::temp_file_failed("write", e.into_error()));
                // SAFETY: the file is unlinked and only this mapping refers to it.
                let map = unsafe { memmap2::MmapMut::map_mut(&file) };
                Store::File(map.unwrap_or_else(|e| crate::temp::temp_file_failed("read back", e)))
            }
        })
    }
}

/// What a [`BytesWriter`] wrote, read as a slice.
pub struct Bytes(Store);

impl Bytes {
    /// Asks the kernel to start reading `range` of a file-backed slice now, without waiting:
    /// a pass that reads it next finds it read, or arriving. Nothing in memory.
    pub fn prefetch(&self, range: std::ops::Range<usize>) {
        if let Store::File(m) = &self.0 {
            let start = range.start.min(m.len()) / PAGE * PAGE;
            let end = range.end.min(m.len());
            if end > start {
                // Advice only: a kernel that refuses it reads on demand as before.
                let _ = m.advise_range(memmap2::Advice::WillNeed, start, end - start);
            }
        }
    }

    /// Takes the whole pages inside `range` of a file-backed slice out of the process's
    /// resident memory until they are read again; the bytes stay in the file.
    pub fn release(&self, range: std::ops::Range<usize>) {
        self.0.release(range);
    }
}

/// The page size the kernel maps files in.
const PAGE: usize = 4096;

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0.bytes()
    }
}

/// A mutable window of an [`Ints`], indexed from its own start.
#[derive(Debug)]
pub struct IntsWindow<'a> {
    bytes: &'a mut [u8],
    width: usize,
}

impl IntsWindow<'_> {
    /// Overwrites value `i` of the window.
    #[inline]
    pub fn set(&mut self, i: usize, v: u64) {
        write(self.bytes, self.width, i, v);
    }

    /// Number of values in the window.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.width
    }

    /// True when the window is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_writer_reads_back_what_it_was_given(values in proptest::collection::vec(any::<u64>(), 0..3000), shift in 0u32..64, cut in 0usize..3000) {
            let values: Vec<u64> = values.into_iter().map(|v| v >> shift).collect();
            let max = values.iter().copied().max().unwrap_or(0);
            let mut w = IntsWriter::in_file(max, None);
            let cut = cut.min(values.len());
            w.extend(&values[..cut]);
            values[cut..].iter().for_each(|&v| w.push(v));
            prop_assert_eq!(w.len(), values.len());
            let ints = w.finish();
            prop_assert_eq!(ints.in_file(), !values.is_empty());
            prop_assert_eq!(ints.width(), width_for(max));
            prop_assert_eq!(ints.iter().collect::<Vec<_>>(), values);
        }

        #[test]
        fn round_trips_at_every_width(values in proptest::collection::vec(any::<u64>(), 0..200), shift in 0u32..64) {
            let values: Vec<u64> = values.into_iter().map(|v| v >> shift).collect();
            let max = values.iter().copied().max().unwrap_or(0);
            let mut p = Ints::new(max);
            for &v in &values { p.push(v); }
            prop_assert_eq!(p.len(), values.len());
            prop_assert_eq!(p.iter().collect::<Vec<_>>(), values.clone());
            let mut f = Ints::zeros_in_file(values.len(), max, None).unwrap();
            for (i, &v) in values.iter().enumerate() { f.set(i, v); }
            f.release();
            prop_assert_eq!(f.iter().collect::<Vec<_>>(), values);
        }
    }

    #[test]
    fn widths_follow_the_largest_value() {
        assert_eq!((width_for(u64::from(u16::MAX)), width_for(1 << 16)), (2, 4));
        assert_eq!((width_for(u64::from(u32::MAX)), width_for(1 << 32), width_for((1 << 40) - 1)), (4, 5, 5));
        assert_eq!(width_for(1 << 40), 8);
    }

    #[test]
    fn windows_fill_disjoint_ranges() {
        let mut p = Ints::zeros(10, 1000);
        for (k, mut w) in p.windows_mut(&[0, 3, 3, 10]).into_iter().enumerate() {
            for i in 0..w.len() {
                w.set(i, (k * 100 + i) as u64);
            }
        }
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![0, 1, 2, 200, 201, 202, 203, 204, 205, 206]);
    }

    #[test]
    fn a_released_file_keeps_its_values() {
        let mut f = Ints::zeros_in_file(100_000, 1 << 33, None).unwrap();
        (0..f.len()).for_each(|i| f.set(i, (i as u64) << 20));
        f.release_range(10..90_000);
        assert!((0..f.len()).all(|i| f.get(i) == (i as u64) << 20));
        assert_eq!(f.heap_bytes(), 0);
    }
}
