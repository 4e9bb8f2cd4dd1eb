//! A bounds-checked little cursor over big-endian HPROF bytes. No method can panic.

/// Why a read stopped: the bytes ran out. Cheap on the hot path; callers add the offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Short;

/// Width of object identifiers in a dump, read once from the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdSize {
    /// 4-byte identifiers (32-bit VMs).
    Four,
    /// 8-byte identifiers (64-bit VMs, with or without compressed oops).
    Eight,
}

impl IdSize {
    /// Number of bytes of one identifier.
    pub const fn bytes(self) -> usize {
        match self {
            IdSize::Four => 4,
            IdSize::Eight => 8,
        }
    }

    /// Parses the header's identifier-size field.
    pub fn from_u32(n: u32) -> Option<Self> {
        match n {
            4 => Some(IdSize::Four),
            8 => Some(IdSize::Eight),
            _ => None,
        }
    }
}

/// A read position in a byte slice that remembers its absolute file offset.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    id_size: IdSize,
}

impl<'a> Cursor<'a> {
    /// A cursor over `data`, which starts at absolute file offset `base`.
    pub fn new(data: &'a [u8], base: u64, id_size: IdSize) -> Self {
        Cursor { data, pos: 0, base, id_size }
    }

    /// Absolute file offset of the next byte to read.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// True when nothing is left.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// Identifier width this cursor reads.
    pub fn id_size(&self) -> IdSize {
        self.id_size
    }

    /// Takes the next `n` bytes without copying.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Short> {
        let end = self.pos.checked_add(n).ok_or(Short)?;
        let s = self.data.get(self.pos..end).ok_or(Short)?;
        self.pos = end;
        Ok(s)
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<(), Short> {
        self.bytes(n).map(|_| ())
    }

    #[inline]
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], Short> {
        let s = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Reads one byte.
    #[inline]
    pub fn u1(&mut self) -> Result<u8, Short> {
        Ok(self.array::<1>()?[0])
    }

    /// Reads a big-endian u16.
    #[inline]
    pub fn u2(&mut self) -> Result<u16, Short> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian u32.
    #[inline]
    pub fn u4(&mut self) -> Result<u32, Short> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian i32.
    #[inline]
    pub fn i4(&mut self) -> Result<i32, Short> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian u64.
    #[inline]
    pub fn u8(&mut self) -> Result<u64, Short> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// Reads a little-endian i32 (for the other formats leakscope reads with this cursor,
    /// such as the JVM's performance data files on x86).
    #[inline]
    pub fn i4_le(&mut self) -> Result<i32, Short> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    /// Reads a little-endian i64.
    #[inline]
    pub fn i8_le(&mut self) -> Result<i64, Short> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    /// Moves to position `pos` of the data (not the file offset); past the end is short.
    #[inline]
    pub fn seek(&mut self, pos: usize) -> Result<(), Short> {
        if pos > self.data.len() {
            return Err(Short);
        }
        self.pos = pos;
        Ok(())
    }

    /// Reads one identifier of the dump's width.
    #[inline]
    pub fn id(&mut self) -> Result<u64, Short> {
        match self.id_size {
            IdSize::Four => self.u4().map(u64::from),
            IdSize::Eight => self.u8(),
        }
    }
}

/// Reads the identifier at index `i` of a packed identifier slice (object array elements).
#[inline]
pub fn id_at(ids: &[u8], i: usize, id_size: IdSize) -> u64 {
    id_in(ids, i * id_size.bytes(), id_size)
}

/// Reads a big-endian identifier from exactly `id_size` bytes at `at` in `bytes` (0 when out of range).
#[inline]
pub fn id_in(bytes: &[u8], at: usize, id_size: IdSize) -> u64 {
    match id_size {
        IdSize::Four => bytes.get(at..at + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64),
        IdSize::Eight => {
            bytes.get(at..at + 8).map_or(0, |b| u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
        }
    }
}
