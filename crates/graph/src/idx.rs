//! Index widths for the graph algorithms: `u32` while a graph fits, `u64` beyond, so that
//! heaps under 2^32 objects pay half the bytes per index.

/// An index width: `u32` for graphs under 2^32 nodes, `u64` beyond.
pub(crate) trait Idx: Copy + Ord + Default + Send + Sync + bytemuck::Pod {
    /// The largest value, as a count.
    const MAX: u64;
    /// Bytes per value.
    const BYTES: usize;
    fn of(v: usize) -> Self;
    fn get(self) -> usize;
    /// Native-endian bytes, in the first [`Self::BYTES`].
    fn to_bytes(self) -> [u8; 8];
    /// The value of native-endian `bytes` ([`Self::BYTES`] of them).
    fn from_bytes(bytes: &[u8]) -> Self;
}

impl Idx for u32 {
    const MAX: u64 = u32::MAX as u64;
    const BYTES: usize = 4;
    #[inline]
    fn of(v: usize) -> Self {
        v as u32
    }
    #[inline]
    fn get(self) -> usize {
        self as usize
    }
    #[inline]
    fn to_bytes(self) -> [u8; 8] {
        let mut b = [0; 8];
        b[..4].copy_from_slice(&self.to_ne_bytes());
        b
    }
    #[inline]
    fn from_bytes(bytes: &[u8]) -> Self {
        u32::from_ne_bytes(bytes.try_into().expect("4 bytes"))
    }
}

impl Idx for u64 {
    const MAX: u64 = u64::MAX;
    const BYTES: usize = 8;
    #[inline]
    fn of(v: usize) -> Self {
        v as u64
    }
    #[inline]
    fn get(self) -> usize {
        self as usize
    }
    #[inline]
    fn to_bytes(self) -> [u8; 8] {
        self.to_ne_bytes()
    }
    #[inline]
    fn from_bytes(bytes: &[u8]) -> Self {
        u64::from_ne_bytes(bytes.try_into().expect("8 bytes"))
    }
}
