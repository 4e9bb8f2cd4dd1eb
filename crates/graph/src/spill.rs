//! Arrays one phase writes in order and a later phase reads back, kept in an unlinked
//! temporary file meanwhile, so that they take no memory while the phases between run.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};

use crate::idx::Idx;
use crate::{width_for, Ints, IntsWriter};

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
        let file = crate::temp::temp_file_in(dir).ok().map(|f| BufWriter::with_capacity(1 << 20, f));
        Spill { file, memory: Vec::new(), len: 0 }
    }

    /// Appends `v`.
    #[inline]
    pub(crate) fn push(&mut self, v: I) {
        self.len += 1;
        match &mut self.file {
            Some(w) => {
                if let Err(e) = w.write_all(&v.to_bytes()[..I::BYTES]) {
                    crate::temp::temp_file_failed("write", e);
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
                        .unwrap_or_else(|e| crate::temp::temp_file_failed("read back", e));
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

    /// The values as [`Ints`] for values up to `max`: the file itself when its values have
    /// that width (mapped, not copied), else a copy placed as `place` says.
    #[allow(unsafe_code)] // maps a file of our own; see SAFETY below
    pub(crate) fn into_ints(mut self, max: u64, place: &crate::Placement) -> Ints {
        if self.len > 0 && width_for(max) == I::BYTES && cfg!(target_endian = "little") {
            if let Some(w) = self.file.take() {
                let file = w.into_inner().unwrap_or_else(|e| crate::temp::temp_file_failed("write", e.into_error()));
                // SAFETY: the file is unlinked and only this mapping refers to it.
                let map = unsafe { memmap2::MmapMut::map_mut(&file) };
                return Ints::from_map(map.unwrap_or_else(|e| crate::temp::temp_file_failed("read back", e)), I::BYTES);
            }
        }
        let mut out = Ints::zeros_placed(self.len, max, place.files, place.dir.as_deref());
        self.for_each(|i, v| out.set(i, v.get() as u64));
        out
    }

    /// A reader from the file's start, after flushing what is buffered; `None` in memory.
    fn reader(&mut self) -> Option<BufReader<&mut File>> {
        let w = self.file.as_mut()?;
        w.flush().unwrap_or_else(|e| crate::temp::temp_file_failed("write", e));
        let f = w.get_mut();
        f.rewind().unwrap_or_else(|e| crate::temp::temp_file_failed("read back", e));
        Some(BufReader::with_capacity(1 << 20, f))
    }
}

/// Indices per range of [`scatter`]: 4 Mi entries, 8–20 MiB of output, which the page cache
/// holds while its range is written.
pub(crate) const SCATTER_RANGE: usize = 1 << 22;

/// `n` values up to `max`, placed as `place` says, set by `fill` through the `(index, value)`
/// function it is given; unset entries are 0. With a `range` (not 0), and in a file, the pairs
/// go first to one temporary file per `range` indices, which are then applied one range at a
/// time: written in the order `fill` gives them, indices in another order than the output's
/// (a tree's preorder against node numbers) fault a page of a file bigger than memory for
/// nearly every value.
pub(crate) fn scatter(
    n: usize,
    max: u64,
    place: &crate::Placement,
    range: usize,
    fill: impl FnOnce(&mut dyn FnMut(usize, u64)),
) -> Ints {
    let dir = place.dir.as_deref();
    if place.files && !place.for_a_phase(n * width_for(max)).files {
        // Set in memory, then written to the file in order.
        let mut out = Ints::zeros(n, max);
        fill(&mut |i, v| out.set(i, v));
        let mut file = IntsWriter::in_file(max, dir);
        out.iter().for_each(|v| file.push(v));
        return file.finish();
    }
    let mut out = Ints::zeros_placed(n, max, place.files, dir);
    if !out.in_file() || range == 0 {
        fill(&mut |i, v| out.set(i, v));
        return out;
    }
    // Each pair as two values as narrow as the larger of an index and a value allows.
    let widest = max.max(n as u64);
    let mut buckets: Vec<IntsWriter> = (0..n.div_ceil(range)).map(|_| IntsWriter::in_file(widest, dir)).collect();
    fill(&mut |i, v| {
        let b = &mut buckets[i / range];
        b.push(i as u64);
        b.push(v);
    });
    for (k, b) in buckets.into_iter().enumerate() {
        let pairs = b.finish();
        for j in (0..pairs.len()).step_by(2) {
            out.set(pairs.get(j) as usize, pairs.get(j + 1));
        }
        drop(pairs);
        out.release_range(k * range..((k + 1) * range).min(n));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scatter_through_files_in_ranges_sets_what_one_in_memory_sets() {
        let n = 1000;
        let pairs: Vec<(usize, u64)> = (0..n).filter(|i| i % 7 != 3).map(|i| ((i * 389) % n, (i * i) as u64)).collect();
        let fill = |set: &mut dyn FnMut(usize, u64)| pairs.iter().for_each(|&(i, v)| set(i, v));
        let memory = scatter(n, 1 << 20, &crate::Placement::memory(), SCATTER_RANGE, fill);
        let files = crate::Placement { files: true, ..crate::Placement::default() };
        for range in [1, 3, 64, 1000, 4096] {
            let spilled = scatter(n, 1 << 20, &files, range, fill);
            assert!(spilled.in_file());
            assert_eq!(spilled, memory, "{range} per bucket");
        }
        assert_eq!(memory.get((3 * 389) % n), 0, "an index nothing set");
    }

    #[test]
    fn spills_and_columns_become_ints_of_the_same_values() {
        let files = crate::Placement { files: true, ..crate::Placement::default() };
        let values: Vec<u32> = (0..70_000u32).map(|i| i.wrapping_mul(2_654_435_761) % 70_000).collect();
        // Values as wide as the spill's (the file is adopted) and narrower (copied).
        for max in [69_999, 1 << 20, u64::from(u32::MAX)] {
            for place in [&files, &crate::Placement::memory()] {
                let mut spill: Spill<u32> = Spill::new(None);
                values.iter().for_each(|&v| spill.push(v));
                let ints = spill.into_ints(max, place);
                assert_eq!(ints.iter().collect::<Vec<_>>(), values.iter().map(|&v| u64::from(v)).collect::<Vec<_>>());
            }
        }
        for place in [&files, &crate::Placement::memory()] {
            let column = crate::Column::from_vec(values.clone(), place);
            let ints = column.into_ints();
            assert_eq!((ints.width(), ints.in_file()), (4, place.files));
            assert_eq!(ints.iter().collect::<Vec<_>>(), values.iter().map(|&v| u64::from(v)).collect::<Vec<_>>());
        }
        let wide = crate::Column::from_vec(vec![u64::MAX, 7], &files).into_ints();
        assert_eq!(wide.iter().collect::<Vec<_>>(), vec![u64::MAX, 7]);
    }
}
