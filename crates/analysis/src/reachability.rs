//! Which objects the GC roots keep alive, following every reference, weak ones included
//! (the JVM has not cleared them: they are live until a collection decides otherwise).

use heap::{ObjIdx, Snapshot};
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
/// (a class in a dump is loaded, so its statics are live), iteratively.
pub fn reachability(s: &Snapshot) -> Reachability {
    let n = s.object_count() as usize;
    let mut seen = vec![0u64; n.div_ceil(64)];
    let mut stack: Vec<ObjIdx> = Vec::new();
    let mirrors = s.mirrors().iter().map(|m| m.0);
    for o in s.roots.iter().map(|r| r.object).chain(mirrors) {
        push(&mut seen, &mut stack, o);
    }
    while let Some(o) = stack.pop() {
        for e in s.edges(o) {
            push(&mut seen, &mut stack, e.target);
        }
    }
    let mut r = Reachability::default();
    for o in s.objects() {
        let bytes = s.shallow_bytes(o);
        if seen[o.index() / 64] >> (o.index() % 64) & 1 == 1 {
            (r.reachable_objects, r.reachable_bytes) = (r.reachable_objects + 1, r.reachable_bytes + bytes);
        } else {
            (r.unreachable_objects, r.unreachable_bytes) = (r.unreachable_objects + 1, r.unreachable_bytes + bytes);
        }
    }
    r
}

fn push(seen: &mut [u64], stack: &mut Vec<ObjIdx>, o: ObjIdx) {
    let (w, b) = (o.index() / 64, o.index() % 64);
    if seen[w] >> b & 1 == 0 {
        seen[w] |= 1 << b;
        stack.push(o);
    }
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
