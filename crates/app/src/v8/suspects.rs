//! `suspects` on a V8 snapshot: detached DOM trees that something still holds (each group with
//! the path that keeps it and the variable or field it is kept in), and the objects that
//! retain a large share of the heap, each the deepest of its chain in the dominator tree.

use heapsnapshot::{EdgeType, NodeIdx, NodeType, V8Heap};
use rustc_hash::FxHashMap;

use super::paths::entry;
use super::retention::Retention;
use super::summary::{Names, Trace};

/// Listeners of one event on one emitter from which they are a suspect: Node.js warns at 11
/// (`MaxListenersExceededWarning`), and a service that raises the limit to keep quiet, as
/// the leaking service of the tests does, still adds one a request.
const LISTENERS: usize = 100;

/// The value of V8's `detachedness` for a DOM node no document holds.
const DETACHED: u8 = 2;

/// The suspects of `h`: every group of detached DOM trees, every event with [`LISTENERS`]
/// listeners or more on one emitter, then the objects retaining at least `threshold` (a
/// share, 0 to 1) of what the root reaches.
pub fn suspects(h: &V8Heap, threshold: f64, progress: &dyn graph::Progress) -> report::SuspectsReport {
    let r = Retention::build(h, progress);
    let mut names = Names::new(h);
    let trace = Trace::new(h, &mut names, true, |_, _| {});
    let live = r.live_bytes();
    let share = |b: u64| if live == 0 { 0.0 } else { b as f64 / live as f64 };
    let mut out = detached(h, &r, &trace);
    out.extend(listeners(h, &r, &trace));
    for s in &mut out {
        s.share = share(s.retained_bytes);
    }
    let mut big = shares(h, &r, (threshold * live as f64).ceil() as u64);
    big.sort_by_key(|&n| std::cmp::Reverse(r.retained_bytes(n)));
    for n in big {
        let mut s = if growth::v8::is_context(&h.class_name(n)) {
            context(h, &r, &trace, n)
        } else {
            let what = format!("{} {}", h.class_name(n), report::ObjectId(h.id(n)));
            one_object(h, &trace, n, |held| format!("{what}{held}"), r.retained_bytes(n), 1)
        };
        s.share = share(s.retained_bytes);
        out.push(s);
    }
    report::SuspectsReport { live_bytes: live, threshold, suspects: out }
}

/// Detached DOM trees grouped by their class and place: the top of each tree (a detached node
/// whose holder is not detached) stands for the detached nodes below it on their paths.
fn detached(h: &V8Heap, r: &Retention, trace: &Trace) -> Vec<report::Suspect> {
    let is_detached = |n: NodeIdx| trace.is_live(n) && is_detached_dom_node(h, n);
    // Per top, its group; per group the tops, and the detached nodes by class.
    let mut group_of_top: FxHashMap<NodeIdx, usize> = FxHashMap::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut index: FxHashMap<(std::borrow::Cow<'static, str>, u32), usize> = FxHashMap::default();
    for n in h.nodes().filter(|&n| is_detached(n)) {
        let mut top = n;
        while let Some(p) = parent(trace, top).filter(|&p| is_detached(p)) {
            top = p;
        }
        let g = *group_of_top.entry(top).or_insert_with(|| {
            let key = (h.class_name(top), trace.place[top.index()]);
            *index.entry(key).or_insert_with(|| {
                groups.push(Group::default());
                groups.len() - 1
            })
        });
        if top == n {
            groups[g].tops.push(top);
        }
        let c = groups[g].by_class.entry(h.class_name(n).into_owned()).or_default();
        c.0 += 1;
        c.1 += h.self_size(n);
    }
    let mut out: Vec<report::Suspect> = groups
        .into_iter()
        .map(|Group { tops, by_class }| {
            let nodes: u64 = by_class.values().map(|c| c.0).sum();
            let path = entry(h, trace, tops[0], tops.len() as u64);
            let mut contents: Vec<report::Accumulated> = by_class
                .into_iter()
                .map(|(class, (count, shallow_bytes))| report::Accumulated { class, count, shallow_bytes })
                .collect();
            contents.sort_by(|a, b| b.shallow_bytes.cmp(&a.shallow_bytes).then_with(|| a.class.cmp(&b.class)));
            let class = path.steps.last().map_or(String::new(), |s| s.class.clone());
            let held = holder_name(&path.steps);
            report::Suspect {
                title: format!(
                    "{} detached DOM {} {class} ({}){}",
                    report::thousands(tops.len() as u64),
                    if tops.len() == 1 { "tree" } else { "trees" },
                    report::count(nodes, "DOM node"),
                    held.as_ref().map(|s| format!(", kept by {s}")).unwrap_or_default()
                ),
                retained_bytes: tops.iter().map(|&t| r.retained_bytes(t)).sum(),
                share: 0.0,
                data_structure: held,
                root: path.root.plain(),
                accumulation_point: path.steps.last().cloned(),
                path: path.steps,
                chain: Vec::new(),
                contents,
                instances: tops.len() as u64,
            }
        })
        .collect();
    out.sort_by(|a, b| b.retained_bytes.cmp(&a.retained_bytes).then_with(|| a.title.cmp(&b.title)));
    out
}

/// A suspect about object `n`: titled by `title` given `, in HOLDER` (or nothing), with the path
/// that keeps `n`, `retained` bytes and `instances` things counted; its share is left to the
/// caller.
fn one_object(
    h: &V8Heap,
    trace: &Trace,
    n: NodeIdx,
    title: impl FnOnce(&str) -> String,
    retained: u64,
    instances: u64,
) -> report::Suspect {
    let path = entry(h, trace, n, 1);
    let held = holder_name(&path.steps);
    report::Suspect {
        title: title(&held.as_ref().map(|s| format!(", in {s}")).unwrap_or_default()),
        retained_bytes: retained,
        share: 0.0,
        data_structure: held,
        root: path.root.plain(),
        path: path.steps,
        chain: Vec::new(),
        accumulation_point: None,
        contents: Vec::new(),
        instances,
    }
}

/// Variables of a closure context a suspect's title names, biggest first.
const VARIABLES: usize = 3;

/// A closure context retaining a share of the heap, said as a person would: the function whose
/// context it is (the step before it on its path) and the variables that retain the most,
/// the biggest of them its data structure when it retains most of the context. A module's
/// functions share one context, so what a service keeps at module level is found here.
fn context(h: &V8Heap, r: &Retention, trace: &Trace, n: NodeIdx) -> report::Suspect {
    let retained = r.retained_bytes(n);
    // What each variable retains alone (no two variables' values dominate one another, as the
    // context refers to each), and what they share: objects two of them reach.
    let mut seen = rustc_hash::FxHashSet::default();
    let mut variables: Vec<(String, u64)> = h
        .edges(n)
        .filter(|e| e.kind == EdgeType::Context)
        .map(|e| (h.string(e.name_or_index), if seen.insert(e.to) { r.retained_bytes(e.to) } else { 0 }))
        .collect();
    variables.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let alone: u64 = variables.iter().map(|v| v.1).sum();
    let shared = retained.saturating_sub(alone + h.self_size(n));
    let mut s = one_object(h, trace, n, |_| String::new(), retained, 1);
    let function = match s.path.len().checked_sub(2).map(|i| &s.path[i]) {
        Some(f) if s.path.last().and_then(|c| c.field.as_deref()) == Some("context") => format!("{} {}", f.class, f.id),
        _ => format!("{} {}", h.class_name(n), report::ObjectId(h.id(n))),
    };
    let shown: Vec<String> = variables
        .iter()
        .take(VARIABLES)
        .map(|(name, bytes)| format!("{name} {}", report::human_bytes(*bytes)))
        .collect();
    s.title = format!("the context of {function}: {} alone, {} shared", shown.join(", "), report::human_bytes(shared));
    if let Some((name, _)) = variables.first().filter(|(_, b)| 2 * b > retained) {
        s.data_structure = Some(growth::v8::context_variable(name));
    }
    s
}

/// Whether `n` is a DOM node V8 marks detached: no document holds it.
pub(super) fn is_detached_dom_node(h: &V8Heap, n: NodeIdx) -> bool {
    h.detachedness(n) == Some(DETACHED) && is_dom_node(h, n)
}

/// Whether `n` is a DOM node as Blink names them (`<li class="row">`, `Text`, `HTMLDivElement`):
/// Node.js marks its own native objects (`Node / BindingData`) detached too, as no document
/// holds them.
fn is_dom_node(h: &V8Heap, n: NodeIdx) -> bool {
    if h.node_type(n) != NodeType::Native {
        return false;
    }
    let name = h.name(n);
    name.starts_with('<')
        || matches!(name.as_str(), "Text" | "Comment" | "CDATASection" | "DocumentFragment" | "ShadowRoot")
        || ((name.starts_with("HTML") || name.starts_with("SVG")) && name.ends_with("Element"))
}

/// Detached trees of one class at one place: their tops, and their nodes (count and bytes) by
/// class.
#[derive(Default)]
struct Group {
    tops: Vec<NodeIdx>,
    by_class: FxHashMap<String, (u64, u64)>,
}

/// Events with [`LISTENERS`] listeners or more on one emitter: an object's `_events` (Node's
/// `EventEmitter` and everything built on it) holding an array of functions for one event.
fn listeners(h: &V8Heap, r: &Retention, trace: &Trace) -> Vec<report::Suspect> {
    let mut out = Vec::new();
    let Some(name) = h.string_index("_events") else { return out };
    for emitter in h.nodes().filter(|&n| trace.is_live(n) && h.node_type(n) == NodeType::Object) {
        let Some(events) = h.edges(emitter).find(|e| e.kind == EdgeType::Property && e.name_or_index == name) else {
            continue;
        };
        let events = events.to;
        for e in h.edges(events).filter(|e| e.kind == EdgeType::Property) {
            let listeners =
                h.edges(e.to).filter(|l| l.kind == EdgeType::Element && h.node_type(l.to) == NodeType::Closure).count();
            if listeners < LISTENERS || h.class_name(e.to) != "Array" {
                continue;
            }
            let event = h.string(e.name_or_index);
            let what = format!(
                "{} '{event}' listeners on {} {}",
                report::thousands(listeners as u64),
                h.class_name(emitter),
                report::ObjectId(h.id(emitter))
            );
            let retained = r.retained_bytes(e.to);
            out.push(one_object(h, trace, emitter, |held| format!("{what}{held}"), retained, listeners as u64));
        }
    }
    out.sort_by(|a, b| b.instances.cmp(&a.instances).then_with(|| a.title.cmp(&b.title)));
    out
}

/// The node before `n` on its path, if any.
fn parent(trace: &Trace, n: NodeIdx) -> Option<NodeIdx> {
    Some(trace.parent[n.index()]).filter(|&p| p != graph::NO_PLACE).map(NodeIdx)
}

/// The objects retaining `min` bytes or more none of whose children in the dominator tree
/// does; one of V8's internals (a `Map`'s table) gives way to the nearest dominator that is not.
fn shares(h: &V8Heap, r: &Retention, min: u64) -> Vec<NodeIdx> {
    let big = |v: usize| v != 0 && h.node_type(NodeIdx(v as u32)) != NodeType::Synthetic && r.retained.get(v) >= min;
    let mut has_big_child = graph::BitSet::new(h.node_count());
    for (v, d) in r.dom.immediate_dominators() {
        if big(v) {
            has_big_child.insert(d);
        }
    }
    let mut out: Vec<NodeIdx> = Vec::new();
    for v in (0..h.node_count()).filter(|&v| big(v) && !has_big_child.contains(v)) {
        let mut at = v;
        while growth::v8::is_internal(&h.class_name(NodeIdx(at as u32))) {
            match r.dom.immediate_dominator(at).filter(|&d| big(d)) {
                Some(d) => at = d,
                None => break,
            }
        }
        if !out.contains(&NodeIdx(at as u32)) {
            out.push(NodeIdx(at as u32));
        }
    }
    out
}

/// The variable or field that holds the end of `path`, as a person says it (the nearest step
/// out of a collection's parts: `rowCache (closure variable)`).
fn holder_name(path: &[report::PathStep]) -> Option<String> {
    let steps: Vec<growth::names::Step<'_>> = path
        .windows(2)
        .rev()
        .map(|w| growth::names::Step { owner: &w[0].class, field: w[1].field.as_deref().unwrap_or("") })
        .collect();
    growth::names::person_name(&steps).map(|p| p.name)
}
