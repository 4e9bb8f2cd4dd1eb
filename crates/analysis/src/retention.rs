//! Who keeps what alive: the dominator tree of the strong object graph, and retained sizes.
//!
//! The graph has a virtual super-root above the GC roots. Its successors are the objects the
//! dump's GC roots hold, plus every class mirror that nothing in the dump reaches: the VM holds
//! those classes itself (hidden classes, classes of the VM's own loaders), so their statics are
//! live. Mirrors reachable through their class loader are not extra roots, so a class loader
//! still retains its classes and their statics, as in Eclipse MAT.
//!
//! Weak, soft, phantom and final `referent` fields do not keep objects alive here: an object
//! reachable only through them is not live for retention, and retains nothing.

use graph::{Dominators, Graph, Progress};
use heap::{ObjIdx, RefStrength, Snapshot};

/// The strong object graph with a super-root: node 0 is the super-root, node `i + 1` object `i`.
pub struct StrongGraph<'a> {
    snap: &'a Snapshot,
    roots: Vec<ObjIdx>,
    /// The class mirrors the roots do not reach are the super-root's late successors (the
    /// depth-first search finds them), not in `roots`.
    late_mirrors: bool,
}

impl<'a> StrongGraph<'a> {
    /// The graph of `snap`, with the retention root set described in the module docs.
    pub fn new(snap: &'a Snapshot) -> StrongGraph<'a> {
        StrongGraph { snap, roots: retention_roots(snap), late_mirrors: false }
    }

    /// The same graph for a depth-first search from the super-root, which learns the mirrors
    /// the roots do not reach as it goes ([`Graph::late_successors`]) instead of a closure of
    /// the whole heap beforehand: out of core, that closure alone read the graph at random for
    /// minutes. [`Self::roots`] then holds the dump's GC roots only.
    pub fn for_search(snap: &'a Snapshot) -> StrongGraph<'a> {
        StrongGraph { snap, roots: gc_roots(snap), late_mirrors: true }
    }

    /// The objects directly below the super-root.
    pub fn roots(&self) -> &[ObjIdx] {
        &self.roots
    }
}

impl Graph for StrongGraph<'_> {
    fn node_count(&self) -> usize {
        self.snap.object_count() as usize + 1
    }

    fn successors(&self, v: usize, f: &mut dyn FnMut(usize)) {
        match node::object(v) {
            None => self.roots.iter().for_each(|&r| f(node::of(r))),
            Some(o) => {
                for e in self.snap.edges(o).filter(|e| e.strength == RefStrength::Strong) {
                    f(node::of(e.target));
                }
            }
        }
    }

    fn late_successors(&self, root: usize, reached: &dyn Fn(usize) -> bool, f: &mut dyn FnMut(usize)) {
        if self.late_mirrors && root == node::SUPER_ROOT {
            self.snap.mirrors().iter().map(|m| node::of(m.0)).filter(|&v| !reached(v)).for_each(f);
        }
    }

    fn reading_in_order(&self, in_order: bool) {
        self.snap.reading_edges_in_order(in_order);
    }

    fn release(&self) {
        self.snap.release_columns();
    }

    fn placement(&self) -> graph::Placement {
        self.snap.placement().clone()
    }
}

/// The dump's GC root objects, then the class mirrors they do not reach (strongly).
pub fn retention_roots(s: &Snapshot) -> Vec<ObjIdx> {
    let mut roots = gc_roots(s);
    let reached = strong_closure(s, &roots, None);
    roots.extend(s.mirrors().iter().map(|m| m.0).filter(|o| !reached.contains(*o)));
    roots
}

/// The objects the dump's GC roots hold, each once, in index order.
fn gc_roots(s: &Snapshot) -> Vec<ObjIdx> {
    let mut roots: Vec<ObjIdx> = s.roots.iter().map(|r| r.object).collect();
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// A set of objects, one bit each ([`graph::BitSet`] with object indices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjSet {
    bits: graph::BitSet,
}

impl ObjSet {
    /// An empty set for a heap of `n` objects.
    pub fn new(n: u64) -> ObjSet {
        ObjSet { bits: graph::BitSet::new(n as usize) }
    }

    /// True when `o` is in the set.
    #[inline]
    pub fn contains(&self, o: ObjIdx) -> bool {
        self.bits.contains(o.index())
    }

    /// Adds `o`; true when it was not there yet.
    #[inline]
    pub fn insert(&mut self, o: ObjIdx) -> bool {
        self.bits.insert(o.index())
    }

    /// Removes every member of `other`.
    pub fn subtract(&mut self, other: &ObjSet) {
        self.bits.subtract(&other.bits);
    }

    /// Adds every member of `other`.
    pub fn union_with(&mut self, other: &ObjSet) {
        self.bits.union_with(&other.bits);
    }

    /// The members, in index order.
    pub fn iter(&self) -> impl Iterator<Item = ObjIdx> + '_ {
        self.bits.iter().map(|i| ObjIdx(i as u64))
    }

    /// Number of members.
    pub fn len(&self) -> u64 {
        self.bits.len() as u64
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }
}

/// Everything reachable from `start` along strong references, never entering `avoid`
/// (objects of `avoid` that are in `start` are not entered either).
pub fn strong_closure(s: &Snapshot, start: &[ObjIdx], avoid: Option<&ObjSet>) -> ObjSet {
    closure(s, start, avoid, false)
}

/// Everything reachable from `start`, never entering `avoid`, following weak, soft, phantom
/// and final referents too when `follow_referents` is set.
pub fn closure(s: &Snapshot, start: &[ObjIdx], avoid: Option<&ObjSet>, follow_referents: bool) -> ObjSet {
    let mut seen = ObjSet::new(s.object_count());
    let mut stack: Vec<ObjIdx> = Vec::new();
    let blocked = |o: ObjIdx| avoid.is_some_and(|a| a.contains(o));
    for &o in start {
        if !blocked(o) && seen.insert(o) {
            stack.push(o);
        }
    }
    while let Some(o) = stack.pop() {
        for e in s.edges(o) {
            let follow = follow_referents || e.strength == RefStrength::Strong;
            if follow && !blocked(e.target) && seen.insert(e.target) {
                stack.push(e.target);
            }
        }
    }
    seen
}

/// How breadth-first search reached an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    /// It is `starts[i]`.
    Start(usize),
    /// Along a strong reference from this object.
    From(ObjIdx),
}

/// Breadth-first search from `starts` along strong references, in two layers: from
/// `starts[..first]` until nothing more is reached, then from the rest. `claim(o, how)` is
/// called when the search meets `o`; it records what the caller keeps and returns true if
/// `o` is new, so that the search goes on from it. Shortest paths follow from first claims.
pub fn strong_bfs(
    s: &Snapshot,
    starts: &[ObjIdx],
    first: usize,
    mut claim: impl FnMut(ObjIdx, Reached) -> bool,
    progress: &dyn Progress,
) {
    progress.start("shortest paths", s.object_count());
    let mut queue = std::collections::VecDeque::new();
    let mut done = 0u64;
    for layer in [0..first.min(starts.len()), first.min(starts.len())..starts.len()] {
        for i in layer {
            if claim(starts[i], Reached::Start(i)) {
                queue.push_back(starts[i]);
            }
        }
        while let Some(o) = queue.pop_front() {
            for e in s.edges(o) {
                if e.strength == RefStrength::Strong && claim(e.target, Reached::From(o)) {
                    queue.push_back(e.target);
                }
            }
            done += 1;
            if done.is_multiple_of(65536) {
                progress.advance(65536);
            }
        }
    }
    progress.finish();
}

/// [`retention_roots`] in the order paths should start from them, and where the second layer
/// begins: first every object with a root that lasts (a static's class, a JNI global, a
/// thread, a class the VM holds), then objects only a running frame holds
/// ([`hprof::RootKind::held_by_frame`]). Native code that happens to hold a static map as a
/// JNI local while the dump is taken would otherwise be named its holder.
pub fn path_starts(s: &Snapshot) -> (Vec<ObjIdx>, usize) {
    let n = s.object_count();
    let (mut rooted, mut lasting) = (ObjSet::new(n), ObjSet::new(n));
    for r in &s.roots {
        rooted.insert(r.object);
        if !r.kind.held_by_frame() {
            lasting.insert(r.object);
        }
    }
    let (mut first, frames): (Vec<ObjIdx>, Vec<ObjIdx>) =
        retention_roots(s).into_iter().partition(|&o| lasting.contains(o) || !rooted.contains(o));
    let split = first.len();
    first.extend(frames);
    (first, split)
}

/// Numbering of the strong graph the dominator tree is built on: node 0 is a super-root above
/// every GC root, node `i + 1` is object `i`. Every conversion goes through here.
pub mod node {
    use heap::ObjIdx;

    /// The super-root.
    pub const SUPER_ROOT: usize = 0;

    /// The node of object `o`.
    #[inline]
    pub fn of(o: ObjIdx) -> usize {
        o.index() + 1
    }

    /// The node of `o`, or the super-root for `None` (the top of the tree).
    #[inline]
    pub fn of_parent(o: Option<ObjIdx>) -> usize {
        o.map_or(SUPER_ROOT, of)
    }

    /// The object of node `v`; `None` for the super-root.
    #[inline]
    pub fn object(v: usize) -> Option<ObjIdx> {
        v.checked_sub(1).map(|i| ObjIdx(i as u64))
    }
}

/// The dominator tree of a snapshot's strong graph, with every object's retained size.
pub struct Retention {
    dom: Dominators,
    /// Retained bytes per graph node (node `i + 1` is object `i`; node 0 the super-root).
    retained: graph::Ints,
}

impl Retention {
    /// Computes dominators and retained sizes in one pass over the dominator tree.
    pub fn build(s: &Snapshot, progress: &dyn Progress) -> Retention {
        let g = StrongGraph::for_search(s);
        let dom = graph::dominators(&g, 0, progress);
        progress.start("retained sizes", 1);
        let own = dom.own_weights(|v| node::object(v).map_or(0, |o| s.shallow_bytes(o)), s.placement());
        // The sizes were read in order; the sums read nothing of the snapshot, and the sizes'
        // pages beside the sums made the peak (60 MB of a Tomcat dump's 30 M objects).
        s.release_columns();
        let retained = dom.sum_subtrees(own, s.placement());
        progress.finish();
        Retention { dom, retained }
    }

    /// Bytes freed if `o` became unreachable (0 when `o` is not strongly live).
    pub fn retained_bytes(&self, o: ObjIdx) -> u64 {
        self.retained.get(node::of(o))
    }

    /// Bytes of all strongly live objects.
    pub fn live_bytes(&self) -> u64 {
        self.retained.get(0)
    }

    /// Number of strongly live objects.
    pub fn live_count(&self) -> u64 {
        self.dom.reached_count() as u64 - 1
    }

    /// True when a chain of strong references leads from a GC root to `o`.
    pub fn is_live(&self, o: ObjIdx) -> bool {
        self.dom.is_reachable(node::of(o))
    }

    /// The object every root path to `o` passes through last; `None` when only the
    /// super-root dominates it (several roots or a root itself) or it is not live.
    pub fn immediate_dominator(&self, o: ObjIdx) -> Option<ObjIdx> {
        match self.dom.immediate_dominator(node::of(o)) {
            Some(0) | None => None,
            Some(d) => node::object(d),
        }
    }

    /// True when every strong root path to `b` passes through `a`.
    pub fn dominates(&self, a: ObjIdx, b: ObjIdx) -> bool {
        self.dom.dominates(node::of(a), node::of(b))
    }

    /// The objects `parent` immediately dominates (the top level of the tree for `None`),
    /// biggest retained size first.
    pub fn children(&self, parent: Option<ObjIdx>) -> Vec<ObjIdx> {
        self.biggest_children(parent, usize::MAX).0
    }

    /// The `n` biggest of the objects `parent` immediately dominates, biggest first (ties in
    /// object order), and how many it dominates: the `n` alone are kept, as the top level of
    /// a heap's tree can be millions (4.6 M objects of an H2 dump's 33.9 M, 37 MB as a list).
    pub fn biggest_children(&self, parent: Option<ObjIdx>, n: usize) -> (Vec<ObjIdx>, usize) {
        let p = node::of_parent(parent);
        self.biggest_nodes(self.dom.immediate_dominators().filter(|&(_, d)| d == p).map(|(v, _)| v), n)
    }

    /// The objects of the `n` graph nodes of `nodes` with the biggest retained sizes, biggest
    /// first (ties in node order), and how many `nodes` there were; only `n` are held.
    fn biggest_nodes(&self, nodes: impl Iterator<Item = usize>, n: usize) -> (Vec<ObjIdx>, usize) {
        let mut kept = std::collections::BinaryHeap::new();
        let mut total = 0;
        for v in nodes {
            total += 1;
            // The smallest on top, the later node first among equals.
            kept.push(std::cmp::Reverse((self.retained.get(v), std::cmp::Reverse(v))));
            if kept.len() > n {
                kept.pop();
            }
        }
        let mut out: Vec<(u64, usize)> =
            kept.into_iter().map(|std::cmp::Reverse((r, std::cmp::Reverse(v)))| (r, v)).collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        (out.into_iter().filter_map(|(_, v)| node::object(v)).collect(), total)
    }

    /// The `n` objects of `objects` with the biggest retained sizes, biggest first (ties in
    /// object order): a selection, then a sort of the `n` alone.
    pub fn biggest_first(&self, mut objects: Vec<ObjIdx>, n: usize) -> Vec<ObjIdx> {
        let order = |a: &ObjIdx, b: &ObjIdx| self.retained_bytes(*b).cmp(&self.retained_bytes(*a)).then(a.cmp(b));
        if n < objects.len() {
            objects.select_nth_unstable_by(n, order);
            objects.truncate(n);
        }
        objects.sort_unstable_by(order);
        objects
    }

    /// The dominator tree's children lists in graph numbering (node 0 is the super-root, node
    /// `i + 1` object `i`), built on demand: 10 bytes per object.
    pub fn tree_children(&self) -> graph::Csr {
        self.dom.children()
    }

    /// How many objects each object immediately dominates (one pass over the tree).
    pub fn child_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.retained.len() - 1];
        for d in self.dom.immediate_dominators().filter_map(|(_, d)| node::object(d)) {
            counts[d.index()] = counts[d.index()].saturating_add(1);
        }
        counts
    }

    /// How many objects each of `objects` immediately dominates, in their order (one pass over
    /// the tree, counting for these alone).
    pub fn child_counts_of(&self, objects: &[ObjIdx]) -> Vec<u64> {
        let at: std::collections::HashMap<usize, usize> =
            objects.iter().enumerate().map(|(i, &o)| (node::of(o), i)).collect();
        let mut counts = vec![0u64; objects.len()];
        for (_, d) in self.dom.immediate_dominators() {
            if let Some(&i) = at.get(&d) {
                counts[i] += 1;
            }
        }
        counts
    }

    /// The `n` objects with the biggest retained sizes anywhere in the tree.
    pub fn top(&self, n: usize) -> Vec<ObjIdx> {
        self.biggest_nodes(self.dom.immediate_dominators().map(|(v, _)| v), n).0
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.dom.heap_bytes() + self.retained.heap_bytes()
    }
}
