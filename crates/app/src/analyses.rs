//! The questions on one dump's snapshot, each answered as its command's model: what each
//! builds (a dominator tree, shortest paths, closures) is built here, once per question, so
//! that a command and an MCP tool asking the same question do the same work.

use heap::Snapshot;

use graph::Progress;

/// The top of the dominator tree (`children: None`), or what the object at `children`
/// dominates, `top` at most (0: all); `flat` lists the biggest retained sizes anywhere.
pub fn dominators(
    snap: &Snapshot,
    children: Option<u64>,
    offset: usize,
    top: usize,
    flat: bool,
    progress: &dyn Progress,
) -> anyhow::Result<report::DominatorReport> {
    let parent = children.map(|id| analysis::ParentError::find(snap, id)).transpose()?;
    let r = analysis::Retention::build(snap, progress);
    Ok(analysis::dominator_report(snap, &r, parent, offset, top, flat)?)
}

/// Objects grouped by the classifiers `by`, level by level, `top` sub-groups each.
pub fn group(snap: &Snapshot, by: &[analysis::Classifier], top: usize, progress: &dyn Progress) -> report::GroupReport {
    let closures = analysis::Closures::new(snap, progress);
    let tree = analysis::classify(snap, &closures, by, top);
    report::GroupReport { by: by.iter().map(ToString::to_string).collect(), tree }
}

/// The object at `id` looked into, from the page's positions; `None` when no object is there.
pub fn object(
    snap: &Snapshot,
    id: u64,
    page: analysis::InspectPage,
    progress: &dyn Progress,
) -> Option<report::ObjectView> {
    let o = snap.find(id)?;
    let retention = analysis::Retention::build(snap, progress);
    let paths = analysis::PathFinder::new(snap, progress);
    let closures = analysis::Closures::new(snap, progress);
    let inspector = analysis::Inspector::new(snap, &retention, &paths, &closures, progress);
    Some(inspector.view(o, page))
}

/// Up to `max` path shapes from GC roots to the objects `selector` picks.
pub fn paths(
    snap: &Snapshot,
    selector: &analysis::Selector,
    max: usize,
    progress: &dyn Progress,
) -> anyhow::Result<report::PathsReport> {
    let objects = selector.select(snap)?;
    let finder = analysis::PathFinder::new(snap, progress);
    Ok(finder.report(selector.to_string(), &objects, max))
}

/// Shallow, transitive and retained bytes of the groups `selectors` pick, alone and together.
pub fn retained(
    snap: &Snapshot,
    selectors: &[analysis::Selector],
    progress: &dyn Progress,
) -> anyhow::Result<report::RetainedReport> {
    let groups = selectors.iter().map(|sel| sel.select(snap)).collect::<Result<Vec<_>, _>>()?;
    Ok(analysis::Closures::new(snap, progress).report(selectors, &groups))
}

/// Bytes reachable from and retained by each root kind, static field, thread and frame.
pub fn roots(snap: &Snapshot, top: usize, progress: &dyn Progress) -> report::RootsReport {
    let retention = analysis::Retention::build(snap, progress);
    analysis::roots_report(snap, &retention, top, progress)
}

/// The objects that keep more than `threshold` (a share, 0 to 1) of the live heap alive; an
/// error for a dump whose cut took its threads (see [`suspects_can_be_named`]).
pub fn suspects(snap: &Snapshot, threshold: f64, progress: &dyn Progress) -> crate::Result<report::SuspectsReport> {
    suspects_can_be_named(snap)?;
    let retention = analysis::Retention::build(snap, progress);
    let paths = analysis::PathFinder::new(snap, progress);
    Ok(analysis::suspects(snap, &retention, &paths, threshold))
}

/// Suspects are what the program holds; a dump cut before its threads and their stacks (as
/// HotSpot writes them last) holds only what the classes reach, and a suspect named from that
/// (a JDK table of 500 KiB out of 78 MiB read) would be a confident wrong answer.
pub fn suspects_can_be_named(snap: &Snapshot) -> crate::Result<()> {
    match analysis::cut(snap).filter(analysis::Cut::roots_lost) {
        Some(cut) => Err(crate::Error::Usage(format!("cannot name suspects: {}", cut.took()))),
        None => Ok(()),
    }
}

/// A SQL session over `dumps`, each read in turn (the reporter says which); `show_values`
/// lets answers hold strings' text.
pub fn sql_session<R: crate::Reporter + Send + Sync + 'static>(
    dumps: &[std::path::PathBuf],
    settings: &crate::ReadSettings,
    show_values: bool,
    reporter: std::sync::Arc<R>,
) -> anyhow::Result<sql::Session> {
    let mut heaps = Vec::new();
    for (i, path) in dumps.iter().enumerate() {
        reporter.input(i + 1, dumps.len());
        let snap = crate::load_snapshot(path, settings, reporter.as_ref())?;
        heaps.push(sql::Heap::new(path.clone(), snap, reporter.clone()));
    }
    Ok(sql::Session::new(heaps, sql::Settings { show_values })?)
}
