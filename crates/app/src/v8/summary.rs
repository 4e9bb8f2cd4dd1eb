//! A V8 snapshot as a [`growth::HeapSummary`]: the live objects by constructor, the volume of
//! every constructor → constructor reference, and the tree of their shortest paths from V8's
//! root, so that the growth engine the JVM's dumps use ranks a series of snapshots unchanged.
//!
//! Steps are named as DevTools names retainers: a property's or a closure variable's name, or
//! `[]` for an element (indices masked, as for JVM arrays). V8 files a `Map`'s and a `Set`'s
//! entries as internal references named by their slot number, and a dictionary object's
//! properties by their keys: those are elements too, or no two heaps would share a place.

use graph::{PathStep, PathTree, NO_PLACE};
use heapsnapshot::{ClassKey, Edge, EdgeType, NodeIdx, NodeType, V8Heap};
use rustc_hash::FxHashMap;

/// The root's mark in the places of nodes: reached, with no place.
pub(super) const ROOT: u32 = NO_PLACE - 1;

/// How a step reaches its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Via {
    /// From V8's synthetic root.
    Root,
    /// An element, a slot of V8's tables, or a dictionary's key.
    Element,
    /// A property, closure variable or internal field, by its name's string index.
    Name(u32),
}

/// One path step: how, and the class of the object reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Step {
    via: Via,
    class: ClassKey,
}

impl PathStep for Step {
    type Class = ClassKey;
    fn class(&self) -> ClassKey {
        self.class
    }
}

/// Every node's shortest retaining path from V8's root, folded into places; with parents,
/// also the node and the edge each was reached by.
pub(super) struct Trace {
    /// Per node its place, [`NO_PLACE`] when the root does not reach it, [`ROOT`] for the root.
    pub place: Vec<u32>,
    /// Per node the node before it on its path (empty unless asked for).
    pub parent: Vec<u32>,
    /// Per node the edge that reached it (empty unless asked for).
    pub via: Vec<Option<Edge>>,
    tree: PathTree<Step>,
    /// Objects and bytes per place.
    volumes: Vec<(u64, u64)>,
}

impl Trace {
    /// Searches `h` breadth first from the root along retaining edges, calling `each_edge`
    /// with every retaining edge of every node reached (once each).
    pub fn new(
        h: &V8Heap,
        names: &mut Names<'_>,
        keep_parents: bool,
        mut each_edge: impl FnMut(NodeIdx, &Edge),
    ) -> Trace {
        let n = h.node_count();
        let mut t = Trace {
            place: vec![NO_PLACE; n],
            parent: if keep_parents { vec![NO_PLACE; n] } else { Vec::new() },
            via: if keep_parents { vec![None; n] } else { Vec::new() },
            tree: PathTree::default(),
            volumes: Vec::new(),
        };
        // Breadth first, a level at a time, each level in the order of its nodes' places
        // (a hash of the names along each place's path, the same in every snapshot): the
        // first node of a level to reach an object gives it its place, and a module's
        // functions all reach the module's context at one depth. In the order the edges came,
        // one snapshot's search took one function there and the next another, and the Map
        // under the context moved between places from heap to heap.
        let mut hashes: Vec<u64> = Vec::new();
        let place_hash = |hashes: &[u64], p: u32| if p == ROOT { 0 } else { hashes[p as usize] };
        // V8's synthetic root has no place of its own: what it holds starts the paths.
        t.place[0] = ROOT;
        let (mut level, mut next) = (vec![NodeIdx(0)], Vec::new());
        let (mut later, mut deferring) = (Vec::new(), true);
        loop {
            if level.is_empty() {
                if !deferring {
                    break;
                }
                deferring = false;
                level = std::mem::take(&mut later);
                continue;
            }
            level.sort_by_key(|n| place_hash(&hashes, t.place[n.index()]));
            for &from in &level {
                if deferring && is_transient_root(h, from) {
                    later.push(from);
                    continue;
                }
                let dictionary = h.is_dictionary(from);
                for e in h.edges(from).filter(|e| h.retains(from, e)) {
                    each_edge(from, &e);
                    if t.place[e.to.index()] != NO_PLACE {
                        continue;
                    }
                    let (parent, via) = match t.place[from.index()] {
                        ROOT => (NO_PLACE, Via::Root),
                        p => (p, names.via(&e, dictionary)),
                    };
                    let step = Step { via, class: path_class(h, e.to) };
                    let (p, new) = t.tree.place(parent, step);
                    if new {
                        t.volumes.push((0, 0));
                        let of = if parent == NO_PLACE { 0 } else { place_hash(&hashes, parent) };
                        hashes.push(path_hash(of, &names.via_name(via), &names.class(step.class)));
                    }
                    if h.node_type(e.to) != NodeType::Synthetic {
                        let v = &mut t.volumes[p as usize];
                        v.0 += 1;
                        v.1 += h.self_size(e.to);
                    }
                    t.place[e.to.index()] = p;
                    if keep_parents {
                        t.parent[e.to.index()] = from.0;
                        t.via[e.to.index()] = Some(e);
                    }
                    next.push(e.to);
                }
            }
            level.clear();
            std::mem::swap(&mut level, &mut next);
        }
        t
    }

    /// True when the root reaches `n` (the root itself aside).
    pub fn is_live(&self, n: NodeIdx) -> bool {
        !matches!(self.place[n.index()], NO_PLACE | ROOT)
    }
}

/// The summary of `h`, named `source` in reports.
pub fn summarize(h: &V8Heap, source: &str) -> growth::HeapSummary {
    summarize_traced(h, source).0
}

/// The summary of `h` and where its live objects were allocated, from one search of the
/// heap: what a series asks of its last snapshot.
pub fn summarize_with_sites(h: &V8Heap, source: &str) -> (growth::HeapSummary, AllocationSites) {
    let (summary, trace, mut names) = summarize_traced(h, source);
    (summary, allocation_sites(h, &trace, &mut names))
}

/// The summary of `h`, with the search it was made from and the names it decoded.
fn summarize_traced<'a>(h: &'a V8Heap, source: &str) -> (growth::HeapSummary, Trace, Names<'a>) {
    let mut names = Names::new(h);
    let mut classes: FxHashMap<ClassKey, (u64, u64)> = FxHashMap::default();
    let mut edges: FxHashMap<(ClassKey, ClassKey), (u64, u64)> = FxHashMap::default();
    let trace = Trace::new(h, &mut names, false, |from, e| {
        if h.node_type(from) != NodeType::Synthetic && h.node_type(e.to) != NodeType::Synthetic {
            let v = edges.entry((h.class_key(from), h.class_key(e.to))).or_default();
            v.0 += h.self_size(e.to);
            v.1 += 1;
        }
    });
    let Trace { tree, volumes, .. } = &trace;
    let (mut total, mut unreachable) = ((0u64, 0u64), (0u64, 0u64));
    for node in h.nodes().filter(|&x| h.node_type(x) != NodeType::Synthetic) {
        let bytes = h.self_size(node);
        let side = if !trace.is_live(node) {
            &mut unreachable
        } else {
            let c = classes.entry(h.class_key(node)).or_default();
            c.0 += 1;
            c.1 += bytes;
            &mut total
        };
        side.0 += 1;
        side.1 += bytes;
    }
    let paths = (0..tree.len() as u32)
        .map(|p| {
            let step = tree.step(p);
            growth::PathVolume {
                parent: Some(tree.parent(p)).filter(|&q| q != NO_PLACE),
                via: names.via_name(step.via),
                class: names.class(step.class),
                objects: volumes[p as usize].0,
                bytes: volumes[p as usize].1,
            }
        })
        .collect();
    let mut classes: Vec<growth::ClassVolume> = classes
        .into_iter()
        .map(|(k, (instances, bytes))| growth::ClassVolume { name: names.class(k), instances, bytes })
        .collect();
    classes.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
    let mut edges: Vec<growth::EdgeVolume> = edges
        .into_iter()
        .map(|((from, to), (bytes, references))| growth::EdgeVolume {
            from: names.class(from),
            to: names.class(to),
            bytes,
            references,
        })
        .collect();
    edges.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| (&a.from, &a.to).cmp(&(&b.from, &b.to))));
    let summary = growth::HeapSummary {
        schema_version: report::SCHEMA_VERSION,
        source: source.to_owned(),
        total_bytes: total.1,
        total_instances: total.0,
        classes,
        edges,
        paths,
        unreachable_instances: unreachable.0,
        unreachable_bytes: unreachable.1,
        ..Default::default()
    };
    (summary, trace, names)
}

/// The hash of a place's path: its parent's hash, then the step's names. Fixed across runs
/// and snapshots (no random seed), so that it orders places the same way in every heap.
fn path_hash(parent: u64, via: &str, class: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
    (parent, via, class).hash(&mut hasher);
    hasher.finish()
}

/// Whether `n` is a category of GC roots whose paths are taken last: what V8 holds for the
/// work under way when the snapshot is written, which holds the service's state in one
/// snapshot and not in the next (the stack's frames, the handle scopes, and the strong roots,
/// where an identity map of the work under way held a module's context in one snapshot of a
/// Node.js series, 827 entries there and none in the others, and moved the Map under that
/// context to another place for that heap alone); and the table of internalized strings
/// (which holds every property name that objects hold too).
fn is_transient_root(h: &V8Heap, n: NodeIdx) -> bool {
    h.node_type(n) == NodeType::Synthetic
        && matches!(
            h.name(n).as_str(),
            "(Stack roots)" | "(Handle scope)" | "(Strong roots)" | "(Internalized strings)"
        )
}

/// The class a path step names: the constructor group, or a synthetic node's own label
/// (`(GC roots)`, `(Stack roots)`), which no object shares.
fn path_class(h: &V8Heap, n: NodeIdx) -> ClassKey {
    match h.node_type(n) {
        NodeType::Synthetic => ClassKey::Named(h.name_index(n)),
        _ => h.class_key(n),
    }
}

/// Names decoded once each from the snapshot's strings.
pub(super) struct Names<'a> {
    h: &'a V8Heap,
    /// Per string index: 0 not looked at, 1 a number, 2 a name.
    numeric: Vec<u8>,
    decoded: FxHashMap<u32, String>,
}

impl<'a> Names<'a> {
    pub fn new(h: &'a V8Heap) -> Names<'a> {
        Names { h, numeric: Vec::new(), decoded: FxHashMap::default() }
    }

    /// How the path names edge `e` (from a dictionary object when `dictionary`).
    fn via(&mut self, e: &heapsnapshot::Edge, dictionary: bool) -> Via {
        match e.kind {
            EdgeType::Element | EdgeType::Hidden => Via::Element,
            EdgeType::Property if dictionary => Via::Element,
            EdgeType::Property | EdgeType::Internal if self.is_number(e.name_or_index) => Via::Element,
            _ => Via::Name(e.name_or_index),
        }
    }

    fn is_number(&mut self, s: u32) -> bool {
        let i = s as usize;
        if i >= self.numeric.len() {
            self.numeric.resize(i + 1, 0);
        }
        if self.numeric[i] == 0 {
            let name = self.string(s);
            self.numeric[i] = if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) { 1 } else { 2 };
        }
        self.numeric[i] == 1
    }

    fn string(&mut self, s: u32) -> String {
        self.decoded.entry(s).or_insert_with(|| self.h.string(s)).clone()
    }

    fn via_name(&mut self, via: Via) -> String {
        match via {
            Via::Root => "root".into(),
            Via::Element => "[]".into(),
            Via::Name(s) => self.string(s),
        }
    }

    fn class(&mut self, k: ClassKey) -> String {
        match k {
            ClassKey::Named(s) => self.string(s),
            ClassKey::Type(t) => t.to_owned(),
        }
    }
}

/// Allocation sites shown per class, most live bytes first.
const SITES: usize = 5;

/// Where each constructor group's live objects were allocated, when the snapshot was taken
/// with allocation tracking on.
#[derive(Debug, Default)]
pub struct AllocationSites {
    /// Per class name, its first [`SITES`] stacks by the live bytes they allocated, with all
    /// they allocated since tracking began.
    pub by_class: FxHashMap<String, Vec<report::AllocationSite>>,
    /// Per class name, its live objects and those V8 recorded no site for (allocated before
    /// tracking began, or where its tracker does not see: the sites cover the others).
    pub unrecorded: FxHashMap<String, (u64, u64)>,
}

/// The [`AllocationSites`] of `h`, live as `trace` says (empty when it was taken without
/// allocation tracking).
fn allocation_sites(h: &V8Heap, trace: &Trace, names: &mut Names<'_>) -> AllocationSites {
    let mut out = AllocationSites::default();
    if !h.has_allocation_sites() {
        return out;
    }
    let mut live: FxHashMap<(ClassKey, u32), (u64, NodeIdx)> = FxHashMap::default();
    let mut counts: FxHashMap<ClassKey, (u64, u64)> = FxHashMap::default();
    for n in h.nodes().filter(|&n| trace.is_live(n)) {
        let c = counts.entry(h.class_key(n)).or_default();
        c.0 += 1;
        match h.trace_node(n).filter(|&t| t != 0) {
            Some(site) => live.entry((h.class_key(n), site)).or_insert((0, n)).0 += h.self_size(n),
            None => c.1 += 1,
        }
    }
    let mut by_class: FxHashMap<ClassKey, Vec<(u64, NodeIdx)>> = FxHashMap::default();
    for ((class, _), v) in live {
        by_class.entry(class).or_default().push(v);
    }
    for (class, mut sites) in by_class {
        sites.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let rows: Vec<report::AllocationSite> = sites
            .into_iter()
            .take(SITES)
            .filter_map(|(live_bytes, n)| {
                let frames: Vec<String> = h.allocation_stack(n)?.iter().map(ToString::to_string).collect();
                let application_frame = frames.iter().position(|f| !is_runtime_frame(f));
                let allocated_bytes = h.allocated_at_site(n).map_or(live_bytes, |(_, size)| size.max(live_bytes));
                Some(report::AllocationSite { frames, application_frame, live_bytes, allocated_bytes })
            })
            .collect();
        if !rows.is_empty() {
            out.by_class.insert(names.class(class), rows);
        }
    }
    for (class, c) in counts {
        out.unrecorded.insert(names.class(class), c);
    }
    out
}

/// Whether a frame is the runtime's own: Node.js's built-in modules (`node:…` scripts, or
/// scripts without a name).
fn is_runtime_frame(frame: &str) -> bool {
    frame.contains("(node:") || frame.contains("(:")
}

#[cfg(test)]
mod tests;
