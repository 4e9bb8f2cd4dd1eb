//! The arguments of each tool, as the client sends them: their docs are the schemas the
//! client reads, so the defaults are said there. A tool's files are `input` (one) or
//! `inputs` (several) in every tool; the names of before (`dump`, `paths`, `store`, ...) are
//! still read.

use serde::Deserialize;

use crate::by::By;

/// Arguments naming one dump.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct DumpRequest {
    /// Path of the heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one.
    #[serde(alias = "dump")]
    pub(super) input: String,
}

/// Arguments of `open`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct OpenRequest {
    /// Paths of heap dumps (oldest first for a series), run stores (.db) or summaries.
    #[serde(alias = "paths")]
    pub(super) inputs: Vec<String>,
}

/// Arguments of `histogram`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct HistogramRequest {
    /// Path of the heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one.
    #[serde(alias = "dump")]
    pub(super) input: String,
    /// Rows per class (default), per package, or per class hierarchy.
    #[serde(default)]
    pub(super) by: Option<By>,
    /// The first row to return (0 for the biggest).
    #[serde(default)]
    pub(super) offset: usize,
    /// Rows to return (default 30).
    #[serde(default)]
    pub(super) limit: Option<usize>,
}

/// Arguments of `suspects`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct SuspectsRequest {
    /// Path of the heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one.
    #[serde(alias = "dump")]
    pub(super) input: String,
    /// Smallest share of the live heap, in percent, for a suspect (default 10).
    #[serde(default)]
    pub(super) threshold_percent: Option<f64>,
}

/// Arguments of `dominators`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct DominatorsRequest {
    /// Path of the heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one.
    #[serde(alias = "dump")]
    pub(super) input: String,
    /// The object whose children to list, as 0x-prefixed hexadecimal id; none for the top of
    /// the tree (what only GC roots keep alive).
    #[serde(default)]
    pub(super) parent: Option<String>,
    /// The first child to return (0 for the biggest).
    #[serde(default)]
    pub(super) offset: usize,
    /// Children to return (default 20).
    #[serde(default)]
    pub(super) limit: Option<usize>,
}

/// Arguments of `paths`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct PathsRequest {
    /// Path of the heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one.
    #[serde(alias = "dump")]
    pub(super) input: String,
    /// Which objects: class:NAME, class:NAME+ (with subclasses), id:0xADDR, static:CLASS.FIELD,
    /// or rule:A>B>C (objects of class C reached through A, then B).
    pub(super) selector: String,
    /// Distinct path shapes to return (default 5).
    #[serde(default)]
    pub(super) max: Option<usize>,
}

/// Arguments of `retained`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct RetainedRequest {
    /// Path of the heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one.
    #[serde(alias = "dump")]
    pub(super) input: String,
    /// Groups of objects, one selector each (as for paths).
    pub(super) selectors: Vec<String>,
}

/// Arguments of `growth`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct GrowthRequest {
    /// Heap dumps or summaries of one process, oldest first (at least 3); or one run store.
    pub(super) inputs: Vec<String>,
    /// Holder objects to name per growing structure, with their ids and paths (default 3; 0
    /// skips indexing the last dump).
    #[serde(default)]
    pub(super) holders: Option<usize>,
    /// The first finding (and candidate) to return.
    #[serde(default)]
    pub(super) offset: usize,
    /// Findings (and candidates) to return (default 10).
    #[serde(default)]
    pub(super) limit: Option<usize>,
    /// Also say why each structure was chosen, step by step (each finding's `why`; off by
    /// default: it is most of a long answer).
    #[serde(default)]
    pub(super) explain: bool,
}

/// Arguments of `diff`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct DiffRequest {
    /// The earlier heap dump (or summary).
    pub(super) old: String,
    /// The later one.
    pub(super) new: String,
    /// The first row of each list to return.
    #[serde(default)]
    pub(super) offset: usize,
    /// Rows to return per list (default 30).
    #[serde(default)]
    pub(super) limit: Option<usize>,
}

/// Arguments of `stale`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct StaleRequest {
    /// The run store (.db) of an agent run with last-access monitoring.
    #[serde(alias = "store")]
    pub(super) input: String,
    /// Report only objects not used for this many seconds (default 0).
    #[serde(default)]
    pub(super) older_than_seconds: Option<u64>,
    /// The first path to return.
    #[serde(default)]
    pub(super) offset: usize,
    /// Paths to return (default 50).
    #[serde(default)]
    pub(super) limit: Option<usize>,
}

/// Arguments of `check`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct CheckRequest {
    /// A heap dump or run store of a program that declared objects dead (leakscope's
    /// expectDead API).
    #[serde(alias = "target")]
    pub(super) input: String,
    /// The first group to return.
    #[serde(default)]
    pub(super) offset: usize,
    /// Groups (one per path shape) to return (default 50).
    #[serde(default)]
    pub(super) limit: Option<usize>,
}

/// Arguments of `sql`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(super) struct SqlRequest {
    /// Heap dumps, numbered from 1 in this order in every table's `heap` column.
    #[serde(alias = "dumps")]
    pub(super) inputs: Vec<String>,
    /// One SQL statement (Apache DataFusion's dialect).
    pub(super) query: String,
    /// The first row to return.
    #[serde(default)]
    pub(super) offset: usize,
    /// Rows to return (default 100).
    #[serde(default)]
    pub(super) limit: Option<usize>,
}
