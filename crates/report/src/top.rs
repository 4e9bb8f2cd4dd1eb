//! Modula-3's Shownew for a running JVM: allocated and live bytes per class, and the current
//! growth candidates, refreshed by `leakscope top`.

use serde::{Deserialize, Serialize};

/// One class in the live view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TopClass {
    /// Class name.
    pub name: String,
    /// Estimated live bytes, as of `TopView::live_source`: the last heap walk's exact count
    /// plus the change the sampled allocations still alive show since.
    pub live_bytes: u64,
    /// The 95 % error of `live_bytes` (see `TopView::live_error_bytes`).
    pub live_error_bytes: u64,
    /// Estimated live objects (live bytes over the sampled objects' mean size: from a few
    /// samples, a rough figure).
    pub live_instances: u64,
    /// Estimated bytes allocated since the agent started.
    pub allocated_bytes: u64,
    /// Estimated bytes allocated per second, over the last interval between snapshots.
    pub allocated_bytes_per_s: u64,
}

/// A growth candidate in the live view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TopCandidate {
    /// Class name.
    pub class: String,
    /// Its rank.
    pub rank: f64,
    /// How much it grew over the snapshots ranked.
    pub growth_bytes: u64,
    /// What holds it, when a heap walk followed its objects' path there: the structure's
    /// name; `None` while not known.
    pub held_by: Option<String>,
    /// When the heap walk that followed the path to `held_by` ran, milliseconds since the
    /// Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by_walked_ms: Option<u64>,
}

/// One refresh of `leakscope top`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Estimated live bytes, as of `live_source`: what the last heap walk counted exactly,
    /// plus the sampled change since (before any walk, the samples alone).
    pub live_bytes: u64,
    /// The 95 % error of `live_bytes`: the samples' own, and on a JVM whose heap sampler is
    /// biased (`biased_sampler`), a share of the change since the last walk.
    pub live_error_bytes: u64,
    /// Why the error is wider on this JVM, when its heap sampler is known to be biased.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub biased_sampler: Option<String>,
    /// The snapshot the live estimates come from: the newest checked by a heap walk, else the
    /// newest taken right after a collection, while they are recent; the newest of all also
    /// counts what died since the last collection.
    pub live_source: String,
    /// Time of that snapshot, milliseconds since the Unix epoch.
    pub live_time_ms: u64,
    /// Heap walks so far, and the longest pause one caused.
    pub walks: usize,
    /// Bytes the newest heap walk reached from the GC roots: exact, and counting what the
    /// estimates leave out (the JVM's boot objects; when attached, objects allocated before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walked_bytes: Option<u64>,
    /// Time of that walk, milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walked_time_ms: Option<u64>,
    /// Longest walk pause, milliseconds.
    pub longest_pause_ms: f64,
    /// `running`, `ended`, or why the agent disabled itself.
    pub status: String,
    /// Classes, most live bytes first.
    pub classes: Vec<TopClass>,
    /// Current candidates, most likely leak first.
    pub candidates: Vec<TopCandidate>,
    /// Why growth cannot be judged yet, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_enough_data: Option<String>,
    /// What a heap walk would take now, when none fits the agent's `max_pause`: the pause, the
    /// `--max-pause` that allows one, and what a heap dump would cost instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_blocked: Option<String>,
}
