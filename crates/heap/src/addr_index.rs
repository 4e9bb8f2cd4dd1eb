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

/// Ranks of a set of addresses, which it keeps (as a bitmap, or sorted with [`Buckets`]):
/// the streaming summary's index, whose addresses are nowhere else once the pass is done.
#[derive(Debug)]
pub(crate) enum AddrRank {
    /// `words[w]` is (bits of slots 64w..64w+64, set bits in all earlier words).
    Dense { min: u64, shift: u32, words: Vec<[u64; 2]> },
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
        let (shift, words) = bitmap_shape(min, max, differ);
        // 16 bytes per word: beyond 32 bytes per object the sorted list is smaller.
        if words > 2 * n as u64 + 1024 {
            let mut addrs: Vec<u64> = all().collect();
            addrs.par_sort_unstable();
            addrs.dedup();
            let buckets = Buckets::new(&addrs);
            return AddrRank::Sparse { addrs, buckets };
        }
        bitmap(min, shift, words, parts.iter().flat_map(|p| p.iter().map(|o| o[0])))
    }

    /// The dense form over `len` ascending, distinct addresses, `addr(i)` giving the i-th,
    /// read once in order; `None` when its bitmap would take more than `max_words` words
    /// (16 bytes each).
    pub(crate) fn dense_over(len: usize, addr: impl Fn(usize) -> u64, max_words: u64) -> Option<AddrRank> {
        if len == 0 {
            return None;
        }
        let min = addr(0);
        let differ = (1..len).fold(0, |d, i| d | (addr(i) ^ min));
        let (shift, words) = bitmap_shape(min, addr(len - 1), differ);
        (words <= max_words).then(|| bitmap(min, shift, words, (0..len).map(addr)))
    }

    /// Number of distinct addresses.
    pub(crate) fn len(&self) -> usize {
        match self {
            AddrRank::Dense { words, .. } => words.last().map_or(0, |w| (w[1] + u64::from(w[0].count_ones())) as usize),
            AddrRank::Sparse { addrs, .. } => addrs.len(),
        }
    }

    /// The rank of `addr`, if it is one of the addresses.
    #[inline]
    pub(crate) fn rank(&self, addr: u64) -> Option<usize> {
        match self {
            AddrRank::Dense { min, shift, words } => {
                let off = addr.checked_sub(*min)?;
                if off & ((1 << shift) - 1) != 0 {
                    return None;
                }
                let slot = off >> shift;
                let [bits, before] = *words.get(usize::try_from(slot / 64).ok()?)?;
                let bit = 1u64 << (slot % 64);
                (bits & bit != 0).then(|| (before + u64::from((bits & (bit - 1)).count_ones())) as usize)
            }
            AddrRank::Sparse { addrs, buckets } => buckets.find(|i| addrs[i], addr),
        }
    }
}

/// The shift and number of words of a bitmap over addresses from `min` to `max`, `differ`
/// being the bits in which they differ from any one of them: an offset from the lowest has as
/// many trailing zeros as the alignment all addresses share.
fn bitmap_shape(min: u64, max: u64, differ: u64) -> (u32, u64) {
    let shift = differ.trailing_zeros().min(63);
    (shift, ((max - min) >> shift) / 64 + 1)
}

/// The dense form of `addrs` (any order, repeats allowed), `words` words from `min`.
fn bitmap(min: u64, shift: u32, words: u64, addrs: impl Iterator<Item = u64>) -> AddrRank {
    let mut table = vec![[0u64; 2]; words as usize];
    for a in addrs {
        let slot = (a - min) >> shift;
        table[(slot / 64) as usize][0] |= 1 << (slot % 64);
    }
    let mut before = 0u64;
    for w in &mut table {
        w[1] = before;
        before += u64::from(w[0].count_ones());
    }
    AddrRank::Dense { min, shift, words: table }
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
        let over = AddrRank::dense_over(sorted.len(), |i| sorted[i], 2 * sorted.len() as u64 + 1024);
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
