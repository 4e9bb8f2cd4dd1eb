//! Retained sizes against the definition, on heaps written by the test kit.

use analysis::{retention_roots, strong_closure, Retention};
use graph::NoProgress;
use heap::{Dump, ObjIdx, Snapshot};
use hprof::RootKind;
use proptest::prelude::*;
use testkit::{HeapBuilder, ObjRef, Ty};

fn snapshot(h: &HeapBuilder) -> Snapshot {
    Snapshot::build(Dump::from_vec(h.build()), &Default::default(), &NoProgress).unwrap()
}

fn bytes(s: &Snapshot, set: &analysis::ObjSet) -> u64 {
    set.iter().map(|o| s.shallow_bytes(o)).sum()
}

/// A heap of `n` nodes with the given edges (`weak` ones through a WeakReference), rooted as listed.
fn random_heap(n: usize, edges: &[(usize, usize, bool)], roots: &[usize]) -> (HeapBuilder, Vec<ObjRef>) {
    let mut h = HeapBuilder::new();
    let reference = h.class("java.lang.ref.Reference", None, &[("referent", Ty::Object)]);
    let weak = h.class("java.lang.ref.WeakReference", Some(reference), &[]);
    let node = h.class("Node", None, &[("a", Ty::Object), ("b", Ty::Object), ("c", Ty::Object), ("pad", Ty::Long)]);
    let objs: Vec<ObjRef> = (0..n).map(|_| h.instance(node)).collect();
    let mut used = vec![0usize; n];
    for &(from, to, is_weak) in edges {
        let slot = ["a", "b", "c"].get(used[from]).copied();
        let Some(slot) = slot else { continue };
        used[from] += 1;
        if is_weak {
            let w = h.instance(weak);
            h.set(w, "referent", objs[to]);
            h.set(objs[from], slot, w);
        } else {
            h.set(objs[from], slot, objs[to]);
        }
    }
    for &r in roots {
        h.root(RootKind::JniGlobal, objs[r]);
    }
    (h, objs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn retained_sizes_match_the_definition(
        n in 1usize..20,
        raw in proptest::collection::vec((0usize..20, 0usize..20, proptest::bool::weighted(0.2)), 0..45),
        roots in proptest::collection::vec(0usize..20, 1..4),
    ) {
        let edges: Vec<_> = raw.into_iter().map(|(a, b, w)| (a % n, b % n, w)).collect();
        let roots: Vec<usize> = roots.into_iter().map(|r| r % n).collect();
        let (h, _) = random_heap(n, &edges, &roots);
        let s = snapshot(&h);
        let r = Retention::build(&s, &NoProgress);
        for o in s.objects() {
            prop_assert_eq!(r.retained_bytes(o), group_oracle(&s, &[o]), "object {:?}", o);
        }
    }
}

#[test]
fn weak_references_do_not_retain() {
    // root -> holder -strong-> a ; holder -> WeakReference -> b ; a -> b.
    let (h, objs) = random_heap(3, &[(0, 1, false), (0, 2, true), (1, 2, false)], &[0]);
    let s = snapshot(&h);
    let r = Retention::build(&s, &NoProgress);
    let [holder, a, b] = [0, 1, 2].map(|i| s.find(objs[i].0).unwrap());
    assert_eq!(r.immediate_dominator(b), Some(a), "the weak path does not count");
    assert_eq!(r.retained_bytes(a), s.shallow_bytes(a) + s.shallow_bytes(b));
    assert!(r.retained_bytes(holder) > r.retained_bytes(a));
}

/// Two rooted caches, each with its own array holding the same ten 24-byte values:
/// returns the heap, both caches and the first cache's array.
fn two_caches() -> (HeapBuilder, [ObjRef; 3]) {
    let mut h = HeapBuilder::new();
    let cache = h.class("Cache", None, &[("items", Ty::Object)]);
    let value = h.class("Value", None, &[("x", Ty::Long)]);
    let values: Vec<_> = (0..10).map(|_| Some(h.instance(value))).collect();
    let (c1, c2) = (h.instance(cache), h.instance(cache));
    let a1 = h.object_array("[LValue;", &values);
    let a2 = h.object_array("[LValue;", &values);
    h.set(c1, "items", a1);
    h.set(c2, "items", a2);
    h.root(RootKind::JniGlobal, c1);
    h.root(RootKind::JniGlobal, c2);
    (h, [c1, c2, a1])
}

#[test]
fn shared_objects_belong_to_no_single_holder() {
    // Two caches hold the same 10 values: each retains only itself.
    let (h, [c1, _, a1]) = two_caches();
    let s = snapshot(&h);
    let r = Retention::build(&s, &NoProgress);
    let c1 = s.find(c1.0).unwrap();
    assert_eq!(r.retained_bytes(c1), s.shallow_bytes(c1) + s.shallow_bytes(s.find(a1.0).unwrap()));
    let top: Vec<_> = r.children(None);
    assert!(top.len() >= 12, "the values hang off the super-root");
}

#[test]
fn statics_of_vm_held_classes_are_roots_and_loaders_retain_their_classes() {
    let mut h = HeapBuilder::new();
    let holder = h.class("com.example.Holder", None, &[]);
    let big = h.primitive_array(Ty::Byte, 1000);
    h.static_ref(holder, "BIG", Some(big));
    // No GC root reaches Holder's mirror: the VM holds the class, so its statics are live.
    let s = snapshot(&h);
    let r = Retention::build(&s, &NoProgress);
    let big = s.find(big.0).unwrap();
    assert!(r.is_live(big));
    let mirror = s.find(h.class_id(holder)).unwrap();
    assert_eq!(r.immediate_dominator(big), Some(mirror));
    assert!(r.retained_bytes(mirror) >= 1016);
}

/// GC closure of a group (or retained size of one object) by its definition: bytes strongly
/// reachable from the roots minus those still reachable when the group is never entered.
fn group_oracle(s: &Snapshot, group: &[ObjIdx]) -> u64 {
    let roots = retention_roots(s);
    let all = strong_closure(s, &roots, None);
    let mut avoid = analysis::ObjSet::new(s.object_count());
    group.iter().for_each(|&o| {
        avoid.insert(o);
    });
    bytes(s, &all) - bytes(s, &strong_closure(s, &roots, Some(&avoid)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn group_gc_closures_match_the_definition(
        n in 1usize..20,
        raw in proptest::collection::vec((0usize..20, 0usize..20, proptest::bool::weighted(0.2)), 0..45),
        roots in proptest::collection::vec(0usize..20, 1..4),
        group in proptest::collection::vec(0usize..20, 1..5),
    ) {
        let edges: Vec<_> = raw.into_iter().map(|(a, b, w)| (a % n, b % n, w)).collect();
        let roots: Vec<usize> = roots.into_iter().map(|r| r % n).collect();
        let (h, objs) = random_heap(n, &edges, &roots);
        let s = snapshot(&h);
        let closures = analysis::Closures::new(&s, &NoProgress);
        let mut g: Vec<ObjIdx> = group.into_iter().map(|i| s.find(objs[i % n].0).unwrap()).collect();
        g.sort();
        g.dedup();
        let sizes = closures.sizes(&g);
        prop_assert_eq!(sizes.retained_bytes, group_oracle(&s, &g));
        prop_assert_eq!(sizes.shallow_bytes, g.iter().map(|&o| s.shallow_bytes(o)).sum::<u64>());
        prop_assert!(sizes.transitive_bytes >= sizes.shallow_bytes);
        if g.len() == 1 {
            let r = Retention::build(&s, &NoProgress);
            prop_assert_eq!(sizes.retained_bytes, r.retained_bytes(g[0]));
        }
    }
}

#[test]
fn group_of_two_caches_retains_what_neither_does_alone() {
    let (h, [c1, c2, _]) = two_caches();
    let s = snapshot(&h);
    let closures = analysis::Closures::new(&s, &NoProgress);
    let (c1, c2) = (s.find(c1.0).unwrap(), s.find(c2.0).unwrap());
    let one = closures.sizes(&[c1]).retained_bytes + closures.sizes(&[c2]).retained_bytes;
    let both = closures.sizes(&[c1, c2]).retained_bytes;
    assert_eq!(both, one + 10 * 24, "the shared values are freed only with both caches");
}

#[test]
fn paths_start_from_a_static_before_a_frame_that_happens_to_hold_the_same_object() {
    // A registry map both a static field and a JNI local hold (native code called with it at
    // dump time, such as an agent's method hook): the local is one step shorter, the static
    // is the holder a user must change.
    let mut h = HeapBuilder::new();
    let thread_class = h.class("java.lang.Thread", None, &[]);
    let map = h.class("java.util.HashMap", None, &[("table", Ty::Object)]);
    let registry = h.class("com.example.Registry", None, &[]);
    h.sticky_class(registry);
    let sessions = h.instance(map);
    let table = h.object_array("[Ljava/lang/Object;", &[None]);
    h.set(sessions, "table", table);
    h.static_ref(registry, "sessions", Some(sessions));
    let thread = h.thread(thread_class, &[("hook", "(Ljava/lang/Object;)V", "Agent.java", 1)]);
    h.frame_root(thread, 0, sessions);
    h.root(RootKind::JniLocal, sessions);
    let s = snapshot(&h);
    let paths = analysis::PathFinder::new(&s, &NoProgress);
    let path = paths.path(s.find(table.0).unwrap()).unwrap();
    assert_eq!(path.root.kind, "system class", "{path:?}");
    assert_eq!(path.steps.len(), 3, "class Registry -> static sessions -> table");
}
