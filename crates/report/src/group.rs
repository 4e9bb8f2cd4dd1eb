//! The `group` report: AntTracks' classification tree.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::text::thousands;

/// One node of the classification tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupReport {
    /// The classifiers, in order.
    pub by: Vec<String>,
    /// The tree, rooted at all objects.
    pub tree: GroupNode,
}

impl GroupReport {
    /// The tree as an indented table.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "Objects grouped by {}:", self.by.join(", then "));
        let _ = writeln!(o, "{:>12}  {:>14}  {:>14}  {:>14}  group", "count", "shallow", "deep", "retained");
        render(&self.tree, 0, &mut o);
        let _ = writeln!(
            o,
            "Deep = reachable from the group; retained = freed if the group became unreachable. {}",
            crate::WEAK_NOTE
        );
        o
    }
}

fn render(n: &GroupNode, depth: usize, o: &mut String) {
    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), thousands);
    let _ = writeln!(
        o,
        "{:>12}  {:>14}  {:>14}  {:>14}  {}{}",
        thousands(n.count),
        thousands(n.shallow_bytes),
        opt(n.deep_bytes),
        opt(n.retained_bytes),
        "  ".repeat(depth),
        n.key
    );
    for c in &n.children {
        render(c, depth + 1, o);
    }
    if n.more_children > 0 {
        let _ = writeln!(o, "{:>62}  {}... {} more", "", "  ".repeat(depth + 1), thousands(n.more_children));
    }
}
