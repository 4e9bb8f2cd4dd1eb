//! `paths` on a V8 snapshot: the retainer chain from V8's root to the selected objects, as
//! DevTools' Retainers view shows it upside down (property names, `[3]` for elements, a
//! closure's variables), objects with one path shape counted as one path.

use analysis::Selector;
use heapsnapshot::{NodeIdx, NodeType, V8Heap};
use rustc_hash::FxHashMap;

use super::summary::{Names, Trace};
use crate::{Error, Result};

/// Shortest retaining paths from V8's root to the objects `selector` picks (a constructor
/// group by `class:NAME`, or one node by `id:`), `max` path shapes at most.
pub fn paths(h: &V8Heap, selector: &Selector, max: usize) -> Result<report::PathsReport> {
    let selected = select(h, selector)?;
    let mut names = Names::new(h);
    let trace = Trace::new(h, &mut names, true, |_, _| {});
    let mut by_place: FxHashMap<u32, (NodeIdx, u64)> = FxHashMap::default();
    let mut unreachable = 0;
    for &n in &selected {
        if trace.is_live(n) {
            by_place.entry(trace.place[n.index()]).or_insert((n, 0)).1 += 1;
        } else {
            unreachable += 1;
        }
    }
    let mut shapes: Vec<(NodeIdx, u64)> = by_place.into_values().collect();
    shapes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let more_shapes = shapes.len() > max;
    shapes.truncate(max);
    Ok(report::PathsReport {
        selector: selector.to_string(),
        selected: selected.len() as u64,
        paths: shapes.into_iter().map(|(n, count)| entry(h, &trace, n, count)).collect(),
        unreachable,
        more_shapes,
    })
}

/// The path of `n` (standing for `count` objects): its root category and the objects from the
/// first one the root's categories hold down to `n`.
pub(super) fn entry(h: &V8Heap, trace: &Trace, n: NodeIdx, count: u64) -> report::PathEntry {
    let mut chain = vec![n];
    let mut at = n;
    while trace.parent[at.index()] != graph::NO_PLACE {
        at = NodeIdx(trace.parent[at.index()]);
        chain.push(at);
    }
    chain.reverse();
    // The profiler's synthetic nodes (its root, `(GC roots)`, a category) say how the path is
    // rooted; the last of them is its kind.
    let objects = chain.iter().position(|&x| h.node_type(x) != NodeType::Synthetic).unwrap_or(chain.len());
    let kind = chain[..objects].iter().rev().map(|&x| h.name(x)).find(|s| !s.is_empty());
    let kind = kind.unwrap_or_else(|| "V8's root".to_owned());
    let steps = chain[objects..]
        .iter()
        .enumerate()
        .map(|(i, &x)| report::PathStep {
            id: report::ObjectId(h.id(x)),
            class: step_class(h, x),
            field: (i > 0).then(|| trace.via[x.index()].map(|e| h.edge_label(&e)).unwrap_or_default()),
            folded: false,
        })
        .collect();
    let root = report::PathRoot { kind: kind.clone(), detail: String::new(), label: kind };
    report::PathEntry::new(root, steps, count)
}

/// A step's class as DevTools lists a retainer: a closure by its function's name, a context,
/// an object by its constructor, the rest by type.
fn step_class(h: &V8Heap, n: NodeIdx) -> String {
    match h.node_type(n) {
        NodeType::Closure => match h.name(n) {
            name if name.is_empty() => "(anonymous)()".to_owned(),
            name => format!("{name}()"),
        },
        _ => h.class_name(n).into_owned(),
    }
}

/// The nodes `selector` picks.
pub(super) fn select(h: &V8Heap, selector: &Selector) -> Result<Vec<NodeIdx>> {
    match selector {
        Selector::Class { name, subclasses: false } => {
            let picked: Vec<NodeIdx> = h
                .nodes()
                .filter(|&n| h.node_type(n) != NodeType::Synthetic && h.class_name(n) == name.as_str())
                .collect();
            if picked.is_empty() {
                return Err(Error::Usage(format!(
                    "no object of the constructor {name} in this snapshot (`leakscope histogram` lists them)"
                )));
            }
            Ok(picked)
        }
        Selector::Id(id) => Ok(vec![super::retention::by_id(h, *id)?]),
        other => Err(Error::Usage(format!(
            "{other}: a V8 snapshot is selected by constructor (class:NAME) or by id (id:0x7b, DevTools' @123)"
        ))),
    }
}
