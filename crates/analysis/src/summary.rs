//! [`growth::HeapSummary`] (Cork's class points-from graph) of one dump, with class names:
//! from the streaming [`heap::ClassGraph`], or from a [`Snapshot`] already in memory. Both
//! count the same things, and the tests hold them to the same numbers.

use growth::{statics_of, ClassVolume, EdgeVolume, HeapSummary};
use heap::{Census, ClassGraph, EdgeLabel, RefStrength, Referrer, Snapshot};
use rustc_hash::FxHashMap;

/// The summary of a dump read by [`ClassGraph::build`]; `source` names it in reports.
pub fn summarize(graph: &ClassGraph, source: &str) -> HeapSummary {
    let names = &graph.census.classes;
    let edges = graph
        .edges
        .iter()
        .map(|e| EdgeVolume {
            from: referrer_name(&graph.census, e.from),
            to: names.get(e.to).name.clone(),
            bytes: e.bytes,
            references: e.references,
        })
        .collect();
    with_nodes(&graph.census, source, edges)
}

/// The same summary from a snapshot: every object in the dump, strong references only.
pub fn summarize_snapshot(snap: &Snapshot, source: &str) -> HeapSummary {
    let mut acc: FxHashMap<(Referrer, heap::ClassIdx), (u64, u64)> = FxHashMap::default();
    let mut add = |from, to: heap::ObjIdx| {
        let e = acc.entry((from, snap.class_of(to))).or_default();
        e.0 += snap.shallow_bytes(to);
        e.1 += 1;
    };
    for o in snap.objects() {
        match snap.mirror_class(o) {
            Some(c) => {
                for (label, e) in snap.labeled_edges(o) {
                    if matches!(label, EdgeLabel::Static(_)) {
                        add(Referrer::Statics(c), e.target);
                    }
                }
            }
            None => {
                for e in snap.edges(o).filter(|e| e.strength == RefStrength::Strong) {
                    add(Referrer::Instances(snap.class_of(o)), e.target);
                }
            }
        }
    }
    let mut edges: Vec<_> = acc.into_iter().collect();
    edges.sort_unstable_by_key(|(k, _)| *k);
    let edges = edges
        .into_iter()
        .map(|((from, to), (bytes, references))| EdgeVolume {
            from: referrer_name(&snap.census, from),
            to: snap.classes().get(to).name.clone(),
            bytes,
            references,
        })
        .collect();
    with_nodes(&snap.census, source, edges)
}

fn referrer_name(census: &Census, r: Referrer) -> String {
    match r {
        Referrer::Instances(c) => census.classes.get(c).name.clone(),
        Referrer::Statics(c) => statics_of(&census.classes.get(c).name),
    }
}

fn with_nodes(census: &Census, source: &str, edges: Vec<EdgeVolume>) -> HeapSummary {
    let classes = census
        .classes
        .iter()
        .map(|(i, c)| (c, census.of(i)))
        .filter(|(_, t)| t.instances > 0)
        .map(|(c, t)| ClassVolume { name: c.name.clone(), instances: t.instances, bytes: t.shallow_bytes })
        .collect();
    let total = census.total();
    HeapSummary {
        source: source.into(),
        time_ms: Some(census.header.timestamp_ms).filter(|&t| t > 0),
        gc_count: None,
        total_bytes: total.shallow_bytes,
        total_instances: total.instances,
        classes,
        edges,
    }
}
