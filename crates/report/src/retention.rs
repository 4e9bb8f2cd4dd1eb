//! Reports about retention: the dominator tree's biggest nodes, and group sizes.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::text::{human_bytes, thousands};

/// Said under every retention report, because it changes the numbers.
pub const WEAK_NOTE: &str = "Weak, soft, phantom and final references do not keep objects alive in these numbers.";

/// One object of the dominator tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DominatorRow {
    /// Address, as `0x…`.
    pub id: String,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

impl DominatorReport {
    /// A table for people.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        match &self.parent {
            None if self.flat => {
                let _ = writeln!(
                    o,
                    "Biggest retained sizes anywhere in the dominator tree (live heap {}):",
                    human_bytes(self.live_bytes)
                );
            }
            None => {
                let _ =
                    writeln!(o, "Biggest retainers below the GC roots (live heap {}):", human_bytes(self.live_bytes));
            }
            Some(p) => {
                let _ = writeln!(o, "{} retains {}; it dominates:", p.label(), human_bytes(p.retained_bytes));
            }
        }
        let _ = writeln!(o, "{:>14}  {:>10}  {:>6}  {:>9}  object", "retained", "shallow", "share", "children");
        for r in &self.objects {
            let _ = writeln!(
                o,
                "{:>14}  {:>10}  {:>5.1}%  {:>9}  {}",
                thousands(r.retained_bytes),
                thousands(r.shallow_bytes),
                r.share * 100.0,
                thousands(r.children),
                r.label()
            );
        }
        if self.more > 0 {
            let _ = writeln!(o, "{} more not shown (--top N, --top 0 for all).", thousands(self.more));
        }
        let _ = writeln!(o, "Descend with --children ID. {WEAK_NOTE}");
        o
    }
}

/// Sizes of one group of objects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectedGroup {
    /// The selector, as given.
    pub selector: String,
    /// Its sizes.
    #[serde(flatten)]
    pub totals: GroupTotals,
}

/// The `retained` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetainedReport {
    /// One entry per selector.
    pub groups: Vec<SelectedGroup>,
    /// All selected objects together.
    pub union: GroupTotals,
}

impl RetainedReport {
    /// A table for people.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let w = self.groups.iter().map(|g| g.selector.len()).max().unwrap_or(0).max(24);
        let _ = writeln!(
            o,
            "{:<w$}  {:>10}  {:>14}  {:>14}  {:>14}",
            "group", "objects", "shallow", "transitive", "retained"
        );
        let row = |o: &mut String, name: &str, t: &GroupTotals| {
            let _ = writeln!(
                o,
                "{:<w$}  {:>10}  {:>14}  {:>14}  {:>14}",
                name,
                thousands(t.objects),
                thousands(t.shallow_bytes),
                thousands(t.transitive_bytes),
                thousands(t.retained_bytes)
            );
        };
        for g in &self.groups {
            row(&mut o, &g.selector, &g.totals);
        }
        if self.groups.len() > 1 {
            row(&mut o, "all groups together", &self.union);
            let sum: u64 = self.groups.iter().map(|g| g.totals.retained_bytes).sum();
            if self.union.retained_bytes > sum {
                let _ = writeln!(
                    o,
                    "Together the groups retain {} more than the sum of their own retained sizes: shared ownership.",
                    human_bytes(self.union.retained_bytes - sum)
                );
            }
        }
        let _ = writeln!(o, "Retained = freed if every object of the group became unreachable. {WEAK_NOTE}");
        o
    }
}
