//! Address → rank (position in address order) without sorting the addresses.
//!
//! A Java heap is dense: objects sit back to back at multiples of the object alignment. One
//! bit per aligned slot over the heap's address range, with the number of set bits before
//! each 64-bit word stored beside it, answers a lookup from one cache line, where a search of
//! the sorted addresses reads several. The bitmap costs 2 bits per slot, about 3% of the heap
//! size; addresses spread too thinly for that (a hostile or synthetic dump) fall back to the
//! sorted list and its bucket index.

use rayon::prelude::*;

use crate::snapshot::AddrIndex;

/// Ranks of a set of addresses.
#[derive(Debug)]
pub(crate) enum AddrRank {
    /// `words[w]` is (bits of slots 64w..64w+64, set bits in all earlier words).
    Dense { min: u64, shift: u32, words: Vec<[u64; 2]> },
    /// Sorted distinct addresses.
    Sparse { addrs: Vec<u64>, index: AddrIndex },
}

impl AddrRank {
    /// Indexes the first halves of the pairs in `parts` (any order, repeats allowed).
    pub(crate) fn new(parts: &[&[(u64, u64)]]) -> AddrRank {
        let all = || parts.par_iter().flat_map(|p| p.par_iter().map(|o| o.0));
        let Some(first) = parts.iter().find_map(|p| p.first()).map(|o| o.0) else {
            return AddrRank::Sparse { addrs: Vec::new(), index: AddrIndex::default() };
        };
        // An address's offset from the lowest has as many trailing zeros as the alignment all
        // addresses share, which shows in their bits that differ from any one of them.
        let (n, min, max, differ) = all()
            .map(|a| (1usize, a, a, a ^ first))
            .reduce(|| (0, u64::MAX, 0, 0), |x, y| (x.0 + y.0, x.1.min(y.1), x.2.max(y.2), x.3 | y.3));
        let shift = differ.trailing_zeros().min(63);
        let words = ((max - min) >> shift) / 64 + 1;
        // 16 bytes per word: beyond 32 bytes per object the sorted list is smaller.
        if words > 2 * n as u64 + 1024 {
            let mut addrs: Vec<u64> = all().collect();
            addrs.par_sort_unstable();
            addrs.dedup();
            let index = AddrIndex::new(&addrs);
            return AddrRank::Sparse { addrs, index };
        }
        let mut table = vec![[0u64; 2]; words as usize];
        for a in parts.iter().flat_map(|p| p.iter().map(|o| o.0)) {
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
            AddrRank::Sparse { addrs, index } => index.find(|i| addrs[i], addr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(addrs: &[u64]) {
        let pairs: Vec<(u64, u64)> = addrs.iter().map(|&a| (a, 0)).collect();
        let (a, b) = pairs.split_at(pairs.len() / 2);
        let rank = AddrRank::new(&[a, &[], b]);
        let mut sorted = addrs.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(rank.len(), sorted.len());
        for (i, &a) in sorted.iter().enumerate() {
            assert_eq!(rank.rank(a), Some(i), "address {a:#x}");
            for probe in [a.wrapping_add(1), a.wrapping_sub(1), a.wrapping_add(8)] {
                if sorted.binary_search(&probe).is_err() {
                    assert_eq!(rank.rank(probe), None, "probe {probe:#x}");
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
    }
}
