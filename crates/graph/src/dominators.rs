//! Exact dominators by the Semi-NCA algorithm.
//!
//! Reference: L. Georgiadis, R. E. Tarjan, R. F. Werneck, "Finding Dominators in Practice",
//! Journal of Graph Algorithms and Applications 10(1), 2006 (algorithm SNCA). Semidominators
//! are computed as in Lengauer–Tarjan, with path compression but without balanced linking;
//! immediate dominators then come from a nearest-common-ancestor walk up the DFS tree.
//!
//! Nothing recurses: heap graphs have reference chains millions deep. The depth-first search
//! keeps an explicit stack of (node, next edge); path compression collects its path on a
//! stack and applies it root-first. Indices are `u32` when the graph has fewer than 2^32
//! nodes, else `u64`, chosen once at run time, so no heap is too big; the result keeps 10
//! bytes per node (immediate dominator and preorder, 40-bit packed).

use crate::{Csr, CsrBuilder, Packed40};

/// A directed graph over dense node indices `0..node_count()`.
pub trait Graph: Sync {
    /// Number of nodes.
    fn node_count(&self) -> usize;
    /// Calls `f` with every successor of `node`.
    fn successors(&self, node: usize, f: &mut dyn FnMut(usize));
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

/// The immediate dominator of every node reachable from the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dominators {
    root: usize,
    /// Immediate dominator per node; `UNREACHABLE` for nodes the root does not reach, the root itself for the root.
    idom: Packed40,
    /// The reached nodes in DFS preorder.
    order: Packed40,
}

/// Marks a node the root does not reach (the largest 40-bit value).
const UNREACHABLE: u64 = (1 << 40) - 1;

/// An index width: `u32` for graphs under 2^32 nodes, `u64` beyond.
trait Idx: Copy + Ord + Default + Send + Sync {
    /// The largest value, as a count.
    const MAX: u64;
    fn of(v: usize) -> Self;
    fn get(self) -> usize;
}

impl Idx for u32 {
    const MAX: u64 = u32::MAX as u64;
    #[inline]
    fn of(v: usize) -> Self {
        v as u32
    }
    #[inline]
    fn get(self) -> usize {
        self as usize
    }
}

impl Idx for u64 {
    const MAX: u64 = u64::MAX;
    #[inline]
    fn of(v: usize) -> Self {
        v as u64
    }
    #[inline]
    fn get(self) -> usize {
        self as usize
    }
}

/// Computes the dominator tree of `g` from `root`, reporting progress.
pub fn dominators(g: &impl Graph, root: usize, progress: &dyn crate::Progress) -> Dominators {
    // 32-bit indices while nodes and edges fit; graphs beyond take the 64-bit path.
    let narrow = (g.node_count() < u32::MAX as usize - 1).then(|| compute::<u32>(g, root, progress)).flatten();
    narrow.unwrap_or_else(|| compute::<u64>(g, root, progress).expect("64-bit indices fit any graph"))
}

/// `None` when the predecessor lists do not fit indices of type `I`.
fn compute<I: Idx>(g: &impl Graph, root: usize, progress: &dyn crate::Progress) -> Option<Dominators> {
    let n = g.node_count();
    // Preorder numbers start at 1 so that 0 can mean "none" in `parent` and `ancestor`.
    let (vertex, pre, parent) = preorder::<I>(g, root, progress);
    let reached = vertex.len() - 1;
    let preds = predecessors::<I>(g, &vertex, &pre, progress)?;
    drop(pre); // the semidominator phase works in preorder numbers only
    progress.start("dominators", reached as u64);
    let mut semi: Vec<I> = (0..=reached).map(I::of).collect();
    let mut label = semi.clone();
    let mut ancestor: Vec<I> = vec![I::default(); reached + 1];
    let mut stack: Vec<I> = Vec::new();
    for w in (2..=reached).rev() {
        // Invariant: every vertex numbered above w is linked to its DFS parent, so eval(v)
        // for such v yields the vertex of minimum semidominator on its forest path.
        let mut s = semi[w];
        for &v in &preds.list[preds.start[w].get()..preds.start[w + 1].get()] {
            let u = eval(v.get(), &mut ancestor, &mut label, &semi, &mut stack);
            s = s.min(semi[u]);
        }
        semi[w] = s;
        ancestor[w] = parent[w];
        if w.is_multiple_of(4096) {
            progress.advance(4096);
        }
    }
    drop((label, ancestor, preds));
    // idom by nearest common ancestor: walk up the DFS tree until at or above semi(w).
    let mut idom = parent;
    for w in 2..=reached {
        let mut i = idom[w];
        while i > semi[w] {
            i = idom[i.get()];
        }
        idom[w] = i;
    }
    progress.finish();
    Some(finish(root, n, &vertex, &idom))
}

/// Path-compressing evaluation: the vertex with the smallest semidominator on the forest
/// path from `v` up to (not including) its tree's root, or `v` itself when unlinked.
#[inline]
fn eval<I: Idx>(v: usize, ancestor: &mut [I], label: &mut [I], semi: &[I], stack: &mut Vec<I>) -> usize {
    if ancestor[v].get() == 0 {
        return v;
    }
    let mut x = v;
    while ancestor[ancestor[x].get()].get() != 0 {
        stack.push(I::of(x));
        x = ancestor[x].get();
    }
    // Apply from the vertex nearest the root down to v, as the recursive version unwinds.
    while let Some(y) = stack.pop() {
        let y = y.get();
        let a = ancestor[y].get();
        if semi[label[a].get()] < semi[label[y].get()] {
            label[y] = label[a];
        }
        ancestor[y] = ancestor[a];
    }
    label[v].get()
}

/// Iterative DFS: `vertex[i]` is the node with preorder number i (1-based), `pre[node]`
/// its number (0 = unreached), `parent[i]` the DFS parent's number.
///
/// Successors are pushed with the number of the node that pushed them, and a node takes its
/// parent when popped: the most recent pusher is the latest-visited node with an edge to it,
/// which is the parent recursive DFS would give it.
fn preorder<I: Idx>(g: &impl Graph, root: usize, progress: &dyn crate::Progress) -> (Vec<I>, Vec<I>, Vec<I>) {
    let n = g.node_count();
    progress.start("depth-first search", n as u64);
    let mut pre: Vec<I> = vec![I::default(); n];
    let mut vertex: Vec<I> = vec![I::default()];
    let mut parent: Vec<I> = vec![I::default()];
    let mut succ: Vec<usize> = Vec::new();
    let mut pending: Vec<(I, I)> = Vec::new();
    if root < n {
        pending.push((I::of(root), I::default()));
    }
    while let Some((node, from)) = pending.pop() {
        let node = node.get();
        if pre[node].get() != 0 {
            continue;
        }
        let num = vertex.len();
        pre[node] = I::of(num);
        vertex.push(I::of(node));
        parent.push(from);
        succ.clear();
        g.successors(node, &mut |s| succ.push(s));
        // Reversed, so that successors are visited in their natural order.
        pending.extend(succ.iter().rev().filter(|&&s| pre[s].get() == 0).map(|&s| (I::of(s), I::of(num))));
        if num.is_multiple_of(65536) {
            progress.advance(65536);
        }
    }
    progress.finish();
    (vertex, pre, parent)
}

struct Preds<I> {
    start: Vec<I>,
    list: Vec<I>,
}

/// Predecessor lists in preorder numbering, for reached vertices only. Counting goes two
/// slots ahead and filling one slot ahead, so the offsets need no second copy.
fn predecessors<I: Idx>(g: &impl Graph, vertex: &[I], pre: &[I], progress: &dyn crate::Progress) -> Option<Preds<I>> {
    let reached = vertex.len() - 1;
    progress.start("predecessors", reached as u64 * 2);
    let mut total = 0u64;
    for node in &vertex[1..] {
        g.successors(node.get(), &mut |s| total += u64::from(pre[s].get() != 0));
    }
    // Offsets are stored in `I`: give up on this width if the edge count does not fit.
    if total >= I::MAX {
        return None;
    }
    let mut start = vec![I::default(); reached + 3];
    for node in &vertex[1..] {
        g.successors(node.get(), &mut |s| {
            let p = pre[s].get();
            if p != 0 {
                start[p + 2] = I::of(start[p + 2].get() + 1);
            }
        });
    }
    for i in 2..start.len() {
        start[i] = I::of(start[i].get() + start[i - 1].get());
    }
    let mut list = vec![I::default(); total as usize];
    for (v, node) in vertex.iter().enumerate().skip(1) {
        g.successors(node.get(), &mut |s| {
            let p = pre[s].get();
            if p != 0 {
                let at = start[p + 1].get();
                list[at] = I::of(v);
                start[p + 1] = I::of(at + 1);
            }
        });
    }
    start.pop();
    progress.finish();
    Some(Preds { start, list })
}

/// Converts to node numbering: idom per node, and the reached nodes in DFS preorder.
fn finish<I: Idx>(root: usize, n: usize, vertex: &[I], idom_pre: &[I]) -> Dominators {
    let mut idom = Packed40::with_capacity(n);
    (0..n).for_each(|_| idom.push(UNREACHABLE));
    let mut order = Packed40::with_capacity(vertex.len().saturating_sub(1));
    for (w, node) in vertex.iter().enumerate().skip(1) {
        let node = node.get();
        let d = if w == 1 { node } else { vertex[idom_pre[w].get()].get() };
        idom.set(node, d as u64);
        order.push(node as u64);
    }
    Dominators { root, idom, order }
}

impl Dominators {
    /// The root the tree was computed from.
    pub fn root(&self) -> usize {
        self.root
    }

    /// The immediate dominator of `node`; `None` for the root and for unreachable nodes.
    pub fn immediate_dominator(&self, node: usize) -> Option<usize> {
        if node >= self.idom.len() || node == self.root {
            return None;
        }
        let d = self.idom.get(node);
        (d != UNREACHABLE).then_some(d as usize)
    }

    /// True when the root reaches `node`.
    pub fn is_reachable(&self, node: usize) -> bool {
        node < self.idom.len() && self.idom.get(node) != UNREACHABLE
    }

    /// True when every path from the root to `b` goes through `a` (a node dominates itself).
    /// Walks the dominator chain of `b`: O(depth).
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return false;
        }
        let mut x = b;
        loop {
            if x == a {
                return true;
            }
            match self.immediate_dominator(x) {
                Some(d) => x = d,
                None => return false,
            }
        }
    }

    /// Number of nodes in the graph.
    pub fn node_count(&self) -> usize {
        self.idom.len()
    }

    /// Number of nodes the root reaches.
    pub fn reached_count(&self) -> usize {
        self.order.len()
    }

    /// The reached nodes in depth-first preorder: every node comes after its dominators.
    pub fn preorder(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.order.iter().map(|v| v as usize)
    }

    /// Sums `weight` over every dominator subtree: entry `v` is the total weight of the nodes
    /// `v` dominates, itself included (retained sizes, when weights are shallow sizes).
    /// Unreachable nodes get 0.
    pub fn subtree_sums(&self, weight: impl Fn(usize) -> u64) -> Vec<u64> {
        let mut sum = vec![0u64; self.idom.len()];
        // An immediate dominator is a proper DFS ancestor, so it comes earlier in preorder:
        // in reverse preorder every subtree is complete before its dominator reads it.
        for i in (0..self.order.len()).rev() {
            let v = self.order.get(i) as usize;
            sum[v] += weight(v);
            if let Some(d) = self.immediate_dominator(v) {
                sum[d] += sum[v];
            }
        }
        sum
    }

    /// The dominator tree's children lists, as CSR (built on demand: 10 bytes per node).
    pub fn children(&self) -> Csr {
        let n = self.idom.len();
        let mut count = vec![0u32; n];
        for v in self.preorder() {
            if let Some(d) = self.immediate_dominator(v) {
                count[d] += 1;
            }
        }
        let mut start = vec![0u64; n + 1];
        for v in 0..n {
            start[v + 1] = start[v] + u64::from(count[v]);
        }
        let mut targets = vec![0u64; start[n] as usize];
        let mut fill = start.clone();
        for v in self.preorder() {
            if let Some(d) = self.immediate_dominator(v) {
                targets[fill[d] as usize] = v as u64;
                fill[d] += 1;
            }
        }
        let mut b = CsrBuilder::new();
        let mut packed = Packed40::with_capacity(targets.len());
        targets.iter().for_each(|&t| packed.push(t));
        b.push_block(&count, &packed);
        b.finish()
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.idom.heap_bytes() + self.order.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsrBuilder, NoProgress};
    use proptest::prelude::*;

    fn graph(n: usize, edges: &[(usize, usize)]) -> crate::Csr {
        let mut out: Vec<Vec<u64>> = vec![Vec::new(); n];
        for &(a, b) in edges {
            out[a].push(b as u64);
        }
        let mut b = CsrBuilder::new();
        out.into_iter().for_each(|succ| b.push_node(succ));
        b.finish()
    }

    /// The oracle: a dominates b iff b is reachable and removing a makes b unreachable.
    fn reachable_without(g: &crate::Csr, root: usize, removed: Option<usize>) -> Vec<bool> {
        let mut seen = vec![false; g.node_count()];
        if Some(root) == removed {
            return seen;
        }
        let mut stack = vec![root];
        seen[root] = true;
        while let Some(v) = stack.pop() {
            for s in g.successors(v) {
                let s = s as usize;
                if !seen[s] && Some(s) != removed {
                    seen[s] = true;
                    stack.push(s);
                }
            }
        }
        seen
    }

    fn check_against_oracle(n: usize, edges: &[(usize, usize)]) {
        let g = graph(n, edges);
        let d = dominators(&g, 0, &NoProgress);
        let all = reachable_without(&g, 0, None);
        for a in 0..n {
            let without = reachable_without(&g, 0, Some(a));
            for b in 0..n {
                let expected = all[a] && all[b] && (a == b || !without[b]);
                assert_eq!(d.dominates(a, b), expected, "dominates({a}, {b}) in {edges:?}");
            }
        }
        for (b, reached) in all.iter().enumerate() {
            // idom(b) dominates b, and every other strict dominator of b dominates idom(b).
            if let Some(i) = d.immediate_dominator(b) {
                assert!(d.dominates(i, b) && i != b);
                for a in (0..n).filter(|&a| a != b && d.dominates(a, b)) {
                    assert!(d.dominates(a, i), "idom({b}) = {i} but {a} dominates {b} and not {i}");
                }
            } else {
                assert!(b == 0 || !reached);
            }
        }
    }

    #[test]
    fn lengauer_tarjan_paper_example() {
        // The flow graph of Lengauer & Tarjan (1979), Fig. 1: R=0 A=1 B=2 C=3 D=4 E=5 F=6 G=7
        // H=8 I=9 J=10 K=11 L=12.
        let e = [
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 4),
            (2, 1),
            (2, 4),
            (2, 5),
            (3, 6),
            (3, 7),
            (4, 12),
            (5, 8),
            (6, 9),
            (7, 9),
            (7, 10),
            (8, 5),
            (8, 11),
            (9, 11),
            (10, 9),
            (11, 9),
            (11, 0),
            (12, 8),
        ];
        let g = graph(13, &e);
        let d = dominators(&g, 0, &NoProgress);
        let idom: Vec<Option<usize>> = (0..13).map(|v| d.immediate_dominator(v)).collect();
        // R dominates A B C D E H I K directly; C dominates F G; G dominates J; D dominates L.
        assert_eq!(
            idom,
            vec![
                None,
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                Some(3),
                Some(3),
                Some(0),
                Some(0),
                Some(7),
                Some(0),
                Some(4)
            ]
        );
        check_against_oracle(13, &e);
    }

    #[test]
    fn two_phase_thesis_total_occupied_bytes() {
        // Figure 3.1 of the two-phase thesis: root(0) -> display(1), dbl_linked_list(2);
        // both -> setting(3); list -> item1(4) <-> item2(5) <-> item3(6); item i -> value i (7, 8, 9).
        let e = [(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (4, 5), (5, 4), (5, 6), (6, 5), (4, 7), (5, 8), (6, 9)];
        let g = graph(10, &e);
        let d = dominators(&g, 0, &NoProgress);
        // Occupied bytes of the items and values as §3.1 gives them; the others are made up.
        let bytes = [0, 16, 20, 24, 4, 4, 4, 36, 110, 28];
        let total = d.subtree_sums(|v| bytes[v]);
        assert_eq!(total[4], 186, "item1: 4 + (4 + 36 + 4 + 110 + 28)");
        assert_eq!(d.immediate_dominator(3), Some(0), "setting is shared, so neither holder owns it");
        assert_eq!(total[2], 20 + 186, "the list owns its items but not the setting");
        check_against_oracle(10, &e);
    }

    #[test]
    fn toy_graphs() {
        check_against_oracle(1, &[]);
        check_against_oracle(3, &[(0, 1), (1, 2), (2, 1)]); // a cycle
        check_against_oracle(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]); // a diamond: shared ownership
        check_against_oracle(4, &[(0, 1), (1, 2)]); // node 3 unreachable
        check_against_oracle(2, &[(0, 0), (0, 1), (1, 1)]); // self loops
    }

    #[test]
    fn deep_chains_do_not_recurse() {
        let n = 300_000;
        let e: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        let g = graph(n, &e);
        let d = dominators(&g, 0, &NoProgress);
        assert_eq!(d.immediate_dominator(n - 1), Some(n - 2));
        assert!(d.dominates(1, n - 1));
        let sums = d.subtree_sums(|_| 1);
        assert_eq!(sums[0], n as u64);
        assert_eq!(sums[n - 1], 1);
    }

    #[test]
    fn subtree_sums_are_retained_sizes() {
        // 0 -> 1 -> 2, 0 -> 3 -> 2: node 2 is shared, so 1 retains only itself.
        let g = graph(5, &[(0, 1), (1, 2), (0, 3), (3, 2), (3, 4)]);
        let d = dominators(&g, 0, &NoProgress);
        let sums = d.subtree_sums(|v| [0, 10, 100, 1000, 10000][v]);
        assert_eq!(sums, vec![11110, 10, 100, 11000, 10000]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn matches_brute_force(n in 1usize..24, raw in proptest::collection::vec((0usize..24, 0usize..24), 0..60)) {
            let edges: Vec<(usize, usize)> = raw.into_iter().map(|(a, b)| (a % n, b % n)).collect();
            check_against_oracle(n, &edges);
            // The 64-bit path, taken by graphs past 2^32 nodes or edges, gives the same tree.
            let g = graph(n, &edges);
            prop_assert_eq!(compute::<u64>(&g, 0, &NoProgress), compute::<u32>(&g, 0, &NoProgress));
        }
    }
}
