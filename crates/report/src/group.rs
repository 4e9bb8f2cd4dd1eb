//! The `group` report: AntTracks' classification tree.

use serde::{Deserialize, Serialize};

/// One node of the classification tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupNode {
    /// The node's key (`java.util.HashMap`, `Root: static field`, ...).
    pub key: String,
    /// Objects in the group.
    pub count: u64,
    /// Their shallow bytes.
    pub shallow_bytes: u64,
    /// Bytes strongly reachable from the group (null for nodes not shown).
    pub deep_bytes: Option<u64>,
    /// Bytes freed if the whole group became unreachable (null for nodes not shown).
    pub retained_bytes: Option<u64>,
    /// Sub-groups shown, biggest shallow bytes first.
    pub children: Vec<GroupNode>,
    /// Sub-groups not shown.
    pub more_children: u64,
}

/// The `group` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupReport {
    /// The classifiers, in order.
    pub by: Vec<String>,
    /// The tree, rooted at all objects.
    pub tree: GroupNode,
}
