//! Questions about one heap. For now: what is in it ([`histogram`]), by class, package or
//! type hierarchy, from a [`heap::Census`] (everything in the dump, as the JVM counts it),
//! and how much of it the GC roots reach ([`reachability`]).
//!
//! ```no_run
//! let dump = heap::Dump::open(std::path::Path::new("app.hprof"))?;
//! let census = heap::Census::build(&dump, &Default::default(), &graph::NoProgress)?;
//! let h = analysis::histogram(&census, analysis::GroupBy::Package);
//! println!("{} bytes in {} objects", h.total_shallow_bytes, h.total_instances);
//! # Ok::<(), heap::Error>(())
//! ```

mod closures;
mod dominator_tree;
mod expectations;
mod group;
mod histogram;
mod holders;
mod paths;
mod reachability;
mod retention;
mod roots;
mod selector;
mod summary;
mod suspects;

pub use closures::{Closures, GroupSizes};
pub use dominator_tree::{dominator_row, dominator_tree};
pub use expectations::{expectations, EXPECTED_CLASS};
pub use group::{classify, Classifier, GroupTree};
pub use histogram::{heaps, histogram, GroupBy, NO_PACKAGE};
pub use holders::{loader_leak_details, retained_together, structure_holders};
pub use paths::{frame_text, MergedPath, PathFinder, RootInfo, RootPath, Step};
pub use reachability::{reachability, Reachability};
pub use retention::{closure, node, retention_roots, strong_closure, ObjSet, Retention, StrongGraph};
pub use roots::roots_report;
pub use selector::{SelectError, Selector};
pub use summary::{summarize, summarize_live, summarize_snapshot};
pub use suspects::suspects;
