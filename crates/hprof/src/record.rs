//! Top-level records: an iterator that splits the file by record lengths, and typed views.

use crate::cursor::{Cursor, IdSize};
use crate::error::{Error, Result};
use crate::layout::{LoadClass, RecordHead, StackFrame, StackTraceHead};
use crate::types::tag;

/// One top-level record, not yet interpreted.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    /// The tag byte.
    pub tag: u8,
    /// Absolute offset of the record's first byte (its tag).
    pub offset: u64,
    /// Microseconds since the header's timestamp.
    pub time_delta: u32,
    /// The body; shorter than `claimed_len` when the file is cut short.
    pub body: &'a [u8],
    /// The length the record head declares.
    pub claimed_len: u32,
}

impl<'a> RawRecord<'a> {
    /// Absolute offset of the body's first byte.
    pub fn body_offset(&self) -> u64 {
        self.offset + 9
    }

    /// True when the file ends before the declared length.
    pub fn is_truncated(&self) -> bool {
        (self.body.len() as u64) < u64::from(self.claimed_len)
    }

    /// A cursor over the body.
    pub fn cursor(&self, id_size: IdSize) -> Cursor<'a> {
        Cursor::new(self.body, self.body_offset(), id_size)
    }

    /// Interprets the record by its tag.
    pub fn parse(&self, id_size: IdSize) -> Result<Record<'a>> {
        let mut c = self.cursor(id_size);
        let trunc = |what| move |_| Error::Truncated { offset: self.offset, what };
        Ok(match self.tag {
            tag::UTF8 => {
                let id = c.id().map_err(trunc("UTF8 record"))?;
                let text = c.bytes(c.remaining()).map_err(trunc("UTF8 record"))?;
                Record::Utf8 { id, text }
            }
            tag::LOAD_CLASS => Record::LoadClass(LoadClass::read(&mut c).map_err(trunc("LOAD_CLASS record"))?),
            tag::STACK_FRAME => Record::StackFrame(StackFrame::read(&mut c).map_err(trunc("STACK_FRAME record"))?),
            tag::STACK_TRACE => {
                let head = StackTraceHead::read(&mut c).map_err(trunc("STACK_TRACE record"))?;
                let n = (head.frame_count as usize).checked_mul(id_size.bytes());
                let frames = n
                    .and_then(|n| c.bytes(n).ok())
                    .ok_or(Error::Truncated { offset: self.offset, what: "STACK_TRACE frame list" })?;
                Record::StackTrace { head, frames: IdList { bytes: frames, id_size } }
            }
            tag::HEAP_DUMP | tag::HEAP_DUMP_SEGMENT => Record::HeapDump { body: self.body, offset: self.body_offset() },
            tag::HEAP_DUMP_END => Record::HeapDumpEnd,
            other => Record::Other(other),
        })
    }
}

/// A packed list of identifiers inside the file (stack frames, array elements).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdList<'a> {
    /// The raw big-endian ids.
    pub bytes: &'a [u8],
    /// Their width.
    pub id_size: IdSize,
}

impl<'a> IdList<'a> {
    /// Number of ids.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.id_size.bytes()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ids in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        let (bytes, id_size) = (self.bytes, self.id_size);
        (0..self.len()).map(move |i| crate::cursor::id_at(bytes, i, id_size))
    }
}

/// A top-level record, interpreted.
#[derive(Debug, Clone, Copy)]
pub enum Record<'a> {
    /// A string: its id and its (modified) UTF-8 bytes.
    Utf8 {
        /// The string's id.
        id: u64,
        /// The text, as written (JVM modified UTF-8).
        text: &'a [u8],
    },
    /// LOAD_CLASS.
    LoadClass(LoadClass),
    /// STACK_FRAME.
    StackFrame(StackFrame),
    /// STACK_TRACE with its frame ids.
    StackTrace {
        /// Serial numbers and frame count.
        head: StackTraceHead,
        /// The frame ids, innermost first.
        frames: IdList<'a>,
    },
    /// HEAP_DUMP or HEAP_DUMP_SEGMENT: a run of sub-records.
    HeapDump {
        /// The sub-records' bytes.
        body: &'a [u8],
        /// Absolute offset of `body`.
        offset: u64,
    },
    /// HEAP_DUMP_END.
    HeapDumpEnd,
    /// Any other tag: known but unused here, or unknown; skipped by its length.
    Other(u8),
}

/// Splits the records after the header by their declared lengths.
///
/// A record whose declared length runs past the end of the file is returned once with the
/// bytes that exist (see [`RawRecord::is_truncated`]), and iteration stops. A record head cut
/// short yields an error, and iteration stops.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    data: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> Records<'a> {
    /// Iterates the records of `data` (the whole file), starting at `start` (the header's length).
    pub fn new(data: &'a [u8], start: usize) -> Self {
        Records { data, pos: start.min(data.len()), done: false }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<RawRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.data.len() {
            return None;
        }
        let offset = self.pos as u64;
        let mut c = Cursor::new(&self.data[self.pos..], offset, IdSize::Eight);
        let Ok(head) = RecordHead::read(&mut c) else {
            self.done = true;
            return Some(Err(Error::Truncated { offset, what: "record header" }));
        };
        let body_start = self.pos + 9;
        let avail = self.data.len() - body_start;
        let len = (head.length as usize).min(avail);
        if len < head.length as usize {
            self.done = true;
        }
        self.pos = body_start + len;
        Some(Ok(RawRecord {
            tag: head.tag,
            offset,
            time_delta: head.time_delta,
            body: &self.data[body_start..body_start + len],
            claimed_len: head.length,
        }))
    }
}
