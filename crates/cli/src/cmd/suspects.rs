//! `leakscope suspects`: where the memory accumulates.

use clap::Args;

use render::TextWith;

use crate::dump_args::{self, OneDump};
use crate::exit::Exit;

/// An automatic leak-suspects report: the objects (or the many instances of one class) that
/// retain a large share of the heap, the path from a GC root that holds each, the chain down
/// the dominator tree to the accumulation point (where the retained size splits into many
/// small parts, such as a map's table), and what accumulates there, by class.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  leakscope suspects app.hprof\n  leakscope suspects app.hprof --threshold 5 --json"
)]
#[command(mut_arg("dump", |a| a.help("The heap dump (.hprof) or V8 heap snapshot (.heapsnapshot), or gzip of one")))]
#[command(mut_arg("json", |a| a.help("Print one JSON document: {\"live_bytes\",\"threshold\",\"suspects\":[{\"title\",\"retained_bytes\",\"share\",\"root\",\"path\":[{\"id\",\"class\",\"field\"}],\"chain\":[...],\"accumulation_point\",\"data_structure\",\"contents\":[{\"class\",\"count\",\"shallow_bytes\"}],\"instances\"}]}.")))]
pub struct SuspectsArgs {
    /// Minimal share of the live heap, in percent, for a suspect.
    #[arg(long, value_name = "PERCENT", default_value_t = 10.0, value_parser = parse_percent)]
    pub threshold: f64,
    #[command(flatten)]
    pub input: OneDump,
}

/// A share above 0: a threshold of 0 would make every object a suspect.
fn parse_percent(s: &str) -> Result<f64, String> {
    let p = dump_args::parse_percent(s)?;
    if p > 0.0 {
        Ok(p)
    } else {
        Err(format!("`{s}` is not a percentage above 0"))
    }
}

/// Runs the command.
pub fn run(args: &SuspectsArgs) -> anyhow::Result<Exit> {
    let (bar, heap) = args.input.heap()?;
    let report = heap.suspects(args.threshold / 100.0, &bar)?;
    dump_args::emit(args.input.json, &report, bar.read_warnings(), |r| TextWith::to_text(r, heap.weak_note()))
}
