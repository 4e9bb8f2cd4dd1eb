//! The result models shared by every output of leakscope: each report is a plain serde
//! struct whose JSON form is the interface documented in docs/architecture.md. Engines build
//! them; the `render` crate turns them into text, HTML and Graphviz for people, and only the
//! binary depends on it.
//!
//! ```
//! let h = report::Histogram { classes: vec![report::HistogramRow { name: "byte[]".into(),
//!     instances: 2, shallow_bytes: 48 }], total_instances: 2, total_shallow_bytes: 48,
//!     ..Default::default() };
//! assert_eq!(serde_json::to_value(&h).unwrap()["classes"][0]["shallow_bytes"], 48);
//! ```

mod browse;
mod expect;
mod group;
mod growth;
mod histogram;
mod id;
mod info;
mod jvms;
mod leak;
mod paths;
mod retention;
mod roots;
mod share;
mod sql;
mod stale;
mod suspects;
mod text;
mod top;

/// The version of the JSON documents leakscope writes (every `--json` output, saved
/// summaries): raised when a field changes meaning or goes away, not when one is added. The
/// schemas are in `docs/schemas/`.
pub const SCHEMA_VERSION: u32 = 1;

pub use browse::{
    ApiError, ArrayPage, ClassView, Comparison, DominatorPage, ElementRow, FieldRow, GroupChild, GroupPage,
    GroupSizesView, ObjectRef, ObjectView, ReferrerPage, ReferrerRow, SearchPage,
};
pub use expect::{DeadGroup, ExpectationsReport, ExpectedDead};
pub use group::{GroupNode, GroupReport};
pub use growth::{
    AllocationSite, Candidate, ClassDelta, DiffReport, EdgeDelta, Explanation, Finding, GrowingPath, GrowthReport,
    HeldStructure, Holder, LoaderLeak, Member, PathPart, RankingInfo, Slice, SliceEdge, SnapshotRow, StructureHolder,
};
pub use histogram::{HeapEntry, Histogram, HistogramRow};
pub use id::{BadObjectId, ObjectId};
pub use info::{DumpEntry, DumpInfo, RootCount, V8_FORMAT};
pub use jvms::{JvmList, RunningJvm};
pub use leak::{ClassCurve, DomNode, HeapView, LeakReport};
pub use paths::{
    readable, PathEntry, PathRoot, PathStep, PathsReport, ReadablePath, PATHS_WEAK_NOTE, V8_PATHS_WEAK_NOTE,
};
pub use retention::{
    DominatorReport, DominatorRow, GroupTotals, RetainedReport, SelectedGroup, V8_WEAK_NOTE, WEAK_NOTE,
};
pub use roots::{FrameRow, RootBytes, RootKindRow, RootsReport, StaticRow, ThreadRow};
pub use share::{KindCount, RedactReport, SecretFinding, SecretOwner, SecretsReport};
pub use sql::{SqlAnswer, SqlColumn};
pub use stale::{LastAccessAges, StalePath, StaleReport};
pub use suspects::{Accumulated, Suspect, SuspectsReport};
pub use text::{count, human_bytes, human_ms, thousands, thread_label, utc};
pub use top::{TopCandidate, TopClass, TopView};
