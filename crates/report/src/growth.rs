//! The `growth` report (Cork's candidates and slices over a series of heaps) and the `diff`
//! report (per-class and per-edge deltas between two heaps).

use serde::{Deserialize, Serialize};

use crate::paths::{PathRoot, PathStep};

/// One heap of the series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SnapshotRow {
    /// The dump's path, or `gc N` of a run.
    pub source: String,
    /// Bytes of all objects in it.
    pub total_bytes: u64,
    /// Objects in it.
    pub total_instances: u64,
    /// Wall-clock time, milliseconds since the Unix epoch, when known.
    pub time_ms: Option<u64>,
}

/// How candidates were ranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankingInfo {
    /// `ratio` (the default: growth of the bytes a class keeps), `cork` (growth of all its
    /// bytes, as the Cork paper ranks them) or `slope` (bytes gained per heap); `steady` for a
    /// series too short for any of them, judged by growth at every step (then
    /// `min_growth_bytes` is the growth these heaps make significant).
    pub method: String,
    /// Decay factor f.
    pub decay: f64,
    /// Rank threshold R (percentage points; slope ranking reports any positive rank).
    pub threshold: f64,
    /// Growth phases a candidate needs.
    pub min_phases: u32,
    /// Growth below this many bytes is never reported.
    pub min_growth_bytes: u64,
}

impl RankingInfo {
    /// The `method` of a series too short for any ranking, judged by steady growth.
    pub const STEADY: &'static str = "steady";

    /// Whether the series was judged by steady growth, not by a ranking.
    pub fn is_steady(&self) -> bool {
        self.method == Self::STEADY
    }
}

/// A reference edge in a slice, `to` objects held by `from` objects: a growing one, or
/// (`growth_bytes` 0) one that holds a container of the growth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SliceEdge {
    /// Referrer class (or `class NAME` for NAME's static fields).
    pub from: String,
    /// Referent class.
    pub to: String,
    /// Bytes of referents over this edge in the last heap.
    pub bytes: u64,
    /// How much that grew over the series.
    pub growth_bytes: u64,
    /// The field of `from` that holds `to` (`[]` for an array's elements), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// A growing data structure an agent's run found: a container whose array kept growing, read
/// between heap walks without a pause (or at each heap walk on a forked copy), with the path
/// that holds it (from the heap walk that last saw it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeldStructure {
    /// How a person names it (decision 0019): its nearest holder's field that is no
    /// collection's part (`Services$PriceService.listeners`), else its class.
    pub name: String,
    /// The library's own place when `name` is the application's field that owns it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// What users of the library call it, when it is a well-known structure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_as: Option<String>,
    /// Whether the heap walks saw the candidate's objects reach it (its slice holds the
    /// structure's array or class); false when it is the structure that grew most over the
    /// same time and no walk has linked them (they ran before the leak began).
    pub seen_holding: bool,
    /// The container's class (`java.util.concurrent.CopyOnWriteArrayList`).
    pub class: String,
    /// The class most elements of its array had when a heap walk counted them (the element
    /// a person looks for in the code: the listener, not what the listener holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
    /// How many elements of that class the walk counted.
    #[serde(default)]
    pub elements: u64,
    /// Its field that holds the array (`array`), and the array's class.
    pub array_field: String,
    /// The array's class.
    pub array: String,
    /// What holds it, outwards, as `Class.field` (`class Class.FIELD` for a static field).
    pub path: Vec<String>,
    /// The array's bytes when first and last read over the ranked snapshots.
    pub first_bytes: u64,
    /// See `first_bytes`.
    pub last_bytes: u64,
    /// When those were read, milliseconds since the Unix epoch.
    pub first_ms: u64,
    /// See `first_ms`.
    pub last_ms: u64,
    /// When a heap walk last saw the path, milliseconds since the Unix epoch.
    pub walked_ms: u64,
}

/// Cork's slice: the candidate and the classes that hold it along growing references.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct Slice {
    /// Classes in the slice, the candidate first.
    pub classes: Vec<String>,
    /// Growing edges, nearest to the candidate first.
    pub edges: Vec<SliceEdge>,
    /// Classes where the growth stops climbing: the data structures that contain it.
    pub containers: Vec<String>,
    /// The growing structure that holds it, from an agent's run whose container readings
    /// saw it grow (none for heap dumps, whose structures are the findings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure: Option<HeldStructure>,
    /// Why what holds it is not known yet, when no heap walk supports a holder (an agent's
    /// run whose walks saw too little of it); the slice is then the candidate alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_known: Option<String>,
}

/// An object of a container class in the last heap that holds the growing part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Holder {
    /// Its class.
    pub class: String,
    /// Its address.
    pub id: crate::ObjectId,
    /// Bytes it retains in the last heap.
    pub retained_bytes: u64,
    /// The root its shortest strong path starts from, if any.
    pub root: Option<PathRoot>,
    /// The path from the root object to it, the holder last.
    pub path: Vec<PathStep>,
}

/// Where objects of a class were allocated, as the agent sampled it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AllocationSite {
    /// The allocating stack, innermost frame first (`Class.method(File.java:line)`).
    pub frames: Vec<String>,
    /// The index in `frames` of the first frame outside the JDK and known frameworks: where
    /// the application allocates (none when the recorded frames do not reach it).
    #[serde(default)]
    pub application_frame: Option<usize>,
    /// Estimated bytes allocated there that are still live.
    pub live_bytes: u64,
    /// Estimated bytes allocated there since the agent started.
    pub allocated_bytes: u64,
}

/// A class whose volume keeps growing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Candidate {
    /// Class name.
    pub class: String,
    /// Rank (higher: more likely to grow without bound).
    pub rank: f64,
    /// Consecutive growth phases at the end of the series.
    pub phases: u32,
    /// Bytes per heap of the series.
    pub volumes: Vec<u64>,
    /// Instances per heap of the series.
    pub instances: Vec<u64>,
    /// Bytes it grew by over the ranked part of the series (kept volume for `ratio`).
    pub growth_bytes: u64,
    /// Growing references that hold it.
    pub slice: Slice,
    /// Objects of the slice's containers that hold the growth, in the last heap.
    pub holders: Vec<Holder>,
    /// Where its objects were allocated, when the input records it (the agent); empty for dumps.
    pub allocation_sites: Vec<AllocationSite>,
    /// An earlier candidate with the same containers: the same data structure grows.
    pub same_structure_as: Option<String>,
}

/// One step of a path from a GC root to a growing structure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathPart {
    /// How the step before reaches it: a field name, `[]`, `static NAME`, or the root's kind.
    pub via: String,
    /// The class of the objects there (`class NAME` for a class mirror).
    pub class: String,
}

/// A class that piles up in a growing structure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Member {
    /// Class name.
    pub class: String,
    /// Its instances under the structure, per heap.
    pub instances: Vec<u64>,
    /// Their bytes, per heap.
    pub volumes: Vec<u64>,
    /// How much that grew (kept growth, as for candidates).
    pub growth_bytes: u64,
}

/// A growing place below a structure: a path from it, and the objects of one candidate class
/// there, per heap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GrowingPath {
    /// Steps from the structure, e.g. `table → [] → val`.
    pub path: Vec<PathPart>,
    /// Instances there, per heap.
    pub instances: Vec<u64>,
    /// Their bytes, per heap.
    pub volumes: Vec<u64>,
}

/// An object of the growing structure in the last heap, with its share of the growth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StructureHolder {
    /// The object, its retained size and its path from a GC root.
    #[serde(flatten)]
    pub holder: Holder,
    /// Instances of the finding's first class under it.
    pub instances: u64,
    /// Their share of all instances of that class under the structure (0 to 1).
    pub share: f64,
}

/// One data structure that keeps growing: a place in the heap's structure, matched across the
/// heaps by its path from a GC root (class and field names, array indices masked), under
/// which the candidate classes pile up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    /// The structure as a person names it (decision 0019): the nearest field of a class that is
    /// no collection's part (`Repository.domainTb`, not `HashMap$Node.value`), or the
    /// application's field that owns a library's structure; or how its root holds it.
    pub structure: String,
    /// The library's own place (`com.google.common.cache.LocalCache.segments`) when `structure`
    /// is the application's field that owns it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// What users of the library call the structure (`Tomcat's HTTP sessions`), when it is a
    /// well-known one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_as: Option<String>,
    /// The class the structure holds directly where it grows most (the listener a list holds,
    /// not what the listener holds): what a person looks for in their code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
    /// The structure's class.
    pub class: String,
    /// From a GC root (or a class's statics) to the structure.
    pub path: Vec<PathPart>,
    /// Bytes of everything under it (every object whose path from a GC root passes through
    /// it), per heap.
    pub volumes: Vec<u64>,
    /// How much the bytes under it grew (kept from heap to heap; at least what its members
    /// grew together).
    pub growth_bytes: u64,
    /// What piles up in it, the application's classes first, then by growth.
    pub members: Vec<Member>,
    /// Where below the structure the first member grows, biggest first.
    pub growing_paths: Vec<GrowingPath>,
    /// Its objects in the last heap (when a dump was indexed), biggest share first.
    pub holders: Vec<StructureHolder>,
    /// Why this structure, step by step (shown with `--explain`).
    pub why: Vec<String>,
}

/// One application loaded again and again while its old copies stay alive: a class-loader
/// leak (a webapp redeployed while something outside it holds the old deployment).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoaderLeak {
    /// The loaders' class.
    pub loader: String,
    /// The first class names each copy defines (at most 20).
    pub classes: Vec<String>,
    /// Classes one copy defines.
    pub class_count: u64,
    /// Live copies per heap (1 where fewer than two were found).
    pub copies: Vec<u64>,
    /// What keeps the copies' loaders alive in the last heap: path shapes, most copies first.
    pub held_by: Vec<crate::paths::PathEntry>,
    /// Copies in the last heap that nothing holds but their own shortest paths: the stale
    /// ones (the live deployment is held by the server too).
    pub stale: u64,
    /// Bytes those copies' loaders retain together in the last heap (their classes, statics
    /// and everything only they keep).
    pub retained_bytes: Option<u64>,
}

/// The `growth` report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GrowthReport {
    /// The heaps, in time order.
    pub snapshots: Vec<SnapshotRow>,
    /// The ranking and its parameters.
    pub ranking: RankingInfo,
    /// Candidates, the most likely leak first; empty when nothing grows. When there are
    /// findings, the collections' internals (arrays, map nodes) come after the other classes,
    /// each part by rank.
    pub candidates: Vec<Candidate>,
    /// The growing data structures the candidates pile up in, most growth first (heap dumps
    /// with path trees; empty for agent runs and old saved summaries).
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Applications whose loaded copies keep getting more (class-loader leaks).
    #[serde(default)]
    pub loader_leaks: Vec<LoaderLeak>,
    /// Classes asked about with `--explain`, and why each is or is not a candidate.
    pub explained: Vec<Explanation>,
    /// Caveats about the input (allocation sites unknown, too few heaps, ...).
    pub notes: Vec<String>,
    /// Why the series cannot be judged yet (too few heaps, a run too short), when it cannot:
    /// then no candidate is not a verdict of "no leak".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_enough_data: Option<String>,
    /// Objects declared dead with `LeakScope.expectDead` (agent runs only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub expected_dead: Option<crate::expect::ExpectationsReport>,
    /// Inputs that could not be read whole (a dump cut short, still being written, or with
    /// heap data that could not be read), each `SOURCE: why`: a leak may be in what was not
    /// read, so no candidate is not a verdict of "no leak".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<String>,
    /// Heaps left out because they come from another JVM process than the last heap (a
    /// restart, or another program), oldest first: a series is one process's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_processes: Vec<String>,
}

/// Why a class is, or is not, a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Explanation {
    /// Class name.
    pub class: String,
    /// Bytes per heap.
    pub volumes: Vec<u64>,
    /// Its rank.
    pub rank: f64,
    /// Its growth phases.
    pub phases: u32,
    /// `candidate`, or the first test it failed.
    pub verdict: String,
}

impl GrowthReport {
    /// True when the series is an agent run's snapshots rather than heap dumps.
    pub fn from_run(&self) -> bool {
        self.snapshots.first().is_some_and(|s| s.source.starts_with("gc "))
    }

    /// What one element of the series is called: `snapshot` for a run's, `heap` for a dump.
    pub fn snapshot_noun(&self) -> &'static str {
        if self.from_run() {
            "snapshot"
        } else {
            "heap"
        }
    }

    /// When the series starts and how long it spans, when every element has a time:
    /// `from 2026-11-23 21:52:08 UTC over 3 min 10 s`.
    pub fn time_span(&self) -> Option<String> {
        let times: Option<Vec<u64>> = self.snapshots.iter().map(|s| s.time_ms).collect();
        let times = times.filter(|t| !t.is_empty())?;
        let (first, last) = (times[0], times[times.len() - 1]);
        Some(format!("from {} over {}", crate::utc(first), crate::human_ms(last.saturating_sub(first))))
    }

    /// Each element's time since the first (`0 s`, `+4.2 s`, `+3 min 10 s`), when every
    /// element has a time; chart axes use them.
    pub fn time_labels(&self) -> Option<Vec<String>> {
        let times: Option<Vec<u64>> = self.snapshots.iter().map(|s| s.time_ms).collect();
        let times = times.filter(|t| !t.is_empty())?;
        let first = times[0];
        Some(
            times
                .iter()
                .map(|&t| if t <= first { "0 s".into() } else { format!("+{}", crate::human_ms(t - first)) })
                .collect(),
        )
    }

    /// The class-loader leak whose classes hold finding `f` in their statics, if any.
    pub fn leaked_loader_of(&self, f: &Finding) -> Option<&LoaderLeak> {
        let owner = f.path.first()?.class.strip_prefix("class ")?;
        self.loader_leaks.iter().find(|l| l.classes.iter().any(|c| c == owner))
    }
}

/// One row of a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassDelta {
    /// Class name.
    pub class: String,
    /// Instances in the old heap.
    pub old_instances: u64,
    /// Instances in the new heap.
    pub new_instances: u64,
    /// Bytes in the old heap.
    pub old_bytes: u64,
    /// Bytes in the new heap.
    pub new_bytes: u64,
    /// `new_bytes − old_bytes`.
    pub delta_bytes: i64,
    /// `new_instances − old_instances`.
    pub delta_instances: i64,
}

/// One edge of a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EdgeDelta {
    /// Referrer class (or `class NAME` for statics).
    pub from: String,
    /// Referent class.
    pub to: String,
    /// Referent bytes in the old heap.
    pub old_bytes: u64,
    /// Referent bytes in the new heap.
    pub new_bytes: u64,
    /// `new_bytes − old_bytes`.
    pub delta_bytes: i64,
}

/// The `diff` report: what changed between two heaps, biggest changes first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiffReport {
    /// The old heap.
    pub old: SnapshotRow,
    /// The new heap.
    pub new: SnapshotRow,
    /// Per-class deltas, by decreasing |delta_bytes|.
    pub classes: Vec<ClassDelta>,
    /// Per-edge deltas, by decreasing |delta_bytes|.
    pub edges: Vec<EdgeDelta>,
    /// Caveats: the two heaps come from two JVM processes (another program, or a restart),
    /// so the difference is not growth.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}
