//! Reports about retention: the dominator tree's biggest nodes, and group sizes.

use serde::{Deserialize, Serialize};

/// Said under every retention report, because it changes the numbers.
pub const WEAK_NOTE: &str = "Weak, soft, phantom and final references do not keep objects alive in these numbers.";

/// [`WEAK_NOTE`] for a V8 heap snapshot, where weak edges do not retain, nor shortcuts but
/// the root's (as DevTools counts retained sizes).
pub const V8_WEAK_NOTE: &str = "Weak references do not keep objects alive in these numbers (as in DevTools).";

/// One object of the dominator tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DominatorRow {
    /// Address, as `0x…`.
    pub id: crate::ObjectId,
    /// Class name.
    pub class: String,
    /// The object's own size.
    pub shallow_bytes: u64,
    /// What it keeps alive, itself included.
    pub retained_bytes: u64,
    /// Its share of the parent's retained size (of the live heap at the top level).
    pub share: f64,
    /// How many objects it immediately dominates.
    pub children: u64,
    /// For a class mirror (`java.lang.Class`), the class it stands for (its statics hang off it).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub represents: Option<String>,
}

impl DominatorRow {
    /// `java.util.HashMap 0x…`, or `class com.acme.Cache 0x…` for a class mirror.
    pub fn label(&self) -> String {
        match &self.represents {
            Some(c) => format!("class {c} {}", self.id),
            None => format!("{} {}", self.class, self.id),
        }
    }
}

/// The `dominators` report: the top of the dominator tree, or one node's children.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DominatorReport {
    /// The node whose children these are; `None` for the top level (the GC roots' side).
    pub parent: Option<DominatorRow>,
    /// Bytes of all strongly live objects.
    pub live_bytes: u64,
    /// Rows, biggest retained size first.
    pub objects: Vec<DominatorRow>,
    /// Rows left out by `--top`.
    pub more: u64,
    /// True when the rows are the biggest retained sizes anywhere in the tree (`--flat`).
    #[serde(default)]
    pub flat: bool,
}

/// Sizes of one group of objects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupTotals {
    /// Objects in the group.
    pub objects: u64,
    /// Their shallow bytes.
    pub shallow_bytes: u64,
    /// Bytes reachable from the group, the group included.
    pub transitive_bytes: u64,
    /// Bytes freed if every member became unreachable.
    pub retained_bytes: u64,
}

/// One selector's group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SelectedGroup {
    /// The selector, as given.
    pub selector: String,
    /// Its sizes.
    #[serde(flatten)]
    pub totals: GroupTotals,
}

/// The `retained` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RetainedReport {
    /// One entry per selector.
    pub groups: Vec<SelectedGroup>,
    /// All selected objects together.
    pub union: GroupTotals,
}
