//! Which objects the GC roots keep alive, following every reference, weak ones included
//! (the JVM has not cleared them: they are live until a collection decides otherwise).

use heap::{ObjIdx, Snapshot};

use crate::retention::closure;
use serde::Serialize;

/// Objects and bytes reachable from the roots, and the rest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Reachability {
    /// Objects reachable from a GC root or a loaded class.
    pub reachable_objects: u64,
    /// Their shallow bytes.
    pub reachable_bytes: u64,
    /// Objects in the dump that nothing in it reaches.
    pub unreachable_objects: u64,
    /// Their shallow bytes.
    pub unreachable_bytes: u64,
}

/// Marks everything reachable from the dump's GC roots and from every class the dump holds
/// (a class in a dump is loaded, so its statics are live), following every reference.
pub fn reachability(s: &Snapshot) -> Reachability {
    let start: Vec<ObjIdx> = s.roots.iter().map(|r| r.object).chain(s.mirrors().iter().map(|m| m.0)).collect();
    let seen = closure(s, &start, None, true);
    let mut r = Reachability::default();
    for o in s.objects() {
        let bytes = s.shallow_bytes(o);
        if seen.contains(o) {
            (r.reachable_objects, r.reachable_bytes) = (r.reachable_objects + 1, r.reachable_bytes + bytes);
        } else {
            (r.unreachable_objects, r.unreachable_bytes) = (r.unreachable_objects + 1, r.unreachable_bytes + bytes);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use hprof::RootKind;
    use testkit::{HeapBuilder, Ty};

    #[test]
    fn counts_what_roots_and_classes_reach() {
        let mut h = HeapBuilder::new();
        let node = h.class("Node", None, &[("next", Ty::Object)]);
        let a = h.instance(node);
        let b = h.instance(node);
        h.set(a, "next", b);
        let _garbage = h.instance(node);
        let held = h.primitive_array(Ty::Int, 4);
        h.static_ref(node, "HELD", Some(held));
        h.root(RootKind::JavaFrame, a);
        let s = Snapshot::build(heap::Dump::from_vec(h.build()), &Default::default(), &graph::NoProgress).unwrap();
        let r = reachability(&s);
        assert_eq!(r.unreachable_objects, 1);
        assert_eq!(r.unreachable_bytes, 16);
        assert_eq!(r.reachable_objects + r.unreachable_objects, s.object_count());
    }
}
