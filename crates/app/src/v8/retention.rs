//! A snapshot's dominator tree and retained sizes, and its nodes by V8 id: what the commands
//! on one snapshot share.

use graph::Ints;
use heapsnapshot::{NodeIdx, V8Heap};

use crate::{Error, Result};

/// The dominator tree of a snapshot's retaining references from V8's root, with every node's
/// retained size.
pub struct Retention {
    pub(super) dom: graph::Dominators,
    pub(super) retained: Ints,
}

impl Retention {
    /// Computes the tree and the retained sizes.
    pub fn build(h: &V8Heap, progress: &dyn graph::Progress) -> Retention {
        let dom = graph::dominators(h, 0, progress);
        progress.start("retained sizes", 1);
        let retained = dom.subtree_sums(|v| h.self_size(NodeIdx(v as u32)));
        progress.finish();
        Retention { dom, retained }
    }

    /// Bytes freed if the node became unreachable.
    pub fn retained_bytes(&self, n: NodeIdx) -> u64 {
        self.retained.get(n.index())
    }

    /// Bytes of everything the root reaches.
    pub fn live_bytes(&self) -> u64 {
        self.retained.get(0)
    }
}

/// The node with V8 id `id` (`--children`, `id:`).
pub(super) fn by_id(h: &V8Heap, id: u64) -> Result<NodeIdx> {
    h.nodes()
        .find(|&n| h.id(n) == id)
        .ok_or_else(|| Error::Usage(format!("no node has the id {} (@{id}) in this snapshot", report::ObjectId(id))))
}
