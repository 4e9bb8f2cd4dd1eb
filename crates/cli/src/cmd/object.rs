//! `leakscope object`: one object looked into — its fields, elements and referrers.

use anyhow::Context;
use clap::Args;

use render::Text;

use crate::dump_args::{self, OneDump};
use crate::exit::Exit;

/// One object looked into, as MAT's inspector shows it: its fields with their values (a
/// class's static fields for a class), its array elements, the objects that reference it
/// (strong references first), the one object that dominates it, its shallow, deep and
/// retained sizes, and its shortest path from a GC root.
///
/// References show the class, id and retained size of what they point to, so that the next
/// `leakscope object` is one copy away. String contents and primitive arrays' values are user
/// data: they are shown only with --show-values. Primitive fields are always shown.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope object app.hprof 0x7ff012a40
  leakscope object app.hprof 0x7ff012a40 --referrers-from 25 --limit 25
  leakscope object app.hprof 0x7ff012a40 --show-values --json")]
#[command(mut_arg("json", |a| a.help("Print one JSON document: {\"object\",\"live\",\"dominator\",\"sizes\",\"roots\",\"fields\":[{\"name\",\"declared_by\",\"is_static\",\"type\",\"value\",\"target\":{\"id\",\"class\",\"retained_bytes\"}}],\"array\":{\"element_type\",\"length\",\"offset\",\"elements\",\"values_hidden\"},\"referrers\":{\"total\",\"strong\",\"offset\",\"rows\":[{\"id\",\"class\",\"retained_bytes\",\"field\",\"strength\"}]},\"paths\",\"value\"}.")))]
pub struct ObjectArgs {
    #[command(flatten)]
    pub input: OneDump,
    /// The object's id, as other commands print it (0x7ff012a40).
    #[arg(value_name = "ID", value_parser = dump_args::parse_id)]
    pub id: u64,
    /// Array elements and referrers listed per page.
    #[arg(long, value_name = "N", default_value_t = 25)]
    pub limit: usize,
    /// The first array element listed (0 is the first).
    #[arg(long, value_name = "INDEX", default_value_t = 0)]
    pub elements_from: u64,
    /// The first referrer listed (0 is the first).
    #[arg(long, value_name = "INDEX", default_value_t = 0)]
    pub referrers_from: u64,
    /// Show string contents and primitive arrays' values (they may hold passwords and
    /// customers' data).
    #[arg(long)]
    pub show_values: bool,
}

/// Runs the command.
pub fn run(args: &ObjectArgs) -> anyhow::Result<Exit> {
    let (bar, snap) = args.input.snapshot()?;
    let page = analysis::InspectPage {
        elements_from: args.elements_from,
        referrers_from: args.referrers_from,
        limit: args.limit.max(1),
        show_values: args.show_values,
    };
    let view = app::analyses::object(&snap, args.id, page, &bar)
        .with_context(|| format!("no object at {} in {}", report::ObjectId(args.id), args.input.dump.display()))?;
    dump_args::emit(args.input.json, &view, bar.read_warnings(), |v| v.to_text())
}
