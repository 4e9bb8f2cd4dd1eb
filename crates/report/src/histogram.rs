//! The histogram report: `{"classes":[{"name","instances","shallow_bytes"}], "total_instances", "total_shallow_bytes"}`.

use serde::{Deserialize, Serialize};

/// One row: a class, package or hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistogramRow {
    /// Class name (Java source form), package, or root class of a hierarchy.
    pub name: String,
    /// Number of instances.
    pub instances: u64,
    /// Their shallow bytes as the JVM counts them.
    pub shallow_bytes: u64,
}

/// A heap histogram, biggest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Histogram {
    /// The rows.
    pub classes: Vec<HistogramRow>,
    /// Instances over all rows (before any `--top` cut).
    pub total_instances: u64,
    /// Bytes over all rows (before any `--top` cut).
    pub total_shallow_bytes: u64,
    /// Android: the heap counted (`app`, `zygote`, `image`, or `all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap: Option<String>,
    /// Android: every heap of the dump, with its totals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heaps: Vec<HeapEntry>,
}

/// One Android heap (app, zygote, image) and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeapEntry {
    /// The heap's name as the dump gives it.
    pub name: String,
    /// Objects in it.
    pub instances: u64,
    /// Their shallow bytes.
    pub shallow_bytes: u64,
}

impl Histogram {
    /// Keeps the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.classes.truncate(n);
    }
}
