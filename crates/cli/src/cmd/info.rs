//! `leakscope info`: what a dump holds, how much of it is reachable, and the snapshot's cost.

use std::path::PathBuf;

use clap::Args;

use render::Text;

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;

/// Summarise a heap dump: format, layout, objects, references, GC roots, and how many
/// objects are reachable from the roots.
///
/// This reads the whole object graph (the snapshot every retention analysis starts from),
/// so it also shows what that costs in memory per object. "Reachable" follows every
/// reference from the dump's GC roots and from every loaded class; the rest is garbage the
/// JVM had not yet collected, heap fillers (JDK 25 writes them as int[]), or objects only
/// the VM itself holds, which `histogram` counts (as jcmd does) and reachability cannot.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope info app.hprof\n  leakscope info app.hprof --json | jq .reachable_bytes"
)]
pub struct InfoArgs {
    /// The heap dump (.hprof).
    pub dump: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// Runs the command.
pub fn run(args: &InfoArgs) -> anyhow::Result<Exit> {
    let bar = Bar::new(args.dump_args.quiet);
    let dump = dump_args::open(&args.dump, &args.dump_args)?;
    let dumps = several_dumps(&dump, &args.dump_args)?;
    let snap = dump_args::snapshot_of(dump, &args.dump, &args.dump_args, &bar)?;
    args.dump_args.print_warnings_explained(&snap.census.warnings);
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
        file: args.dump.display().to_string(),
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
    };
    dump_args::emit(args.json, &info, |r| r.to_text())
}

/// The heap dumps of a file that holds several, each counted as `histogram --dump N` counts it.
fn several_dumps(dump: &heap::Dump, args: &DumpArgs) -> anyhow::Result<Vec<report::DumpEntry>> {
    let starts = heap::dumps_in(dump)?;
    if starts.len() < 2 {
        return Ok(Vec::new());
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, (offset, timestamp_ms)) in starts.into_iter().enumerate() {
        let opts = heap::ReadOptions { dump: Some(i + 1), ..args.read_options() };
        let total = heap::Census::build(dump, &opts, &graph::NoProgress)?.total();
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
