//! The other direction: encodes HPROF, for the test kit and for fixtures.

use crate::cursor::IdSize;

/// Appends big-endian HPROF values to a growable buffer.
#[derive(Debug, Clone)]
pub struct Writer {
    /// The bytes written so far.
    pub buf: Vec<u8>,
    id_size: IdSize,
}

impl Writer {
    /// An empty writer for identifiers of `id_size`.
    pub fn new(id_size: IdSize) -> Self {
        Writer { buf: Vec::new(), id_size }
    }

    /// Identifier width this writer emits.
    pub fn id_size(&self) -> IdSize {
        self.id_size
    }

    /// Appends one byte.
    pub fn u1(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// Appends a big-endian u16.
    pub fn u2(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Appends a big-endian u32.
    pub fn u4(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Appends a big-endian i32.
    pub fn i4(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Appends a big-endian u64.
    pub fn u8(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Appends an identifier of the writer's width (truncated to 32 bits for 4-byte ids).
    pub fn id(&mut self, v: u64) {
        match self.id_size {
            IdSize::Four => self.u4(v as u32),
            IdSize::Eight => self.u8(v),
        }
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
}
