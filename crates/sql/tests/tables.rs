//! Columns that need the whole graph, against their definitions on random heaps written by the
//! test kit: a class's retained bytes by dominance as removal (an object dominates another when
//! removing it leaves the other unreachable), and depths by a breadth-first search of the
//! references as the test wrote them.

use std::path::PathBuf;
use std::sync::Arc;

use analysis::{retention_roots, strong_closure, ObjSet, Retention};
use graph::NoProgress;
use heap::{Dump, ObjIdx, Snapshot};
use hprof::RootKind;
use proptest::prelude::*;
use testkit::{HeapBuilder, Ty};

/// The references a heap of `n` objects keeps of `edges`: three fields per object, the first
/// three references from each.
fn kept(n: usize, edges: &[(usize, usize)]) -> Vec<(usize, usize, &'static str)> {
    let mut used = vec![0usize; n];
    let mut out = Vec::new();
    for &(from, to) in edges {
        let Some(slot) = ["x", "y", "z"].get(used[from]).copied() else { continue };
        used[from] += 1;
        out.push((from, to, slot));
    }
    out
}

/// A snapshot of `n` objects of classes `A` and `B` (a subclass of A), with those references
/// and roots, and each object's address.
fn heap(n: usize, b: &[bool], edges: &[(usize, usize, &str)], roots: &[usize]) -> (Snapshot, Vec<u64>) {
    let mut h = HeapBuilder::new();
    let a_class = h.class("A", None, &[("x", Ty::Object), ("y", Ty::Object), ("z", Ty::Object), ("pad", Ty::Long)]);
    let b_class = h.class("B", Some(a_class), &[]);
    let objs: Vec<_> = (0..n).map(|i| h.instance(if b[i] { b_class } else { a_class })).collect();
    for &(from, to, slot) in edges {
        h.set(objs[from], slot, objs[to]);
    }
    for &r in roots {
        h.root(RootKind::JniGlobal, objs[r]);
    }
    let s = Snapshot::build(Dump::from_vec(h.build()), &Default::default(), &NoProgress).unwrap();
    (s, objs.iter().map(|o| o.0).collect())
}

/// The rows of `query` on a session over `s`, each value as JSON text.
fn rows(s: Snapshot, query: &str) -> Vec<Vec<String>> {
    let heap = sql::Heap::new(PathBuf::from("random.hprof"), s, Arc::new(NoProgress));
    let session = sql::Session::new(vec![heap], sql::Settings::default()).unwrap();
    let answer = session.query(query).unwrap().to_json().unwrap();
    answer.rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect()).collect()
}

/// True when every strong path from the roots to `o` goes through `d`.
fn dominates(s: &Snapshot, d: ObjIdx, o: ObjIdx) -> bool {
    let roots: Vec<ObjIdx> = retention_roots(s).into_iter().filter(|&r| r != d).collect();
    let mut avoid = ObjSet::new(s.object_count());
    avoid.insert(d);
    d != o && !strong_closure(s, &roots, Some(&avoid)).contains(o)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn class_retained_sizes_and_depths_match_their_definitions(
        n in 1usize..16,
        b in proptest::collection::vec(proptest::bool::ANY, 16),
        raw in proptest::collection::vec((0usize..16, 0usize..16), 0..36),
        roots in proptest::collection::vec(0usize..16, 1..3),
    ) {
        let raw: Vec<_> = raw.into_iter().map(|(x, y)| (x % n, y % n)).collect();
        let edges = kept(n, &raw);
        let roots: Vec<usize> = roots.into_iter().map(|r| r % n).collect();
        let (s, _) = heap(n, &b, &edges, &roots);
        let r = Retention::build(&s, &NoProgress);
        let live = strong_closure(&s, &retention_roots(&s), None);
        for class in ["A", "B"] {
            // A class's retained bytes: those of its live instances no other instance dominates.
            let c = s.classes().find(class).unwrap();
            let of = |o: ObjIdx| s.class_of(o) == c;
            let expected: u64 = s
                .objects()
                .filter(|&o| of(o) && live.contains(o))
                .filter(|&o| !s.objects().any(|d| of(d) && dominates(&s, d, o)))
                .map(|o| r.retained_bytes(o))
                .sum();
            let q = format!("SELECT retained_bytes FROM classes WHERE name = '{class}'");
            prop_assert_eq!(rows(heap(n, &b, &edges, &roots).0, &q), vec![vec![expected.to_string()]]);
        }
        // Depths: references from the nearest root, by a breadth-first search of the edges.
        let mut depth: Vec<Option<u32>> = vec![None; n];
        let mut frontier = roots.clone();
        frontier.iter().for_each(|&x| depth[x] = Some(0));
        let mut level = 0;
        while !frontier.is_empty() {
            level += 1;
            let mut next = Vec::new();
            for &(from, to, _) in &edges {
                if frontier.contains(&from) && depth[to].is_none() {
                    depth[to] = Some(level);
                    next.push(to);
                }
            }
            frontier = next;
        }
        let (s, addresses) = heap(n, &b, &edges, &roots);
        let mut expected: Vec<Vec<String>> = (0..n)
            .map(|i| vec![format!("\"0x{:x}\"", addresses[i]), depth[i].map_or("null".to_owned(), |d| d.to_string())])
            .collect();
        expected.sort_by_key(|r| u64::from_str_radix(r[0].trim_matches('"').trim_start_matches("0x"), 16).unwrap());
        prop_assert_eq!(rows(s, "SELECT id, depth FROM objects WHERE class IN ('A', 'B') ORDER BY id"), expected);
    }
}
