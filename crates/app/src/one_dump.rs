//! Questions about one dump that need no series, whichever runtime wrote it: its histogram
//! (by heap, for Android dumps), its summary (`info`), and the analyses a JVM dump and a V8
//! heap snapshot both answer in the same models ([`OneHeap`]).

use std::path::Path;

use crate::{open_dump, snapshot_of, Error, ReadSettings, Reporter, Result};

/// One heap a command analyses: a JVM dump's snapshot or a V8 heap snapshot, told apart by
/// the file's first bytes. Each question is answered by the runtime's own analysis in the
/// command's model.
pub enum OneHeap {
    /// A JVM heap dump (HPROF), indexed.
    Jvm(heap::Snapshot),
    /// A V8 heap snapshot (Node.js, Chrome).
    V8(heapsnapshot::V8Heap),
}

impl OneHeap {
    /// Reads the dump or snapshot at `path` (gzip unpacked first).
    pub fn load(path: &Path, settings: &ReadSettings, reporter: &dyn Reporter) -> Result<OneHeap> {
        let dump = open_dump(path, settings)?;
        if crate::v8::is_snapshot_data(dump.data()) {
            return Ok(OneHeap::V8(crate::v8::read_dump(dump, path, settings, reporter)?));
        }
        Ok(OneHeap::Jvm(snapshot_of(dump, path, settings, reporter, true)?))
    }

    /// What does not keep objects alive in this runtime, said below retained sizes.
    pub fn weak_note(&self) -> &'static str {
        match self {
            OneHeap::Jvm(_) => report::WEAK_NOTE,
            OneHeap::V8(_) => report::V8_WEAK_NOTE,
        }
    }

    /// What paths do not go through in this runtime, said below them.
    pub fn paths_weak_note(&self) -> &'static str {
        match self {
            OneHeap::Jvm(_) => report::PATHS_WEAK_NOTE,
            OneHeap::V8(_) => report::V8_PATHS_WEAK_NOTE,
        }
    }

    /// As [`crate::analyses::dominators`] (V8: ids are V8's node ids).
    pub fn dominators(
        &self,
        children: Option<u64>,
        top: usize,
        flat: bool,
        reporter: &dyn Reporter,
    ) -> anyhow::Result<report::DominatorReport> {
        match self {
            OneHeap::Jvm(snap) => crate::analyses::dominators(snap, children, 0, top, flat, reporter),
            OneHeap::V8(h) => Ok(crate::v8::dominators(h, children, top, flat, reporter)?),
        }
    }

    /// As [`crate::analyses::paths`].
    pub fn paths(
        &self,
        selector: &analysis::Selector,
        max: usize,
        reporter: &dyn Reporter,
    ) -> anyhow::Result<report::PathsReport> {
        match self {
            OneHeap::Jvm(snap) => crate::analyses::paths(snap, selector, max, reporter),
            OneHeap::V8(h) => Ok(crate::v8::paths(h, selector, max)?),
        }
    }

    /// As [`crate::analyses::retained`] (V8: by reachability from V8's root).
    pub fn retained(
        &self,
        selectors: &[analysis::Selector],
        reporter: &dyn Reporter,
    ) -> anyhow::Result<report::RetainedReport> {
        match self {
            OneHeap::Jvm(snap) => crate::analyses::retained(snap, selectors, reporter),
            OneHeap::V8(h) => Ok(crate::v8::retained(h, selectors)?),
        }
    }

    /// As [`crate::analyses::suspects`] (V8: with the snapshot's own rules).
    pub fn suspects(&self, threshold: f64, reporter: &dyn Reporter) -> Result<report::SuspectsReport> {
        match self {
            OneHeap::Jvm(snap) => crate::analyses::suspects(snap, threshold, reporter),
            OneHeap::V8(h) => Ok(crate::v8::suspects(h, threshold, reporter)),
        }
    }
}

/// A dump's histogram, and the layout its sizes follow in a few words.
pub struct DumpHistogram {
    /// The rows, the heap counted and every heap (Android).
    pub histogram: report::Histogram,
    /// The layout sizes follow (`compressed oops, ...`, or an Android runtime's terms).
    pub layout: String,
}

/// The histogram of the dump at `path`, grouped `by`; for Android dumps, of the heap named
/// `heap` (`all` for every heap; the app heap by default, as Android Studio shows it).
pub fn histogram(
    path: &Path,
    settings: &ReadSettings,
    by: analysis::GroupBy,
    heap: Option<&str>,
    reporter: &dyn Reporter,
) -> Result<DumpHistogram> {
    let dump = open_dump(path, settings)?;
    if crate::v8::is_snapshot_data(dump.data()) {
        if by != analysis::GroupBy::Class || heap.is_some() {
            return Err(Error::Usage(format!(
                "{} is a V8 heap snapshot: its histogram is by constructor only (no --by package or hierarchy, no --heap)",
                path.display()
            )));
        }
        let h = crate::v8::read_dump(dump, path, settings, reporter)?;
        return Ok(DumpHistogram { histogram: crate::v8::histogram(&h), layout: report::V8_FORMAT.to_owned() });
    }
    let mut census = heap::Census::build(&dump, &settings.read, reporter)
        .map_err(|source| Error::Dump { path: path.to_owned(), source })?;
    reporter.warnings(&census.warnings);
    let heaps = analysis::heaps(&census);
    let heap = match (heap, heaps.is_empty()) {
        (Some(name), _) => Some(name.to_owned()),
        (None, false) => Some(heaps.iter().find(|h| h.name == "app").map_or("all", |_| "app").to_owned()),
        (None, true) => None,
    };
    if let Some(name) = &heap {
        census.select_heap(name).map_err(Error::Usage)?;
    }
    let mut histogram = analysis::histogram(&census, by);
    histogram.heap = heap;
    histogram.heaps = heaps;
    Ok(DumpHistogram { histogram, layout: census.layout_name() })
}

/// What `info` says of the dump at `path`, and the warnings of reading it (which `info`
/// explains rather than repeats).
pub fn info(
    path: &Path,
    settings: &ReadSettings,
    reporter: &dyn Reporter,
) -> Result<(report::DumpInfo, heap::Warnings)> {
    let dump = open_dump(path, settings)?;
    if crate::v8::is_snapshot_data(dump.data()) {
        let h = crate::v8::read_dump(dump, path, settings, reporter)?;
        return Ok((crate::v8::info(&h, path), heap::Warnings::default()));
    }
    let dumps = several_dumps(&dump, path, settings)?;
    let snap = snapshot_of(dump, path, settings, reporter, false)?;
    let r = analysis::reachability(&snap);
    let mut roots: Vec<report::RootCount> = Vec::new();
    for root in &snap.roots {
        let kind = root.kind.name();
        match roots.iter_mut().find(|r| r.kind == kind) {
            Some(r) => r.count += 1,
            None => roots.push(report::RootCount { kind: kind.into(), count: 1 }),
        }
    }
    roots.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.kind.cmp(&b.kind)));
    let c = &snap.census;
    let info = report::DumpInfo {
        file: path.display().to_string(),
        format: c.header.version.text().into(),
        id_size: c.header.id_size.bytes() as u32,
        timestamp_ms: c.header.timestamp_ms,
        layout: c.describe_layout(),
        classes: c.classes.len() as u64,
        objects: snap.object_count(),
        shallow_bytes: r.reachable_bytes + r.unreachable_bytes,
        references: snap.edge_count(),
        roots,
        threads: snap.threads.len() as u64,
        reachable_objects: r.reachable_objects,
        reachable_bytes: r.reachable_bytes,
        unreachable_objects: r.unreachable_objects,
        unreachable_bytes: r.unreachable_bytes,
        snapshot_bytes: snap.heap_bytes() as u64,
        warnings: c.warnings.items().iter().map(|w| w.to_string()).collect(),
        dumps,
        heaps: analysis::heaps(c),
        detached_dom_nodes: None,
        allocation_sites: None,
        cut: analysis::cut(&snap).map(|cut| cut.took()),
    };
    Ok((info, c.warnings.clone()))
}

/// The heap dumps of a file that holds several, each counted as `histogram --dump N` counts it.
fn several_dumps(dump: &heap::Dump, path: &Path, settings: &ReadSettings) -> Result<Vec<report::DumpEntry>> {
    let err = |source| Error::Dump { path: path.to_owned(), source };
    let starts = heap::dumps_in(dump).map_err(err)?;
    if starts.len() < 2 {
        return Ok(Vec::new());
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, (offset, timestamp_ms)) in starts.into_iter().enumerate() {
        let opts = heap::ReadOptions { dump: Some(i + 1), ..settings.read };
        let total = heap::Census::build(dump, &opts, &graph::NoProgress).map_err(err)?.total();
        out.push(report::DumpEntry {
            index: i + 1,
            offset,
            timestamp_ms,
            objects: total.instances,
            shallow_bytes: total.shallow_bytes,
        });
    }
    Ok(out)
}
