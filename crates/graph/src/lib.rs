//! Java-free graph machinery: index vectors as narrow as their values ([`Ints`]), compressed
//! sparse row adjacency ([`Csr`]), sets of indices ([`BitSet`]), exact dominators, and the
//! [`Progress`] sink that long loops report to.
//!
//! Heaps of more than 2^32 objects must work, so indices are 64-bit in the API; stored, they
//! take 4 bytes while the heap has fewer than 2^32 objects and references, 5 bytes beyond
//! (up to 2^40 ≈ 1.1 × 10^12), so no heap meets a 32-bit limit.
//!
//! ```
//! let mut b = graph::CsrBuilder::new();
//! b.push_node([1, 2]);
//! b.push_node([]);
//! b.push_node([0]);
//! let g = b.finish();
//! assert_eq!(g.successors(0).collect::<Vec<_>>(), vec![1, 2]);
//! assert_eq!(g.edge_count(), 3);
//! ```

mod bits;
mod components;
mod csr;
mod dominators;
mod graph;
mod idx;
mod ints;
mod packed;
mod path_tree;
mod place;
mod progress;
mod reverse;
mod spill;
mod temp;
pub mod varint;

pub use bits::BitSet;
pub use components::{components, Components, UNREACHED};
pub use csr::{Csr, CsrBuilder};
pub use dominators::{dominators, Dominators};
pub use graph::Graph;
pub use ints::{width_for, Bytes, BytesWriter, Ints, IntsWindow, IntsWriter};
pub use path_tree::{PathStep, PathTree, NO_PLACE};
pub use place::{Column, Placement};
pub use progress::{NoProgress, Progress};
pub use reverse::reverse;
pub use temp::{temp_file_in, TempFileFailed};
