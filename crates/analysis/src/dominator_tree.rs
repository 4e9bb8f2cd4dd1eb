//! Rows and the top of the dominator tree, as the `dominators` command and the HTML report show them.

use crate::retention::node;
use heap::{ObjIdx, Snapshot};
use report::{DomNode, DominatorRow};

use crate::retention::Retention;

/// One object of the dominator tree: its class, sizes, share of `of` bytes, and `children`, the
/// number of objects it immediately dominates.
pub fn dominator_row(s: &Snapshot, r: &Retention, children: u64, o: ObjIdx, of: u64) -> DominatorRow {
    DominatorRow {
        id: report::ObjectId(s.address(o)),
        class: s.classes().get(s.class_of(o)).name.clone(),
        shallow_bytes: s.shallow_bytes(o),
        retained_bytes: r.retained_bytes(o),
        share: if of == 0 { 0.0 } else { r.retained_bytes(o) as f64 / of as f64 },
        children,
        represents: s.mirror_class(o).map(|c| s.classes().get(c).name.clone()),
    }
}

/// The top of the dominator tree: the `width` biggest children of the super-root, each with
/// its `width` biggest children, down to `depth` levels. Shares are of the live heap.
pub fn dominator_tree(s: &Snapshot, r: &Retention, width: usize, depth: usize) -> Vec<DomNode> {
    let tree = r.tree_children();
    let live = r.live_bytes();
    // Graph numbering: node 0 is the super-root, node i + 1 object i.
    let build = |node: usize| -> (Vec<usize>, u64) {
        let kids: Vec<ObjIdx> = tree.successors(node).filter_map(|v| node::object(v as usize)).collect();
        let more = kids.len().saturating_sub(width) as u64;
        (r.biggest_first(kids, width).into_iter().map(node::of).collect(), more)
    };
    fn grow(
        node: usize,
        level: usize,
        depth: usize,
        build: &dyn Fn(usize) -> (Vec<usize>, u64),
        row: &dyn Fn(ObjIdx) -> DominatorRow,
    ) -> DomNode {
        let o = node::object(node).expect("tree nodes below the super-root are objects");
        let (nodes, more) = if level + 1 < depth {
            let (kids, more) = build(node);
            (kids.into_iter().map(|k| grow(k, level + 1, depth, build, row)).collect(), more)
        } else {
            (Vec::new(), 0)
        };
        DomNode { object: row(o), value: None, nodes, more }
    }
    let row = |o: ObjIdx| dominator_row(s, r, tree.edge_range(node::of(o)).len() as u64, o, live);
    let (top, _) = build(0);
    top.into_iter().map(|v| grow(v, 0, depth, &build, &row)).collect()
}

/// Why the dominator tree cannot list an object's children.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParentError {
    /// No object has that address.
    #[error("no object at address 0x{0:x} in the dump")]
    NoObject(u64),
    /// The object is not strongly reachable, so it is not in the tree.
    #[error("object 0x{0:x} is not strongly reachable from any GC root: it retains nothing")]
    NotLive(u64),
}

impl ParentError {
    /// The object at address `id`, found before the dominator tree is built so that a wrong
    /// id fails at once.
    pub fn find(s: &Snapshot, id: u64) -> Result<ObjIdx, ParentError> {
        s.find(id).ok_or(ParentError::NoObject(id))
    }
}

/// The children of `parent` in the dominator tree (the top of the tree for `None`), biggest
/// first, `limit` of them from `offset` (`limit` 0: all); with `flat`, the biggest retained
/// sizes anywhere in the tree instead.
pub fn dominator_report(
    s: &Snapshot,
    r: &Retention,
    parent: Option<ObjIdx>,
    offset: usize,
    limit: usize,
    flat: bool,
) -> Result<report::DominatorReport, ParentError> {
    if let Some(p) = parent.filter(|&p| !r.is_live(p)) {
        return Err(ParentError::NotLive(s.address(p)));
    }
    let limit = if limit == 0 { usize::MAX } else { limit };
    let of = parent.map_or(r.live_bytes(), |p| r.retained_bytes(p));
    let (children, more) = if flat {
        let shown: Vec<ObjIdx> = r.top(offset.saturating_add(limit)).into_iter().skip(offset).collect();
        let more = r.live_count().saturating_sub((offset + shown.len()) as u64);
        (shown, more)
    } else {
        let (biggest, total) = r.biggest_children(parent, offset.saturating_add(limit));
        let shown: Vec<ObjIdx> = biggest.into_iter().skip(offset).collect();
        let more = total.saturating_sub(offset + shown.len()) as u64;
        (shown, more)
    };
    // Child counts for the rows shown only: a count per object would cost 4 bytes each.
    let shown: Vec<ObjIdx> = parent.iter().copied().chain(children.iter().copied()).collect();
    let counts = r.child_counts_of(&shown);
    let row = |i: usize, of: u64| dominator_row(s, r, counts[i], shown[i], of);
    let first = usize::from(parent.is_some());
    Ok(report::DominatorReport {
        parent: parent.map(|_| row(0, r.live_bytes())),
        live_bytes: r.live_bytes(),
        objects: (first..shown.len()).map(|i| row(i, of)).collect(),
        more,
        flat,
    })
}
