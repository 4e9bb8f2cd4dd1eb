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
