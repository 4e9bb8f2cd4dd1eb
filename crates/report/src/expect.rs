//! The `check` report: objects the program declared dead (`LeakScope.expectDead`) that are
//! still reachable, with what keeps them alive (Modula-3's RTHeapDebug).

use serde::{Deserialize, Serialize};

use crate::paths::PathEntry;

/// An object declared dead that is still reachable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExpectedDead {
    /// Its class.
    pub class: String,
    /// Where `LeakScope.expectDead` was called (`Class.method(File.java:line)`).
    pub site: String,
    /// How long before the check it was declared dead, in milliseconds.
    pub declared_ms_ago: u64,
    /// Its address in the heap dump (absent for an agent's walk).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub id: Option<crate::ObjectId>,
    /// Bytes it alone keeps alive (from a heap dump).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub retained_bytes: Option<u64>,
    /// Its shortest path from a GC root (from a heap dump).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<PathEntry>,
    /// What referenced it at the agent's last walk: classes, `class C` for static fields,
    /// `root KIND`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub held_by: Vec<String>,
}

/// Objects declared dead and still reachable that share a path shape (from a dump: the same
/// root, classes and fields; from a run: the same class and referrers), as the two-phase
/// detector's report groups them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeadGroup {
    /// Their class.
    pub class: String,
    /// How many objects.
    pub count: u64,
    /// Where most of them were declared dead.
    pub site: String,
    /// The next most common call sites, at most four.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub other_sites: Vec<String>,
    /// Distinct call sites among them.
    pub sites: u64,
    /// The oldest declaration, in milliseconds before the check.
    pub oldest_ms_ago: u64,
    /// The newest declaration, in milliseconds before the check.
    pub newest_ms_ago: u64,
    /// Bytes freed if all of them became unreachable together (from a heap dump).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub retained_bytes: Option<u64>,
    /// The shortest path of one of them, standing for the shape (from a heap dump).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<PathEntry>,
    /// What referenced them at the agent's last walk (from a run).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub held_by: Vec<String>,
}

/// What became of the objects declared dead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExpectationsReport {
    /// The heap dump or run store checked.
    pub source: String,
    /// Objects declared dead that the check knows of.
    pub expectations: u64,
    /// Of those, collected (or no longer reachable).
    pub collected: u64,
    /// Of those, not checked yet (declared after the agent's last walk).
    pub unchecked: u64,
    /// The ones still reachable grouped by path shape, most objects first.
    #[serde(default)]
    pub groups: Vec<DeadGroup>,
    /// The ones still reachable, most retained bytes first (oldest first from a run).
    pub reachable: Vec<ExpectedDead>,
}
