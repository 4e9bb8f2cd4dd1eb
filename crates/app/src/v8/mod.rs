//! The commands that read V8 heap snapshots (Node.js, Chrome): the snapshot read by
//! `heapsnapshot`, then the same dominator engine as for a JVM's heap (`graph`), answered in
//! the same models (`report`).

use std::path::Path;

use heapsnapshot::{ClassKey, NodeIdx, NodeType, V8Heap};
use rustc_hash::FxHashMap;

use crate::{open_dump, Error, ReadSettings, Reporter, Result};

mod paths;
pub mod redact;
mod retained;
mod retention;
pub mod secrets;
mod summary;
mod suspects;

pub use paths::paths;
pub use retained::retained;
use retention::by_id;
pub use retention::Retention;
pub use summary::{summarize, summarize_with_sites, AllocationSites};
pub use suspects::suspects;

/// The first bytes of a file that tell a heap snapshot from an HPROF dump.
const HEAD: usize = 64;

/// True when the file at `path` (unpacked, if gzip) is a V8 heap snapshot.
pub fn is_snapshot(path: &Path) -> bool {
    heap::Dump::head(path, HEAD).is_ok_and(|h| heapsnapshot::looks_like_snapshot(&h))
}

/// True when the dump's bytes are a V8 heap snapshot.
pub(crate) fn is_snapshot_data(data: &[u8]) -> bool {
    heapsnapshot::looks_like_snapshot(&data[..data.len().min(HEAD)])
}

/// The refusal of a command that reads JVM heap dumps only.
pub(crate) fn not_yet(path: &Path) -> Error {
    Error::Usage(format!(
        "{} is a V8 heap snapshot (Node.js, Chrome): this command reads JVM heap dumps only so far; `histogram`, `info`, `dominators`, `paths`, `retained`, `suspects`, `growth`, `diff`, `summary`, `redact` and `secrets` (and the MCP tools of those names) read V8 snapshots",
        path.display()
    ))
}

/// Reads the snapshot at `path` (gzip unpacked first, as for dumps).
pub fn load(path: &Path, settings: &ReadSettings, reporter: &dyn Reporter) -> Result<V8Heap> {
    read_dump(open_dump(path, settings)?, path, settings, reporter)
}

/// Reads the snapshot of a file already open, its columns' temporary files in `--tmp-dir`. A
/// snapshot is not read out of core yet: under a `--memory-limit` below what it needs, this
/// says so at once rather than going over it.
pub(crate) fn read_dump(
    dump: heap::Dump,
    path: &Path,
    settings: &ReadSettings,
    reporter: &dyn Reporter,
) -> Result<V8Heap> {
    let needs = estimate(dump.data().len() as u64);
    if let Some(limit) = settings.memory_limit.filter(|&l| l < needs) {
        return Err(Error::Usage(format!(
            "cannot read {}: a V8 heap snapshot of {} needs about {} in memory; --memory-limit {}: too little (snapshots are not read out of core yet)",
            path.display(),
            heap::mib(dump.data().len() as u64),
            heap::mib(needs),
            heap::mib(limit)
        )));
    }
    heapsnapshot::read_in(DumpBytes(dump), settings.tmp_dir.as_deref(), reporter)
        .map_err(|source| Error::Snapshot { path: path.to_owned(), source })
}

/// The peak of a snapshot's dominator tree, estimated from the snapshot's size: a fixed part
/// and 0.65 of the bytes, above the peaks measured on a Node.js service's snapshots of 409 MB
/// (248 MiB) and 2.15 GB (1,205 MiB).
fn estimate(bytes: u64) -> u64 {
    (32 << 20) + bytes / 20 * 13
}

/// The dump's mapped bytes, which the snapshot keeps for its strings.
struct DumpBytes(heap::Dump);

impl AsRef<[u8]> for DumpBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.data()
    }
}

impl heapsnapshot::SnapshotBytes for DumpBytes {
    fn done_with(&self, offset: usize, len: usize) {
        self.0.release(offset as u64, len);
    }
}

/// Objects by constructor, as DevTools' Summary groups them (every node counted, reachable
/// or not, but the profiler's synthetic ones), biggest first.
pub fn histogram(h: &V8Heap) -> report::Histogram {
    let mut classes: Vec<report::HistogramRow> = by_class(h)
        .into_iter()
        .map(|(key, (instances, shallow_bytes))| report::HistogramRow {
            name: match key {
                ClassKey::Named(s) => h.string(s),
                ClassKey::Type(t) => t.to_owned(),
            },
            instances,
            shallow_bytes,
        })
        .collect();
    classes.sort_by(|a, b| b.shallow_bytes.cmp(&a.shallow_bytes).then_with(|| a.name.cmp(&b.name)));
    report::Histogram {
        total_instances: classes.iter().map(|c| c.instances).sum(),
        total_shallow_bytes: classes.iter().map(|c| c.shallow_bytes).sum(),
        classes,
        heap: None,
        heaps: Vec::new(),
    }
}

/// The objects of a snapshot: every node but the profiler's synthetic ones.
fn objects(h: &V8Heap) -> impl Iterator<Item = NodeIdx> + '_ {
    h.nodes().filter(|&n| h.node_type(n) != NodeType::Synthetic)
}

/// Instances and bytes per constructor group, names not decoded.
fn by_class(h: &V8Heap) -> FxHashMap<ClassKey, (u64, u64)> {
    let mut by: FxHashMap<ClassKey, (u64, u64)> = FxHashMap::default();
    for n in objects(h) {
        let e = by.entry(h.class_key(n)).or_default();
        e.0 += 1;
        e.1 += h.self_size(n);
    }
    by
}

/// What a row names a node by: its constructor group, or a synthetic node's own label
/// (`(GC roots)`, `(Global handles)`).
fn row_class(h: &V8Heap, n: NodeIdx) -> String {
    match h.node_type(n) {
        NodeType::Synthetic => h.name(n),
        _ => h.class_name(n).into_owned(),
    }
}

/// [`crate::analyses::dominators`] for a snapshot: the top of the tree (`children: None`)
/// or what the node of V8 id `children` dominates, `top` at most (0: all); `flat` lists the
/// biggest retained sizes anywhere. Ids are V8's (`@123` in DevTools, `0x7b` here).
pub fn dominators(
    h: &V8Heap,
    children: Option<u64>,
    top: usize,
    flat: bool,
    progress: &dyn graph::Progress,
) -> Result<report::DominatorReport> {
    let parent = children.map(|id| by_id(h, id)).transpose()?;
    let r = Retention::build(h, progress);
    if let Some(p) = parent.filter(|p| !r.dom.is_reachable(p.index())) {
        return Err(Error::Usage(format!(
            "{} is not reachable from the root: it dominates nothing",
            report::ObjectId(h.id(p))
        )));
    }
    let limit = if top == 0 { usize::MAX } else { top };
    let under = parent.map_or(0, NodeIdx::index);
    let candidates: Vec<usize> = if flat {
        r.dom.preorder().filter(|&v| v != 0).collect()
    } else {
        r.dom.immediate_dominators().filter(|&(v, d)| d == under && v != 0).map(|(v, _)| v).collect()
    };
    let total = candidates.len();
    let mut shown = candidates;
    let order = |a: &usize, b: &usize| r.retained.get(*b).cmp(&r.retained.get(*a)).then(a.cmp(b));
    if limit < shown.len() {
        shown.select_nth_unstable_by(limit, order);
        shown.truncate(limit);
    }
    shown.sort_by(order);
    let mut counts: FxHashMap<usize, u64> =
        shown.iter().chain(parent.map(|p| p.index()).as_ref()).map(|&v| (v, 0)).collect();
    for (_, d) in r.dom.immediate_dominators() {
        if let Some(c) = counts.get_mut(&d) {
            *c += 1;
        }
    }
    let of = parent.map_or(r.live_bytes(), |p| r.retained_bytes(p));
    let row = |v: usize, of: u64| {
        let n = NodeIdx(v as u32);
        let retained = r.retained_bytes(n);
        report::DominatorRow {
            id: report::ObjectId(h.id(n)),
            class: row_class(h, n),
            shallow_bytes: h.self_size(n),
            retained_bytes: retained,
            share: if of == 0 { 0.0 } else { retained as f64 / of as f64 },
            children: counts.get(&v).copied().unwrap_or(0),
            represents: None,
        }
    };
    Ok(report::DominatorReport {
        parent: parent.map(|p| row(p.index(), r.live_bytes())),
        live_bytes: r.live_bytes(),
        objects: shown.iter().map(|&v| row(v, of)).collect(),
        more: (total - shown.len()) as u64,
        flat,
    })
}

/// What `info` says of a snapshot: its nodes, edges, the root categories V8 lists under
/// `(GC roots)` with how many references each holds, and what the root reaches.
pub fn info(h: &V8Heap, path: &Path) -> report::DumpInfo {
    let seen = retained::reach(h, &[0], None);
    let (mut reachable, mut unreachable) = ((0u64, 0u64), (0u64, 0u64));
    for n in objects(h) {
        let side = if seen.contains(n.index()) { &mut reachable } else { &mut unreachable };
        side.0 += 1;
        side.1 += h.self_size(n);
    }
    let gc_roots =
        h.edges(NodeIdx(0)).map(|e| e.to).find(|&n| h.node_type(n) == NodeType::Synthetic && h.name(n) == "(GC roots)");
    let mut roots: Vec<report::RootCount> = gc_roots
        .into_iter()
        .flat_map(|g| h.edges(g).map(|e| e.to).collect::<Vec<_>>())
        .map(|c| report::RootCount { kind: h.name(c), count: h.edges(c).count() as u64 })
        .filter(|r| r.count > 0)
        .collect();
    roots.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.kind.cmp(&b.kind)));
    report::DumpInfo {
        file: path.display().to_string(),
        format: report::V8_FORMAT.into(),
        id_size: 4,
        timestamp_ms: 0,
        layout: "V8's own sizes (self_size)".into(),
        classes: by_class(h).len() as u64,
        objects: reachable.0 + unreachable.0,
        shallow_bytes: reachable.1 + unreachable.1,
        references: h.edge_count() as u64,
        roots,
        threads: 0,
        reachable_objects: reachable.0,
        reachable_bytes: reachable.1,
        unreachable_objects: unreachable.0,
        unreachable_bytes: unreachable.1,
        snapshot_bytes: h.heap_bytes() as u64,
        warnings: Vec::new(),
        dumps: Vec::new(),
        heaps: Vec::new(),
        detached_dom_nodes: h.has_detachedness().then(|| {
            h.nodes().filter(|&n| seen.contains(n.index()) && suspects::is_detached_dom_node(h, n)).count() as u64
        }),
        allocation_sites: Some(h.has_allocation_sites()),
        cut: None,
    }
}
