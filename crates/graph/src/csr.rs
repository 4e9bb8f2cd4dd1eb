//! Compressed sparse row adjacency over dense node indices.

use crate::ints::{width_for, Ints};

/// Successor lists of nodes `0..n`, stored as offsets and one flat target array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Csr {
    offsets: Ints,
    targets: Ints,
}

impl Csr {
    /// A graph from its parts: `offsets` has one more entry than there are nodes, starts at 0,
    /// never decreases and ends at `targets.len()`.
    pub fn from_parts(offsets: Ints, targets: Ints) -> Csr {
        debug_assert_eq!(offsets.get(0), 0);
        debug_assert_eq!(offsets.get(offsets.len() - 1) as usize, targets.len());
        Csr { offsets, targets }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// Range of `node`'s edges in the flat target array.
    #[inline]
    pub fn edge_range(&self, node: usize) -> std::ops::Range<usize> {
        self.offsets.get(node) as usize..self.offsets.get(node + 1) as usize
    }

    /// Target of edge number `e`.
    #[inline]
    pub fn target(&self, e: usize) -> u64 {
        self.targets.get(e)
    }

    /// Successors of `node`, in insertion order.
    pub fn successors(&self, node: usize) -> impl Iterator<Item = u64> + '_ {
        self.edge_range(node).map(|e| self.targets.get(e))
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.offsets.heap_bytes() + self.targets.heap_bytes()
    }

    /// Bytes of the edge arrays, wherever they live.
    pub fn bytes(&self) -> usize {
        self.offsets.len() * self.offsets.width() + self.targets.len() * self.targets.width()
    }

    /// Says that the edges will be read in random order ([`Ints::advise_random`]).
    pub fn advise_random(&self) {
        self.offsets.advise_random();
        self.targets.advise_random();
    }

    /// Says that the edges will be read in node order for a while ([`Ints::advise_sequential`]).
    pub fn advise_sequential(&self) {
        self.offsets.advise_sequential();
        self.targets.advise_sequential();
    }

    /// Takes file-backed edge arrays out of resident memory until they are read again
    /// (see [`Ints::release`]).
    pub fn release(&self) {
        self.offsets.release();
        self.targets.release();
    }
}

/// Builds a [`Csr`] node by node, in index order; blocks built elsewhere can be appended.
#[derive(Debug, Clone)]
pub struct CsrBuilder {
    csr: Csr,
}

impl Default for CsrBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl CsrBuilder {
    /// An empty graph.
    pub fn new() -> Self {
        // The widest until the graph is known; `finish` narrows.
        let mut offsets = Ints::new(u64::MAX);
        offsets.push(0);
        CsrBuilder { csr: Csr { offsets, targets: Ints::new(u64::MAX) } }
    }

    /// Adds the next node with its successors.
    pub fn push_node(&mut self, succ: impl IntoIterator<Item = u64>) {
        for t in succ {
            self.csr.targets.push(t);
        }
        self.csr.offsets.push(self.csr.targets.len() as u64);
    }

    /// Adds the nodes of a block: `counts[i]` successors each, taken in order from `targets`.
    pub fn push_block(&mut self, counts: &[u32], targets: &[u64]) {
        let mut end = self.csr.targets.len() as u64;
        for &c in counts {
            end += u64::from(c);
            self.csr.offsets.push(end);
        }
        targets.iter().for_each(|&t| self.csr.targets.push(t));
        debug_assert_eq!(end as usize, self.csr.targets.len());
    }

    /// Finishes the graph, each array as narrow as its values allow.
    pub fn finish(self) -> Csr {
        let narrow = |wide: Ints| {
            let max = wide.iter().max().unwrap_or(0);
            if width_for(max) == wide.width() {
                return wide;
            }
            let mut out = Ints::with_capacity(wide.len(), max);
            wide.iter().for_each(|v| out.push(v));
            out
        };
        Csr { offsets: narrow(self.csr.offsets), targets: narrow(self.csr.targets) }
    }
}
