//! A vector of 40-bit unsigned integers, 5 bytes each.

/// Largest value a [`Packed40`] holds.
const MAX: u64 = (1 << 40) - 1;

/// A growable vector of integers below 2^40, stored in 5 bytes each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packed40 {
    bytes: Vec<u8>,
}

impl Packed40 {
    /// An empty vector.
    pub fn new() -> Self {
        Packed40 { bytes: Vec::new() }
    }

    /// An empty vector with room for `n` values.
    pub fn with_capacity(n: usize) -> Self {
        Packed40 { bytes: Vec::with_capacity(n.saturating_mul(5)) }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.bytes.len() / 5
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Appends `v`; values of 2^40 and above are a bug in the caller.
    #[inline]
    pub fn push(&mut self, v: u64) {
        debug_assert!(v <= MAX, "Packed40 value out of range: {v}");
        self.bytes.extend_from_slice(&v.to_le_bytes()[..5]);
    }

    /// The value at `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        let s = &self.bytes[i * 5..i * 5 + 5];
        u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], 0, 0, 0])
    }

    /// Overwrites the value at `i`.
    #[inline]
    pub fn set(&mut self, i: usize, v: u64) {
        debug_assert!(v <= MAX);
        self.bytes[i * 5..i * 5 + 5].copy_from_slice(&v.to_le_bytes()[..5]);
    }

    /// A vector of `n` zeros.
    pub fn zeros(n: usize) -> Self {
        Packed40 { bytes: vec![0; n.saturating_mul(5)] }
    }

    /// Splits the vector into disjoint mutable windows at the given ascending value indices,
    /// so that threads can fill them in parallel: window `k` covers `cuts[k]..cuts[k + 1]`.
    pub fn windows_mut(&mut self, cuts: &[usize]) -> Vec<Window40<'_>> {
        let mut out = Vec::with_capacity(cuts.len().saturating_sub(1));
        let mut rest: &mut [u8] = &mut self.bytes;
        let mut consumed = 0;
        for pair in cuts.windows(2) {
            let (start, end) = (pair[0], pair[1]);
            let (_, tail) = rest.split_at_mut((start - consumed) * 5);
            let (mine, tail) = tail.split_at_mut((end - start) * 5);
            out.push(Window40 { bytes: mine });
            rest = tail;
            consumed = end;
        }
        out
    }

    /// Appends every value of `other`.
    pub fn extend_from(&mut self, other: &Packed40) {
        self.bytes.extend_from_slice(&other.bytes);
    }

    /// The values in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.bytes.chunks_exact(5).map(|s| u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], 0, 0, 0]))
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// Releases unused capacity.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }
}

/// A mutable window of a [`Packed40`], indexed from its own start.
#[derive(Debug)]
pub struct Window40<'a> {
    bytes: &'a mut [u8],
}

impl Window40<'_> {
    /// Overwrites value `i` of the window.
    #[inline]
    pub fn set(&mut self, i: usize, v: u64) {
        debug_assert!(v <= MAX);
        self.bytes[i * 5..i * 5 + 5].copy_from_slice(&v.to_le_bytes()[..5]);
    }

    /// Number of values in the window.
    pub fn len(&self) -> usize {
        self.bytes.len() / 5
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
        fn round_trips(values in proptest::collection::vec(0u64..=MAX, 0..200)) {
            let mut p = Packed40::new();
            for &v in &values { p.push(v); }
            prop_assert_eq!(p.len(), values.len());
            prop_assert_eq!(p.iter().collect::<Vec<_>>(), values.clone());
            for (i, &v) in values.iter().enumerate() { prop_assert_eq!(p.get(i), v); }
        }
    }

    #[test]
    fn windows_fill_disjoint_ranges() {
        let mut p = Packed40::zeros(10);
        for (k, mut w) in p.windows_mut(&[0, 3, 3, 10]).into_iter().enumerate() {
            for i in 0..w.len() {
                w.set(i, (k * 100 + i) as u64);
            }
        }
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![0, 1, 2, 200, 201, 202, 203, 204, 205, 206]);
    }

    #[test]
    fn holds_values_past_32_bits() {
        let mut p = Packed40::new();
        p.push(MAX);
        p.push(1 << 33);
        p.set(0, 5);
        assert_eq!((p.get(0), p.get(1)), (5, 1 << 33));
    }
}
