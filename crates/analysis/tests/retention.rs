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

/// GC closure of a live group (or retained size of one live object) by its definition: bytes
/// strongly reachable from the roots minus those still reachable when the group is never
/// entered.
fn group_oracle(s: &Snapshot, group: &[ObjIdx]) -> u64 {
    let roots = retention_roots(s);
    let all = strong_closure(s, &roots, None);
    let mut avoid = analysis::ObjSet::new(s.object_count());
    group.iter().for_each(|&o| {
        avoid.insert(o);
    });
    bytes(s, &all) - bytes(s, &strong_closure(s, &roots, Some(&avoid)))
}

/// [`group_oracle`] for any group: its members that are garbage count too, as themselves.
fn any_group_oracle(s: &Snapshot, group: &[ObjIdx]) -> u64 {
    let all = strong_closure(s, &retention_roots(s), None);
    group_oracle(s, group) + group.iter().filter(|&&o| !all.contains(o)).map(|&o| s.shallow_bytes(o)).sum::<u64>()
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
        prop_assert_eq!(sizes.retained_bytes, any_group_oracle(&s, &g));
        prop_assert_eq!(sizes.shallow_bytes, g.iter().map(|&o| s.shallow_bytes(o)).sum::<u64>());
        prop_assert!(sizes.transitive_bytes >= sizes.shallow_bytes);
        if g.len() == 1 && closures.is_live(g[0]) {
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

/// A random heap with roots of three kinds and two threads with frames, the first thread
/// named, read back: `edges` as for [`random_heap`], `frames` (thread, depth, object) locals,
/// `globals` JNI globals, and `holder` the object a static field of a system class holds;
/// indices are taken modulo `n`, and depths are cut to the thread's stack.
fn heap_with_threads(
    n: usize,
    edges: &[(usize, usize, bool)],
    globals: &[usize],
    frames: &[(usize, u32, usize)],
    holder: usize,
) -> Snapshot {
    let edges: Vec<_> = edges.iter().map(|&(a, b, w)| (a % n, b % n, w)).collect();
    let globals: Vec<usize> = globals.iter().map(|r| r % n).collect();
    let (mut h, objs) = random_heap(n, &edges, &globals);
    let thread_class = h.class("java.lang.Thread", None, &[("name", Ty::Object)]);
    let stack = [("A", "run", "A.java", 1), ("B", "call", "B.java", 2), ("C", "work", "C.java", 3)];
    let threads = [h.thread(thread_class, &stack), h.thread(thread_class, &stack[1..])];
    let name = h.string_object("http-nio-8080-exec-3");
    h.set(threads[0].object, "name", name);
    for &(t, depth, o) in frames {
        h.frame_root(threads[t % 2], depth.min(if t % 2 == 0 { 2 } else { 1 }), objs[o % n]);
    }
    let registry = h.class("com.example.Registry", None, &[]);
    h.sticky_class(registry);
    h.static_ref(registry, "HOLDER", Some(objs[holder % n]));
    snapshot(&h)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every kind, thread, frame and static row of `roots` against the definitions: the GC
    /// closure of the group's root objects, and the strong closure from them.
    #[test]
    fn roots_report_matches_the_definitions(
        n in 1usize..16,
        raw in proptest::collection::vec((0usize..16, 0usize..16, proptest::bool::weighted(0.2)), 0..36),
        globals in proptest::collection::vec(0usize..16, 0..3),
        frames in proptest::collection::vec((0usize..2, 0u32..3, 0usize..16), 0..6),
        holder in 0usize..16,
    ) {
        let s = heap_with_threads(n, &raw, &globals, &frames, holder);
        let r = Retention::build(&s, &NoProgress);
        let report = analysis::roots_report(&s, &r, 0, &NoProgress);
        let check = |what: &str, group: &[ObjIdx], bytes: &report::RootBytes| -> Result<(), TestCaseError> {
            let mut group = group.to_vec();
            group.sort();
            group.dedup();
            prop_assert_eq!(bytes.retained_bytes, group_oracle(&s, &group), "retained by {}", what);
            let reach = strong_closure(&s, &group, None);
            prop_assert_eq!(bytes.reachable_bytes, self::bytes(&s, &reach), "reachable from {}", what);
            Ok(())
        };
        let rooted: Vec<ObjIdx> = s.roots.iter().map(|x| x.object).collect();
        for row in &report.kinds {
            let group: Vec<ObjIdx> = if row.kind == analysis::VM_HELD_CLASS {
                retention_roots(&s).into_iter().filter(|o| !rooted.contains(o)).collect()
            } else {
                s.roots.iter().filter(|x| x.kind.name() == row.kind).map(|x| x.object).collect()
            };
            check(&row.kind, &group, &row.bytes)?;
        }
        prop_assert_eq!(report.threads.len(), 2);
        for row in &report.threads {
            let t = s.threads.iter().position(|t| t.serial == row.serial).unwrap();
            let held = |depth: Option<u32>| -> Vec<ObjIdx> {
                s.roots
                    .iter()
                    .filter(|x| match x.detail {
                        heap::RootDetail::Thread { thread, frame } => thread == t && (depth.is_none() || frame == depth),
                        _ => false,
                    })
                    .map(|x| x.object)
                    .collect()
            };
            let mut all = held(None);
            all.extend(s.threads[t].object);
            check(&format!("thread {t}"), &all, &row.bytes)?;
            for f in &row.frames {
                check(&format!("thread {t} frame {}", f.depth), &held(Some(f.depth)), &f.bytes)?;
            }
            let name = if t == 0 { Some("http-nio-8080-exec-3") } else { None };
            prop_assert_eq!(row.name.as_deref(), name);
        }
        prop_assert_eq!(report.statics.len(), 1);
        let target = s.find(report.statics[0].id.0).unwrap();
        check("the static", &[target], &report.statics[0].bytes)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Every group of every classifier, alone and nested: retained ≥ shallow and deep ≥
    /// retained, whether its members are live, weakly reachable or garbage.
    #[test]
    fn group_sizes_are_ordered_for_every_classifier(
        n in 1usize..16,
        raw in proptest::collection::vec((0usize..16, 0usize..16, proptest::bool::weighted(0.3)), 0..36),
        globals in proptest::collection::vec(0usize..16, 0..3),
        frames in proptest::collection::vec((0usize..2, 0u32..2, 0usize..16), 0..4),
        holder in 0usize..16,
    ) {
        use analysis::Classifier as C;
        let s = heap_with_threads(n, &raw, &globals, &frames, holder);
        let closures = analysis::Closures::new(&s, &NoProgress);
        let all = [C::Class, C::Package, C::Loader, C::Hierarchy, C::DirectlyRooted, C::IndirectlyRooted];
        let mut ways: Vec<Vec<C>> = all.iter().map(|&c| vec![c]).collect();
        ways.extend(all.iter().map(|&c| vec![C::IndirectlyRooted, c]));
        for by in &ways {
            let tree = analysis::GroupTree::build(&s, by);
            let mut stack = vec![analysis::GroupTree::ROOT];
            while let Some(i) = stack.pop() {
                let members = tree.members(i);
                let sizes = closures.sizes(&members);
                prop_assert_eq!(sizes.shallow_bytes, tree.row(i).shallow_bytes);
                prop_assert!(sizes.retained_bytes >= sizes.shallow_bytes, "{:?} node {}: {:?}", by, tree.row(i).key, sizes);
                prop_assert!(sizes.transitive_bytes >= sizes.retained_bytes, "{:?} node {}: {:?}", by, tree.row(i).key, sizes);
                stack.extend(tree.children(i));
            }
            let shown = analysis::classify(&s, &closures, by, 0);
            let mut nodes = vec![&shown];
            while let Some(g) = nodes.pop() {
                let (deep, retained) = (g.deep_bytes.unwrap(), g.retained_bytes.unwrap());
                prop_assert!(retained >= g.shallow_bytes && deep >= retained, "{:?} {}: {:?}", by, g.key, g);
                nodes.extend(g.children.iter());
            }
        }
    }
}

/// More root groups than one sweep's masks hold (150 threads, each with a frame: over 300
/// groups, two sweeps of four words): every thread's and frame's bytes still match the
/// definitions.
#[test]
fn roots_report_of_many_threads_matches_the_definitions() {
    let (mut h, objs) = random_heap(40, &(0..39).map(|i| (i, i + 1, false)).collect::<Vec<_>>(), &[]);
    let thread_class = h.class("java.lang.Thread", None, &[]);
    for t in 0..150 {
        let thread = h.thread(thread_class, &[("A", "run", "A.java", 1)]);
        h.frame_root(thread, 0, objs[t % 40]);
    }
    let s = snapshot(&h);
    let r = Retention::build(&s, &NoProgress);
    let report = analysis::roots_report(&s, &r, 0, &NoProgress);
    assert_eq!(report.threads.len(), 150);
    for row in &report.threads {
        let t = s.threads.iter().position(|t| t.serial == row.serial).unwrap();
        let mut held: Vec<ObjIdx> = s
            .roots
            .iter()
            .filter(|x| matches!(x.detail, heap::RootDetail::Thread { thread, .. } if thread == t))
            .map(|x| x.object)
            .collect();
        held.sort();
        held.dedup();
        assert_eq!(row.bytes.reachable_bytes, bytes(&s, &strong_closure(&s, &held, None)), "thread {t}");
        assert_eq!(row.bytes.retained_bytes, group_oracle(&s, &held), "thread {t}");
        let frame = s.roots.iter().filter(|x| x.detail == heap::RootDetail::Thread { thread: t, frame: Some(0) });
        let frame: Vec<ObjIdx> = frame.map(|x| x.object).collect();
        assert_eq!(row.frames[0].bytes.reachable_bytes, bytes(&s, &strong_closure(&s, &frame, None)), "frame of {t}");
    }
}
