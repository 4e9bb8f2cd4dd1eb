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

/// One object: what it is, what it holds, what holds it, what keeps it alive and what it
/// keeps alive (`leakscope object` and the inspector of `leakscope serve`).
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
    /// The GC roots that hold it directly, in plain words.
    #[serde(default)]
    pub roots: Vec<String>,
    /// Its fields (a class's static fields), in the dump's order.
    #[serde(default)]
    pub fields: Vec<FieldRow>,
    /// Its elements, one page, when it is an array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<ArrayPage>,
    /// The objects that reference it, one page.
    #[serde(default)]
    pub referrers: ReferrerPage,
    /// Its shortest paths from GC roots.
    pub paths: PathsReport,
    /// The text of a `java.lang.String`, only with `--show-values`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// An object another one references, as a row: enough to decide whether to look into it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObjectRef {
    /// Its id.
    pub id: crate::ObjectId,
    /// Its class (`class NAME` for a class).
    pub class: String,
    /// Bytes it retains.
    pub retained_bytes: u64,
    /// The text of a `java.lang.String`, only with `--show-values`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<String>,
}

/// One field of an object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FieldRow {
    /// The field's name.
    pub name: String,
    /// The class that declares it.
    pub declared_by: String,
    /// `static` for a class's static field.
    pub is_static: bool,
    /// Its Java type: `int`, `long`, ..., or `Object` for a reference.
    #[serde(rename = "type")]
    pub ty: String,
    /// A primitive's value as Java prints it; `null` for references.
    pub value: Option<String>,
    /// The object a reference points to; `null` for primitives, null references, and ids
    /// missing from the dump.
    pub target: Option<ObjectRef>,
}

/// One page of an array's elements.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArrayPage {
    /// The element type: `int`, ..., or `Object`.
    pub element_type: String,
    /// Elements in all.
    pub length: u64,
    /// Index of the first element on this page.
    pub offset: u64,
    /// The page's elements (primitive arrays' values only with `--show-values`: they are
    /// strings' and buffers' contents).
    pub elements: Vec<ElementRow>,
    /// True when a primitive array's values were left out for want of `--show-values`.
    pub values_hidden: bool,
}

/// One array element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ElementRow {
    /// Its index.
    pub index: u64,
    /// A primitive's value.
    pub value: Option<String>,
    /// The object it references; `null` for null.
    pub target: Option<ObjectRef>,
}

/// One page of the objects that reference an object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReferrerPage {
    /// Referrers in all.
    pub total: u64,
    /// Of those, through a strong reference.
    pub strong: u64,
    /// Index of the first referrer on this page.
    pub offset: u64,
    /// Strong referrers first, then by retained size.
    pub rows: Vec<ReferrerRow>,
}

/// An object that references another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReferrerRow {
    /// The referencing object.
    #[serde(flatten)]
    pub from: ObjectRef,
    /// The field (`next`, `[3]`, `static CACHE`) that holds the reference.
    pub field: String,
    /// `strong`, or the strength of a `Reference.referent`: `weak`, `soft`, `phantom`, `final`.
    pub strength: String,
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

/// Two heaps of the series side by side (`leakscope serve`'s comparison view): what changed
/// between them, as `leakscope diff` says it, and what grows from one to the other, as
/// `leakscope growth` says it of the heaps between them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    /// Index of the baseline in the series (0 is the first heap).
    pub baseline: u64,
    /// Index of the current heap.
    pub current: u64,
    /// Per-class and per-edge deltas from the baseline to the current heap.
    pub diff: crate::growth::DiffReport,
    /// The growth ranking of the heaps from the baseline to the current one.
    pub growth: crate::growth::GrowthReport,
}

/// What the API answers when a request cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApiError {
    /// Why, for people.
    pub error: String,
}
