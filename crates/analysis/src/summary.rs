//! [`growth::HeapSummary`] (Cork's class points-from graph and the path tree) of one dump's
//! live objects, with class names: from the streaming [`heap::ClassGraph`], or from a
//! [`Snapshot`] already in memory. Both trace the same live objects and paths
//! ([`heap::live`]), and the tests hold them to the same numbers.

use growth::{statics_of, ClassVolume, EdgeVolume, HeapSummary, PathVolume};
use heap::{Census, ClassGraph, ClassTotals, EdgeLabel, Live, ObjIdx, PathNode, RefStrength, Referrer, Snapshot};
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
    let mut summary = with_nodes(&graph.census, &graph.live, &graph.paths, source, edges);
    summary.loaders = graph.loaders.iter().map(loader_copies).collect();
    summary.process = Some(growth::ProcessMark {
        threads: graph.process.threads.iter().map(|&(tid, native)| [tid, native]).collect(),
        main_class: graph.process.main_class.clone(),
    });
    summary
}

fn loader_copies(g: &heap::LoaderGroup) -> growth::LoaderCopies {
    growth::LoaderCopies {
        loader: g.loader_class.clone(),
        classes: g.classes.clone(),
        class_count: g.class_count,
        copies: g.loaders.len() as u64,
    }
}

/// The same summary from a snapshot: its live objects, strong references only.
pub fn summarize_snapshot(snap: &Snapshot, source: &str) -> HeapSummary {
    match snap.live(false) {
        Some(live) => summarize_live(snap, &live, source),
        // Past 2^32 objects the trace does not number them: everything counts, as jcmd does.
        None => summarize_objects(snap, snap.objects(), &[], source),
    }
}

/// The summary of a snapshot whose live objects `live` says (from [`Snapshot::live`]).
pub fn summarize_live(snap: &Snapshot, live: &Live, source: &str) -> HeapSummary {
    let objects = snap.objects().filter(|o| live.is_live(o.index()));
    let mut summary = summarize_objects(snap, objects, &live.nodes, source);
    let groups = heap::loader_groups(snap.classes(), |id| {
        let o = snap.find(id)?;
        live.is_live(o.index()).then(|| snap.class_of(o))
    });
    summary.loaders = groups.iter().map(loader_copies).collect();
    summary
}

fn summarize_objects(
    snap: &Snapshot,
    objects: impl Iterator<Item = ObjIdx>,
    paths: &[PathNode],
    source: &str,
) -> HeapSummary {
    let mut acc: FxHashMap<(Referrer, heap::ClassIdx), (u64, u64)> = FxHashMap::default();
    let mut totals = vec![ClassTotals::default(); snap.classes().len()];
    let mut add = |from, to: ObjIdx| {
        let e = acc.entry((from, snap.class_of(to))).or_default();
        e.0 += snap.shallow_bytes(to);
        e.1 += 1;
    };
    for o in objects {
        let t = &mut totals[snap.class_of(o).index()];
        t.instances += 1;
        t.shallow_bytes += snap.shallow_bytes(o);
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
    with_nodes(&snap.census, &totals, paths, source, edges)
}

fn referrer_name(census: &Census, r: Referrer) -> String {
    match r {
        Referrer::Instances(c) => census.classes.get(c).name.clone(),
        Referrer::Statics(c) => statics_of(&census.classes.get(c).name),
    }
}

/// The path tree with names.
pub(crate) fn path_volumes(census: &Census, nodes: &[PathNode]) -> Vec<PathVolume> {
    nodes
        .iter()
        .map(|n| PathVolume {
            parent: (n.parent != heap::live::NONE).then_some(n.parent),
            via: n.via_name(nodes, &census.classes),
            class: n.class_name(&census.classes),
            objects: n.objects,
            bytes: n.bytes,
        })
        .collect()
}

fn with_nodes(
    census: &Census,
    live: &[ClassTotals],
    paths: &[PathNode],
    source: &str,
    edges: Vec<EdgeVolume>,
) -> HeapSummary {
    let classes: Vec<ClassVolume> = census
        .classes
        .iter()
        .filter_map(|(i, c)| Some((c, live.get(i.index())?)))
        .filter(|(_, t)| t.instances > 0)
        .map(|(c, t)| ClassVolume { name: c.name.clone(), instances: t.instances, bytes: t.shallow_bytes })
        .collect();
    let all = census.total();
    let total_bytes: u64 = live.iter().map(|t| t.shallow_bytes).sum();
    let total_instances: u64 = live.iter().map(|t| t.instances).sum();
    HeapSummary {
        schema_version: report::SCHEMA_VERSION,
        source: source.into(),
        time_ms: Some(census.header.timestamp_ms).filter(|&t| t > 0),
        gc_count: None,
        total_bytes,
        total_instances,
        classes,
        edges,
        paths: path_volumes(census, paths),
        loaders: Vec::new(),
        unreachable_instances: all.instances.saturating_sub(total_instances),
        unreachable_bytes: all.shallow_bytes.saturating_sub(total_bytes),
        incomplete: incomplete(&census.warnings),
        process: None,
    }
}

/// Why a dump was not read whole, when it was not: the problems that leave out heap data
/// (a cut, unreadable heap records), as their warnings word them.
pub fn incomplete(w: &heap::Warnings) -> Option<String> {
    let why: Vec<String> = w
        .items()
        .iter()
        .filter(|i| matches!(i.kind, heap::WarningKind::Truncated | heap::WarningKind::UnreadableSegmentTail))
        .map(|i| i.to_string())
        .collect();
    (!why.is_empty()).then(|| why.join("; "))
}

/// What a cut took from a dump not read whole, as said beside every verdict on it: how many
/// GC roots and threads were read before the cut. HotSpot writes the roots and the threads
/// after the objects, so a cut usually takes them all, and then what is live cannot be told
/// ([`Cut::roots_lost`]). `None` for a dump read whole.
pub fn cut(snap: &heap::Snapshot) -> Option<Cut> {
    let why = incomplete(&snap.census.warnings)?;
    let threads = snap.roots.iter().filter(|r| r.kind == heap::RootKind::ThreadObject).count() as u64;
    Some(Cut { why, roots: snap.roots.len() as u64, threads })
}

/// A dump not read whole: why, and the GC roots and threads read before the cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// Why it was not read whole (a truncation, unreadable heap records), as the warnings say.
    pub why: String,
    /// GC roots read before the cut.
    pub roots: u64,
    /// Threads (their `java.lang.Thread` roots) read before the cut.
    pub threads: u64,
}

impl Cut {
    /// Whether the cut took every thread and every GC root but the classes': which objects
    /// the program holds cannot be told, and no suspect can be named.
    pub fn roots_lost(&self) -> bool {
        self.threads == 0
    }

    /// What the cut took, in a sentence.
    pub fn took(&self) -> String {
        if self.roots_lost() {
            format!(
                "{}; the cut took the threads and their stacks, and {} GC roots were read before it (HotSpot writes them after the objects): what the program holds cannot be told",
                self.why, self.roots
            )
        } else {
            format!(
                "{}; {} GC roots and {} threads were read before the cut: objects held only by what it took are left out",
                self.why, self.roots, self.threads
            )
        }
    }
}
