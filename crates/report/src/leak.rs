//! The leak report's model: everything `leakscope report` and `leakscope serve` show.

use serde::{Deserialize, Serialize};

use crate::growth::GrowthReport;
use crate::histogram::Histogram;
use crate::retention::DominatorRow;
use crate::roots::RootsReport;
use crate::suspects::SuspectsReport;

/// One class's bytes in each heap of the series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassCurve {
    /// Class name.
    pub class: String,
    /// Bytes per heap, oldest first.
    pub volumes: Vec<u64>,
}

/// A dominator tree node with its biggest children.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DomNode {
    /// The object.
    #[serde(flatten)]
    pub object: DominatorRow,
    /// The text of a `java.lang.String`, only with `--show-values`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Its biggest dominated objects.
    pub nodes: Vec<DomNode>,
    /// Dominated objects not shown.
    pub more: u64,
}

/// What the report shows of the last heap dump, which was fully indexed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeapView {
    /// The dump's path.
    pub source: String,
    /// Bytes reachable from GC roots.
    pub live_bytes: u64,
    /// The leak suspects.
    pub suspects: SuspectsReport,
    /// Why no suspect can be named in this dump (its cut took the threads), when none can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspects_refused: Option<String>,
    /// The top of the dominator tree, biggest retained sizes first.
    pub dominator_tree: Vec<DomNode>,
    /// Bytes reachable and retained per root.
    pub roots: RootsReport,
    /// Instances and bytes per class, every object counted.
    pub histogram: Histogram,
}

/// Everything `leakscope report` shows, gathered from the same analyses as the text commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LeakReport {
    /// The inputs, in the order given.
    pub inputs: Vec<String>,
    /// Growth over the series; absent for a single heap.
    pub growth: Option<GrowthReport>,
    /// Volumes over the series of the classes biggest in the last heap.
    pub class_curves: Vec<ClassCurve>,
    /// The last heap, when it is a dump.
    pub heap: Option<HeapView>,
    /// Whether string contents were included (`--show-values`).
    pub show_values: bool,
    /// Caveats about the input.
    pub notes: Vec<String>,
    /// Inputs not read whole (`SOURCE: why`, and what the cut took): a verdict on them covers
    /// only what was read, and the page says so where its verdicts are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<String>,
}
