//! Everything the HTML report and the web UI show: the series' growth, the volume curves, and
//! for the last dump its suspects, dominator tree, roots and histogram.

use std::path::PathBuf;

use crate::inputs::{self, InputKind};
use crate::series::{fill_holders, read_run, read_series, run_report, SeriesRequest};
use crate::{load_snapshot, snapshot_of, Error, ReadSettings, Reporter, Result};

/// What the report and the web UI include; shared so that both show the same model.
#[derive(Debug, Clone)]
pub struct View {
    /// How growth is judged.
    pub options: growth::Options,
    /// Growing structures whose holders are searched in the last dump (`usize::MAX`: all).
    pub top: usize,
    /// Holder objects shown per container class.
    pub holders: usize,
    /// Classes whose volume curves are drawn (the biggest in the last heap).
    pub classes: usize,
    /// Levels of the dominator tree included.
    pub tree_depth: usize,
    /// Children shown per dominator tree node.
    pub tree_width: usize,
    /// Histogram rows included (0 means all).
    pub histogram_rows: usize,
    /// Show the text of the strings listed: they may hold secrets.
    pub show_values: bool,
}

/// The inputs read: the series' summaries, the growth ranking and the last dump, if any.
pub struct Gathered {
    /// Summaries of the heaps shown, oldest first.
    pub series: Vec<growth::HeapSummary>,
    /// The ranking; `None` for one dump.
    pub growth: Option<report::GrowthReport>,
    /// The last input, fully indexed, when it is a dump.
    pub last: Option<heap::Snapshot>,
    /// Its live objects' places in the path tree, when the series traced them.
    pub last_live: Option<heap::Live>,
    /// Caveats about the inputs.
    pub notes: Vec<String>,
}

/// Reads the inputs as `growth` reads them: dumps or summaries, one run store (with the
/// holders in the heap dump its agent captured, if any), or one dump.
pub fn gather(inputs: &[PathBuf], view: &View, settings: &ReadSettings, reporter: &dyn Reporter) -> Result<Gathered> {
    let opts = &view.options;
    let mut notes = Vec::new();
    if let Some(store) = inputs::run_store(inputs)? {
        let run = read_run(store)?;
        let mut report = run_report(&run, opts, &[]);
        if view.holders > 0 {
            crate::series::explain_with_capture(&mut report, &run, settings, reporter, view.top, view.holders)?;
        }
        let shown: Vec<&str> = report.snapshots.iter().map(|s| s.source.as_str()).collect();
        let series = run.samples.into_iter().filter(|s| shown.contains(&s.source.as_str())).collect();
        return Ok(Gathered { series, growth: Some(report), last: None, last_live: None, notes });
    }
    if let [only] = inputs {
        if inputs::kind(only)? != InputKind::Dump {
            return Err(Error::Usage(format!(
                "{} is one saved summary: it has no objects to show and no series to rank; give two or more heaps, or a dump",
                only.display()
            )));
        }
        let last = Some(load_snapshot(only, settings, reporter)?);
        return Ok(Gathered { series: Vec::new(), growth: None, last, last_live: None, notes });
    }
    let req = SeriesRequest { inputs, settings, options: opts, explain: &[], keep_last: true };
    let crate::series::Series { summaries: series, report, last } = read_series(req, reporter)?;
    let Some(last) = last else {
        notes.push(
            "the last input is a saved summary, not a dump: no holders, suspects, dominator tree or roots".into(),
        );
        return Ok(Gathered { series, growth: Some(report), last: None, last_live: None, notes });
    };
    let snap = snapshot_of(last.dump, &last.path, settings, reporter, false)?;
    Ok(Gathered { series, growth: Some(report), last: Some(snap), last_live: Some(last.live), notes })
}

/// The analyses of the last dump that the report and the web UI draw from.
pub struct Analyses<'s> {
    /// The dump.
    pub snap: &'s heap::Snapshot,
    /// Dominator tree and retained sizes.
    pub retention: analysis::Retention,
    /// Shortest paths from GC roots.
    pub paths: analysis::PathFinder<'s>,
    /// Closures of object groups.
    pub closures: analysis::Closures<'s>,
}

impl<'s> Analyses<'s> {
    /// Runs every analysis of `snap`, the last of `inputs` inputs (the reporter says so).
    pub fn of_last(snap: &'s heap::Snapshot, inputs: usize, reporter: &dyn Reporter) -> Analyses<'s> {
        reporter.input(inputs, inputs);
        let retention = analysis::Retention::build(snap, reporter);
        let paths = analysis::PathFinder::new(snap, reporter);
        let closures = analysis::Closures::new(snap, reporter);
        Analyses { snap, retention, paths, closures }
    }

    /// The report's view of this dump; fills the growth candidates' holders.
    pub fn heap_view(
        &self,
        source: String,
        growth: Option<&mut report::GrowthReport>,
        live: Option<&heap::Live>,
        view: &View,
        progress: &dyn graph::Progress,
    ) -> report::HeapView {
        let (snap, retention) = (self.snap, &self.retention);
        if let Some(g) = growth {
            fill_holders(g, snap, live, retention, &self.paths, view.top, view.holders);
        }
        let mut histogram = analysis::histogram(&snap.census, analysis::GroupBy::Class);
        if view.histogram_rows > 0 {
            histogram.classes.truncate(view.histogram_rows);
        }
        let mut dominator_tree = analysis::dominator_tree(snap, retention, view.tree_width, view.tree_depth);
        if view.show_values {
            add_values(snap, &mut dominator_tree);
        }
        let refused = crate::analyses::suspects_can_be_named(snap).err().map(|e| e.to_string());
        let suspects = match refused {
            None => analysis::suspects(snap, retention, &self.paths, SUSPECT_SHARE),
            Some(_) => report::SuspectsReport {
                live_bytes: retention.live_bytes(),
                threshold: SUSPECT_SHARE,
                suspects: Vec::new(),
            },
        };
        report::HeapView {
            source,
            live_bytes: retention.live_bytes(),
            suspects,
            suspects_refused: refused,
            dominator_tree,
            roots: analysis::roots_report(snap, retention, 20, progress),
            histogram,
        }
    }
}

/// The smallest share of the live heap a suspect on the page keeps.
const SUSPECT_SHARE: f64 = 0.10;

/// Fills in the text of the strings in a dominator tree.
fn add_values(snap: &heap::Snapshot, nodes: &mut [report::DomNode]) {
    for n in nodes {
        n.value = snap.find(n.object.id.0).and_then(|o| snap.string_value(o, analysis::VALUE_CHARS));
        add_values(snap, &mut n.nodes);
    }
}

/// The report's model from what was read and the last dump's analyses (if it is a dump).
pub fn model(
    inputs: &[PathBuf],
    view: &View,
    gathered: Gathered,
    analyses: Option<&Analyses<'_>>,
    progress: &dyn graph::Progress,
) -> report::LeakReport {
    let Gathered { series, mut growth, notes, last_live, .. } = gathered;
    let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    let heap = analyses.map(|a| {
        a.heap_view(names.last().cloned().unwrap_or_default(), growth.as_mut(), last_live.as_ref(), view, progress)
    });
    // The series' inputs not read whole, the last dump's with what its cut took.
    let mut incomplete: Vec<String> = growth.as_ref().map(|g| g.incomplete.clone()).unwrap_or_default();
    if let (Some(a), Some(last)) = (analyses, names.last()) {
        if let Some(cut) = analysis::cut(a.snap) {
            incomplete.retain(|i| !i.starts_with(&format!("{last}: ")));
            incomplete.push(format!("{last}: {}", cut.took()));
        }
    }
    report::LeakReport {
        incomplete,
        inputs: names,
        class_curves: class_curves(&series, view.classes),
        growth,
        heap,
        show_values: view.show_values,
        notes,
    }
}

/// The heaps `baseline` and `current` of `series` compared: their diff, and the growth of the
/// heaps from one to the other, judged with `options`.
pub fn compare(
    series: &[growth::HeapSummary],
    baseline: usize,
    current: usize,
    options: &growth::Options,
) -> Result<report::Comparison> {
    if baseline >= current || current >= series.len() {
        return Err(Error::Usage(format!(
            "compare a baseline with a later heap: {baseline} and {current} of heaps 0 to {}",
            series.len().saturating_sub(1)
        )));
    }
    Ok(report::Comparison {
        baseline: baseline as u64,
        current: current as u64,
        diff: growth::diff(&series[baseline], &series[current]),
        growth: growth::analyze(&series[baseline..=current], options, &[]),
    })
}

/// Bytes per heap of the `n` classes biggest in the last heap.
fn class_curves(series: &[growth::HeapSummary], n: usize) -> Vec<report::ClassCurve> {
    let Some(last) = series.last() else {
        return Vec::new();
    };
    let mut biggest: Vec<&growth::ClassVolume> = last.classes.iter().collect();
    biggest.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(&b.name)));
    biggest
        .into_iter()
        .take(n)
        .map(|c| report::ClassCurve {
            class: c.name.clone(),
            volumes: series
                .iter()
                .map(|s| s.classes.iter().find(|v| v.name == c.name).map_or(0, |v| v.bytes))
                .collect(),
        })
        .collect()
}
