//! The heap model of leakscope: from HPROF bytes to classes, objects and references.
//!
//! [`Census`] counts instances and JVM shallow bytes per class in one parallel pass without
//! keeping anything per object (the histogram's fast path). [`Snapshot`] is the full model:
//! objects as dense [`ObjIdx`] sorted by address, references in CSR form with their strength,
//! GC roots with kind and detail, and exact shallow sizes under the [`VmLayout`] inferred
//! from the dump.
//!
//! ```no_run
//! let dump = heap::Dump::open(std::path::Path::new("app.hprof"))?;
//! let census = heap::Census::build(&dump, &Default::default(), &graph::NoProgress)?;
//! for (idx, class) in census.classes.iter() {
//!     let t = census.of(idx);
//!     println!("{} {} {}", class.name, t.instances, t.shallow_bytes);
//! }
//! # Ok::<(), heap::Error>(())
//! ```

mod addr_index;
mod census;
mod classes;
mod cpfg;
mod error;
mod index;
pub mod layout;
pub mod live;
mod loaders;
mod memory;
pub mod names;
mod process;
mod raw;
mod refs;
mod scan;
mod snapshot;
mod source;
mod warnings;

pub use census::{Census, ClassTotals, ReadOptions};
pub use classes::{Class, ClassIdx, ClassKind, ClassTable, Field, RefSlot, RefStrength, Static};
pub use cpfg::{ClassEdge, ClassGraph, Referrer};
pub use error::Error;
/// A static field or constant value, as the dump writes it.
pub use hprof::{BasicType, RootKind, Value};
pub use index::{DumpIndex, Segment};
pub use layout::{LayoutSpec, VmLayout};
pub use live::{Live, PathNode, Via};
pub use loaders::{loader_groups, LoaderGroup};
pub use memory::{memory_available, mib, MemoryPlan};
pub use process::ProcessMark;
pub use snapshot::{
    decode_text, Edge, EdgeLabel, Frame, ObjIdx, Root, RootDetail, Slot, Snapshot, TextEncoding, Thread, ThreadIdentity,
};
pub use source::Dump;
pub use warnings::{Warning, WarningKind, Warnings};

/// The heap dumps a file holds (the old hprof agent appends one per request): each one's
/// offset and start time (ms since the Unix epoch), oldest first.
pub fn dumps_in(dump: &Dump) -> Result<Vec<(u64, u64)>, Error> {
    let starts = index::DumpIndex::of(dump)?.dump_starts();
    dump.release(0, dump.data().len());
    Ok(starts)
}
