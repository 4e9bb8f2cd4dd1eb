//! Exact dominators by the Semi-NCA algorithm, in little memory.
//!
//! Reference: L. Georgiadis, R. E. Tarjan, R. F. Werneck, "Finding Dominators in Practice",
//! Journal of Graph Algorithms and Applications 10(1), 2006 (algorithm SNCA). Semidominators
//! are computed as in Lengauer–Tarjan, with path compression but without balanced linking;
//! immediate dominators then come from a nearest-common-ancestor walk up the DFS tree.
//!
//! Memory is what limits the heaps that open, so each phase holds only what it reads:
//!
//! - The depth-first search keeps one bit per node. The preorder, the DFS parents and the
//!   edges that are not tree edges go to temporary files as they are found; then the graph
//!   itself is released ([`Graph::release`]).
//! - A tree edge is the only predecessor most heap objects have, and it is the parent, so
//!   only the other edges are grouped by target: sorted in place, one index each.
//! - SNCA needs only the minimum semidominator *value* on a forest path, never the vertex,
//!   so one array holds both the labels and the semidominators; a node's final
//!   semidominator is kept in the first slot of its predecessor group, which it no longer
//!   reads (a node without a group has its parent as semidominator and immediate dominator).
//! - The DFS parents are read from their file, in sequence, while the forest is built, and
//!   become the array the immediate dominators are found in only once the forest is gone. The
//!   peak is two indices per node (forest link, label) plus one per non-tree edge: 8 bytes
//!   per node and 4 per such edge while the graph has fewer than 2^32 - 2 nodes, twice that
//!   beyond.
//! - No phase after it holds three arrays of a value per node at once: the preorder, read in
//!   sequence, leaves memory behind the reader ([`Ints::release_range`]).
//!
//! Nothing recurses: heap graphs have reference chains millions deep. The depth-first search
//! keeps an explicit stack; path compression collects its path on a stack and applies it
//! root-first.

use rayon::slice::ParallelSliceMut;

use crate::idx::Idx;
use crate::packed::{Packed, PackedGraph};
use crate::spill::{scatter, Spill, SCATTER_RANGE};
use crate::{BitSet, Column, Csr, Graph, Ints, Placement};

/// The immediate dominator of every node reachable from the root.
#[derive(Debug, Clone)]
pub struct Dominators {
    root: usize,
    /// Immediate dominator plus one per node; 0 for nodes the root does not reach, the root
    /// itself (plus one) for the root.
    idom: Ints,
    /// The reached nodes in DFS preorder.
    order: Ints,
    /// Out of core only: entry `i + 1` the preorder position, plus one, of the immediate
    /// dominator of the node at position `i` (the array Semi-NCA leaves, kept as it is), in a
    /// temporary file. Sums over the tree then run in preorder, which reads it and `order` in
    /// sequence, not `idom` at random.
    idom_pre: Option<Ints>,
}

impl PartialEq for Dominators {
    /// The same tree, however it is held.
    fn eq(&self, other: &Dominators) -> bool {
        (self.root, &self.idom, &self.order) == (other.root, &other.idom, &other.order)
    }
}

impl Eq for Dominators {}

/// Computes the dominator tree of `g` from `root`, reporting progress.
pub fn dominators(g: &impl Graph, root: usize, progress: &dyn crate::Progress) -> Dominators {
    // 32-bit indices while preorder numbers fit them; bigger graphs take the 64-bit path.
    if g.node_count() < u32::MAX as usize - 1 {
        compute::<u32>(g, root, progress)
    } else {
        compute::<u64>(g, root, progress)
    }
}

fn compute<I: Idx>(g: &impl Graph, root: usize, progress: &dyn crate::Progress) -> Dominators {
    let n = g.node_count();
    let place = g.placement();
    // Preorder numbers start at 1 so that 0 can mean "none" in `parent` and `ancestor`.
    // Out of core, the search reads every node's successors once, in an order far from the
    // nodes': from a copy packed small enough to stay in memory, not the graph's own.
    let Search { mut vertex, parent: parents, nontree } = if place.files {
        let packed = PackedGraph { packed: Packed::of(g, place.dir.as_deref(), progress), g };
        g.release();
        search::<I>(&packed, root, &place, progress)
    } else {
        // The graph's other columns (an object's class and size) wait on disk meanwhile: the
        // search reads the references alone. A heap's 35.7 M objects kept 142 MB of them
        // resident through it.
        g.release();
        search::<I>(g, root, &place, progress)
    };
    g.release();
    let reached = vertex.len();
    let (mut extra, first, grouped) = group_nontree::<I>(n, reached, &mut vertex, nontree, &place, progress);
    // The loop below reads each vertex's DFS parent once, downwards; the nearest-common-ancestor
    // pass after it, at random. So the parents stay in their file through the loop, its pages
    // released behind the loop, and become a column only once the forest is gone: as a column
    // beside the forest they took 129 of the 507 MiB this phase peaked at on an H2 dump's
    // 33.9 M objects. Entry `i` is the parent of vertex `i + 1`.
    let parents = parents.into_ints(I::MAX, &place);

    progress.start("dominators", reached as u64);
    // forest[v] = [ancestor, best]: v's link in the forest, and the smallest semidominator on
    // v's forest path, both set when v is processed. Side by side, so that out of core one page
    // read serves both. Only processed vertices are read, as the sources of non-tree edges
    // below the vertex are taken without one: the forest starts as zeros in a file that no
    // pass has to write first.
    let mut forest: Column<[I; 2]> = Column::zeros(reached + 1, &place);
    if place.reads_at_random(forest.len() * 2 * I::BYTES) {
        forest.advise_random();
    }
    let mut stack: Vec<I> = Vec::new();
    // Out of core, when the forest does not fit, a second thread asks for the pages the loop
    // is about to read.
    let ahead = match (place.reads_at_random(forest.len() * 2 * I::BYTES), extra.file(), forest.file()) {
        (true, Some(e), Some(f)) => Some(ReadAhead::<I>::new(e, f, reached, extra.len())),
        _ => None,
    };
    let at_w = std::sync::atomic::AtomicUsize::new(reached + 1);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        if let Some(mut ahead) = ahead {
            let (grouped, first, at_w, done) = (&grouped, &first, &at_w, &done);
            scope.spawn(move || ahead.run(grouped, first, at_w, done));
        }
        let mut end = extra.len();
        for w in (2..=reached).rev() {
            // Invariant: every vertex numbered above w is linked to its DFS parent. The parent
            // is a predecessor below w, so unlinked: its value is itself.
            let p = I::of(parents.get(w - 1) as usize);
            let mut s = p;
            if grouped.contains(w) {
                let start = group_start(&first, end);
                // The group's sources ascend. A source below w is not linked yet, so it is its
                // own value, and the group's first is the smallest of those: the search reads
                // the forest (at random, out of core) only for sources above w, and not at all
                // once s is the root's number, the least there is.
                for at in (start..end).rev() {
                    let v = extra[at].get();
                    if v <= w {
                        s = s.min(extra[start]);
                        break;
                    }
                    if s.get() == 1 {
                        break;
                    }
                    s = s.min(eval(v, &mut forest, &mut stack));
                }
                extra[start] = s;
                end = start;
            }
            forest[w] = [p, s];
            if w.is_multiple_of(256) {
                at_w.store(w, std::sync::atomic::Ordering::Relaxed);
            }
            if w.is_multiple_of(4096) {
                progress.advance(4096);
            }
            // Whole pages: a window that starts on a page releases every page it covers.
            if (w - 1).is_multiple_of(RELEASE_EVERY) {
                parents.release_range(w - 1..w - 1 + RELEASE_EVERY);
            }
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    drop((forest, stack));

    // idom by nearest common ancestor: walk up the DFS tree until at or above semi(w).
    let mut idom: Column<I> = Column::zeros(reached + 1, &place);
    for (i, p) in parents.iter().enumerate() {
        idom[i + 1] = I::of(p as usize);
        if i.is_multiple_of(RELEASE_EVERY) {
            parents.release_range(i.saturating_sub(RELEASE_EVERY)..i);
        }
    }
    drop(parents);
    let mut at = 0;
    for w in 1..=reached {
        if !grouped.contains(w) {
            continue; // its parent is its semidominator and immediate dominator
        }
        let semi = extra[at];
        at += 1;
        while at < extra.len() && !first.contains(at) {
            at += 1;
        }
        if w > 1 {
            let mut i = idom[w];
            while i > semi {
                i = idom[i.get()];
            }
            idom[w] = i;
        }
    }
    drop(extra);
    let tree = finish(root, n, vertex, idom, &place);
    progress.finish();
    tree
}

/// The slots of a forest entry: the forest link, and the best semidominator on the path.
const ANCESTOR: usize = 0;
const BEST: usize = 1;

/// Path-compressing evaluation: the smallest semidominator on the forest path from `v` up to
/// (not including) its tree's root, or `v`'s own number when not processed yet.
#[inline]
fn eval<I: Idx>(v: usize, forest: &mut [[I; 2]], stack: &mut Vec<I>) -> I {
    if forest[v][ANCESTOR].get() == 0 {
        return I::of(v);
    }
    let mut x = v;
    while forest[forest[x][ANCESTOR].get()][ANCESTOR].get() != 0 {
        stack.push(I::of(x));
        x = forest[x][ANCESTOR].get();
    }
    // Apply from the vertex nearest the root down to v, as the recursive version unwinds.
    while let Some(y) = stack.pop() {
        let y = y.get();
        let a = forest[y][ANCESTOR].get();
        let [link, best] = forest[a];
        if best < forest[y][BEST] {
            forest[y][BEST] = best;
        }
        forest[y][ANCESTOR] = link;
    }
    forest[v][BEST]
}

/// Where the group of non-tree edges that ends at `end` starts.
#[inline]
fn group_start(first: &BitSet, end: usize) -> usize {
    let mut start = end - 1;
    while !first.contains(start) {
        start -= 1;
    }
    start
}

/// How far ahead of the forest loop, in vertices, [`ReadAhead`] asks for pages: 16 Ki
/// vertices have some 8 Ki non-tree edges, so at most 32 MiB of pages are asked for and not
/// read yet.
const READ_AHEAD: usize = 1 << 14;

/// Out of core, the forest loop reads `forest[v]` for every source `v` above `w` of a non-tree
/// edge into `w`, at random, and waits for the disk each time one is not in memory: a 30 M
/// object heap under a 203 MiB cgroup faulted 117 K pages there, one at a time, in 5.4 s. This
/// walks the same groups [`READ_AHEAD`] vertices ahead of the loop, reading `extra` through a
/// file descriptor of its own, and asks the kernel for those pages (`POSIX_FADV_WILLNEED`),
/// which reads many at once.
struct ReadAhead<I> {
    extra: std::fs::File,
    forest: std::fs::File,
    reached: usize,
    entries: usize,
    /// The block of `extra` last read, and its first entry.
    block: Vec<u8>,
    block_at: usize,
    /// Per forest page, the vertex whose group asked for it last (0: never).
    asked: Vec<usize>,
    _index: std::marker::PhantomData<I>,
}

/// Entries of `extra` read at a time.
const READ_AHEAD_BLOCK: usize = 1 << 14;

impl<I: Idx> ReadAhead<I> {
    fn new(extra: std::fs::File, forest: std::fs::File, reached: usize, entries: usize) -> ReadAhead<I> {
        let pages = ((reached + 1) * 2 * I::BYTES).div_ceil(PAGE);
        ReadAhead {
            extra,
            forest,
            reached,
            entries,
            block: Vec::new(),
            block_at: usize::MAX,
            asked: vec![0; pages],
            _index: std::marker::PhantomData,
        }
    }

    /// Walks the groups as the loop does until the loop is `done`, never more than
    /// [`READ_AHEAD`] vertices before the loop's `at_w`, asking only while ahead of it.
    fn run(
        &mut self,
        grouped: &BitSet,
        first: &BitSet,
        at_w: &std::sync::atomic::AtomicUsize,
        done: &std::sync::atomic::AtomicBool,
    ) {
        use std::sync::atomic::Ordering::Relaxed;
        let mut end = self.entries;
        for w in (2..=self.reached).rev() {
            if !grouped.contains(w) {
                continue;
            }
            let start = group_start(first, end);
            loop {
                if done.load(Relaxed) {
                    return;
                }
                if at_w.load(Relaxed) <= w + READ_AHEAD {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            // Ask only ahead of the loop; behind it, pages asked for would come too late, so
            // the walk only catches up.
            if at_w.load(Relaxed) > w {
                for at in (start..end).rev() {
                    let v = self.entry(at);
                    if v <= w {
                        break;
                    }
                    self.ask(v, w);
                }
            }
            end = start;
        }
    }

    /// Entry `at` of `extra`, read from its file a block at a time.
    fn entry(&mut self, at: usize) -> usize {
        use std::os::unix::fs::FileExt;
        let block = at / READ_AHEAD_BLOCK * READ_AHEAD_BLOCK;
        if block != self.block_at {
            let len = (self.entries - block).min(READ_AHEAD_BLOCK) * I::BYTES;
            self.block.resize(len, 0);
            if self.extra.read_exact_at(&mut self.block, (block * I::BYTES) as u64).is_err() {
                self.block.fill(0); // a read that fails asks for nothing: the loop reads for itself
            }
            self.block_at = block;
        }
        let i = (at - block) * I::BYTES;
        I::from_bytes(&self.block[i..i + I::BYTES]).get()
    }

    /// Asks for the page of `forest[v]` unless the group of a vertex less than
    /// [`READ_AHEAD`] above `w` asked for it.
    fn ask(&mut self, v: usize, w: usize) {
        let page = v * 2 * I::BYTES / PAGE;
        let last = self.asked[page];
        if last != 0 && last <= w + READ_AHEAD {
            return;
        }
        self.asked[page] = w;
        // Advice only: a kernel that refuses it leaves the loop to read for itself.
        let _ = rustix::fs::fadvise(
            &self.forest,
            (page * PAGE) as u64,
            std::num::NonZeroU64::new(PAGE as u64),
            rustix::fs::Advice::WillNeed,
        );
    }
}

/// The page size the kernel reads the forest's file in.
const PAGE: usize = 4096;

/// What the depth-first search leaves in temporary files: the node of each preorder number
/// (from 1), each one's DFS parent's number, and every other edge as (target node, source
/// number).
struct Search<I> {
    vertex: Spill<I>,
    parent: Spill<I>,
    nontree: Spill<I>,
}

/// Iterative DFS from `root`.
///
/// Successors are pushed with the number of the node that pushed them, and a node takes its
/// parent when popped: the most recent pusher is the latest-visited node with an edge to it,
/// which is the parent recursive DFS would give it. Every other edge out of a reached node is
/// met exactly once: when pushing finds its target already visited, or when popping does.
fn search<I: Idx>(g: &impl Graph, root: usize, place: &Placement, progress: &dyn crate::Progress) -> Search<I> {
    let n = g.node_count();
    progress.start("depth-first search", n as u64);
    let mut seen = BitSet::new(n);
    let dir = place.dir.as_deref();
    let mut out = Search { vertex: Spill::new(dir), parent: Spill::new(dir), nontree: Spill::new(dir) };
    let mut succ: Vec<usize> = Vec::new();
    let mut pending: Vec<(I, I)> = Vec::new();
    if root < n {
        pending.push((I::of(root), I::default()));
    }
    let mut num = 0usize;
    let mut late_asked = root >= n;
    loop {
        let Some((node, from)) = pending.pop() else {
            if std::mem::replace(&mut late_asked, true) {
                break;
            }
            // The root's number is 1; its late successors go on its list after the others.
            succ.clear();
            g.late_successors(root, &|v| seen.contains(v), &mut |s| succ.push(s));
            pending.extend(succ.iter().rev().map(|&s| (I::of(s), I::of(1))));
            continue;
        };
        let v = node.get();
        if !seen.insert(v) {
            out.nontree.push(node);
            out.nontree.push(from);
            continue;
        }
        num += 1;
        out.vertex.push(node);
        out.parent.push(from);
        succ.clear();
        g.successors(v, &mut |s| succ.push(s));
        // Reversed, so that successors are visited in their natural order.
        for &s in succ.iter().rev() {
            if seen.contains(s) {
                out.nontree.push(I::of(s));
                out.nontree.push(I::of(num));
            } else {
                pending.push((I::of(s), I::of(num)));
            }
        }
        if num.is_multiple_of(65536) {
            progress.advance(65536);
        }
    }
    progress.finish();
    out
}

/// The non-tree edges grouped by target, in increasing target number: each entry a source
/// number; the set of entries that start a group; and the set of targets that have a group.
fn group_nontree<I: Idx>(
    n: usize,
    reached: usize,
    vertex: &mut Spill<I>,
    nontree: Spill<I>,
    place: &Placement,
    progress: &dyn crate::Progress,
) -> (Column<I>, BitSet, BitSet) {
    let k = nontree.len() / 2;
    progress.start("predecessors", 2 * k as u64);
    let mut pre: Column<I> = Column::zeros(n, &place.for_a_phase(n * I::BYTES));
    if place.reads_at_random(n * I::BYTES) {
        pre.advise_random();
    }
    vertex.for_each(|i, v| pre[v.get()] = I::of(i + 1));
    let mut pairs = nontree.into_column(place);
    for pair in pairs.chunks_exact_mut(2) {
        pair[0] = pre[pair[0].get()];
    }
    drop(pre);
    progress.advance(k as u64);
    pairs.as_chunks_mut::<2>().0.par_sort_unstable();
    let (mut grouped, mut first) = (BitSet::new(reached + 1), BitSet::new(k));
    for j in 0..k {
        let (target, source) = (pairs[2 * j], pairs[2 * j + 1]);
        if grouped.insert(target.get()) {
            first.insert(j);
        }
        pairs[j] = source;
    }
    pairs.truncate(k);
    progress.finish();
    (pairs, first, grouped)
}

/// Converts to node numbering: idom per node, and the reached nodes in DFS preorder.
fn finish<I: Idx>(root: usize, n: usize, vertex: Spill<I>, idom_pre: Column<I>, place: &Placement) -> Dominators {
    // The preorder as the search wrote it, mapped where its values have the width they need.
    let order = vertex.into_ints(n as u64, place);
    // Out of core, unless what sums over the tree in node numbers would read at random fits
    // in half the memory allowed (`idom`, `order` and the sums, three indices per node, and
    // the weights, a heap's shallow sizes at 2 bytes a node), idom goes by ranges and the
    // sums run in preorder. Counting `idom` and `order` only, a 309 MiB limit on Tomcat's
    // 30 M objects summed in node numbers, and took 48.3 s where 203 MiB took 5 s; counting
    // three indices against three quarters of the limit, javac's 6.3 M objects summed in node
    // numbers under 104 MiB and took 30–163 s, where 94 MiB (in preorder) took 0.6 s: the
    // program and the arrays the tree keeps in memory share the limit.
    let spread = place.files && (place.limit == 0 || (3 * I::BYTES + 2) as u64 * n as u64 > place.limit / 2);
    if spread {
        let idom = scatter(n, n as u64, place, SCATTER_RANGE, |set| {
            for (i, node) in order.iter().enumerate() {
                let at = if i == 0 { 0 } else { idom_pre[i + 1].get() - 1 };
                set(node as usize, order.get(at) + 1);
            }
        });
        let idom_pre = idom_pre.into_ints();
        idom_pre.release();
        return Dominators { root, idom, order, idom_pre: Some(idom_pre) };
    }
    // Else in two passes, so that no three arrays of a value per node are resident at once:
    // each dominator's preorder number becomes its node (plus one) in place, `order` read at
    // random; then `order` is read in sequence, its pages released behind, while `idom` is
    // set at random. In one pass the three were 387 MiB of an H2 dump's 33.9 M objects.
    let mut up = idom_pre;
    for i in 2..=order.len() {
        up[i] = I::of(order.get(up[i].get() - 1) as usize + 1);
    }
    order.release();
    let idom = scatter(n, n as u64, place, 0, |set| {
        for (i, node) in order.iter().enumerate() {
            set(node as usize, if i == 0 { node + 1 } else { up[i + 1].get() as u64 });
            if i.is_multiple_of(RELEASE_EVERY) {
                order.release_range(i.saturating_sub(RELEASE_EVERY)..i);
            }
        }
    });
    order.release();
    Dominators { root, idom, order, idom_pre: None }
}

/// Values read in sequence from a file-backed array between releases of the pages behind.
const RELEASE_EVERY: usize = 1 << 16;

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
        self.idom.get(node).checked_sub(1).map(|d| d as usize)
    }

    /// Every reached node but the root with its immediate dominator, in node order: one pass
    /// in the order of the arrays, for work that does not need the tree's order (out of core,
    /// a pass in preorder reads them at random).
    pub fn immediate_dominators(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let root = self.root;
        self.idom.iter().enumerate().filter(move |&(v, d)| d != 0 && v != root).map(|(v, d)| (v, d as usize - 1))
    }

    /// True when the root reaches `node`.
    pub fn is_reachable(&self, node: usize) -> bool {
        node < self.idom.len() && self.idom.get(node) != 0
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
    /// Unreachable nodes get 0. Each sum takes as few bytes as the total of all allows.
    pub fn subtree_sums(&self, weight: impl Fn(usize) -> u64) -> Ints {
        self.subtree_sums_placed(weight, &Placement::memory())
    }

    /// [`Self::subtree_sums`], the sums placed as `place` says.
    pub fn subtree_sums_placed(&self, weight: impl Fn(usize) -> u64, place: &Placement) -> Ints {
        self.sum_subtrees(self.own_weights(weight, place), place)
    }

    /// Every reached node's `weight` (0 for the others), read in node order, as narrow as
    /// their total allows: the first half of [`Self::subtree_sums_placed`], for a caller that
    /// releases what the weights came from before the sums run ([`Self::sum_subtrees`]).
    pub fn own_weights(&self, weight: impl Fn(usize) -> u64, place: &Placement) -> Ints {
        let n = self.idom.len();
        let total: u64 = (0..n).filter(|&v| self.idom.get(v) != 0).map(&weight).sum();
        let mut own = Ints::zeros_placed(n, total, place.files, place.dir.as_deref());
        for v in (0..n).filter(|&v| self.idom.get(v) != 0) {
            own.set(v, weight(v));
        }
        own
    }

    /// Sums the weights `own` ([`Self::own_weights`]) over every dominator subtree.
    pub fn sum_subtrees(&self, own: Ints, place: &Placement) -> Ints {
        if let Some(idom_pre) = &self.idom_pre {
            return self.subtree_sums_in_preorder(idom_pre, own, place);
        }
        let mut sum = own;
        // An immediate dominator is a proper DFS ancestor, so it comes earlier in preorder:
        // in reverse preorder every subtree is complete before its dominator reads it. `order`
        // is read once, in sequence, and its pages released behind: resident beside `idom`
        // and the sums, it was a third value per node at the peak.
        for i in (0..self.order.len()).rev() {
            let v = self.order.get(i) as usize;
            if let Some(d) = self.immediate_dominator(v) {
                sum.set(d, sum.get(d) + sum.get(v));
            }
            if i.is_multiple_of(RELEASE_EVERY) {
                self.order.release_range(i..i + RELEASE_EVERY);
            }
        }
        self.order.release();
        sum
    }

    /// [`Self::sum_subtrees`] out of core: summed by preorder position, which reads `order`
    /// and `idom_pre` in sequence and the sums near each other (a dominator is an ancestor,
    /// often the parent), then moved to node numbering in ranges ([`scatter`]).
    fn subtree_sums_in_preorder(&self, idom_pre: &Ints, own: Ints, place: &Placement) -> Ints {
        let reached = self.order.len();
        // As wide as the weights' total needs (4 bytes for a heap under 4 GiB, not 8), and
        // read one page per fault when it does not fit, as the sums are added up at random.
        let bound: u64 = own.iter().sum();
        let mut sum = Ints::zeros_placed(reached, bound, place.files, place.dir.as_deref());
        if place.reads_at_random(reached * sum.width()) {
            sum.advise_random();
        }
        let mut total = 0;
        for (i, node) in self.order.iter().enumerate() {
            let w = own.get(node as usize);
            sum.set(i, w);
            total += w;
        }
        drop(own);
        for i in (1..reached).rev() {
            let at = idom_pre.get(i + 1) as usize - 1;
            sum.set(at, sum.get(at) + sum.get(i));
        }
        idom_pre.release();
        scatter(self.idom.len(), total, place, SCATTER_RANGE, |set| {
            self.order.iter().enumerate().for_each(|(i, node)| set(node as usize, sum.get(i)));
        })
    }

    /// The dominator tree's children lists, as CSR (built on demand: 8 bytes per node).
    pub fn children(&self) -> Csr {
        let n = self.idom.len();
        let mut count = vec![0u32; n];
        for v in self.preorder() {
            if let Some(d) = self.immediate_dominator(v) {
                count[d] += 1;
            }
        }
        let edges = self.order.len().saturating_sub(1);
        let mut offsets = Ints::with_capacity(n + 1, edges as u64);
        let mut total = 0u64;
        offsets.push(0);
        for &c in &count {
            total += u64::from(c);
            offsets.push(total);
        }
        // Filled from the back of each list in reverse preorder, so each list ends in preorder.
        let mut targets = Ints::zeros(edges, n as u64);
        for i in (0..self.order.len()).rev() {
            let v = self.order.get(i) as usize;
            if let Some(d) = self.immediate_dominator(v) {
                count[d] -= 1;
                targets.set(offsets.get(d) as usize + count[d] as usize, v as u64);
            }
        }
        Csr::from_parts(offsets, targets)
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.idom.heap_bytes() + self.order.heap_bytes()
    }
}

#[cfg(test)]
mod tests;
