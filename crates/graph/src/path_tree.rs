//! Places in a heap's structure: path shapes from the roots, interned step by step, with
//! repeated steps folded, whatever runtime the steps come from (a JVM field or array element,
//! a V8 property, element or closure variable).
//!
//! A place is a parent place and a step (how the object is reached, and its class). A step
//! that repeats folds into an earlier place: into its parent when it reaches the parent's
//! class (a list's `next`, a tree's `left`), or into an ancestor a few steps up when the whole
//! cycle of steps from that ancestor to this one repeats the steps that led to the ancestor (a
//! tree of nodes holding lists of nodes). A session's attribute map is reached by the same
//! steps as the map of sessions above it, but not by the same cycle, so it stays a place of
//! its own.

use std::hash::Hash;

use rustc_hash::FxHashMap;

/// No place: the parent of a path's first step.
pub const NO_PLACE: u32 = u32::MAX;

/// Steps back up the tree that a repeated step may fold into.
const FOLD_DEPTH: usize = 8;

/// One step of a path: how the step before reaches an object, and the object's class.
pub trait PathStep: Copy + Eq + Hash {
    /// What the step reaches, compared when folding.
    type Class: Copy + Eq;
    /// The class of the objects the step reaches.
    fn class(&self) -> Self::Class;
    /// Whether the step may fold into the places above it, and they into it (a JVM class
    /// mirror starts a path of its own and never does).
    fn folds(&self) -> bool {
        true
    }
}

/// The places of one heap, interned by (parent place, step).
#[derive(Debug, Clone)]
pub struct PathTree<S: PathStep> {
    parent: Vec<u32>,
    step: Vec<S>,
    map: FxHashMap<(u32, S), u32>,
}

impl<S: PathStep> Default for PathTree<S> {
    fn default() -> Self {
        PathTree { parent: Vec::new(), step: Vec::new(), map: FxHashMap::default() }
    }
}

impl<S: PathStep> PathTree<S> {
    /// The place `step` from `parent` ([`NO_PLACE`] for a path's first step) reaches, and
    /// whether it is new (then it is the last place, numbered [`Self::len`] − 1). A place's
    /// parent always comes before it.
    pub fn place(&mut self, parent: u32, step: S) -> (u32, bool) {
        if let Some(&n) = self.map.get(&(parent, step)) {
            return (n, false);
        }
        let (n, new) = match self.fold(parent, step) {
            Some(n) => (n, false),
            None => {
                self.parent.push(parent);
                self.step.push(step);
                (self.parent.len() as u32 - 1, true)
            }
        };
        self.map.insert((parent, step), n);
        (n, new)
    }

    /// Places so far.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// True before the first place.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The place before `n` ([`NO_PLACE`] for a path's first).
    pub fn parent(&self, n: u32) -> u32 {
        self.parent[n as usize]
    }

    /// The step that made place `n`.
    pub fn step(&self, n: u32) -> S {
        self.step[n as usize]
    }

    /// The place a step folds into, if any (see the module's doc).
    fn fold(&self, parent: u32, step: S) -> Option<u32> {
        if !step.folds() || parent == NO_PLACE {
            return None;
        }
        let p = self.step(parent);
        if p.class() == step.class() && p.folds() {
            return Some(parent);
        }
        // chain[0] = parent, chain[i + 1] = chain[i]'s parent.
        let mut chain = vec![parent];
        while chain.len() <= 2 * FOLD_DEPTH + 1 {
            match self.parent(*chain.last().unwrap()) {
                NO_PLACE => break,
                up => chain.push(up),
            }
        }
        let new_step = (Some(p.class()), step);
        for d in 1..=FOLD_DEPTH {
            // The steps ending at the new object and at chain[d] must be the same d + 1 steps.
            if chain.len() <= 2 * d {
                break;
            }
            let ending_here = std::iter::once(new_step).chain(chain[..d].iter().map(|&n| self.edge(n)));
            if ending_here.eq(chain[d..=2 * d].iter().map(|&n| self.edge(n))) {
                return Some(chain[d]);
            }
        }
        None
    }

    /// The step that reaches place `n`, with the class it is taken from.
    fn edge(&self, n: u32) -> (Option<S::Class>, S) {
        let from = (self.parent(n) != NO_PLACE).then(|| self.step(self.parent(n)).class());
        (from, self.step(n))
    }
}

#[cfg(test)]
mod tests {
    use super::{PathStep, PathTree, NO_PLACE};

    /// A step by (field, class).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    struct S(&'static str, &'static str);

    impl PathStep for S {
        type Class = &'static str;
        fn class(&self) -> &'static str {
            self.1
        }
    }

    #[test]
    fn a_list_folds_into_one_place_and_a_nested_map_does_not() {
        let mut t = PathTree::default();
        let (map, _) = t.place(NO_PLACE, S("static", "Map"));
        let (table, _) = t.place(map, S("table", "Node[]"));
        let (node, new) = t.place(table, S("[]", "Node"));
        assert!(new);
        assert_eq!(t.place(node, S("next", "Node")), (node, false), "a bucket's chain is one place");
        let (value, _) = t.place(node, S("value", "Session"));
        // The session's own map: the same steps as the map above, not the same cycle.
        let (attrs, new) = t.place(value, S("attributes", "Map"));
        assert!(new && attrs != map);
        let (inner, new) = t.place(attrs, S("table", "Node[]"));
        assert!(new && inner != table);
        assert_eq!(t.len(), 6);
        assert_eq!(t.parent(inner), attrs);
    }

    #[test]
    fn a_tree_of_lists_folds_once_its_cycle_has_repeated() {
        let mut t = PathTree::default();
        let (a, _) = t.place(NO_PLACE, S("root", "Tree"));
        let (l, _) = t.place(a, S("children", "List"));
        let (b, _) = t.place(l, S("[]", "Tree"));
        let (l2, new) = t.place(b, S("children", "List"));
        assert!(new && l2 != l, "the first repeat is a place: the steps to the root differ");
        let (c, _) = t.place(l2, S("[]", "Tree"));
        // Tree → List → Tree → List, reached the same way twice: folds into the second List.
        assert_eq!(t.place(c, S("children", "List")), (l2, false));
    }
}
