//! What a collection keeps, and where it keeps it: the objects reachable from GC roots along
//! strong references (Cork counts only what a collection traces), and the tree of their
//! shortest reference paths from the roots, with class and field names.
//!
//! The roots are the dump's GC roots, then every class mirror they do not reach (the VM
//! holds its classes), as in the retention analyses. A breadth-first search from them gives
//! each live object its shortest path, and the path is folded into a [`PathNode`]: the steps
//! (referrer class, field, object class) from the root, with array indices masked, repeated
//! steps through one class folded into one (a bucket's `next`, `next`, ..., a tree's `left`,
//! `right`, ...), and every class mirror starting a path of its own (`class Foo`, then its
//! statics). Objects with one path shape share a node, so a node counts how many objects sit
//! at that place of the heap's structure: the sessions under `StandardManager.sessions` and
//! the entries of a static audit map are two nodes, though both are `ConcurrentHashMap`s.
//!
//! Both the streaming class graph ([`crate::ClassGraph`]) and the [`crate::Snapshot`] trace
//! through [`trace`], so the two agree object for object.

use hprof::RootKind;

use crate::classes::{ClassIdx, ClassKind, ClassTable};

/// No node, no parent, not reached.
pub const NONE: u32 = graph::NO_PLACE;

/// How a path step reaches its object from the step before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Via {
    /// A GC root of this kind holds it (the first step of a path).
    Root(RootKind),
    /// It is a class mirror: a path of its own starts there, whatever reached it.
    Mirror,
    /// An instance field, declared by `owner`.
    Field {
        /// Declaring class.
        owner: ClassIdx,
        /// Index in the owner's fields.
        field: u16,
    },
    /// An element of an object array (the index is masked).
    Element,
    /// A static field (index in the mirrored class's statics).
    Static(u16),
    /// A class's superclass.
    Super,
    /// A class's defining loader.
    Loader,
}

/// One place in the heap's structure: a path shape from a GC root, and the live objects whose
/// shortest path has that shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathNode {
    /// The node of the step before ([`NONE`] for a root or a class mirror).
    pub parent: u32,
    /// The objects' class; for a class mirror, the class it stands for.
    pub class: ClassIdx,
    /// Whether the objects are class mirrors (`class NAME`).
    pub mirror: bool,
    /// How the step before reaches them.
    pub via: Via,
    /// Live objects at this node.
    pub objects: u64,
    /// Their shallow bytes.
    pub bytes: u64,
}

impl PathNode {
    /// The node's class as reports name it: `NAME`, or `class NAME` for mirrors.
    pub fn class_name(&self, classes: &ClassTable) -> String {
        let name = &classes.get(self.class).name;
        if self.mirror {
            format!("class {name}")
        } else {
            name.clone()
        }
    }

    /// The step's label: a field name, `[]`, `static NAME`, or the root's kind.
    pub fn via_name(&self, nodes: &[PathNode], classes: &ClassTable) -> String {
        match self.via {
            Via::Root(kind) => kind.name().to_string(),
            Via::Mirror => String::new(),
            Via::Field { owner, field } => {
                classes.get(owner).fields.get(field as usize).map_or_else(|| "?".into(), |f| f.name.clone())
            }
            Via::Element => "[]".into(),
            Via::Static(i) => {
                let owner = nodes.get(self.parent as usize).map(|p| p.class);
                let name = owner.and_then(|c| classes.get(c).statics.get(i as usize)).map(|s| s.name.as_str());
                format!("static {}", name.unwrap_or("?"))
            }
            Via::Super => "<super>".into(),
            Via::Loader => "<classloader>".into(),
        }
    }
}

/// The live objects of a heap and the path tree over them.
#[derive(Debug, Clone, Default)]
pub struct Live {
    /// Per object, its path node; [`NONE`] for an object no root reaches.
    pub node_of: Vec<u32>,
    /// Per object, the object the search reached it from ([`NONE`] for roots and unreached
    /// objects); empty unless asked for.
    pub parent: Vec<u32>,
    /// The path tree; a node's parent always comes before it.
    pub nodes: Vec<PathNode>,
}

impl Live {
    /// Whether object `o` is reachable from a GC root.
    pub fn is_live(&self, o: usize) -> bool {
        self.node_of.get(o).is_some_and(|&n| n != NONE)
    }
}

/// A heap the search can walk: objects `0..len`, their classes and sizes, and their strong
/// references with the field each comes from (weak, soft and phantom referents left out).
pub(crate) trait Traced {
    /// Number of objects.
    fn len(&self) -> usize;
    /// The object's class (`java.lang.Class` for mirrors) and shallow bytes.
    fn class_and_bytes(&self, o: u32) -> (ClassIdx, u64);
    /// The class a mirror stands for.
    fn mirror(&self, o: u32) -> Option<ClassIdx>;
    /// Calls `f` with every reference of `o`, in record order: the referent, a label to
    /// give [`Traced::via`] if the search takes this reference, and whether it is strong (a
    /// weak, soft, phantom or final referent is not).
    fn edges(&self, o: u32, f: &mut dyn FnMut(u32, u32, bool));
    /// The step of the reference of `o` with `label`, during the call of [`Traced::edges`]
    /// on `o` that gave the label (most references lead to objects already reached, whose
    /// step is never needed).
    fn via(&self, o: u32, label: u32) -> Via;
}

/// The raw label of a reference inside its record, in 16 bits: an instance's slot in
/// [`crate::Class::ref_slots`], 0 for array elements, a mirror's static index, or these two.
pub(crate) const SUPER_SLOT: u16 = u16::MAX - 1;
/// See [`SUPER_SLOT`].
pub(crate) const LOADER_SLOT: u16 = u16::MAX;
/// A Reference's referent, when its class is not a strong reference.
pub(crate) const REFERENT_SLOT: u16 = u16::MAX - 2;

/// Turns a raw 16-bit label of a reference from an object of `class` (a mirror when
/// `mirror`) into a [`Via`].
pub(crate) fn via_of_slot(classes: &ClassTable, class: ClassIdx, mirror: bool, slot: u16) -> Via {
    if mirror {
        return match slot {
            SUPER_SLOT => Via::Super,
            LOADER_SLOT => Via::Loader,
            i => Via::Static(i),
        };
    }
    let c = classes.get(class);
    let slot = if slot == REFERENT_SLOT { c.referent_slot.map_or(slot, |s| s as u16) } else { slot };
    match c.kind {
        ClassKind::ObjectArray => Via::Element,
        _ => c.ref_slots.get(slot as usize).map_or(Via::Element, |s| Via::Field { owner: s.owner, field: s.field }),
    }
}

/// A path step of a JVM heap: the reference, the object's class, and whether it is a class
/// mirror (mirrors start paths of their own and never fold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Shape {
    via: Via,
    class: ClassIdx,
    mirror: bool,
}

impl graph::PathStep for Shape {
    type Class = ClassIdx;
    fn class(&self) -> ClassIdx {
        self.class
    }
    fn folds(&self) -> bool {
        !self.mirror
    }
}

/// The path nodes, interned and folded by [`graph::PathTree`].
#[derive(Default)]
struct Tree {
    nodes: Vec<PathNode>,
    shapes: graph::PathTree<Shape>,
}

impl Tree {
    fn node(&mut self, parent: u32, via: Via, class: ClassIdx, mirror: bool) -> u32 {
        let (n, new) = self.shapes.place(parent, Shape { via, class, mirror });
        if new {
            self.nodes.push(PathNode { parent, class, mirror, via, objects: 0, bytes: 0 });
        }
        n
    }
}

/// Breadth-first search from `roots` (object, kind; the first record of an object wins), then
/// from the `mirrors` those do not reach, then from stack frames' locals, along strong
/// references. Objects that only weak,
/// soft, phantom or final referents reach are live too (no collection has cleared them yet):
/// when the strong search ends, the referents it met start it again, their path showing the
/// `referent` step. With `keep_parents`, [`Live::parent`] is filled.
pub(crate) fn trace(g: &impl Traced, roots: &[(u32, RootKind)], mirrors: &[u32], keep_parents: bool) -> Live {
    let n = g.len();
    let mut s = Search {
        node_of: vec![NONE; n],
        parent: if keep_parents { vec![NONE; n] } else { Vec::new() },
        tree: Tree::default(),
        queue: Vec::new(),
    };
    let mut sorted: Vec<(u32, RootKind)> = roots.iter().copied().filter(|r| (r.0 as usize) < n).collect();
    sorted.sort_by_key(|r| r.0);
    sorted.dedup_by_key(|r| r.0);
    // A request thread's locals tie with a static for the shortest path in one heap and not
    // in the next.
    let (transient, lasting): (Vec<_>, Vec<_>) = sorted.into_iter().partition(|r| r.1.held_by_frame());
    let mut mirrors = mirrors.to_vec();
    mirrors.sort_unstable();
    let mut weak: Vec<(u32, u32, Via)> = Vec::new();
    let mut head = 0;
    for phase in 0.. {
        match phase {
            0 => lasting.iter().for_each(|&(o, kind)| s.claim(g, o, NONE, Via::Root(kind))),
            1 => mirrors.iter().for_each(|&o| s.claim(g, o, NONE, Via::Mirror)),
            2 => transient.iter().for_each(|&(o, kind)| s.claim(g, o, NONE, Via::Root(kind))),
            _ if weak.is_empty() => break,
            _ => {
                for (from, t, via) in std::mem::take(&mut weak) {
                    s.claim(g, t, from, via);
                }
            }
        }
        while head < s.queue.len() {
            let o = s.queue[head];
            head += 1;
            g.edges(o, &mut |t, label, strong| {
                if s.node_of[t as usize] != NONE {
                    return;
                }
                if strong {
                    s.claim(g, t, o, g.via(o, label));
                } else {
                    weak.push((o, t, g.via(o, label)));
                }
            });
        }
    }
    Live { node_of: s.node_of, parent: s.parent, nodes: s.tree.nodes }
}

/// The state of [`trace`]'s search.
struct Search {
    node_of: Vec<u32>,
    parent: Vec<u32>,
    tree: Tree,
    queue: Vec<u32>,
}

impl Search {
    /// Reaches `o` from `from` (or from a root, [`NONE`]) by `via`, unless it was reached.
    fn claim(&mut self, g: &impl Traced, o: u32, from: u32, via: Via) {
        if self.node_of[o as usize] != NONE {
            return;
        }
        let (class, bytes) = g.class_and_bytes(o);
        let node = match g.mirror(o) {
            Some(c) => self.tree.node(NONE, Via::Mirror, c, true),
            None => self.tree.node(if from == NONE { NONE } else { self.node_of[from as usize] }, via, class, false),
        };
        self.node_of[o as usize] = node;
        let nd = &mut self.tree.nodes[node as usize];
        nd.objects += 1;
        nd.bytes += bytes;
        if !self.parent.is_empty() {
            self.parent[o as usize] = from;
        }
        self.queue.push(o);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One object of a toy heap: class, bytes, the class it mirrors, edges as (target, field).
    type ToyObject = (u32, u64, Option<u32>, Vec<(u32, u16)>);

    struct Toy(Vec<ToyObject>);

    impl Traced for Toy {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn class_and_bytes(&self, o: u32) -> (ClassIdx, u64) {
            (ClassIdx(self.0[o as usize].0), self.0[o as usize].1)
        }
        fn mirror(&self, o: u32) -> Option<ClassIdx> {
            self.0[o as usize].2.map(ClassIdx)
        }
        fn edges(&self, o: u32, f: &mut dyn FnMut(u32, u32, bool)) {
            for &(t, slot) in &self.0[o as usize].3 {
                // Field 9 stands for a weak referent.
                f(t, u32::from(slot), slot != 9);
            }
        }
        fn via(&self, o: u32, label: u32) -> Via {
            Via::Field { owner: ClassIdx(self.0[o as usize].0), field: label as u16 }
        }
    }

    #[test]
    fn a_list_folds_into_one_node_and_garbage_has_none() {
        // 0: root holder (class 1) → 1 → 2 → 3 (class 2, `next`), 4 unreachable (class 2).
        let toy = Toy(vec![
            (1, 16, None, vec![(1, 0)]),
            (2, 24, None, vec![(2, 0)]),
            (2, 24, None, vec![(3, 0)]),
            (2, 24, None, vec![]),
            (2, 24, None, vec![(1, 0)]),
        ]);
        let live = trace(&toy, &[(0, RootKind::JniGlobal)], &[], true);
        assert_eq!(live.nodes.len(), 2);
        assert_eq!((live.nodes[1].objects, live.nodes[1].bytes), (3, 72));
        assert!(!live.is_live(4));
        assert_eq!(live.parent[3], 2);
    }

    #[test]
    fn what_only_a_referent_reaches_is_live_but_strong_paths_win() {
        // 0 (root) → 1 strongly, and weakly (field 9) → 2 and → 1; 2 holds 3.
        let toy = Toy(vec![
            (1, 16, None, vec![(2, 9), (1, 0), (1, 9)]),
            (2, 24, None, vec![]),
            (3, 24, None, vec![(3, 0)]),
            (4, 8, None, vec![]),
        ]);
        let live = trace(&toy, &[(0, RootKind::JniGlobal)], &[], true);
        assert!((0..4).all(|o| live.is_live(o)));
        let via = |o: usize| live.nodes[live.node_of[o] as usize].via;
        assert_eq!(via(1), Via::Field { owner: ClassIdx(1), field: 0 });
        assert_eq!(via(2), Via::Field { owner: ClassIdx(1), field: 9 });
        assert_eq!(live.parent[3], 2);
    }

    #[test]
    fn two_maps_of_one_class_under_different_fields_are_two_nodes() {
        // 0 (class 1) holds 1 and 2 (class 3) through fields 0 and 1; each holds an entry.
        let toy = Toy(vec![
            (1, 16, None, vec![(1, 0), (2, 1)]),
            (3, 48, None, vec![(3, 0)]),
            (3, 48, None, vec![(4, 0), (5, 0)]),
            (4, 32, None, vec![]),
            (4, 32, None, vec![]),
            (4, 32, None, vec![]),
        ]);
        let live = trace(&toy, &[(0, RootKind::StickyClass)], &[], false);
        let entries: Vec<u64> = live.nodes.iter().filter(|n| n.class == ClassIdx(4)).map(|n| n.objects).collect();
        assert_eq!(entries, vec![1, 2]);
    }

    #[test]
    fn mirrors_start_their_own_paths_and_unreached_ones_are_live() {
        // 0 is a root holding mirror 1; mirror 2 is held by nothing; each holds an object.
        let toy = Toy(vec![
            (1, 16, None, vec![(1, 0)]),
            (9, 100, Some(5), vec![(3, 0)]),
            (9, 100, Some(6), vec![(4, 0)]),
            (7, 8, None, vec![]),
            (7, 8, None, vec![]),
        ]);
        let live = trace(&toy, &[(0, RootKind::JavaFrame)], &[1, 2], false);
        assert!((0..5).all(|o| live.is_live(o)));
        let m = &live.nodes[live.node_of[1] as usize];
        assert!(m.mirror && m.parent == NONE && m.class == ClassIdx(5));
        assert_eq!(live.nodes[live.node_of[3] as usize].parent, live.node_of[1]);
    }
}
