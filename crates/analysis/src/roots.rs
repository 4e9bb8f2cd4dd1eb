//! What each GC root keeps alive: per root kind, per static field, per thread and frame
//! (the Modula-3 tools' ReportReachable, docs/papers.md).
//!
//! Every group of roots (a kind, a thread, a frame, a static field shown) is measured in
//! passes over the whole heap rather than one closure per group, since a thread or a frame
//! reaches nearly the whole heap through its class loader, and a server has hundreds of them:
//!
//! - Retained bytes, for all groups in one pass: every retention root is labelled with the set
//!   of groups it belongs to, and every other object with the intersection of its strong
//!   referrers' labels. An object is freed when a group lets go exactly when every strong path
//!   to it passes through that group's roots, that is when the last root on each such path
//!   belongs to the group: when the group is in the object's label.
//! - Reachable bytes, up to 256 groups per pass: each strongly connected component's bit mask
//!   is the union of its referrers' masks, in one sweep in topological order.

use std::collections::BTreeMap;

use graph::{BitSet, Progress};
use heap::{ObjIdx, RootDetail, Snapshot};
use report::{FrameRow, RootBytes, RootKindRow, RootsReport, StaticRow, ThreadRow};
use rustc_hash::FxHashMap;

use crate::paths::{frame_text, VM_HELD_CLASS};
use crate::retention::{node, retention_roots, Retention, StrongGraph};

/// Builds the report; `top` caps the static fields listed (0 = all).
pub fn roots_report(s: &Snapshot, r: &Retention, top: usize, progress: &dyn Progress) -> RootsReport {
    let mut groups = Groups::default();
    let mut kinds: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for root in &s.roots {
        let (g, roots) = kinds.entry(root.kind.name()).or_insert_with(|| (groups.add(), 0));
        *roots += 1;
        groups.seed(*g, root.object);
    }
    let mut rooted = BitSet::new(s.object_count() as usize);
    s.roots.iter().for_each(|root| {
        rooted.insert(root.object.index());
    });
    let all_roots = retention_roots(s);
    let vm_held: Vec<ObjIdx> = all_roots.iter().copied().filter(|o| !rooted.contains(o.index())).collect();
    if !vm_held.is_empty() {
        let g = groups.add();
        vm_held.iter().for_each(|&o| groups.seed(g, o));
        kinds.insert(VM_HELD_CLASS, (g, vm_held.len() as u64));
    }

    let mut thread_groups = Vec::with_capacity(s.threads.len());
    for t in &s.threads {
        let g = groups.add();
        t.object.into_iter().for_each(|o| groups.seed(g, o));
        thread_groups.push((g, BTreeMap::<u32, usize>::new()));
    }
    for root in &s.roots {
        if let RootDetail::Thread { thread, frame } = root.detail {
            let (g, frames) = &mut thread_groups[thread];
            groups.seed(*g, root.object);
            if let Some(d) = frame {
                let f = *frames.entry(d).or_insert_with(|| groups.add());
                groups.seed(f, root.object);
            }
        }
    }

    let mut statics = s.static_refs();
    statics.sort_by(|a, b| r.retained_bytes(b.2).cmp(&r.retained_bytes(a.2)).then(a.cmp(b)));
    let shown = if top == 0 { statics.len() } else { top.min(statics.len()) };
    let more_statics = (statics.len() - shown) as u64;
    statics.truncate(shown);
    // A static field's object needs no retained pass: the dominator tree has its size.
    let with_retained = groups.len();
    let static_groups: Vec<usize> = statics
        .iter()
        .map(|&(_, _, target)| {
            let g = groups.add();
            groups.seed(g, target);
            g
        })
        .collect();

    let flow = Flow::new(s, progress);
    let retained = groups.retained(s, &flow, &all_roots, with_retained, progress);
    let reachable = groups.reachable(s, &flow, progress);
    let members = groups.member_counts();
    let bytes = |g: usize| RootBytes { reachable_bytes: reachable[g], retained_bytes: retained[g] };

    let mut kinds: Vec<RootKindRow> = kinds
        .into_iter()
        .map(|(kind, (g, roots))| RootKindRow { kind: kind.to_owned(), roots, bytes: bytes(g) })
        .collect();
    kinds.sort_by(|a, b| b.bytes.retained_bytes.cmp(&a.bytes.retained_bytes).then(a.kind.cmp(&b.kind)));

    let statics = statics
        .iter()
        .zip(static_groups)
        .map(|(&(class, field, target), g)| {
            let cls = s.classes().get(class);
            StaticRow {
                field: format!("{}.{}", cls.name, cls.statics[field as usize].name),
                class: s.type_label(target),
                id: report::ObjectId(s.address(target)),
                bytes: RootBytes { reachable_bytes: reachable[g], retained_bytes: r.retained_bytes(target) },
            }
        })
        .collect();

    let mut threads: Vec<ThreadRow> = s
        .threads
        .iter()
        .enumerate()
        .zip(thread_groups)
        .map(|((i, t), (g, frames))| {
            let frames = frames
                .into_iter()
                .map(|(depth, f)| FrameRow {
                    depth,
                    method: t.frames.get(depth as usize).map_or_else(|| "?".into(), frame_text),
                    objects: members[f],
                    bytes: bytes(f),
                })
                .collect();
            let who = s.thread_identity(i);
            ThreadRow {
                serial: t.serial,
                label: report::thread_label(who.name.as_deref(), who.is_virtual, who.tid, t.serial),
                name: who.name,
                virtual_thread: who.is_virtual,
                id: t.object.map(|o| report::ObjectId(s.address(o))),
                bytes: bytes(g),
                frames,
            }
        })
        .collect();
    threads.sort_by(|a, b| b.bytes.retained_bytes.cmp(&a.bytes.retained_bytes).then(a.serial.cmp(&b.serial)));
    RootsReport { live_bytes: r.live_bytes(), kinds, statics, more_statics, threads }
}

/// Groups of root objects, as (object, group) memberships.
#[derive(Default)]
struct Groups {
    count: usize,
    /// Sorted and deduplicated before a pass.
    seeds: Vec<(ObjIdx, u32)>,
}

/// The label of an object no labelled referrer has reached yet.
const UNSET: u32 = u32::MAX;

impl Groups {
    fn add(&mut self) -> usize {
        self.count += 1;
        self.count - 1
    }

    fn len(&self) -> usize {
        self.count
    }

    fn seed(&mut self, g: usize, o: ObjIdx) {
        self.seeds.push((o, g as u32));
    }

    /// Distinct objects of each group, in one pass over the memberships.
    fn member_counts(&mut self) -> Vec<u64> {
        self.seeds.sort_unstable();
        self.seeds.dedup();
        let mut counts = vec![0u64; self.count];
        self.seeds.iter().for_each(|&(_, g)| counts[g as usize] += 1);
        counts
    }

    /// Retained bytes of groups `0..upto`, in one labelling pass (see the module docs). The
    /// retention `roots` are labelled first; then each object in topological order passes
    /// its label on, and only labels that change after their object was visited (along
    /// references inside a cycle) are passed on again. A group's member that is no root (a
    /// thread object the dump does not root) keeps its own groups whatever its referrers hold.
    fn retained(
        &mut self,
        s: &Snapshot,
        flow: &Flow,
        roots: &[ObjIdx],
        upto: usize,
        progress: &dyn Progress,
    ) -> Vec<u64> {
        self.seeds.sort_unstable();
        self.seeds.dedup();
        let mut sets = Interner::default();
        let empty = sets.intern(Vec::new());
        let n = s.object_count() as usize;
        let mut label = vec![UNSET; n];
        let mut is_root = BitSet::new(n);
        roots.iter().for_each(|o| {
            is_root.insert(o.index());
        });
        let mut own: FxHashMap<usize, u32> = FxHashMap::default();
        for chunk in self.seeds.chunk_by(|a, b| a.0 == b.0) {
            let set: Vec<u32> = chunk.iter().map(|m| m.1).filter(|&g| (g as usize) < upto).collect();
            let o = chunk[0].0.index();
            if is_root.contains(o) {
                label[o] = sets.intern(set);
            } else {
                own.insert(o, sets.intern(set));
            }
        }
        for o in roots {
            if label[o.index()] == UNSET {
                label[o.index()] = empty;
            }
        }
        progress.start("roots: retained bytes", n as u64);
        let mut visited = BitSet::new(n);
        let mut queued = BitSet::new(n);
        let mut queue: Vec<ObjIdx> = Vec::new();
        let mut pass_on =
            |o: ObjIdx, label: &mut [u32], visited: &BitSet, queued: &mut BitSet, queue: &mut Vec<ObjIdx>| {
                let l = label[o.index()];
                if l == UNSET {
                    return; // reached later from inside its cycle, and passed on then
                }
                for e in s.edges(o).filter(|e| e.strength == heap::RefStrength::Strong) {
                    let w = e.target.index();
                    if is_root.contains(w) {
                        continue;
                    }
                    let mut next = if label[w] == UNSET { l } else { sets.meet(label[w], l) };
                    if let Some(&mine) = own.get(&w) {
                        next = sets.join(mine, next);
                    }
                    if next != label[w] {
                        label[w] = next;
                        if visited.contains(w) && queued.insert(w) {
                            queue.push(e.target);
                        }
                    }
                }
            };
        for (i, o) in flow.topological().enumerate() {
            pass_on(o, &mut label, &visited, &mut queued, &mut queue);
            visited.insert(o.index());
            if (i + 1).is_multiple_of(1 << 16) {
                progress.advance(1 << 16);
            }
        }
        while let Some(o) = queue.pop() {
            queued.remove(o.index());
            pass_on(o, &mut label, &visited, &mut queued, &mut queue);
        }
        progress.finish();
        let mut per_label = vec![0u64; sets.len()];
        for (i, &l) in label.iter().enumerate() {
            if l != UNSET {
                per_label[l as usize] += s.shallow_bytes(ObjIdx(i as u64));
            }
        }
        let mut out = vec![0u64; upto];
        for (set, bytes) in sets.sets.iter().zip(per_label) {
            set.iter().for_each(|&g| out[g as usize] += bytes);
        }
        out
    }

    /// Bytes strongly reachable from each group: one sweep over the strongly connected
    /// components in topological order per `64 × MAX_WORDS` groups, each component's mask
    /// the union of its referrers'. Masks take as many 64-bit words as the groups need, up
    /// to `MAX_WORDS` (a sweep is mostly random reads, so wider masks cost little time, but
    /// they cost 8 bytes per component a word).
    fn reachable(&self, s: &Snapshot, flow: &Flow, progress: &dyn Progress) -> Vec<u64> {
        const MAX_WORDS: usize = 4;
        let c = &flow.components;
        let mut comp_bytes = vec![0u64; c.count()];
        for o in s.objects() {
            if let Some(b) = comp_bytes.get_mut(c.of(node::of(o)) as usize) {
                *b += s.shallow_bytes(o);
            }
        }
        let words = self.count.div_ceil(64).clamp(1, MAX_WORDS);
        let per_pass = 64 * words;
        let passes = self.count.div_ceil(per_pass);
        let mut out = vec![0u64; self.count];
        let mut mask = vec![0u64; c.count() * words];
        let mut m = vec![0u64; words];
        for pass in 0..passes {
            progress.start(&format!("roots: reachable bytes, pass {} of {passes}", pass + 1), c.count() as u64);
            mask.iter_mut().for_each(|w| *w = 0);
            let first = pass * per_pass;
            for &(o, g) in &self.seeds {
                let g = g as usize;
                if (first..first + per_pass).contains(&g) {
                    let b = g - first;
                    mask[c.of(node::of(o)) as usize * words + b / 64] |= 1 << (b % 64);
                }
            }
            for (i, o) in flow.topological().enumerate() {
                let cv = c.of(node::of(o)) as usize;
                m.copy_from_slice(&mask[cv * words..(cv + 1) * words]);
                if m.iter().any(|&w| w != 0) {
                    for e in s.edges(o).filter(|e| e.strength == heap::RefStrength::Strong) {
                        let cw = c.of(node::of(e.target)) as usize;
                        if cw != cv {
                            mask[cw * words..(cw + 1) * words].iter_mut().zip(&m).for_each(|(a, b)| *a |= b);
                        }
                    }
                }
                if (i + 1).is_multiple_of(1 << 16) {
                    progress.advance(1 << 16);
                }
            }
            for (cm, &bytes) in mask.chunks_exact(words).zip(&comp_bytes) {
                for (w, &word) in cm.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        let b = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        out[first + w * 64 + b] += bytes;
                    }
                }
            }
            progress.finish();
        }
        out
    }
}

/// The strongly connected components of the strong graph, which both passes walk in
/// topological order.
struct Flow {
    components: graph::Components,
}

impl Flow {
    fn new(s: &Snapshot, progress: &dyn Progress) -> Flow {
        Flow { components: graph::components(&StrongGraph::new(s), node::SUPER_ROOT, progress) }
    }

    /// The live objects in topological order of their components (the super-root left out).
    fn topological(&self) -> impl Iterator<Item = ObjIdx> + '_ {
        self.components.topological().filter_map(node::object)
    }
}

/// Sets of groups, each stored once and named by its index; intersections and unions are
/// memoized, as few distinct sets meet many times.
#[derive(Default)]
struct Interner {
    sets: Vec<Vec<u32>>,
    index: FxHashMap<Vec<u32>, u32>,
    /// Results by operation (`true` for a union) and operands, the smaller first.
    combined: FxHashMap<(bool, u32, u32), u32>,
}

impl Interner {
    fn len(&self) -> usize {
        self.sets.len()
    }

    /// The name of `set` (sorted, without duplicates).
    fn intern(&mut self, set: Vec<u32>) -> u32 {
        if let Some(&i) = self.index.get(&set) {
            return i;
        }
        let i = self.sets.len() as u32;
        self.sets.push(set.clone());
        self.index.insert(set, i);
        i
    }

    /// The intersection of sets `a` and `b`.
    fn meet(&mut self, a: u32, b: u32) -> u32 {
        self.combine(false, a, b)
    }

    /// The union of sets `a` and `b`.
    fn join(&mut self, a: u32, b: u32) -> u32 {
        self.combine(true, a, b)
    }

    /// The union (`union`) or intersection of sets `a` and `b`, memoized.
    fn combine(&mut self, union: bool, a: u32, b: u32) -> u32 {
        if a == b {
            return a;
        }
        let key = (union, a.min(b), a.max(b));
        if let Some(&c) = self.combined.get(&key) {
            return c;
        }
        let (x, y) = (&self.sets[a as usize], &self.sets[b as usize]);
        let set = if union {
            let mut either = x.clone();
            either.extend_from_slice(y);
            either.sort_unstable();
            either.dedup();
            either
        } else {
            x.iter().copied().filter(|g| y.binary_search(g).is_ok()).collect()
        };
        let c = self.intern(set);
        self.combined.insert(key, c);
        c
    }
}
