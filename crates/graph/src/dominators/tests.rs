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

/// A graph whose algorithms keep their arrays in temporary files, under a memory limit of
/// `.1` bytes (0: none known, every array in a file).
struct InFiles<'a>(&'a crate::Csr, u64);

impl Graph for InFiles<'_> {
    fn node_count(&self) -> usize {
        self.0.node_count()
    }
    fn successors(&self, node: usize, f: &mut dyn FnMut(usize)) {
        Graph::successors(self.0, node, f)
    }
    fn placement(&self) -> Placement {
        Placement { files: true, limit: self.1, ..Placement::default() }
    }
}

/// A graph whose root also has as successors the nodes of `extra` its other successors do
/// not reach: late ones ([`Graph::late_successors`]), or all on its list when `eager`.
struct Extra<'a> {
    g: &'a crate::Csr,
    extra: Vec<usize>,
    eager: Option<Vec<usize>>,
}

impl<'a> Extra<'a> {
    fn new(g: &'a crate::Csr, extra: Vec<usize>, eager: bool) -> Extra<'a> {
        let eager = eager.then(|| {
            let reached = reachable_without(g, 0, None);
            let late = extra.iter().copied().filter(|&v| !reached[v]);
            g.successors(0).map(|s| s as usize).chain(late).collect()
        });
        Extra { g, extra, eager }
    }
}

impl Graph for Extra<'_> {
    fn node_count(&self) -> usize {
        self.g.node_count()
    }
    fn successors(&self, node: usize, f: &mut dyn FnMut(usize)) {
        match (&self.eager, node) {
            (Some(list), 0) => list.iter().for_each(|&s| f(s)),
            _ => Graph::successors(self.g, node, f),
        }
    }
    fn late_successors(&self, root: usize, reached: &dyn Fn(usize) -> bool, f: &mut dyn FnMut(usize)) {
        if self.eager.is_none() && root == 0 {
            self.extra.iter().copied().filter(|&v| !reached(v)).for_each(f);
        }
    }
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
    let pairs: Vec<(usize, usize)> = d.immediate_dominators().collect();
    let expected: Vec<(usize, usize)> = (1..13).map(|v| (v, idom[v].unwrap())).collect();
    assert_eq!(pairs, expected, "node order, the root left out");
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
    assert_eq!(total.get(4), 186, "item1: 4 + (4 + 36 + 4 + 110 + 28)");
    assert_eq!(d.immediate_dominator(3), Some(0), "setting is shared, so neither holder owns it");
    assert_eq!(total.get(2), 20 + 186, "the list owns its items but not the setting");
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
    assert_eq!(sums.get(0), n as u64);
    assert_eq!(sums.get(n - 1), 1);
}

#[test]
fn subtree_sums_are_retained_sizes() {
    // 0 -> 1 -> 2, 0 -> 3 -> 2: node 2 is shared, so 1 retains only itself.
    let g = graph(5, &[(0, 1), (1, 2), (0, 3), (3, 2), (3, 4)]);
    let d = dominators(&g, 0, &NoProgress);
    let sums = d.subtree_sums(|v| [0, 10, 100, 1000, 10000][v]);
    assert_eq!(sums.iter().collect::<Vec<_>>(), vec![11110, 10, 100, 11000, 10000]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn matches_brute_force(n in 1usize..24, raw in proptest::collection::vec((0usize..24, 0usize..24), 0..60)) {
        let edges: Vec<(usize, usize)> = raw.into_iter().map(|(a, b)| (a % n, b % n)).collect();
        check_against_oracle(n, &edges);
        // The 64-bit path, taken by graphs past 2^32 - 2 nodes, gives the same tree, and so do
        // arrays kept in temporary files.
        let g = graph(n, &edges);
        let narrow = compute::<u32>(&g, 0, &NoProgress);
        prop_assert_eq!(&compute::<u64>(&g, 0, &NoProgress), &narrow);
        let in_files = compute::<u32>(&InFiles(&g, 0), 0, &NoProgress);
        prop_assert_eq!(&in_files, &narrow);
        // Sums over the tree out of core run in preorder, and give the same sums.
        let weight = |v: usize| (v as u64 * 37) % 11 + 1;
        let files = Placement { files: true, ..Placement::default() };
        prop_assert_eq!(in_files.subtree_sums_placed(weight, &files), narrow.subtree_sums(weight));
        // Under a limit that a phase's own arrays fit in, they are in memory, and the
        // answers the same.
        let roomy = Placement { files: true, limit: 1 << 30, ..Placement::default() };
        let under_limit = compute::<u32>(&InFiles(&g, roomy.limit), 0, &NoProgress);
        prop_assert_eq!(&under_limit, &narrow);
        prop_assert_eq!(under_limit.subtree_sums_placed(weight, &roomy), narrow.subtree_sums(weight));
    }

    #[test]
    fn late_successors_of_the_root_give_the_tree_of_the_list_they_end(
        n in 2usize..24,
        raw in proptest::collection::vec((0usize..24, 0usize..24), 0..50),
        extra in proptest::collection::vec(1usize..24, 0..8),
    ) {
        let edges: Vec<(usize, usize)> = raw.into_iter().map(|(a, b)| (a % n, b % n)).collect();
        let extra: Vec<usize> = extra.into_iter().map(|v| 1 + v % (n - 1)).collect();
        let g = graph(n, &edges);
        let eager = compute::<u32>(&Extra::new(&g, extra.clone(), true), 0, &NoProgress);
        prop_assert_eq!(&compute::<u32>(&Extra::new(&g, extra, false), 0, &NoProgress), &eager);
    }
}
