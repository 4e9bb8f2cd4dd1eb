//! `leakscope retained`: what groups of objects keep alive, alone and together.

use clap::Args;

use render::TextWith;

use crate::dump_args::{self, OneDump};
use crate::exit::Exit;

/// Shallow, transitive and retained bytes of groups of objects, and of all of them together.
///
/// Each --select names a group. Transitive bytes are everything reachable from the group;
/// retained bytes are what would be freed if every object of the group became unreachable
/// (its GC closure). Groups can retain more together than the sum of their retained sizes:
/// two caches that share a million objects each retain little, both together retain the
/// million. Selectors: class:NAME, class:NAME+ (with subclasses), id:0xADDR,
/// static:CLASS.FIELD, rule:A>B>C (objects of class C reached from a GC root along a path
/// whose classes include A, then B). On a V8 heap snapshot: class:CONSTRUCTOR and id:0xID (V8's
/// ids, DevTools' @123), weak references retaining nothing.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope retained app.hprof --select class:com.acme.Session\n  leakscope retained app.hprof --select static:com.acme.Cache.BY_ID \\\n      --select static:com.acme.Cache.BY_NAME\n  leakscope retained app.hprof --select 'rule:SessionRegistry>Session' --json"
)]
#[command(mut_arg("json", |a| a.help("Print one JSON document: {\"groups\":[{\"selector\",\"objects\",\"shallow_bytes\",\"transitive_bytes\",\"retained_bytes\"}],\"union\":{...}}.")))]
pub struct RetainedArgs {
    /// A group of objects (repeatable).
    #[arg(long = "select", value_name = "SEL", required = true, value_parser = dump_args::parse_selector)]
    pub selectors: Vec<analysis::Selector>,
    #[command(flatten)]
    pub input: OneDump,
}

/// Runs the command.
pub fn run(args: &RetainedArgs) -> anyhow::Result<Exit> {
    let (bar, heap) = args.input.heap()?;
    let report = heap.retained(&args.selectors, &bar)?;
    dump_args::emit(args.input.json, &report, bar.read_warnings(), |r| TextWith::to_text(r, heap.weak_note()))
}
