//! A walk driven as HotSpot's `FollowReferences` drives it (a visit stack; an object's
//! class reference, then its fields, each referee pushed until visited) over small graphs.
use super::chains::*;
use super::holders::*;
use super::*;
use crate::classes::CLASS_BIT;
use crate::watch::Watch;

/// Class ids of the test graphs.
const REGISTRY: u32 = 0;
const MAP: u32 = 1;
const TABLE: u32 = 2;
const NODE: u32 = 3;
const SESSION: u32 = 4;
const CLASS: u32 = 5;
const OTHER: u32 = 6;

fn names() -> Vec<String> {
    ["Registry", "Map", "Map$Node[]", "Map$Node", "Session", "java.lang.Class", "Other"].map(String::from).to_vec()
}

#[derive(Default)]
struct Heap {
    class: Vec<u32>,
    size: Vec<i64>,
    length: Vec<i32>,
    fields: Vec<Vec<usize>>,
    tags: Vec<Jlong>,
    /// Static fields: class, object.
    statics: Vec<(u32, usize)>,
    /// Thread roots.
    threads: Vec<usize>,
    /// Local variables of threads, reported after the threads.
    locals: Vec<usize>,
}

impl Heap {
    fn object(&mut self, class: u32, size: i64, length: i32) -> usize {
        self.class.push(class);
        self.size.push(size);
        self.length.push(length);
        self.fields.push(Vec::new());
        self.tags.push(0);
        self.class.len() - 1
    }

    fn refer(&mut self, from: usize, to: usize) {
        self.fields[from].push(to);
    }

    /// A map of `n` entries in a table of `slots`, each entry's node holding what `value`
    /// makes; returns the map.
    fn map(&mut self, slots: usize, n: usize, mut value: impl FnMut(&mut Heap) -> usize) -> usize {
        let map = self.object(MAP, 48, -1);
        let table = self.object(TABLE, 16 + 4 * slots as i64, slots as i32);
        self.refer(map, table);
        for _ in 0..n {
            let node = self.object(NODE, 32, -1);
            let value = value(self);
            self.refer(table, node);
            self.refer(node, value);
        }
        map
    }

    /// A registry (static) holding a map of `n` sessions, each holding the registry back,
    /// and, reached first from a thread, a map of `other` nodes nothing watched is in.
    fn registry(n: usize, other: usize) -> Heap {
        let mut h = Heap::default();
        let unrelated = h.map(other, other, |h| h.object(OTHER, 16, -1));
        h.threads.push(unrelated);
        let registry = h.object(REGISTRY, 16, -1);
        let map = h.map(65_536, n, |h| {
            let session = h.object(SESSION, 24, -1);
            h.refer(session, registry);
            session
        });
        h.refer(registry, map);
        h.statics.push((REGISTRY, registry));
        h
    }

    /// Walks the heap into `holders` as the agent's walk does, with sessions watched.
    fn walk(&mut self, holders: &mut Holders, watch: &Watch) -> Vec<u32> {
        self.walk_until(holders, watch, usize::MAX).expect("a walk without a deadline ends")
    }

    /// [`Heap::walk`], stopped as at a deadline once `objects` objects were visited: `None`
    /// when it stopped.
    fn walk_until(&mut self, holders: &mut Holders, watch: &Watch, objects: usize) -> Option<Vec<u32>> {
        let watched_classes: Vec<bool> = names().iter().map(|n| watch.watches(n)).collect();
        holders.begin_walk();
        let object_arrays: Vec<bool> = names().iter().map(|n| n.ends_with("[]")).collect();
        let mut state = State {
            clock: Clock::new(Duration::from_secs(3600)),
            object_arrays: &object_arrays,
            array_sizes: [0; SIZE_BUCKETS],
            holders,
            watched_classes: &watched_classes,
            watch: Some(watch),
            seen_samples: Vec::new(),
            expected: Vec::new(),
            nodes: Vec::new(),
            edges: FxHashMap::default(),
            referent_index: None,
            panic_for_test: false,
            fork: None,
        };
        let class_tag = |c: u32| CLASS_BIT | Jlong::from(c);
        let mut stack = Vec::new();
        let mut marked = vec![false; self.class.len()];
        for &(c, o) in &self.statics {
            let r = self.reference(reference::STATIC_FIELD, CLASS, o);
            let mut mirror = class_tag(c);
            if visit(&mut state, &r, Some(&mut self.tags[o]), Some(&mut mirror)) != 0 {
                stack.push(o);
            }
        }
        for &o in &self.threads {
            let r = self.reference(26, 0, o);
            if visit(&mut state, &r, Some(&mut self.tags[o]), None) != 0 {
                stack.push(o);
            }
        }
        for &o in &self.locals {
            let r = self.reference(24, 0, o);
            if visit(&mut state, &r, Some(&mut self.tags[o]), None) != 0 {
                stack.push(o);
            }
        }
        let mut visited = 0;
        while let Some(o) = stack.pop() {
            if std::mem::replace(&mut marked[o], true) {
                continue;
            }
            visited += 1;
            if visited > objects {
                state.holders.stopped_walk();
                return None;
            }
            let r = Reference {
                kind: reference::CLASS,
                index: -1,
                class_tag: class_tag(CLASS),
                referrer_class_tag: class_tag(self.class[o]),
                size: 0,
                length: -1,
                itself: false,
            };
            let mut mirror = class_tag(self.class[o]);
            visit(&mut state, &r, Some(&mut mirror), None);
            for i in 0..self.fields[o].len() {
                let to = self.fields[o][i];
                let kind = if self.length[o] >= 0 { reference::ARRAY_ELEMENT } else { reference::FIELD };
                let r = self.reference(kind, self.class[o], to);
                let (mut tag, mut referrer) = (self.tags[to], self.tags[o]);
                let followed = visit(&mut state, &r, Some(&mut tag), Some(&mut referrer));
                self.tags[to] = tag;
                // The referrer's new tag wins where both are the same object.
                self.tags[o] = referrer;
                if followed != 0 && !marked[to] {
                    stack.push(to);
                }
            }
        }
        let objects: Vec<u64> = state.nodes.iter().map(|n| n.count.max(n.prim_count)).collect();
        state.holders.finish_walk(&state.edges, &objects, state.watched_classes);
        Some(state.seen_samples)
    }

    /// Walks the heap as a walk filtered to `class` reports it: only the references to its
    /// instances, in the same order as [`Heap::walk`] (every object is still visited).
    fn walk_filtered(&mut self, holders: &mut Holders, class: u32) {
        holders.begin_filtered();
        let object_arrays: Vec<bool> = names().iter().map(|n| n.ends_with("[]")).collect();
        let class_tag = |c: u32| CLASS_BIT | Jlong::from(c);
        let mut report = |heap: &mut Heap, kind: u32, from: Option<(usize, u32)>, to: usize| {
            if heap.class[to] != class {
                return;
            }
            let mut tag = heap.tags[to];
            let referrer_class = match from {
                Some((o, c)) if o != usize::MAX => class_tag(c),
                Some(_) => class_tag(CLASS),
                None => 0,
            };
            let r = Reference { referrer_class_tag: referrer_class, ..heap.reference(kind, class, to) };
            match from {
                Some((o, _)) if o != usize::MAX => {
                    let mut referrer = heap.tags[o];
                    filtered::visit_for_test(holders, &object_arrays, &r, &mut tag, Some(&mut referrer));
                    heap.tags[o] = referrer;
                }
                Some((_, mirror)) => {
                    let mut referrer = class_tag(mirror);
                    filtered::visit_for_test(holders, &object_arrays, &r, &mut tag, Some(&mut referrer));
                }
                None => filtered::visit_for_test(holders, &object_arrays, &r, &mut tag, None),
            }
            heap.tags[to] = tag;
        };
        let mut stack = Vec::new();
        let mut marked = vec![false; self.class.len()];
        for (c, o) in self.statics.clone() {
            report(self, reference::STATIC_FIELD, Some((usize::MAX, c)), o);
            stack.push(o);
        }
        for o in self.threads.clone() {
            report(self, 26, None, o);
            stack.push(o);
        }
        while let Some(o) = stack.pop() {
            if std::mem::replace(&mut marked[o], true) {
                continue;
            }
            for to in self.fields[o].clone() {
                let kind = if self.length[o] >= 0 { reference::ARRAY_ELEMENT } else { reference::FIELD };
                report(self, kind, Some((o, self.class[o])), to);
                if !marked[to] {
                    stack.push(to);
                }
            }
        }
    }

    fn reference(&self, kind: u32, referrer_class: u32, to: usize) -> Reference {
        Reference {
            kind,
            index: 0,
            class_tag: CLASS_BIT | Jlong::from(self.class[to]),
            referrer_class_tag: CLASS_BIT | Jlong::from(referrer_class),
            size: self.size[to],
            length: self.length[to],
            itself: false,
        }
    }
}

/// A watch on the sessions, and no links yet.
fn watching_sessions() -> (Watch, Holders) {
    (Watch::new(vec![vec!["Session".into()]], Instant::now()), Holders::default())
}

/// A registry of `sessions` beside a map of `other` nodes, walked twice with the sessions
/// watched: whole paths known.
fn walked_twice(sessions: usize, other: usize) -> (Heap, Watch, Holders) {
    let mut heap = Heap::registry(sessions, other);
    let (watch, mut holders) = watching_sessions();
    heap.walk(&mut holders, &watch);
    heap.walk(&mut holders, &watch);
    (heap, watch, holders)
}

/// The containers' chains, without their objects.
fn chains_of(holders: &Holders) -> Vec<HolderChain> {
    holders.chains(&names()).into_iter().map(|c| c.0).collect()
}

fn registry_path() -> Vec<String> {
    ["Map$Node", "Map$Node[]", "Map", "Registry", "class Registry"].map(String::from).to_vec()
}

#[test]
fn the_first_walk_learns_one_level_and_the_second_names_whole_paths() {
    let mut heap = Heap::registry(300, 2_000);
    let (watch, mut holders) = watching_sessions();
    heap.walk(&mut holders, &watch);
    let first = holders.watched(&names());
    assert_eq!(first.len(), 300);
    assert!(first.iter().all(|(_, c, p, _)| *c == SESSION && p == &["Map$Node", "…"]), "{:?}", first[0]);
    // Both maps' tables are among the biggest object arrays, the registry's the biggest.
    let chains = chains_of(&holders);
    assert_eq!(chains.len(), 2, "{chains:?}");
    assert_eq!((chains[0].container.as_str(), chains[0].path.as_slice()), ("Map", &["…".to_string()][..]));

    heap.walk(&mut holders, &watch);
    let second = holders.watched(&names());
    assert_eq!(second.len(), 300);
    for (_, _, path, _) in &second {
        assert_eq!(path, &registry_path(), "the sessions hold the registry back: no cycle");
    }
    let chains = holders.chains(&names());
    assert_eq!(chains[0].0.path, ["Registry", "class Registry"]);
    assert_eq!((chains[0].0.element.as_str(), chains[0].0.elements), ("Map$Node", 300), "the table's elements");
    assert_eq!(chains[0].1.steps[1], Step::Statics(REGISTRY), "the registry's class, for the static field's name");
    // Path links cover the unrelated map's nodes too, and stay for the next walks.
    let (used, added) = holders.counts();
    assert!(added >= 2_000, "{added}");
    assert!(used <= 300 * 2 + 2_000 + 10, "{used} links");
    heap.walk(&mut holders, &watch);
    assert_eq!(holders.counts(), (used, 0), "a steady heap is not linked again");
    assert_eq!(holders.watched(&names())[0].2, registry_path());
}

#[test]
fn path_classes_are_the_ones_with_few_objects() {
    // 30,000 unrelated nodes: more than the path classes may have, so map nodes are left
    // to the watch's one-level links; the table, the map and the registry stay.
    let mut heap = Heap::registry(100, 30_000);
    let (watch, mut holders) = watching_sessions();
    heap.walk(&mut holders, &watch);
    let chosen: Vec<usize> = (0..holders.path_classes.len()).filter(|&c| holders.path_classes[c]).collect();
    assert_eq!(chosen, [REGISTRY as usize, MAP as usize, TABLE as usize]);
    heap.walk(&mut holders, &watch);
    assert!(holders.counts().1 < 10, "{:?}", holders.counts());
    assert_eq!(holders.watched(&names())[0].2, registry_path(), "the nodes the first walk linked");
}

#[test]
fn dropped_links_are_cleared_and_their_slots_reused() {
    let (mut heap, watch, mut holders) = walked_twice(50, 1_000);
    let unrelated: Vec<usize> = (0..heap.class.len()).filter(|&o| heap.class[o] == NODE).take(1_000).collect();
    assert!(unrelated.iter().all(|&o| link_of(heap.tags[o]).is_some()), "linked when first reached");
    let slots = holders.links.len();
    // Unreachable for a walk, the unrelated map's links are dropped; reached again, their
    // tags are cleared and they are linked anew, in the same slots.
    let thread = heap.threads.pop().unwrap();
    heap.walk(&mut holders, &watch);
    let dropped = |h: &Holders, tag: Jlong| h.live(tag).is_none();
    assert!(unrelated.iter().all(|&o| dropped(&holders, heap.tags[o])));
    heap.threads.push(thread);
    heap.walk(&mut holders, &watch);
    assert!(unrelated.iter().all(|&o| !dropped(&holders, heap.tags[o])), "linked anew");
    assert_eq!(holders.links.len(), slots, "in the slots their cleared tags gave back");
    // Unreachable again and then collected: ObjectFree gives the slots back.
    heap.threads.pop();
    heap.walk(&mut holders, &watch);
    let tags: Vec<Jlong> = unrelated.iter().map(|&o| heap.tags[o]).collect();
    holders.freed(&tags);
    assert!(holders.free.len() >= 1_000, "{}", holders.free.len());
    assert_eq!(holders.watched(&names())[0].2, registry_path());
}

#[test]
fn sampled_objects_on_a_path_are_linked_and_stay_sampled() {
    let mut heap = Heap::registry(20, 10);
    let table = (0..heap.class.len()).rfind(|&o| heap.class[o] == TABLE).unwrap();
    heap.tags[table] = SAMPLE_BIT | 77;
    let (watch, mut holders) = watching_sessions();
    heap.walk(&mut holders, &watch);
    let seen = heap.walk(&mut holders, &watch);
    assert!(seen.contains(&77), "{seen:?}");
    assert!(link_of(heap.tags[table]).is_some() && heap.tags[table] as u32 == 77, "{:x}", heap.tags[table]);
    assert_eq!(holders.watched(&names())[0].2, registry_path());
}

#[test]
fn a_session_in_a_local_variable_is_still_named_by_its_holder() {
    // Seen on JDK 25: the session the loop was using was reached from the thread's stack
    // before the list holding it, and its path stopped at the list's array.
    let mut heap = Heap::registry(30, 10);
    let sessions: Vec<usize> = (0..heap.class.len()).filter(|&o| heap.class[o] == SESSION).collect();
    heap.locals.push(sessions[7]);
    let (watch, mut holders) = watching_sessions();
    heap.walk(&mut holders, &watch);
    heap.walk(&mut holders, &watch);
    let watched = holders.watched(&names());
    assert_eq!(watched.len(), 30);
    assert!(watched.iter().all(|(_, _, p, _)| p == &registry_path()), "{watched:?}");
}

#[test]
fn an_object_reached_first_from_a_local_is_not_held_by_what_it_holds() {
    // The registry is kept only by a session in a local variable: the map's nodes reach
    // that session after it, but they are held through it, so naming them its holder
    // would be a cycle.
    let mut heap = Heap::registry(5, 0);
    heap.statics.clear();
    let session = (0..heap.class.len()).find(|&o| heap.class[o] == SESSION).unwrap();
    heap.locals.push(session);
    let (watch, mut holders) = watching_sessions();
    heap.walk(&mut holders, &watch);
    heap.walk(&mut holders, &watch);
    let watched = holders.watched(&names());
    assert_eq!(watched.len(), 5);
    let through = ["Map$Node", "Map$Node[]", "Map", "Registry", "Session", "root stack local"];
    for (slot, _, path, _) in &watched {
        let expected: &[&str] = if *slot == 0 { &["root stack local"] } else { &through };
        assert_eq!(path, expected, "every path ends at the local, none loops");
    }
}

#[test]
fn containers_are_the_biggest_object_arrays_of_the_last_walk() {
    let mut holders = Holders::default();
    assert_eq!(holders.big_array(true), 4096, "before a walk: any object array of 4 KiB");
    assert_eq!(holders.big_array(false), 65_536);
    // 100 arrays of 4–8 KiB and 10 of 16–32 KiB: the next walk takes only the 10 (8 KiB is
    // the smallest power of two that leaves the 100 out).
    let mut sizes = [0u64; SIZE_BUCKETS];
    sizes[12] = 100;
    sizes[14] = 10;
    holders.plan_containers(&sizes);
    assert_eq!(holders.big_array(true), 8192);
    // Few big arrays: back to 4 KiB; a heap full of them: never above 64 KiB.
    holders.plan_containers(&[0; SIZE_BUCKETS]);
    assert_eq!(holders.big_array(true), 4096);
    sizes[20] = 1_000;
    holders.plan_containers(&sizes);
    assert_eq!(holders.big_array(true), 65_536);
}

#[test]
fn walks_filtered_by_class_find_a_container_and_climb_its_chain_a_level_each() {
    // The registry's map was never walked whole: its table, reported by a walk filtered to
    // the tables' class, makes the map a container; the next walks, filtered to the map's
    // class and then the registry's, each learn one more holder, up to the static field.
    let mut heap = Heap::registry(200, 0);
    let mut holders = Holders::default();
    heap.walk_filtered(&mut holders, TABLE);
    let chains = chains_of(&holders);
    assert_eq!(chains.len(), 1, "{chains:?}");
    assert_eq!((chains[0].container.as_str(), chains[0].path.as_slice()), ("Map", &["…".to_string()][..]));
    heap.walk_filtered(&mut holders, MAP);
    assert_eq!(holders.chains(&names())[0].0.path, ["Registry", "…"]);
    heap.walk_filtered(&mut holders, REGISTRY);
    let (chain, objects) = holders.chains(&names()).remove(0);
    assert_eq!(chain.path, ["Registry", "class Registry"]);
    assert_eq!(objects.steps[1], Step::Statics(REGISTRY));
}

#[test]
fn a_forked_walk_links_every_object_of_the_path_classes_at_once() {
    // A path class with more objects than a walk in the JVM links: those walks link them over
    // several walks (their links linger); a copy's links die with it, so it links them all.
    let plan = |holders: &mut Holders| {
        holders.path_classes = vec![false, true];
    };
    let linked = |holders: &mut Holders| (0..20_000).filter(|_| holders.path_link(1).is_some()).count();
    let mut jvm = Holders::default();
    plan(&mut jvm);
    jvm.begin_walk();
    assert_eq!(linked(&mut jvm), PATH_LINKS_PER_WALK);
    let mut copy = Holders::default();
    plan(&mut copy);
    copy.begin_forked();
    assert_eq!(linked(&mut copy), 20_000);
}

#[test]
fn a_walk_stopped_at_its_deadline_forgets_nothing_the_walks_before_it_learned() {
    // On a heap too big to walk whole every whole walk stops; the walks filtered by class
    // between them must still find the containers, their holders and elements, and the
    // watched objects' paths, as the last complete walk left them.
    let (mut heap, watch, mut holders) = walked_twice(300, 2_000);
    let watched = |h: &Holders| -> Vec<(u32, Vec<String>)> {
        h.watched(&names()).into_iter().map(|(slot, _, path, _)| (slot, path)).collect()
    };
    let (known, paths) = (chains_of(&holders), watched(&holders));
    assert_eq!(known[0].path, ["Registry", "class Registry"]);
    // Stopped in the unrelated map, reached first: the registry's map is not reached.
    assert!(heap.walk_until(&mut holders, &watch, 500).is_none());
    assert_eq!(chains_of(&holders), known);
    assert_eq!(watched(&holders), paths);
    heap.walk_filtered(&mut holders, REGISTRY);
    assert_eq!(chains_of(&holders), known);
    // The next complete walk learns them all again.
    heap.walk(&mut holders, &watch);
    assert_eq!(chains_of(&holders), known);
    assert_eq!(watched(&holders), paths);
}

#[test]
fn a_walk_filtered_by_class_takes_a_path_on_past_a_local_variable() {
    // A session first reached from a thread's stack, in a walk that stopped before the map:
    // the walks filtered to its class must still find the map's node that holds it.
    let mut heap = Heap::registry(30, 10);
    let sessions: Vec<usize> = (0..heap.class.len()).filter(|&o| heap.class[o] == SESSION).collect();
    heap.locals.push(sessions[7]);
    let (watch, mut holders) = watching_sessions();
    assert!(heap.walk_until(&mut holders, &watch, 0).is_none());
    let paths = |h: &Holders| -> Vec<Vec<String>> { h.watched(&names()).into_iter().map(|w| w.2).collect() };
    assert_eq!(paths(&holders), [["root stack local"]]);
    heap.walk_filtered(&mut holders, SESSION);
    assert_eq!(paths(&holders), [["Map$Node", "…"]]);
}

#[test]
fn a_path_through_a_freed_holder_stops_there_whatever_takes_its_slot() {
    let (heap, _, mut holders) = walked_twice(30, 10);
    // The registry's table is replaced (a resize) and collected; the next link made takes its
    // slot, for an object held by a static field.
    let table = (0..heap.class.len()).rfind(|&o| heap.class[o] == TABLE).unwrap();
    holders.freed(&[heap.tags[table]]);
    let taken = holders.add(Link::new(Kind::Holder, false, OTHER, 0)).unwrap();
    assert_eq!(Some(taken), link_of(heap.tags[table]), "the table's slot");
    holders.note_end(taken, Held::Statics(OTHER), -1);
    let watched = holders.watched(&names());
    assert_eq!(watched.len(), 30);
    for (_, _, path, _) in watched {
        assert_eq!(path, ["Map$Node", "Map$Node[]", "…"]);
    }
}
