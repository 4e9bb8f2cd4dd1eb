//! The answers of `leakscope serve`'s JSON API: pages of the dominator and grouping trees,
//! an object or a class with its paths from GC roots and what it retains, and search results.
//! Rows are the same models the text commands print.

use serde::{Deserialize, Serialize};

use crate::group::GroupNode;
use crate::histogram::HistogramRow;
use crate::leak::DomNode;
use crate::paths::PathsReport;
use crate::retention::{DominatorRow, GroupTotals};

/// One page of the objects a dominator tree node immediately dominates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DominatorPage {
    /// The node; `None` for the top of the tree.
    pub parent: Option<DominatorRow>,
    /// Dominated objects in all.
    pub total: u64,
    /// Index of the first object on this page.
    pub offset: u64,
    /// The objects, biggest retained size first; `nodes` is empty and `more` counts the
    /// objects each dominates, to be fetched as the next level.
    pub objects: Vec<DomNode>,
}

/// A node of a grouping tree, with the id to ask for its children.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupChild {
    /// Node id within this grouping (valid for the same `by`).
    pub node: u64,
    /// The group; `more_children` counts its sub-groups, which are not included.
    #[serde(flatten)]
    pub group: GroupNode,
}

/// One page of the sub-groups of a grouping tree node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupPage {
    /// The classifiers, outermost first.
    pub by: Vec<String>,
    /// The node whose sub-groups these are.
    pub parent: GroupChild,
    /// Sub-groups in all.
    pub total: u64,
    /// Index of the first sub-group on this page.
    pub offset: u64,
    /// The sub-groups, biggest shallow bytes first.
    pub children: Vec<GroupChild>,
}

/// Deep and retained sizes of one grouping tree node (a closure each: asked for separately).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupSizesView {
    /// The node.
    pub node: u64,
    /// Its sizes; `transitive_bytes` is the deep size.
    pub sizes: GroupTotals,
}

/// One object: what it is, what keeps it alive and what it keeps alive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObjectView {
    /// The object as a dominator tree row (retained size and dominated count).
    pub object: DominatorRow,
    /// Whether a strong path from a GC root reaches it.
    pub live: bool,
    /// Its immediate dominator: the one object that alone keeps it alive; `None` when several
    /// roots do, or when it is not live.
    pub dominator: Option<DominatorRow>,
    /// Shallow, deep and retained sizes.
    pub sizes: GroupTotals,
    /// Its shortest paths from GC roots.
    pub paths: PathsReport,
    /// The text of a `java.lang.String`, only with `--show-values`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// All instances of one class together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassView {
    /// The class.
    pub class: String,
    /// Instances, shallow, deep and retained bytes of all of them together.
    pub sizes: GroupTotals,
    /// Their shortest paths from GC roots, merged by shape.
    pub paths: PathsReport,
    /// The biggest instances by retained size.
    pub biggest: Vec<DominatorRow>,
}

/// Classes whose name contains the query, and the object whose id it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SearchPage {
    /// The query.
    pub query: String,
    /// Classes matching in all.
    pub total: u64,
    /// Index of the first class on this page.
    pub offset: u64,
    /// Matching classes, biggest shallow bytes first.
    pub classes: Vec<HistogramRow>,
    /// The object at the address the query names, if it is one.
    pub object: Option<crate::ObjectId>,
}

/// What the API answers when a request cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApiError {
    /// Why, for people.
    pub error: String,
}
