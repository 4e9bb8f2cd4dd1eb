//! `leakscope histogram`: what is in the heap, by class, package or type hierarchy.

use std::path::PathBuf;

use clap::Args;

use render::{Text, TextWith};

use crate::by::By;
use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;

/// Count instances and JVM shallow bytes per class, as `jcmd PID GC.class_histogram` does.
///
/// Every object in the dump is counted, reachable or not, and sizes are the JVM's own
/// (compressed oops, class pointers and alignment are inferred from object addresses), so
/// the numbers equal jcmd's for the same heap. Two known differences: `java.lang.Class`
/// (a dump holds classes as class records; leakscope estimates mirror sizes from the statics)
/// and, on JDK 25, heap fillers, which the dump writes as plain `int[]`.
///
/// Android dumps split objects into heaps (app, zygote, image); like Android Studio, the
/// histogram counts the app heap unless `--heap` says otherwise. Sizes there are the ones the
/// dump declares, and each class's static storage (`$staticOverhead`, `$classOverhead`) is
/// counted in its `java.lang.Class` row, not as `byte[]`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope histogram app.hprof\n  leakscope histogram app.hprof --by package --top 10\n  leakscope histogram app.hprof --by hierarchy --json > h.json"
)]
pub struct HistogramArgs {
    /// The heap dump (.hprof), as written by `jcmd PID GC.heap_dump FILE`, or a V8 heap
    /// snapshot (.heapsnapshot of Node.js or Chrome), counted by constructor as DevTools'
    /// Summary groups it; either may be gzip-compressed.
    pub dump: PathBuf,
    /// Group rows by class, by Java package, or by type hierarchy (each class with all its subclasses).
    #[arg(long, value_enum, default_value_t = By::Class)]
    pub by: By,
    /// Show only the N biggest rows (text default 30; JSON default all; 0 means all).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Android dumps: count one heap (app, zygote, image, ...) or all of them [default: app].
    #[arg(long, value_name = "NAME")]
    pub heap: Option<String>,
    /// Print one JSON document: {"classes":[{"name","instances","shallow_bytes"}],"total_instances","total_shallow_bytes"}
    /// (Android dumps add "heap" and "heaps").
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// Runs the command.
pub fn run(args: &HistogramArgs) -> anyhow::Result<Exit> {
    let bar = Bar::new(args.dump_args.quiet);
    let by = args.by.into();
    let settings = args.dump_args.settings();
    let app::one_dump::DumpHistogram { histogram: mut h, layout } =
        app::one_dump::histogram(&args.dump, &settings, by, args.heap.as_deref(), &bar)?;
    let top = match args.top {
        Some(0) => None,
        Some(n) => Some(n),
        None if args.json => None,
        None => Some(30),
    };
    if args.json {
        if let Some(n) = top {
            h.truncate(n);
        }
        return dump_args::emit(true, &h, bar.read_warnings(), |_| String::new());
    }
    let name_column = args.by.row();
    let which = match &h.heap {
        Some(heap) if heap == "all" => "all heaps: ".to_owned(),
        Some(heap) => format!("{heap} heap: "),
        None => String::new(),
    };
    outln!(
        "{} — {which}{} objects, {} ({})",
        args.dump.display(),
        report::thousands(h.total_instances),
        report::human_bytes(h.total_shallow_bytes),
        layout
    )?;
    if h.heap.is_some() {
        let heaps: Vec<String> = h.heaps.iter().map(|e| e.to_text()).collect();
        outln!("heaps: {}; --heap NAME or --heap all counts another", heaps.join(", "))?;
    }
    out!("{}", h.to_text(&render::HistogramText { name_column: name_column.into(), top }))?;
    Ok(Exit::Success)
}
