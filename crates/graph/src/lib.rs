//! Java-free graph machinery: 40-bit packed index vectors ([`Packed40`]), compressed sparse
//! row adjacency ([`Csr`]), sets of indices ([`BitSet`]), exact dominators, and the
//! [`Progress`] sink that long loops report to.
//!
//! Heaps of more than 2^32 objects must work, so indices are 64-bit in the API; stored, they
//! take 5 bytes (up to 2^40 ≈ 1.1 × 10^12 entries), which saves 3 bytes per edge and per node
//! over `u64` and keeps no 32-bit limit.
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
mod csr;
mod dominators;
mod packed;
mod progress;
mod reverse;

pub use bits::BitSet;
pub use csr::{Csr, CsrBuilder};
pub use dominators::{dominators, Dominators, Graph};
pub use packed::{Packed40, Window40};
pub use progress::{NoProgress, Progress};
pub use reverse::reverse;
