//! V8 heap snapshots (`.heapsnapshot`, written by Node.js's `v8.writeHeapSnapshot()`, Chrome
//! DevTools and the DevTools protocol's `HeapProfiler.takeHeapSnapshot`), read without a JSON
//! tree in memory.
//!
//! A snapshot is one JSON object: `snapshot.meta` names the fields of the flat integer arrays
//! `nodes` and `edges` and the names of their types, and `strings` holds every name. The
//! reader ([`read`]) checks `meta`, parses the integer arrays straight into narrow columns
//! ([`V8Heap`]), and keeps each string as its place in the file, decoded when asked for. The
//! result is a graph ([`graph::Graph`]) of the references that keep objects alive, so the
//! dominator tree, paths and growth are computed by the same engine as for a JVM's heap.
//!
//! With allocation tracking on, each node's allocating stack comes from `trace_tree`
//! ([`V8Heap::allocation_stack`]).
//!
//! Everything V8-specific (node and edge types, constructor names as DevTools groups them,
//! which edges retain) lives in this crate.

mod bytes;
mod error;
mod json;
mod meta;
mod model;
mod read;
#[cfg(test)]
mod tests;
mod trace;

pub use bytes::SnapshotBytes;
pub use error::Error;
pub use meta::{EdgeType, NodeType};
pub use model::{ClassKey, Edge, NodeIdx, V8Heap, DICTIONARY};
pub use read::{looks_like_snapshot, read, read_in};
pub use trace::Frame;
