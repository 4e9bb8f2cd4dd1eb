//! The graph every algorithm here walks: dense node indices and their successors, with hints
//! for graphs whose edges live in files.

use crate::Placement;

/// A directed graph over dense node indices `0..node_count()`.
pub trait Graph: Sync {
    /// Number of nodes.
    fn node_count(&self) -> usize;
    /// Calls `f` with every successor of `node`.
    fn successors(&self, node: usize, f: &mut dyn FnMut(usize));
    /// Successors of the search's `root` that exist only for nodes its other successors do not
    /// reach (`reached` says which they do): asked once, when the search from the root's
    /// [`Self::successors`] has finished, and searched after them, as if they ended the root's
    /// list. A graph whose extra roots depend on a closure saves that whole traversal so.
    fn late_successors(&self, _root: usize, _reached: &dyn Fn(usize) -> bool, _f: &mut dyn FnMut(usize)) {}
    /// Says that successors will be asked for in node order (`true`) for a while, or in any
    /// order again (`false`): a graph whose edges live in files may tell the kernel so.
    fn reading_in_order(&self, _in_order: bool) {}
    /// Says that no more successors will be asked for a while: a graph whose edges can be
    /// read back later may take them out of memory.
    fn release(&self) {}
    /// Where the algorithms on this graph keep their big arrays.
    fn placement(&self) -> Placement {
        Placement::memory()
    }
}

impl Graph for crate::Csr {
    fn node_count(&self) -> usize {
        self.node_count()
    }
    fn successors(&self, node: usize, f: &mut dyn FnMut(usize)) {
        for e in self.edge_range(node) {
            f(self.target(e) as usize);
        }
    }
}
