//! The `roots` report: what each GC root keeps reachable and retains (Modula-3's ReportReachable).

use serde::{Deserialize, Serialize};

/// Reachable and retained bytes of one root or group of roots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RootBytes {
    /// Bytes strongly reachable from it.
    pub reachable_bytes: u64,
    /// Bytes freed if it let go.
    pub retained_bytes: u64,
}

/// All roots of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RootKindRow {
    /// Root kind.
    pub kind: String,
    /// Roots of that kind.
    pub roots: u64,
    /// Their bytes.
    #[serde(flatten)]
    pub bytes: RootBytes,
}

/// One static reference field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StaticRow {
    /// `com.acme.Cache.BY_ID`.
    pub field: String,
    /// Class of the object it holds.
    pub class: String,
    /// That object's id.
    pub id: crate::ObjectId,
    /// Its bytes.
    #[serde(flatten)]
    pub bytes: RootBytes,
}

/// One frame of a thread, with the objects its locals hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameRow {
    /// Depth, 0 = innermost.
    pub depth: u32,
    /// `Class.method(File.java:12)`.
    pub method: String,
    /// Objects its locals hold.
    pub objects: u64,
    /// Their bytes.
    #[serde(flatten)]
    pub bytes: RootBytes,
}

/// One thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadRow {
    /// HPROF thread serial.
    pub serial: u32,
    /// The thread's name (`http-nio-8080-exec-3`), when the dump has it.
    pub name: Option<String>,
    /// A virtual thread (JDK 21+).
    pub virtual_thread: bool,
    /// How the text names it: `thread "main"`, `virtual thread #24`, `thread 7`.
    pub label: String,
    /// The `java.lang.Thread` object's id, when known.
    pub id: Option<crate::ObjectId>,
    /// Everything its stack holds (locals, JNI locals, the thread object).
    #[serde(flatten)]
    pub bytes: RootBytes,
    /// Frames that hold objects, innermost first.
    pub frames: Vec<FrameRow>,
}

/// The `roots` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RootsReport {
    /// Bytes of all strongly live objects.
    pub live_bytes: u64,
    /// Per root kind.
    pub kinds: Vec<RootKindRow>,
    /// Static fields, biggest retained first.
    pub statics: Vec<StaticRow>,
    /// Static fields left out by `--top`.
    pub more_statics: u64,
    /// Threads, biggest retained first.
    pub threads: Vec<ThreadRow>,
}
