//! Address → rank (position in address order): the one place objects are found by address.
//!
//! Two forms, because what else is kept differs. The snapshot has its objects sorted and can
//! read any one's address back from the dump, so it keeps only [`Buckets`] (1 byte per
//! object); a bitmap over the heap's span costs more when that span is sparse (112 MB more on
//! a 24 M-object dump of a 4 GB G1 heap, for no measurable speed). The streaming summary
//! keeps no sorted list, so [`AddrRank`] holds the addresses itself. While the snapshot is
//! built, its passes look up every reference: then a bitmap ([`AddrRank::dense_over`]) stands
//! in for the sorted addresses (8 bytes per object), which are dropped, when it is smaller.
//!
//! A Java heap is dense: objects sit back to back at multiples of the object alignment. One
//! bit per aligned slot over the heap's address range, with the number of set bits before
//! each 64-bit word stored beside it, answers a lookup from one cache line, where a search of
//! the sorted addresses reads several. The bitmap costs 2 bits per slot, about 3% of the heap
//! size; addresses spread too thinly for that (a hostile or synthetic dump) fall back to the
//! sorted list and a bucket table over it.

use rayon::prelude::*;

/// Words of a bitmap page: a page covers `64 * PAGE_WORDS` aligned slots (32 KiB of a heap
/// aligned to 8 bytes). Pages no address falls in take no words.
const PAGE_WORDS: u64 = 64;

/// A page table entry of a page no address falls in.
const EMPTY: u32 = u32::MAX;

/// Ranks of a set of addresses, which it keeps (as a bitmap, or sorted with [`Buckets`]):
/// the streaming summary's index, whose addresses are nowhere else once the pass is done.
#[derive(Debug)]
pub(crate) enum AddrRank {
    /// The bitmap by pages: `pages[p]` is the number of page `p` of the span among those an
    /// address falls in (or [`EMPTY`]), and `words[PAGE_WORDS * number + w]` its word `w`:
    /// (bits of its 64 slots, set bits in all earlier words).
    Dense { min: u64, shift: u32, pages: Vec<u32>, words: Vec<[u64; 2]> },
    /// Sorted distinct addresses, with a bucket table over their range.
    Sparse { addrs: Vec<u64>, buckets: Buckets },
}

impl AddrRank {
    /// Indexes the first halves of the pairs in `parts` (any order, repeats allowed).
    pub(crate) fn from_pairs(parts: &[&[[u64; 2]]]) -> AddrRank {
        let all = || parts.par_iter().flat_map(|p| p.par_iter().map(|o| o[0]));
        let Some(first) = parts.iter().find_map(|p| p.first()).map(|o| o[0]) else {
            return AddrRank::Sparse { addrs: Vec::new(), buckets: Buckets::default() };
        };
        let (n, min, max, differ) = all()
            .map(|a| (1usize, a, a, a ^ first))
            .reduce(|| (0, u64::MAX, 0, 0), |x, y| (x.0 + y.0, x.1.min(y.1), x.2.max(y.2), x.3 | y.3));
        // Beyond 32 bytes per object the sorted list (with its buckets) is smaller.
        let budget = 32 * n as u64 + (16 << 10);
        Shape::new(min, max, differ)
            .dense(|| parts.iter().flat_map(|p| p.iter().map(|o| o[0])), budget)
            .unwrap_or_else(|| Self::sorted(all().collect()))
    }

    fn sorted(mut addrs: Vec<u64>) -> AddrRank {
        addrs.par_sort_unstable();
        addrs.dedup();
        let buckets = Buckets::new(&addrs);
        AddrRank::Sparse { addrs, buckets }
    }

    /// The dense form over `len` ascending, distinct addresses, `addr(i)` giving the i-th,
    /// read three times in order; `None` when it would take more than `max_bytes`.
    pub(crate) fn dense_over(len: usize, addr: impl Fn(usize) -> u64, max_bytes: u64) -> Option<AddrRank> {
        if len == 0 {
            return None;
        }
        let min = addr(0);
        let differ = (1..len).fold(0, |d, i| d | (addr(i) ^ min));
        Shape::new(min, addr(len - 1), differ).dense(|| (0..len).map(&addr), max_bytes)
    }

    /// Number of distinct addresses.
    pub(crate) fn len(&self) -> usize {
        match self {
            AddrRank::Dense { words, .. } => words.last().map_or(0, |w| (w[1] + u64::from(w[0].count_ones())) as usize),
            AddrRank::Sparse { addrs, .. } => addrs.len(),
        }
    }

    /// Bytes the index holds.
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        match self {
            AddrRank::Dense { pages, words, .. } => pages.len() * 4 + words.len() * 16,
            AddrRank::Sparse { addrs, buckets } => addrs.len() * 8 + buckets.heap_bytes(),
        }
    }

    /// The rank of `addr`, if it is one of the addresses.
    #[inline]
    pub(crate) fn rank(&self, addr: u64) -> Option<usize> {
        match self {
            AddrRank::Dense { min, shift, pages, words } => {
                let off = addr.checked_sub(*min)?;
                if off & ((1 << shift) - 1) != 0 {
                    return None;
                }
                let slot = off >> shift;
                let page = *pages.get(usize::try_from(slot / (64 * PAGE_WORDS)).ok()?)?;
                if page == EMPTY {
                    return None;
                }
                let w = u64::from(page) * PAGE_WORDS + slot / 64 % PAGE_WORDS;
                let [bits, before] = words[w as usize];
                let bit = 1u64 << (slot % 64);
                (bits & bit != 0).then(|| (before + u64::from((bits & (bit - 1)).count_ones())) as usize)
            }
            AddrRank::Sparse { addrs, buckets } => buckets.find(|i| addrs[i], addr),
        }
    }
}

/// Numbers the pages marked 0 in address order, the others [`EMPTY`]; returns how many.
fn number_pages(pages: &mut [u32]) -> u64 {
    let mut next = 0u32;
    for p in pages.iter_mut().filter(|p| **p != EMPTY) {
        *p = next;
        next += 1;
    }
    u64::from(next)
}

/// The bitmap's geometry over addresses from `min` to `max`.
struct Shape {
    min: u64,
    /// The alignment all addresses share, as a shift: an offset from the lowest has as many
    /// trailing zeros as that.
    shift: u32,
    /// Pages of the span.
    pages: u64,
}

impl Shape {
    /// `differ` holds the bits in which the addresses differ from any one of them.
    fn new(min: u64, max: u64, differ: u64) -> Shape {
        let shift = differ.trailing_zeros().min(63);
        Shape { min, shift, pages: ((max - min) >> shift) / (64 * PAGE_WORDS) + 1 }
    }

    /// Bytes of the page table (saturating: a hostile span can hold more pages than bytes).
    fn table_bytes(&self) -> u64 {
        self.pages.saturating_mul(4)
    }

    fn page(&self, addr: u64) -> u64 {
        ((addr - self.min) >> self.shift) / (64 * PAGE_WORDS)
    }

    /// The dense form of the addresses `addrs()` yields (any order, repeats allowed; read
    /// twice), or `None` when its page table and the occupied pages' words take more than
    /// `max_bytes`.
    fn dense<I: Iterator<Item = u64>>(&self, addrs: impl Fn() -> I, max_bytes: u64) -> Option<AddrRank> {
        if self.table_bytes() > max_bytes {
            return None;
        }
        let mut pages = vec![EMPTY; self.pages as usize];
        addrs().for_each(|a| pages[self.page(a) as usize] = 0);
        let occupied = number_pages(&mut pages);
        (self.table_bytes() + occupied * PAGE_WORDS * 16 <= max_bytes).then(|| self.bitmap(pages, occupied, addrs()))
    }

    /// The dense form of `addrs` (any order, repeats allowed) over `pages`, numbered.
    fn bitmap(&self, pages: Vec<u32>, occupied: u64, addrs: impl Iterator<Item = u64>) -> AddrRank {
        let mut words = vec![[0u64; 2]; (occupied * PAGE_WORDS) as usize];
        for a in addrs {
            let slot = (a - self.min) >> self.shift;
            let w = u64::from(pages[(slot / (64 * PAGE_WORDS)) as usize]) * PAGE_WORDS + slot / 64 % PAGE_WORDS;
            words[w as usize][0] |= 1 << (slot % 64);
        }
        let mut before = 0u64;
        for w in &mut words {
            w[1] = before;
            before += u64::from(w[0].count_ones());
        }
        AddrRank::Dense { min: self.min, shift: self.shift, pages, words }
    }
}

/// A bucket table over sorted addresses that narrows a binary search to a handful of
/// entries (about one table entry per 8 addresses). It keeps no address: the snapshot reads
/// them back from the dump, so this is all it holds (1 byte per object).
#[derive(Debug, Clone, Default)]
pub(crate) struct Buckets {
    min: u64,
    shift: u32,
    starts: graph::Ints,
}

impl Buckets {
    /// Builds the table over `sorted` (ascending, distinct).
    pub(crate) fn new(sorted: &[u64]) -> Buckets {
        Self::over(sorted.len(), |i| sorted[i])
    }

    /// Builds the table over `len` ascending, distinct addresses, `addr(i)` giving the i-th.
    pub(crate) fn over(len: usize, addr: impl Fn(usize) -> u64) -> Buckets {
        if len == 0 {
            return Buckets::default();
        }
        let (min, max) = (addr(0), addr(len - 1));
        // Hostile dumps can hold ids anywhere in 0..=u64::MAX: the span is max - min (no + 1,
        // which overflows), and shifts may reach 64, so they are checked.
        let span = max - min;
        let want = (len as u64 / 8).max(1);
        let mut shift = 0;
        while span.checked_shr(shift).unwrap_or(0) >= want {
            shift += 1;
        }
        let buckets = span.checked_shr(shift).unwrap_or(0) as usize + 1;
        let mut starts = graph::Ints::with_capacity(buckets + 1, len as u64);
        let mut i = 0usize;
        for b in 0..buckets as u64 {
            while i < len && (addr(i) - min).checked_shr(shift).unwrap_or(0) < b {
                i += 1;
            }
            starts.push(i as u64);
        }
        starts.push(len as u64);
        Buckets { min, shift, starts }
    }

    /// Finds `id` among the addresses the table was built over, `addr(i)` giving the i-th.
    #[inline]
    pub(crate) fn find(&self, addr: impl Fn(usize) -> u64, id: u64) -> Option<usize> {
        let b = id.checked_sub(self.min)?.checked_shr(self.shift).unwrap_or(0) as usize;
        if b + 1 >= self.starts.len() {
            return None;
        }
        let (mut lo, mut hi) = (self.starts.get(b) as usize, self.starts.get(b + 1) as usize);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match addr(mid).cmp(&id) {
                std::cmp::Ordering::Equal => return Some(mid),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }

    /// Heap bytes the table holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.starts.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(addrs: &[u64]) {
        let pairs: Vec<[u64; 2]> = addrs.iter().map(|&a| [a, 0]).collect();
        let (a, b) = pairs.split_at(pairs.len() / 2);
        let mut sorted = addrs.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let rank = AddrRank::from_pairs(&[a, &[], b]);
        let buckets = Buckets::new(&sorted);
        let over = AddrRank::dense_over(sorted.len(), |i| sorted[i], 32 * sorted.len() as u64 + (16 << 10));
        assert_eq!(rank.len(), sorted.len());
        assert_eq!(over.is_some(), matches!(rank, AddrRank::Dense { .. }) && !sorted.is_empty());
        for (i, &a) in sorted.iter().enumerate() {
            assert_eq!(rank.rank(a), Some(i), "address {a:#x}");
            assert_eq!(over.as_ref().map_or(Some(i), |o| o.rank(a)), Some(i), "address {a:#x}");
            assert_eq!(buckets.find(|k| sorted[k], a), Some(i), "address {a:#x}");
            for probe in [a.wrapping_add(1), a.wrapping_sub(1), a.wrapping_add(8), 0, u64::MAX] {
                if sorted.binary_search(&probe).is_err() {
                    assert_eq!(rank.rank(probe), None, "probe {probe:#x}");
                    assert_eq!(over.as_ref().and_then(|o| o.rank(probe)), None, "probe {probe:#x}");
                    assert_eq!(buckets.find(|k| sorted[k], probe), None, "probe {probe:#x}");
                }
            }
        }
    }

    #[test]
    fn dense_and_sparse_agree_with_sorting() {
        check(&[]);
        check(&[0x1000]);
        check(&[0x1010, 0x1000, 0x1008, 0x1000, 0x2000]);
        check(&[0, u64::MAX, 1 << 40, 8]);
        check(&[u64::MAX - 16, u64::MAX]);
    }

    #[test]
    fn a_heap_of_regions_far_apart_takes_the_bitmap_of_its_regions_alone() {
        // Two 1 MiB regions of 16-byte objects, 6 GiB apart, as G1 leaves its old regions: a
        // bitmap over the span would take 6 GiB / 8 / 4 = 192 MiB; by pages, 64 KiB of words.
        let region = |base: u64| (0..65_536u64).map(move |k| base + 16 * k);
        let sorted: Vec<u64> = region(0x7_0000_0000).chain(region(0x8_8000_0000)).collect();
        let rank = AddrRank::dense_over(sorted.len(), |i| sorted[i], 8 * sorted.len() as u64).expect("dense");
        assert!(rank.heap_bytes() < 2 << 20, "{} bytes", rank.heap_bytes());
        assert_eq!(rank.rank(0x8_8000_0000 + 16), Some(65_537));
        assert_eq!(rank.rank(0x8_0000_0000), None);
        check(&sorted);
    }

    proptest! {
        #[test]
        fn heap_like_addresses(base in 0u64..1 << 44, slots in proptest::collection::vec(0u64..5000, 0..400), align in 0u32..5) {
            let addrs: Vec<u64> = slots.iter().map(|s| base + (s << align)).collect();
            check(&addrs);
        }

        #[test]
        fn arbitrary_addresses(addrs in proptest::collection::vec(any::<u64>(), 0..200)) {
            check(&addrs);
        }

        #[test]
        fn sparse_addresses_with_extremes(mut addrs in proptest::collection::vec(0u64..1_000_000, 1..300)) {
            addrs.extend([u64::MAX - 1, u64::MAX]);
            check(&addrs);
        }
    }
}
