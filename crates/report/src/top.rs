//! Modula-3's Shownew for a running JVM: allocated and live bytes per class, and the current
//! growth candidates, refreshed by `leakscope top`.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::text::{human_bytes, thousands};

/// One class in the live view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopClass {
    /// Class name.
    pub name: String,
    /// Estimated live bytes (from sampled allocations still alive).
    pub live_bytes: u64,
    /// Estimated live objects.
    pub live_instances: u64,
    /// Estimated bytes allocated since the agent started.
    pub allocated_bytes: u64,
    /// Estimated bytes allocated per second, over the last interval between snapshots.
    pub allocated_bytes_per_s: u64,
}

/// A growth candidate in the live view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopCandidate {
    /// Class name.
    pub class: String,
    /// Its rank.
    pub rank: f64,
    /// How much it grew over the snapshots ranked.
    pub growth_bytes: u64,
    /// What holds it: the slice's outermost holder, when known.
    pub held_by: Option<String>,
}

/// One refresh of `leakscope top`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopView {
    /// The run store read.
    pub source: String,
    /// The JVM's process id and command line.
    pub pid: Option<u32>,
    /// Main class or jar and arguments.
    pub command: String,
    /// Collections the JVM had completed at the last snapshot.
    pub gc_count: u64,
    /// Time of the last snapshot, milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// Estimated live bytes of all sampled classes.
    pub live_bytes: u64,
    /// Heap walks so far, and the longest pause one caused.
    pub walks: usize,
    /// Longest walk pause, milliseconds.
    pub longest_pause_ms: f64,
    /// `running`, `ended`, or why the agent disabled itself.
    pub status: String,
    /// Classes, most live bytes first.
    pub classes: Vec<TopClass>,
    /// Current candidates, most likely leak first.
    pub candidates: Vec<TopCandidate>,
}

impl TopView {
    /// The screen: a header, the classes, the candidates.
    pub fn to_text(&self, rows: usize) -> String {
        let mut o = String::new();
        let pid = self.pid.map_or(String::new(), |p| format!("pid {p}  "));
        let _ = writeln!(o, "leakscope top  {pid}{}  [{}]", self.command, self.status);
        let _ = writeln!(
            o,
            "gc {}  live ≈ {}  walks {} (longest pause {:.0} ms)  store {}",
            self.gc_count,
            human_bytes(self.live_bytes),
            self.walks,
            self.longest_pause_ms,
            self.source
        );
        let _ = writeln!(o);
        let _ = writeln!(o, "{:>12} {:>12} {:>12} {:>12}  class", "live", "objects", "alloc/s", "allocated");
        for c in self.classes.iter().take(rows) {
            let _ = writeln!(
                o,
                "{:>12} {:>12} {:>12} {:>12}  {}",
                human_bytes(c.live_bytes),
                thousands(c.live_instances),
                human_bytes(c.allocated_bytes_per_s),
                human_bytes(c.allocated_bytes),
                c.name
            );
        }
        let _ = writeln!(o);
        if self.candidates.is_empty() {
            let _ = writeln!(o, "no class keeps growing");
        }
        for c in &self.candidates {
            let held = c.held_by.as_ref().map(|h| format!(", held by {h}")).unwrap_or_default();
            let _ = writeln!(o, "GROWING {}  rank {:.0}, +{}{held}", c.class, c.rank, human_bytes(c.growth_bytes));
        }
        o
    }
}
