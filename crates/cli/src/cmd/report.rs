//! `leakscope report`: everything about a leak in one self-contained HTML page.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crate::cmd::growth::{fill_holders, read_series, run_report, RankingArgs, RUN_SAMPLES};
use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::heap_series::{self, InputKind};
use crate::progress::Bar;

/// Write one HTML file that shows a leak: heap occupancy over the series, the volume curves of
/// the growing and the biggest classes, each candidate's slice as a diagram with the holders'
/// paths from GC roots, and for the last dump the leak suspects, the dominator tree, the bytes
/// per GC root and the histogram.
///
/// The file has no script and loads nothing from the network: it opens offline and can be
/// attached to a bug. It holds class and field names but no string or array contents. Inputs
/// are read as `growth` reads them: dumps or saved summaries oldest first (the last dump is
/// fully indexed), one agent run store, or a single dump (no growth section).
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope report day1.hprof day2.hprof day3.hprof -o leak.html
  # one heap: suspects, dominators, roots
  leakscope report app.hprof -o app.html
  # a run recorded by `leakscope run` or `leakscope attach`
  leakscope report run.db -o run.html
  # the same model, as JSON
  leakscope report *.hprof --json > report.json")]
pub struct ReportArgs {
    /// Heap dumps (.hprof) or saved summaries (.json), oldest first; or one agent run store (RUN.db).
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// Write the HTML report to FILE.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub view: ViewArgs,
    /// Print the report's model as one JSON document on stdout: {"inputs","growth":{…as growth --json…},"class_curves":[{"class","volumes"}],"heap":{"source","live_bytes","suspects","dominator_tree":[{"id","class","shallow_bytes","retained_bytes","share","children","nodes","more"}],"roots","histogram"},"show_values","notes"}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// What the report and the web UI include; shared so that both show the same model.
#[derive(Debug, Args)]
pub struct ViewArgs {
    #[command(flatten)]
    pub ranking: RankingArgs,
    /// Growing structures whose holders are searched in the last dump (0 means all).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,
    /// Holder objects shown per container class.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub holders: usize,
    /// Classes whose volume curves are drawn (the biggest in the last heap).
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub classes: usize,
    /// Levels of the dominator tree included.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub tree_depth: usize,
    /// Children shown per dominator tree node.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub tree_width: usize,
    /// Histogram rows included (0 means all).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub histogram_rows: usize,
    /// Show the text of the java.lang.String objects listed (dominator tree, inspector): it may
    /// hold passwords, tokens, personal data. Off by default: no string or array contents leave the dump.
    #[arg(long)]
    pub show_values: bool,
}

/// Characters of a string shown with `--show-values`.
pub const VALUE_CHARS: usize = 200;

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

/// Reads the inputs as `growth` reads them: dumps or summaries, one run store, or one dump.
pub fn gather(inputs: &[PathBuf], view: &ViewArgs, dump: &DumpArgs, bar: &Bar) -> anyhow::Result<Gathered> {
    let opts = view.ranking.options()?;
    let mut notes = Vec::new();
    if let Some(store) = heap_series::run_store(inputs)? {
        let run = heap_series::read_run(store, RUN_SAMPLES)?;
        let report = run_report(&run, &opts, &[]);
        let shown: Vec<&str> = report.snapshots.iter().map(|s| s.source.as_str()).collect();
        let series = run.samples.into_iter().filter(|s| shown.contains(&s.source.as_str())).collect();
        return Ok(Gathered { series, growth: Some(report), last: None, last_live: None, notes });
    }
    if let [only] = inputs {
        if heap_series::kind(only)? != InputKind::Dump {
            anyhow::bail!(
                "{} is one saved summary: it has no objects to show and no series to rank; give two or more heaps, or a dump",
                only.display()
            );
        }
        let last = Some(dump_args::load_snapshot(only, dump, bar)?);
        return Ok(Gathered { series: Vec::new(), growth: None, last, last_live: None, notes });
    }
    let (series, report, last) = read_series(inputs, dump, &opts, &[], true, bar)?;
    let Some(last) = last else {
        notes.push(
            "the last input is a saved summary, not a dump: no holders, suspects, dominator tree or roots".into(),
        );
        return Ok(Gathered { series, growth: Some(report), last: None, last_live: None, notes });
    };
    let snap = dump_args::snapshot_of(last.dump, &last.path, dump, bar)?;
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
    /// Runs every analysis of `snap`, the last of `inputs` inputs (the bar says so).
    pub fn of_last(snap: &'s heap::Snapshot, inputs: usize, bar: &Bar) -> Analyses<'s> {
        bar.set_prefix(&format!("{inputs}/{inputs} "));
        let retention = analysis::Retention::build(snap, bar);
        let paths = analysis::PathFinder::new(snap, bar);
        let closures = analysis::Closures::new(snap, bar);
        Analyses { snap, retention, paths, closures }
    }

    /// The report's view of this dump; fills the growth candidates' holders.
    pub fn heap_view(
        &self,
        source: String,
        growth: Option<&mut report::GrowthReport>,
        live: Option<&heap::Live>,
        view: &ViewArgs,
    ) -> report::HeapView {
        let (snap, retention) = (self.snap, &self.retention);
        if let Some(g) = growth {
            fill_holders(g, snap, live, retention, &self.paths, dump_args::top_n(view.top), view.holders);
        }
        let mut histogram = analysis::histogram(&snap.census, analysis::GroupBy::Class);
        if view.histogram_rows > 0 {
            histogram.classes.truncate(view.histogram_rows);
        }
        let mut dominator_tree = analysis::dominator_tree(snap, retention, view.tree_width, view.tree_depth);
        if view.show_values {
            add_values(snap, &mut dominator_tree);
        }
        report::HeapView {
            source,
            live_bytes: retention.live_bytes(),
            suspects: analysis::suspects(snap, retention, &self.paths, 0.10),
            dominator_tree,
            roots: analysis::roots_report(snap, retention, &self.closures, 20),
            histogram,
        }
    }
}

/// Fills in the text of the strings in a dominator tree.
fn add_values(snap: &heap::Snapshot, nodes: &mut [report::DomNode]) {
    for n in nodes {
        n.value = dump_args::parse_id(&n.object.id)
            .ok()
            .and_then(|id| snap.find(id))
            .and_then(|o| snap.string_value(o, VALUE_CHARS));
        add_values(snap, &mut n.nodes);
    }
}

/// Runs the command.
pub fn run(args: &ReportArgs) -> anyhow::Result<Exit> {
    if args.output.is_none() && !args.json {
        anyhow::bail!("say where the report goes: -o FILE.html (or --json for the model on stdout)");
    }
    if let Some(out) = &args.output {
        dump_args::check_writable(out)?;
    }
    let bar = Bar::new(args.dump_args.quiet);
    let mut gathered = gather(&args.inputs, &args.view, &args.dump_args, &bar)?;
    let last = gathered.last.take();
    let analyses = last.as_ref().map(|snap| Analyses::of_last(snap, args.inputs.len(), &bar));
    let report = model(&args.inputs, &args.view, gathered, analyses.as_ref());
    if let Some(out) = &args.output {
        std::fs::write(out, report.to_html()).with_context(|| format!("cannot write {}", out.display()))?;
        if !args.dump_args.quiet {
            eprintln!("wrote {} (open it in a browser: it needs no network)", out.display());
        }
    }
    if args.json {
        dump_args::emit(true, &report, |_| String::new())?;
    }
    Ok(Exit::Success)
}

/// The report's model from what was read and the last dump's analyses (if it is a dump).
pub fn model(
    inputs: &[PathBuf],
    view: &ViewArgs,
    gathered: Gathered,
    analyses: Option<&Analyses<'_>>,
) -> report::LeakReport {
    let Gathered { series, mut growth, notes, last_live, .. } = gathered;
    let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    let heap = analyses
        .map(|a| a.heap_view(names.last().cloned().unwrap_or_default(), growth.as_mut(), last_live.as_ref(), view));
    report::LeakReport {
        inputs: names,
        class_curves: class_curves(&series, view.classes),
        growth,
        heap,
        show_values: view.show_values,
        notes,
    }
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
