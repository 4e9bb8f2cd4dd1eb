//! The `suspects` report: where the memory accumulates, MAT-style, grouped by data structure.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::paths::PathStep;
use crate::text::{human_bytes, thousands};

/// Objects of one class accumulated below an accumulation point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accumulated {
    /// Class name.
    pub class: String,
    /// How many such objects the accumulation point dominates (directly or not).
    pub count: u64,
    /// Their shallow bytes together.
    pub shallow_bytes: u64,
}

/// One leak suspect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suspect {
    /// One line saying what it is.
    pub title: String,
    /// Bytes it retains.
    pub retained_bytes: u64,
    /// Its share of the live heap.
    pub share: f64,
    /// Shortest path from a GC root to the suspect (root object first).
    pub path: Vec<PathStep>,
    /// Where the root path starts: root kind and detail.
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuspectsReport {
    /// Bytes of all strongly live objects.
    pub live_bytes: u64,
    /// Minimal share of the live heap for a suspect.
    pub threshold: f64,
    /// Suspects, biggest first.
    pub suspects: Vec<Suspect>,
}

impl SuspectsReport {
    /// The suspects for people.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        if self.suspects.is_empty() {
            let _ = writeln!(
                o,
                "No leak suspect: nothing retains {:.0}% or more of the {} live heap.",
                self.threshold * 100.0,
                human_bytes(self.live_bytes)
            );
        }
        for (i, s) in self.suspects.iter().enumerate() {
            let _ = writeln!(o, "Suspect {}: {}", i + 1, s.title);
            let _ = writeln!(
                o,
                "  retains {} ({:.1}% of the {} live heap)",
                human_bytes(s.retained_bytes),
                s.share * 100.0,
                human_bytes(self.live_bytes)
            );
            if !s.path.is_empty() {
                let _ = writeln!(o, "  held from {}:", s.root);
                for step in &s.path {
                    let _ = writeln!(
                        o,
                        "    {}{} {}",
                        step.field.as_ref().map(|f| format!("{f} -> ")).unwrap_or_default(),
                        step.class,
                        step.id
                    );
                }
            }
            if s.chain.len() > 1 {
                let _ = writeln!(o, "  down the dominator tree to where the memory accumulates:");
                for step in &s.chain[1..] {
                    let _ = writeln!(
                        o,
                        "    {}{} {}",
                        step.field.as_ref().map(|f| format!("{f} -> ")).unwrap_or_default(),
                        step.class,
                        step.id
                    );
                }
            }
            if let Some(a) = &s.accumulation_point {
                let _ = writeln!(o, "  accumulation point: {} {}", a.class, a.id);
                if let Some(d) = &s.data_structure {
                    let _ = writeln!(o, "  data structure: {d}");
                }
                let _ = writeln!(o, "  accumulated objects by class:");
                for c in &s.contents {
                    let _ =
                        writeln!(o, "    {:>10} x {} ({})", thousands(c.count), c.class, human_bytes(c.shallow_bytes));
                }
            }
            let _ = writeln!(o);
        }
        let _ = writeln!(o, "{}", crate::WEAK_NOTE);
        o
    }
}
