//! Questions about one heap: what is in it ([`histogram`]), what the GC roots reach, what
//! keeps what alive (dominators and retained sizes, group closures, shortest paths from
//! roots, bytes per root), where memory accumulates (suspects), and who holds the structures
//! a series found growing. Each answer is a model of the `report` crate.
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
mod inspect;
mod paths;
mod reachability;
mod retention;
mod roots;
mod selector;
mod summary;
mod suspects;

pub use closures::{Closures, GroupSizes};
pub use dominator_tree::{dominator_report, dominator_row, dominator_tree, ParentError};
pub use expectations::{dead_groups, expectations, EXPECTED_CLASS};
pub use group::{classify, Classifier, GroupTree};
pub use histogram::{heaps, histogram, GroupBy, NO_PACKAGE};
pub use holders::{loader_leak_details, structure_holders};
pub use inspect::{primitive_text, InspectPage, Inspector, VALUE_CHARS};
pub use paths::{
    frame_text, report_steps, thread_label, MergedPath, PathFinder, RootInfo, RootPath, Step, VM_HELD_CLASS,
};
pub use reachability::{reachability, Reachability};
pub use retention::{
    closure, node, retention_roots, strong_bfs, strong_closure, ObjSet, Reached, Retention, StrongGraph,
};
pub use roots::roots_report;
pub use selector::{SelectError, Selector};
pub use summary::{cut, incomplete, summarize, summarize_live, summarize_snapshot, Cut};
pub use suspects::suspects;
