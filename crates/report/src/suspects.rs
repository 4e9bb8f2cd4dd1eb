//! The `suspects` report: where the memory accumulates, MAT-style, grouped by data structure.

use serde::{Deserialize, Serialize};

use crate::paths::PathStep;

/// Objects of one class accumulated below an accumulation point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Accumulated {
    /// Class name.
    pub class: String,
    /// How many such objects the accumulation point dominates (directly or not).
    pub count: u64,
    /// Their shallow bytes together.
    pub shallow_bytes: u64,
}

/// One leak suspect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Suspect {
    /// One line saying what it is.
    pub title: String,
    /// Bytes it retains.
    pub retained_bytes: u64,
    /// Its share of the live heap.
    pub share: f64,
    /// Shortest path from a GC root to the suspect (root object first).
    pub path: Vec<PathStep>,
    /// Where the root path starts, in plain words ([`crate::PathRoot::label`]).
    pub root: String,
    /// From the suspect down the dominator tree to the accumulation point, the suspect first.
    pub chain: Vec<PathStep>,
    /// The object below which the retained size splits into many parts.
    pub accumulation_point: Option<PathStep>,
    /// The data structure that accumulates: the accumulation point, or the object owning it
    /// (a map owning its table), with the field that holds it.
    pub data_structure: Option<String>,
    /// What the accumulation point holds, by class, biggest first.
    pub contents: Vec<Accumulated>,
    /// Instances, for a suspect that is a group of one class's objects.
    pub instances: u64,
}

/// The `suspects` report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SuspectsReport {
    /// Bytes of all strongly live objects.
    pub live_bytes: u64,
    /// Minimal share of the live heap for a suspect.
    pub threshold: f64,
    /// Suspects, biggest first.
    pub suspects: Vec<Suspect>,
}
