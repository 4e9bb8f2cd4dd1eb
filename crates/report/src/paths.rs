//! The `paths` report: shortest paths from GC roots, merged by shape.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::text::thousands;

/// The root a path starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRoot {
    /// Root kind: `java frame`, `system class`, `jni global`, `thread`, `class held by the VM`, ...
    pub kind: String,
    /// Thread and frame, class, or reference id.
    pub detail: String,
}

/// One object on a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathStep {
    /// Address, as `0x…`.
    pub id: String,
    /// Class name (for a class mirror: `class NAME`).
    pub class: String,
    /// The previous object's field that holds this one; null for the root object.
    pub field: Option<String>,
}

/// A path, standing for `count` objects whose paths have the same shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathEntry {
    /// Where it starts.
    pub root: PathRoot,
    /// Root object first, the selected object last.
    pub steps: Vec<PathStep>,
    /// Selected objects with this root, classes and fields (array indices aside).
    pub count: u64,
}

/// The `paths` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

impl PathsReport {
    /// The paths as indented chains.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let _ =
            writeln!(o, "Shortest paths from GC roots to {} objects ({}):", thousands(self.selected), self.selector);
        for p in &self.paths {
            let _ = writeln!(
                o,
                "\n{} object{} via {}{}",
                thousands(p.count),
                if p.count == 1 { "" } else { "s" },
                p.root.kind,
                sep(&p.root.detail)
            );
            for (i, s) in p.steps.iter().enumerate() {
                let indent = "  ".repeat(i + 1);
                match &s.field {
                    None => {
                        let _ = writeln!(o, "{indent}{} {}", s.class, s.id);
                    }
                    Some(f) => {
                        let _ = writeln!(o, "{indent}{f} -> {} {}", s.class, s.id);
                    }
                }
            }
        }
        if self.unreachable > 0 {
            let _ =
                writeln!(o, "\n{} selected objects have no strong path from a GC root.", thousands(self.unreachable));
        }
        if self.more_shapes {
            let _ = writeln!(o, "\nMore path shapes exist; raise --max to see them.");
        }
        let _ = writeln!(o, "\nPaths do not go through weak, soft, phantom or final referents.");
        o
    }
}

fn sep(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}
