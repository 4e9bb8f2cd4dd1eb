//! A graph's successor lists packed small, for a depth-first search out of core.
//!
//! The search reads every node's list once, in an order that jumps about the node numbers, so
//! a list that is not in memory costs a read from the disk. A heap's references mostly point
//! near their source (an object and what it allocated with it): written as the difference to
//! the source, in as few bytes as that needs, the 45 M references of a 30 M-object Tomcat
//! heap take 1.9 bytes each, not 4, and with a byte of length per node the lists take 121 MB
//! instead of the 300 MB of the compressed sparse rows they come from. That fits where the
//! rows did not, and the search reads the disk for them far less often.

use std::path::Path;

use crate::ints::{Bytes, BytesWriter};
use crate::varint::{push as push_varint, read as read_varint, unzigzag, zigzag};
use crate::Graph;

/// Nodes per block: a node's list starts where its block's does, plus the lengths of the
/// block's nodes before it.
const BLOCK: usize = 64;

/// A list length byte that means "this long or longer: see [`Packed::long`]".
const LONG: u8 = u8::MAX;

/// Every node's successors, each as the zigzag LEB128 varint of its difference to the node.
pub(crate) struct Packed {
    lists: Bytes,
    /// Each node's list length in bytes, [`LONG`] for the rest.
    lens: Bytes,
    /// Where the list of every [`BLOCK`]th node starts.
    blocks: Vec<u64>,
    /// The nodes whose lists take [`LONG`] bytes or more, with their lengths, by node.
    long: Vec<(usize, usize)>,
}

impl Packed {
    /// The lists of `g`, read in one pass in node order, in temporary files in `dir`.
    pub(crate) fn of(g: &impl Graph, dir: Option<&Path>, progress: &dyn crate::Progress) -> Packed {
        let n = g.node_count();
        progress.start("packing references", n as u64);
        g.reading_in_order(true);
        let (mut lists, mut lens) = (BytesWriter::in_file(dir), BytesWriter::in_file(dir));
        let mut blocks = Vec::with_capacity(n.div_ceil(BLOCK));
        let mut long = Vec::new();
        let mut list = Vec::new();
        for v in 0..n {
            if v.is_multiple_of(BLOCK) {
                blocks.push(lists.len() as u64);
            }
            list.clear();
            g.successors(v, &mut |s| push_varint(&mut list, zigzag(s as i64 - v as i64)));
            if list.len() >= usize::from(LONG) {
                long.push((v, list.len()));
            }
            lens.push(&[list.len().min(usize::from(LONG)) as u8]);
            lists.push(&list);
            if (v + 1).is_multiple_of(1 << 16) {
                progress.advance(1 << 16);
            }
        }
        g.reading_in_order(false);
        progress.finish();
        Packed { lists: lists.finish(), lens: lens.finish(), blocks, long }
    }

    /// Calls `f` with every successor of `v`, in the order the graph gave them.
    #[inline]
    pub(crate) fn successors(&self, v: usize, f: &mut dyn FnMut(usize)) {
        let block = v / BLOCK;
        let mut at = self.blocks[block] as usize;
        for u in block * BLOCK..v {
            at += self.len(u);
        }
        let list = &self.lists[at..at + self.len(v)];
        let mut i = 0;
        while i < list.len() {
            let (d, used) = read_varint(&list[i..]);
            i += used;
            f((v as i64 + unzigzag(d)) as usize);
        }
    }

    #[inline]
    fn len(&self, v: usize) -> usize {
        match self.lens[v] {
            LONG => self.long[self.long.partition_point(|&(u, _)| u < v)].1,
            l => usize::from(l),
        }
    }
}

/// The graph `g` with its successor lists read from a [`Packed`] copy.
pub(crate) struct PackedGraph<'g, G> {
    pub(crate) packed: Packed,
    pub(crate) g: &'g G,
}

impl<G: Graph> Graph for PackedGraph<'_, G> {
    fn node_count(&self) -> usize {
        self.g.node_count()
    }
    fn successors(&self, node: usize, f: &mut dyn FnMut(usize)) {
        self.packed.successors(node, f);
    }
    fn late_successors(&self, root: usize, reached: &dyn Fn(usize) -> bool, f: &mut dyn FnMut(usize)) {
        self.g.late_successors(root, reached, f);
    }
    fn placement(&self) -> crate::Placement {
        self.g.placement()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CsrBuilder;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn packed_lists_are_the_graphs(
            lists in proptest::collection::vec(proptest::collection::vec(0u64..1 << 40, 0..200), 1..300),
        ) {
            let n = lists.len() as u64;
            let mut b = CsrBuilder::new();
            // Targets anywhere below n, near the node or far from it, and lists long enough to
            // take LONG bytes and more.
            for list in &lists {
                b.push_node(list.iter().map(|&t| t % n));
            }
            let csr = b.finish();
            let packed = Packed::of(&csr, None, &crate::NoProgress);
            for v in 0..csr.node_count() {
                let mut got = Vec::new();
                packed.successors(v, &mut |s| got.push(s as u64));
                prop_assert_eq!(got, csr.successors(v).collect::<Vec<_>>());
            }
        }
    }
}
