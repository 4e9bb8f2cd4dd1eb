//! The `paths` report: shortest paths from GC roots, merged by shape.

use serde::{Deserialize, Serialize};

/// The root a path starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathRoot {
    /// Root kind: `java frame`, `system class`, `jni global`, `thread`, `class held by the VM`, ...
    pub kind: String,
    /// Thread and frame, class, or reference id.
    pub detail: String,
}

/// One object on a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathStep {
    /// Address, as `0x…`.
    pub id: crate::ObjectId,
    /// Class name (for a class mirror: `class NAME`).
    pub class: String,
    /// The previous object's field that holds this one; null for the root object.
    pub field: Option<String>,
}

/// A path, standing for `count` objects whose paths have the same shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathEntry {
    /// Where it starts.
    pub root: PathRoot,
    /// Root object first, the selected object last.
    pub steps: Vec<PathStep>,
    /// Selected objects with this root, classes and fields (array indices aside).
    pub count: u64,
}

/// The `paths` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathsReport {
    /// The selector.
    pub selector: String,
    /// Objects selected.
    pub selected: u64,
    /// Merged paths, most common first.
    pub paths: Vec<PathEntry>,
    /// Selected objects no strong path reaches (garbage, or only weakly reachable).
    pub unreachable: u64,
    /// Path shapes left out by `--max`.
    pub more_shapes: bool,
}
