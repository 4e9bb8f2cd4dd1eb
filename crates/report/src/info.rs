//! The `info` report: what a dump holds, how much of it is reachable, and what the
//! snapshot costs in memory.

use serde::{Deserialize, Serialize};

/// Roots of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RootCount {
    /// Root kind (`java frame`, `system class`, ...).
    pub kind: String,
    /// How many.
    pub count: u64,
}

/// One of several heap dumps in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DumpEntry {
    /// Its number for `--dump N`, from 1, oldest first.
    pub index: usize,
    /// Offset of its first record.
    pub offset: u64,
    /// When it began, in ms since the epoch.
    pub timestamp_ms: u64,
    /// Objects in it, as `histogram --dump N` counts them.
    pub objects: u64,
    /// Their shallow bytes.
    pub shallow_bytes: u64,
}

/// A summary of one dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DumpInfo {
    /// The file.
    pub file: String,
    /// `JAVA PROFILE 1.0.2`.
    pub format: String,
    /// Identifier size in bytes.
    pub id_size: u32,
    /// When the dump was written, in ms since the epoch.
    pub timestamp_ms: u64,
    /// Object layout used for sizes.
    pub layout: String,
    /// Classes defined.
    pub classes: u64,
    /// Objects in the dump (class mirrors included).
    pub objects: u64,
    /// Their shallow bytes.
    pub shallow_bytes: u64,
    /// References between objects.
    pub references: u64,
    /// GC roots per kind.
    pub roots: Vec<RootCount>,
    /// Threads with stacks.
    pub threads: u64,
    /// Objects reachable from the GC roots and loaded classes.
    pub reachable_objects: u64,
    /// Their shallow bytes.
    pub reachable_bytes: u64,
    /// Objects nothing in the dump reaches (garbage, heap fillers, objects only the VM holds).
    pub unreachable_objects: u64,
    /// Their shallow bytes.
    pub unreachable_bytes: u64,
    /// Memory the in-memory snapshot takes.
    pub snapshot_bytes: u64,
    /// Warnings, one line each (text output prints them on stderr instead).
    pub warnings: Vec<String>,
    /// The heap dumps in the file when it holds several (this summary describes one of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dumps: Vec<DumpEntry>,
    /// Android: the heaps (app, zygote, image) and what each holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heaps: Vec<crate::HeapEntry>,
    /// V8 snapshots with `detachedness` (Chrome's): DOM nodes V8 marks detached that the root
    /// still reaches, the detached DOM `suspects` groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detached_dom_nodes: Option<u64>,
    /// V8 snapshots: whether allocations were tracked, so that `growth` can say where objects
    /// were allocated (`node --track-heap-objects`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_sites: Option<bool>,
    /// For a dump not read whole: what its cut took (the GC roots and threads read before
    /// it), and so whether what is reachable can be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
}

/// [`DumpInfo::format`] of a V8 heap snapshot.
pub const V8_FORMAT: &str = "V8 heap snapshot";

impl DumpInfo {
    /// True when the summary is of a V8 heap snapshot, not of a JVM heap dump.
    pub fn is_v8(&self) -> bool {
        self.format == V8_FORMAT
    }
}
