//! `retained` on a V8 snapshot: what groups of objects keep alive, alone and together, by
//! reachability from V8's root along retaining references (weak edges do not retain).

use analysis::Selector;
use graph::{BitSet, Graph};
use heapsnapshot::{NodeIdx, V8Heap};

use super::paths::select;
use crate::Result;

/// Shallow, transitive and retained bytes of the groups `selectors` pick, and of all of them
/// together: what the root no longer reaches once a group is gone is what the group retains.
pub fn retained(h: &V8Heap, selectors: &[Selector]) -> Result<report::RetainedReport> {
    let groups = selectors.iter().map(|s| select(h, s)).collect::<Result<Vec<_>>>()?;
    let live = reach(h, &[0], None);
    let mut all: Vec<NodeIdx> = groups.iter().flatten().copied().collect();
    all.sort_unstable_by_key(|n| n.0);
    all.dedup();
    Ok(report::RetainedReport {
        groups: selectors
            .iter()
            .zip(&groups)
            .map(|(s, g)| report::SelectedGroup { selector: s.to_string(), totals: totals(h, &live, g) })
            .collect(),
        union: totals(h, &live, &all),
    })
}

/// The sizes of `members`, given what the root reaches (`live`).
fn totals(h: &V8Heap, live: &BitSet, members: &[NodeIdx]) -> report::GroupTotals {
    let n = h.node_count();
    let mut gone = BitSet::new(n);
    members.iter().for_each(|m| {
        gone.insert(m.index());
    });
    let starts: Vec<usize> = members.iter().map(|m| m.index()).collect();
    let reached_from_group = reach(h, &starts, None);
    let still = reach(h, &[0], Some(&gone));
    let bytes =
        |keep: &dyn Fn(usize) -> bool| (0..n).filter(|&v| keep(v)).map(|v| h.self_size(NodeIdx(v as u32))).sum();
    report::GroupTotals {
        objects: members.len() as u64,
        shallow_bytes: members.iter().map(|&m| h.self_size(m)).sum(),
        transitive_bytes: bytes(&|v| reached_from_group.contains(v)),
        retained_bytes: bytes(&|v| live.contains(v) && !still.contains(v)),
    }
}

/// The nodes reached from `starts` along retaining references, never entering `avoid`.
pub(super) fn reach(h: &V8Heap, starts: &[usize], avoid: Option<&BitSet>) -> BitSet {
    let blocked = |v: usize| avoid.is_some_and(|a| a.contains(v));
    let mut seen = BitSet::new(h.node_count());
    let mut stack: Vec<usize> = Vec::new();
    for &s in starts.iter().filter(|&&s| !blocked(s)) {
        if seen.insert(s) {
            stack.push(s);
        }
    }
    while let Some(v) = stack.pop() {
        h.successors(v, &mut |t| {
            if !blocked(t) && seen.insert(t) {
                stack.push(t);
            }
        });
    }
    seen
}
