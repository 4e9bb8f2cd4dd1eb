//! Strongly connected components (Tarjan's algorithm, iterative), so that questions that
//! flow along references ("which roots reach this object?") are answered in one sweep over
//! the components in topological order instead of a fixpoint over the graph.

use crate::idx::Idx;
use crate::Graph;

/// The strongly connected components of the nodes reachable from a root.
#[derive(Debug, Clone)]
pub struct Components {
    store: Store,
    count: usize,
}

/// Each node's component and the nodes in emission order, 4 bytes each while the graph has
/// fewer than 2^32 nodes, 8 beyond.
#[derive(Debug, Clone)]
enum Store {
    Narrow { comp: Vec<u32>, order: Vec<u32> },
    Wide { comp: Vec<u64>, order: Vec<u64> },
}

/// The component of a node the root does not reach.
pub const UNREACHED: u64 = u64::MAX;

impl Components {
    /// The component of `node`, or [`UNREACHED`]. An edge between two components always goes
    /// from the higher number to the lower one (sinks are numbered first).
    #[inline]
    pub fn of(&self, node: usize) -> u64 {
        match &self.store {
            Store::Narrow { comp, .. } => match comp[node] {
                u32::MAX => UNREACHED,
                c => u64::from(c),
            },
            Store::Wide { comp, .. } => comp[node],
        }
    }

    /// Number of components.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The reached nodes, grouped by component in topological order: the nodes of a component
    /// come together, after those of every component with an edge into it.
    pub fn topological(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match &self.store {
            Store::Narrow { order, .. } => Box::new(order.iter().rev().map(|&v| v as usize)),
            Store::Wide { order, .. } => Box::new(order.iter().rev().map(|&v| v as usize)),
        }
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        match &self.store {
            Store::Narrow { comp, order } => (comp.capacity() + order.capacity()) * 4,
            Store::Wide { comp, order } => (comp.capacity() + order.capacity()) * 8,
        }
    }
}

/// The components of the nodes `g` reaches from `root`.
pub fn components(g: &impl Graph, root: usize, progress: &dyn crate::Progress) -> Components {
    if g.node_count() < u32::MAX as usize {
        let (comp, order, count) = tarjan::<u32>(g, root, progress);
        Components { store: Store::Narrow { comp, order }, count }
    } else {
        let (comp, order, count) = tarjan::<u64>(g, root, progress);
        Components { store: Store::Wide { comp, order }, count }
    }
}

/// Tarjan's algorithm with indices of type `I`, whose largest value marks "no component":
/// each node's component, the nodes in emission order, and the number of components.
fn tarjan<I: Idx>(g: &impl Graph, root: usize, progress: &dyn crate::Progress) -> (Vec<I>, Vec<I>, usize) {
    let n = g.node_count();
    progress.start("strongly connected components", n as u64);
    let none = I::of(I::MAX as usize);
    let mut t = Tarjan::<I> {
        index: vec![I::default(); n],
        low: vec![I::default(); n],
        comp: vec![none; n],
        stack: Vec::new(),
        succ: Vec::new(),
        call: Vec::new(),
        next: 1,
    };
    let mut order: Vec<I> = Vec::new();
    let mut count = 0usize;
    if root < n {
        t.enter(g, root, progress);
    }
    while let Some(&(v, start)) = t.call.last() {
        if t.succ.len() > start {
            let w = t.succ.pop().expect("a successor is pending");
            if t.index[w].get() == 0 {
                t.enter(g, w, progress);
            } else if t.comp[w] == none {
                t.low[v] = t.low[v].min(t.index[w]);
            }
            continue;
        }
        t.call.pop();
        if t.low[v] == t.index[v] {
            loop {
                let w = t.stack.pop().expect("v is on the stack").get();
                t.comp[w] = I::of(count);
                order.push(I::of(w));
                if w == v {
                    break;
                }
            }
            count += 1;
        }
        if let Some(&(u, _)) = t.call.last() {
            t.low[u] = t.low[u].min(t.low[v]);
        }
    }
    progress.finish();
    (t.comp, order, count)
}

/// Tarjan's state. A visited node (`index` > 0) with no component yet is on `stack`.
struct Tarjan<I> {
    index: Vec<I>,
    low: Vec<I>,
    comp: Vec<I>,
    stack: Vec<I>,
    /// Successors still to visit, of every node on the call stack.
    succ: Vec<usize>,
    /// The DFS call stack: a node and where its successors begin in `succ`.
    call: Vec<(usize, usize)>,
    next: usize,
}

impl<I: Idx> Tarjan<I> {
    fn enter(&mut self, g: &impl Graph, v: usize, progress: &dyn crate::Progress) {
        self.index[v] = I::of(self.next);
        self.low[v] = I::of(self.next);
        self.next += 1;
        self.stack.push(I::of(v));
        self.call.push((v, self.succ.len()));
        let succ = &mut self.succ;
        g.successors(v, &mut |w| succ.push(w));
        if self.next.is_multiple_of(65536) {
            progress.advance(65536);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsrBuilder, NoProgress};

    fn graph(edges: &[&[usize]]) -> crate::Csr {
        let mut b = CsrBuilder::new();
        edges.iter().for_each(|e| b.push_node(e.iter().map(|&w| w as u64)));
        b.finish()
    }

    #[test]
    fn cycles_are_one_component_and_edges_go_down() {
        // 0 -> 1 <-> 2 -> 3, 0 -> 4; 5 unreached.
        let g = graph(&[&[1, 4], &[2], &[1, 3], &[], &[], &[0]]);
        let c = components(&g, 0, &NoProgress);
        assert_eq!(c.of(1), c.of(2));
        assert_eq!(c.of(5), UNREACHED);
        assert_eq!(c.count(), 4);
        for (v, succ) in [(0, vec![1, 4]), (1, vec![2]), (2, vec![1, 3])] {
            for w in succ {
                assert!(c.of(v) > c.of(w) || c.of(v) == c.of(w), "{v} -> {w}");
            }
        }
        let topo: Vec<usize> = c.topological().collect();
        assert_eq!(topo.len(), 5);
        assert_eq!(topo[0], 0);
    }
}
