//! Joins a growth slice with one heap's retention: which objects of the slice's containers
//! hold the growing part, how much each retains, and the path from a GC root to each.

use std::collections::{HashMap, HashSet};

use heap::{ClassIdx, ObjIdx, RefStrength, Snapshot};
use report::{Holder, PathRoot, Slice};

use crate::paths::PathFinder;
use crate::retention::Retention;
use crate::suspects::step;

/// Up to `max` holders of the growth in `slice`: the objects of the slice's container classes
/// that retain the most bytes of the candidate class (`slice.classes[0]`), found by walking up
/// the dominator tree from each candidate object to the first container object (the topmost of
/// a run of them, for a tree or list of the container class). When no container object
/// dominates any candidate object (shared structures), the container objects that reference the
/// next class on the slice, by retained size.
pub fn holders(s: &Snapshot, r: &Retention, paths: &PathFinder<'_>, slice: &Slice, max: usize) -> Vec<Holder> {
    let Some(candidate) = slice.classes.first() else { return Vec::new() };
    // Container classes as indices, once: instances of a class, or (`class NAME`) NAME's mirror.
    let (mut instances, mut statics) = (HashSet::new(), HashSet::new());
    for name in &slice.containers {
        match name.strip_prefix("class ") {
            Some(owner) => statics.extend(s.classes().find_all(owner)),
            None => instances.extend(s.classes().find_all(name)),
        }
    }
    let is_container = |o: ObjIdx| match s.mirror_class(o) {
        Some(c) => statics.contains(&c),
        None => instances.contains(&s.class_of(o)),
    };
    let wanted: HashSet<ClassIdx> = s.classes().find_all(candidate).collect();
    let mut credit: HashMap<ObjIdx, u64> = HashMap::new();
    for o in s.objects().filter(|&o| wanted.contains(&s.class_of(o)) && r.is_live(o)) {
        if let Some(top) = container_above(r, o, &is_container) {
            *credit.entry(top).or_default() += s.shallow_bytes(o);
        }
    }
    let mut found: Vec<(ObjIdx, u64)> = credit.into_iter().collect();
    if found.is_empty() {
        found = referencing(s, slice).into_iter().map(|o| (o, r.retained_bytes(o))).collect();
    }
    found.sort_by_key(|&(o, c)| (std::cmp::Reverse(c), o));
    found.into_iter().take(max).map(|(o, _)| holder(s, r, paths, o)).collect()
}

/// The first container object up the dominator tree from `o`, or the topmost of a run of them.
fn container_above(r: &Retention, o: ObjIdx, is_container: &dyn Fn(ObjIdx) -> bool) -> Option<ObjIdx> {
    let mut x = r.immediate_dominator(o);
    let mut found = None;
    for _ in 0..100_000 {
        match x {
            Some(d) if is_container(d) => found = Some(d),
            _ if found.is_some() => return found,
            None => return None,
            Some(_) => {}
        }
        x = x.and_then(|d| r.immediate_dominator(d));
    }
    found
}

/// Container objects with a strong reference to an object of the next class on the slice
/// (or, for `class NAME` containers, the objects NAME's static fields hold).
fn referencing(s: &Snapshot, slice: &Slice) -> Vec<ObjIdx> {
    let mut out = Vec::new();
    for container in &slice.containers {
        let next: HashSet<ClassIdx> = slice
            .edges
            .iter()
            .filter(|e| &e.from == container && e.to != e.from)
            .flat_map(|e| s.classes().find_all(&e.to))
            .collect();
        match container.strip_prefix("class ") {
            Some(owner) => out.extend(
                s.static_refs()
                    .into_iter()
                    .filter(|&(c, _, t)| s.classes().get(c).name == owner && next.contains(&s.class_of(t)))
                    .map(|(_, _, t)| t),
            ),
            None => {
                let own: HashSet<ClassIdx> = s.classes().find_all(container).collect();
                out.extend(
                    s.objects().filter(|&o| own.contains(&s.class_of(o)) && s.mirror_class(o).is_none()).filter(|&o| {
                        s.edges(o).any(|e| e.strength == RefStrength::Strong && next.contains(&s.class_of(e.target)))
                    }),
                );
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn holder(s: &Snapshot, r: &Retention, paths: &PathFinder<'_>, o: ObjIdx) -> Holder {
    let path = paths.path(o);
    Holder {
        class: s.type_label(o),
        id: report::hex_id(s.address(o)),
        retained_bytes: r.retained_bytes(o),
        root: path.as_ref().map(|p| PathRoot { kind: p.root.kind.clone(), detail: p.root.detail.clone() }),
        path: path.map(|p| p.steps.into_iter().map(|st| step(s, st.object, st.field)).collect()).unwrap_or_default(),
    }
}
