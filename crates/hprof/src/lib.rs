//! Zero-copy, panic-free reading of HPROF heap dumps, and writing for tests.
//!
//! [`Header::parse`] reads the file header; [`Records`] splits the file into top-level
//! [`RawRecord`]s by their lengths; [`RawRecord::parse`] interprets one as a [`Record`];
//! [`SubRecords`] walks the [`SubRecord`]s of a heap dump segment. Every fixed layout is
//! declared once in [`layout`], which yields both its reader and its [`Writer`] code.
//!
//! ```
//! use hprof::{Header, Records, Record, SubRecords, SubRecord, Writer, IdSize, Version, Root, RootKind};
//! let mut w = Writer::new(IdSize::Eight);
//! Header { version: Version::V102, id_size: IdSize::Eight, timestamp_ms: 0, len: 31 }.write(&mut w);
//! let mut seg = Writer::new(IdSize::Eight);
//! SubRecord::Root(Root { kind: RootKind::StickyClass, object_id: 0x10, thread_serial: None,
//!     frame: None, stack_serial: None, ref_id: None }).write(&mut seg);
//! hprof::write_record(&mut w, hprof::tag::HEAP_DUMP_SEGMENT, &seg.buf);
//! let data = w.buf;
//! let header = Header::parse(&data).unwrap();
//! for rec in Records::new(&data, header.len) {
//!     if let Record::HeapDump { body, offset } = rec.unwrap().parse(header.id_size).unwrap() {
//!         let subs: Vec<_> = SubRecords::new(body, offset, header.id_size).collect();
//!         assert_eq!(subs.len(), 1);
//!     }
//! }
//! ```

mod cursor;
mod error;
mod header;
pub mod layout;
mod record;
mod subrecord;
mod types;
mod writer;

pub use cursor::{id_at, id_in, Cursor, IdSize, Short};
pub use error::{Error, Result};
pub use header::{Header, Version};
pub use record::{IdList, RawRecord, Record, Records};
pub use subrecord::{ClassDump, FieldDecl, Root, StaticField, SubRecord, SubRecords, Value};
pub use types::{sub, tag, BasicType, RootKind};
pub use writer::Writer;

/// Writes one top-level record: head and body.
pub fn write_record(w: &mut Writer, tag: u8, body: &[u8]) {
    layout::RecordHead { tag, time_delta: 0, length: body.len() as u32 }.write(w);
    w.bytes(body);
}
