//! A fixed-size set of dense indices, one bit each: the one bitset of the workspace.

/// A set of indices below a fixed bound, one bit each.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    /// An empty set of indices below `n`.
    pub fn new(n: usize) -> BitSet {
        BitSet { words: vec![0; n.div_ceil(64)] }
    }

    /// A set from its 64-bit words (bit `i % 64` of word `i / 64` is index `i`), as built in
    /// parallel chunks of whole words.
    pub fn from_words(words: Vec<u64>) -> BitSet {
        BitSet { words }
    }

    /// True when `i` is in the set (false past the bound).
    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        self.words.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// Adds `i`; true when it was not there yet. Panics past the bound, as indexing does.
    #[inline]
    pub fn insert(&mut self, i: usize) -> bool {
        let (w, b) = (i / 64, i % 64);
        let fresh = self.words[w] >> b & 1 == 0;
        self.words[w] |= 1 << b;
        fresh
    }

    /// Removes `i`; true when it was there.
    #[inline]
    pub fn remove(&mut self, i: usize) -> bool {
        let (w, b) = (i / 64, i % 64);
        let present = self.words[w] >> b & 1 == 1;
        self.words[w] &= !(1 << b);
        present
    }

    /// Removes every member of `other`.
    pub fn subtract(&mut self, other: &BitSet) {
        self.words.iter_mut().zip(&other.words).for_each(|(a, b)| *a &= !b);
    }

    /// Adds every member of `other`.
    pub fn union_with(&mut self, other: &BitSet) {
        self.words.iter_mut().zip(&other.words).for_each(|(a, b)| *a |= b);
    }

    /// The members, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                (word != 0).then(|| {
                    let b = word.trailing_zeros() as usize;
                    word &= word - 1;
                    w * 64 + b
                })
            })
        })
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::BitSet;

    #[test]
    fn members_in_order_and_set_algebra() {
        let mut a = BitSet::new(200);
        for i in [0, 63, 64, 130, 199] {
            assert!(a.insert(i));
        }
        assert!(!a.insert(64));
        assert_eq!(a.iter().collect::<Vec<_>>(), [0, 63, 64, 130, 199]);
        assert!(a.contains(130) && !a.contains(131) && !a.contains(10_000));
        let mut b = BitSet::new(200);
        b.insert(63);
        b.insert(5);
        a.subtract(&b);
        assert_eq!(a.len(), 4);
        a.union_with(&b);
        assert_eq!(a.iter().collect::<Vec<_>>(), [0, 5, 63, 64, 130, 199]);
        assert!(BitSet::new(10).is_empty());
    }
}
