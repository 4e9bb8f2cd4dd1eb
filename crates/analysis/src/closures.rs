//! Transitive closures and GC closures of object groups (AntTracks, §3.2).
//!
//! The GC closure of a group is what would be freed if every member became unreachable. It is
//! computed with AntTracks' improved algorithm, at a cost proportional to the group's
//! transitive closure rather than to the heap: start from the transitive closure T; every
//! object of T (outside the group) that a GC root or a live object outside T references is
//! kept alive, and so is everything it reaches inside T; the rest of T is the GC closure.

use crate::retention::node;
use graph::{Csr, Progress};
use heap::{ObjIdx, Snapshot};
use serde::Serialize;

use crate::retention::{strong_closure, ObjSet, StrongGraph};
use crate::selector::Selector;

/// Sizes of one object group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GroupSizes {
    /// Objects in the group.
    pub objects: u64,
    /// Their shallow bytes.
    pub shallow_bytes: u64,
    /// Bytes strongly reachable from the group, the group included (deep size).
    pub transitive_bytes: u64,
    /// Bytes freed if every member became unreachable (the GC closure), the members
    /// themselves always included, garbage or not.
    pub retained_bytes: u64,
}

impl GroupSizes {
    /// The sizes as the reports show them.
    pub fn totals(&self) -> report::GroupTotals {
        report::GroupTotals {
            objects: self.objects,
            shallow_bytes: self.shallow_bytes,
            transitive_bytes: self.transitive_bytes,
            retained_bytes: self.retained_bytes,
        }
    }
}

/// Answers closure questions about many groups of one snapshot; holds the predecessor index
/// (5 bytes per reference and per object) and the live set.
pub struct Closures<'a> {
    snap: &'a Snapshot,
    /// Strong predecessors in super-root numbering: node 0 is the super-root, `i + 1` object `i`.
    preds: Csr,
    live: ObjSet,
}

impl<'a> Closures<'a> {
    /// Indexes predecessors and marks live objects.
    pub fn new(snap: &'a Snapshot, progress: &dyn Progress) -> Closures<'a> {
        let g = StrongGraph::new(snap);
        let preds = graph::reverse(&g, progress);
        let live = strong_closure(snap, g.roots(), None);
        Closures { snap, preds, live }
    }

    /// True when a strong path from a GC root reaches `o`.
    pub fn is_live(&self, o: ObjIdx) -> bool {
        self.live.contains(o)
    }

    /// Shallow, transitive and retained sizes of `group`.
    pub fn sizes(&self, group: &[ObjIdx]) -> GroupSizes {
        let s = self.snap;
        let (members, t, gc) = self.closures_of(group);
        let bytes = |set: &ObjSet| set.iter().map(|o| s.shallow_bytes(o)).sum::<u64>();
        GroupSizes {
            objects: members.len(),
            shallow_bytes: bytes(&members),
            transitive_bytes: bytes(&t),
            retained_bytes: bytes(&gc),
        }
    }

    /// What the GC would free if every object of `group` became unreachable.
    pub fn retained_set(&self, group: &[ObjIdx]) -> ObjSet {
        self.closures_of(group).2
    }

    /// `group` as a set, its transitive closure, and its GC closure.
    fn closures_of(&self, group: &[ObjIdx]) -> (ObjSet, ObjSet, ObjSet) {
        let s = self.snap;
        let mut members = ObjSet::new(s.object_count());
        group.iter().for_each(|&o| {
            members.insert(o);
        });
        let t = strong_closure(s, group, None);
        let gc = self.gc_closure(&members, &t);
        (members, t, gc)
    }

    /// The `retained` report: the sizes of each selector's group (`groups`, as the selectors
    /// chose them) and of all of them together.
    pub fn report(&self, selectors: &[Selector], groups: &[Vec<ObjIdx>]) -> report::RetainedReport {
        let mut all: Vec<ObjIdx> = groups.iter().flatten().copied().collect();
        all.sort_unstable();
        all.dedup();
        report::RetainedReport {
            groups: selectors
                .iter()
                .zip(groups)
                .map(|(sel, g)| report::SelectedGroup { selector: sel.to_string(), totals: self.sizes(g).totals() })
                .collect(),
            union: self.sizes(&all).totals(),
        }
    }

    /// The GC closure of `members`, given their transitive closure `t`.
    pub fn gc_closure(&self, members: &ObjSet, t: &ObjSet) -> ObjSet {
        let s = self.snap;
        let mut kept = ObjSet::new(s.object_count());
        let mut stack: Vec<ObjIdx> = Vec::new();
        for v in t.iter().filter(|&v| !members.contains(v)) {
            let held_from_outside = self.preds.successors(node::of(v)).any(|p| match node::object(p as usize) {
                None => true,
                Some(p) => self.live.contains(p) && !t.contains(p),
            });
            if held_from_outside && kept.insert(v) {
                stack.push(v);
            }
        }
        // Whatever a kept object reaches inside the closure is kept too; the group's members
        // are gone by assumption, so nothing passes through them.
        while let Some(v) = stack.pop() {
            for e in s.edges(v) {
                let w = e.target;
                if e.strength == heap::RefStrength::Strong && t.contains(w) && !members.contains(w) && kept.insert(w) {
                    stack.push(w);
                }
            }
        }
        let mut gc = t.clone();
        gc.subtract(&kept);
        // Objects only weakly reachable, or unreachable, that the group reaches are not freed
        // by it: they are garbage already. Its own members are counted all the same, so that
        // a group's retained size is never below its shallow size, as one object's is not.
        let mut dead = gc.clone();
        dead.subtract(&self.live);
        gc.subtract(&dead);
        gc.union_with(members);
        gc
    }
}
