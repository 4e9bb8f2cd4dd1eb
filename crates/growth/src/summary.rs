//! [`HeapSummary`]: Cork's class points-from graph (CPFG) of one moment.

use serde::{Deserialize, Serialize};

/// Bytes and instances of one class in one summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassVolume {
    /// Java source name (`java.util.HashMap$Node`, `byte[]`).
    pub name: String,
    /// Objects of the class.
    pub instances: u64,
    /// Their shallow bytes together.
    pub bytes: u64,
}

/// One reference edge: the bytes of `to` objects referenced from `from` objects, counted once
/// per reference (Cork's V(to|from), Figure 3), so an object referenced twice counts twice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EdgeVolume {
    /// Referrer: a class name, or `class NAME` for the static fields of NAME.
    pub from: String,
    /// Referent class name.
    pub to: String,
    /// Bytes of the referents, once per reference.
    pub bytes: u64,
    /// Number of references.
    pub references: u64,
}

/// One place in a heap's structure: a path shape from a GC root (class and field names, array
/// indices masked, repeated steps through one class folded), and the live objects whose
/// shortest path has it. Nodes of different heaps are matched by their whole path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathVolume {
    /// Index of the node of the step before in [`HeapSummary::paths`]; none for a GC root's
    /// object or a class mirror (`class NAME`, where the paths through its statics start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// How the step before reaches these objects: a field name, `[]`, `static NAME`, or for a
    /// path's first step the root's kind.
    pub via: String,
    /// The objects' class (`class NAME` for class mirrors).
    pub class: String,
    /// Objects at this place.
    pub objects: u64,
    /// Their shallow bytes.
    pub bytes: u64,
}

/// Class loaders of one class that each define classes of the same names: one application
/// loaded `copies` times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoaderCopies {
    /// The loaders' class.
    pub loader: String,
    /// The first class names each copy defines, sorted (at most 20): the first names the group.
    pub classes: Vec<String>,
    /// Classes one copy defines.
    pub class_count: u64,
    /// Live loaders with these classes.
    pub copies: u64,
}

/// The class points-from graph of one moment, from a heap dump or from the agent's heap walk.
/// Weak, soft and phantom referents are not counted as edges: they do not keep anything alive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct HeapSummary {
    /// The version of leakscope's JSON documents it was written under
    /// ([`report::SCHEMA_VERSION`]); 0 in summaries saved before documents had one.
    #[serde(default)]
    pub schema_version: u32,
    /// Where it came from: a dump's path, or `gc N` of a run.
    pub source: String,
    /// Wall-clock time of the moment, milliseconds since the Unix epoch, when known.
    pub time_ms: Option<u64>,
    /// Garbage collections the JVM had completed, when known.
    pub gc_count: Option<u64>,
    /// Bytes of all objects summarised.
    pub total_bytes: u64,
    /// Number of objects summarised.
    pub total_instances: u64,
    /// Volume per class.
    pub classes: Vec<ClassVolume>,
    /// Volume per referrer → referent edge.
    pub edges: Vec<EdgeVolume>,
    /// The path tree of the live objects, parents before children (heap dumps only; empty for
    /// the agent's walks and for summaries saved before it existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathVolume>,
    /// Applications loaded more than once (two or more live loaders of one class defining the
    /// same classes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loaders: Vec<LoaderCopies>,
    /// Objects in the dump that no GC root reaches (JDK 19+ heap fillers, garbage, objects
    /// only the VM holds): counted by `histogram`, left out of everything above.
    #[serde(default)]
    pub unreachable_instances: u64,
    /// Their bytes.
    #[serde(default)]
    pub unreachable_bytes: u64,
    /// Why the heap could not be read whole (a dump cut short, still being written, or with
    /// heap data that could not be read), when so: its figures cover only what was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// The JVM process it came from, as far as the heap tells (heap dumps only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessMark>,
}

/// What tells one JVM process's heaps from another's (see [`crate::processes`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct ProcessMark {
    /// The live platform threads: Java id (`Thread.tid`) and the address of the VM's thread
    /// structure (`Thread.eetop`), sorted by id. A thread keeps its address while it lives; the
    /// JDK's own threads have the same ids in every process, at other addresses.
    pub threads: Vec<[u64; 2]>,
    /// The class whose `main` method a thread's outermost frame runs, when one still does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_class: Option<String>,
}

/// The referrer name that stands for the static fields of class `name`.
pub fn statics_of(name: &str) -> String {
    format!("class {name}")
}
