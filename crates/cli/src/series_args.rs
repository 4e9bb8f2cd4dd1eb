//! Flags of the commands that read a series of heaps (`growth`, `report`, `serve`): how
//! growth is ranked, and what the report and the web UI show.

use clap::{Args, ValueEnum};

use crate::dump_args;

/// How candidates are ranked, shared by `growth` and `report`.
#[derive(Debug, Args)]
pub struct RankingArgs {
    /// How growth is ranked: ratio (the default: what a class kept gaining, judged on the bytes
    /// still there in every later heap, with tests against noise and plateaus), cork (the same
    /// on all of its bytes, as first published), or slope (bytes gained per heap).
    #[arg(long, value_enum, default_value_t = MethodArg::Ratio)]
    pub method: MethodArg,
    /// How much a class's bytes may drop from one heap to the next and still count as growing,
    /// in percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 15.0)]
    pub decay: f64,
    /// How much a class must grow to be reported: its growth in percent of its size, summed
    /// over the heaps where it grew, recent growth weighing more (a class that doubled once
    /// scores about 100).
    #[arg(long, value_name = "R", default_value_t = 100.0)]
    pub rank_threshold: f64,
    /// How many times (from one heap to the next) a class must grow to be reported.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub min_phases: u32,
    /// Ignore classes that grew by less than this (64K, 2M, 1G or bytes).
    #[arg(long, value_name = "SIZE", default_value = "64K", value_parser = runstore::options::parse_bytes)]
    pub min_growth: u64,
    /// Judge growth only over heaps that span at least this long (30s, 5m), so that a warm-up
    /// is not taken for a leak [default: 1m for an agent's run store, none for dumps].
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    pub min_span: Option<u64>,
    /// Also report a class or structure that kept at least SIZE more in every heap than in the
    /// one before, whatever its rank: for heaps taken after equal rounds of the same work, as
    /// a leak test takes them (a few hundred bytes a round is a leak there).
    #[arg(long, value_name = "SIZE", value_parser = runstore::options::parse_bytes)]
    pub per_heap: Option<u64>,
}

/// A duration on the command line, in milliseconds.
fn duration_ms(s: &str) -> Result<u64, String> {
    crate::dump_args::parse_duration(s).map(|d| d.as_millis() as u64)
}

/// The ranking, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// What a class kept gaining, on the bytes still there in every later heap, with tests
    /// against noise and plateaus.
    Ratio,
    /// The same on all of a class's bytes, as first published.
    Cork,
    /// Bytes gained per heap.
    Slope,
}

impl RankingArgs {
    /// The growth engine's options, checked.
    pub fn options(&self) -> anyhow::Result<growth::Options> {
        if !(0.0..100.0).contains(&self.decay) {
            anyhow::bail!("--decay must be a percentage from 0 to below 100, not {}", self.decay);
        }
        let method = match self.method {
            MethodArg::Ratio => growth::Method::Ratio,
            MethodArg::Cork => growth::Method::Cork,
            MethodArg::Slope => growth::Method::Slope,
        };
        let ratio = growth::RatioParams {
            decay: self.decay / 100.0,
            threshold: self.rank_threshold,
            min_phases: self.min_phases.max(1),
        };
        Ok(growth::Options {
            method,
            ratio,
            min_growth_bytes: self.min_growth,
            min_span_ms: self.min_span,
            per_heap_bytes: self.per_heap,
            ..Default::default()
        })
    }
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

impl ViewArgs {
    /// What the application layer is asked to show.
    pub fn view(&self) -> anyhow::Result<app::leak_report::View> {
        Ok(app::leak_report::View {
            options: self.ranking.options()?,
            top: dump_args::top_n(self.top),
            holders: self.holders,
            classes: self.classes,
            tree_depth: self.tree_depth,
            tree_width: self.tree_width,
            histogram_rows: self.histogram_rows,
            show_values: self.show_values,
        })
    }
}
