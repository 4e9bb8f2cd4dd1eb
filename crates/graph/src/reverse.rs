//! Predecessor lists: the reverse of a graph, as CSR.

use crate::{Csr, CsrBuilder, Graph, Progress};

/// Builds the reverse of `g`: the successors of `v` in the result are the predecessors of
/// `v` in `g`, in increasing order. Two passes over the edges.
pub fn reverse(g: &impl Graph, progress: &dyn Progress) -> Csr {
    let n = g.node_count();
    progress.start("predecessors", 2 * n as u64);
    let mut count = vec![0u32; n];
    for v in 0..n {
        g.successors(v, &mut |s| count[s] = count[s].saturating_add(1));
        if v % 65536 == 65535 {
            progress.advance(65536);
        }
    }
    let mut fill: Vec<u64> = Vec::with_capacity(n);
    let mut total = 0u64;
    for &c in &count {
        fill.push(total);
        total += u64::from(c);
    }
    let mut targets = vec![0u64; total as usize];
    for v in 0..n {
        g.successors(v, &mut |s| {
            targets[fill[s] as usize] = v as u64;
            fill[s] += 1;
        });
        if v % 65536 == 65535 {
            progress.advance(65536);
        }
    }
    drop(fill);
    let mut b = CsrBuilder::new();
    b.push_block(&count, &targets);
    progress.finish();
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoProgress;

    #[test]
    fn reverses() {
        let mut b = CsrBuilder::new();
        b.push_node([1, 2]);
        b.push_node([2]);
        b.push_node([0, 2]);
        let g = b.finish();
        let r = reverse(&g, &NoProgress);
        let preds: Vec<Vec<u64>> = (0..3).map(|v| r.successors(v).collect()).collect();
        assert_eq!(preds, vec![vec![2], vec![0], vec![0, 1, 2]]);
    }
}
