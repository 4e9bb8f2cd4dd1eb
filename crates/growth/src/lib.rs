//! Questions across a series of heaps: which data structure grows.
//!
//! Each heap is summarised as a [`HeapSummary`], Cork's class points-from graph (bytes per
//! class and per referrer → referent edge). [`analyze`] aligns a series of them by class
//! ([`Series`]), ranks every class and edge ([`ranking::judge`]: Cork's ratio ranking of
//! Figure 5 in [`ratio`], on kept volumes by default, or as published, or slope ranking), and
//! reports each candidate with its slice of growing edges up to the containing data structure.
//!
//! ```
//! use growth::{ClassVolume, HeapSummary};
//! let heap = |mb: u64| HeapSummary {
//!     source: format!("{mb} MB"),
//!     total_bytes: (mb + 100) << 20,
//!     classes: vec![ClassVolume { name: "Session".into(), instances: mb * 1000, bytes: mb << 20 }],
//!     ..Default::default()
//! };
//! let series: Vec<_> = [2, 4, 6, 8, 10].into_iter().map(heap).collect();
//! let report = growth::analyze(&series, &growth::Options::default(), &[]);
//! assert_eq!(report.candidates[0].class, "Session");
//! ```

mod analyze;
mod diff;
mod holders;
pub mod names;
pub mod platform;
mod process;
pub mod ranking;
pub mod ratio;
mod run;
mod series;
mod slice;
pub mod structures;
mod summary;
mod trend;
pub mod v8;

pub use process::{processes, same_process};
pub use ranking::{judge, judge_at, kept, positions, sampling_error, Method, Options, Verdict, RUN_MIN_SPAN_MS};
pub use ratio::{ratio_rank, RatioParams, RatioRank};
pub use series::{ClassSeries, EdgeSeries, Series};
pub use summary::{statics_of, ClassVolume, EdgeVolume, HeapSummary, LoaderCopies, PathVolume, ProcessMark};

pub use analyze::{analyze, headline_candidates};
pub use diff::diff;
pub use holders::ContainerHolder;
pub use run::analyze_run;

#[cfg(test)]
mod tests;
