//! Leak suspects: the few places where most of the heap accumulates (Eclipse MAT's leak
//! suspects report), grouped by data structure.
//!
//! A suspect is a dominator-tree node retaining at least `threshold` of the live heap, or a
//! class whose instances at the top of the tree together do. From a suspect, the report walks
//! down the dominator tree while one child keeps most of its parent's retained size; where
//! the size splits into many small parts is the accumulation point (typically a map's table
//! or a list's array), and what it holds is summarised by class rather than listed.

use crate::retention::node;
use std::collections::HashMap;

use graph::Csr;
use heap::{ClassIdx, ObjIdx, Snapshot};
use report::{Accumulated, PathStep, Suspect, SuspectsReport};

use crate::paths::PathFinder;
use crate::retention::Retention;

/// A child keeping at least this share of its parent's retained size continues the descent.
const CONCENTRATION: f64 = 0.8;

/// Finds the suspects of `s`.
pub fn suspects(s: &Snapshot, r: &Retention, paths: &PathFinder<'_>, threshold: f64) -> SuspectsReport {
    let live = r.live_bytes();
    let min = (live as f64 * threshold) as u64;
    let tree = r.tree_children();
    let children = |o: Option<ObjIdx>| -> Vec<ObjIdx> {
        tree.successors(node::of_parent(o)).filter_map(|v| node::object(v as usize)).collect()
    };
    let mut out = Vec::new();
    let top = children(None);
    // Single big retainers, found by descending from the top while a node is above the threshold.
    for &o in &top {
        if r.retained_bytes(o) >= min.max(1) {
            out.push(describe(s, r, paths, &tree, o, live, None));
        }
    }
    // Many top-level objects of one class that together retain enough. Class mirrors are not
    // instances of one class in any useful sense: each class's statics are a structure of
    // their own (named by the class above when they retain enough), so they are not lumped.
    let mut by_class: HashMap<ClassIdx, (u64, u64, ObjIdx)> = HashMap::new();
    for &o in top.iter().filter(|&&o| s.mirror_class(o).is_none()) {
        let e = by_class.entry(s.class_of(o)).or_insert((0, 0, o));
        (e.0, e.1) = (e.0 + 1, e.1 + r.retained_bytes(o));
        if r.retained_bytes(o) > r.retained_bytes(e.2) {
            e.2 = o;
        }
    }
    for (class, (count, bytes, biggest)) in by_class {
        if count > 1 && bytes >= min.max(1) && r.retained_bytes(biggest) < min {
            let mut sus = describe(s, r, paths, &tree, biggest, live, Some((class, count, bytes)));
            sus.retained_bytes = bytes;
            sus.share = bytes as f64 / live.max(1) as f64;
            out.push(sus);
        }
    }
    out.sort_by(|a, b| b.retained_bytes.cmp(&a.retained_bytes).then(a.title.cmp(&b.title)));
    SuspectsReport { live_bytes: live, threshold, suspects: out }
}

pub(crate) fn step(s: &Snapshot, o: ObjIdx, field: Option<String>) -> PathStep {
    PathStep { id: report::ObjectId(s.address(o)), class: s.type_label(o), field, folded: false }
}

fn describe(
    s: &Snapshot,
    r: &Retention,
    paths: &PathFinder<'_>,
    tree: &Csr,
    o: ObjIdx,
    live: u64,
    group: Option<(ClassIdx, u64, u64)>,
) -> Suspect {
    // Walk down while one child keeps most of the retained size.
    let mut chain = vec![step(s, o, None)];
    let mut cur = o;
    loop {
        let biggest = tree
            .successors(node::of(cur))
            .filter_map(|v| node::object(v as usize))
            .max_by_key(|&c| r.retained_bytes(c));
        match biggest {
            Some(c) if r.retained_bytes(c) as f64 >= r.retained_bytes(cur) as f64 * CONCENTRATION => {
                let field =
                    s.labeled_edges(cur).into_iter().find(|(_, e)| e.target == c).map(|(l, _)| s.label_name(cur, l));
                chain.push(step(s, c, field));
                cur = c;
            }
            _ => break,
        }
    }
    // What accumulates: every object the accumulation point dominates, by class.
    let mut contents: HashMap<ClassIdx, (u64, u64)> = HashMap::new();
    let mut stack: Vec<u64> = tree.successors(node::of(cur)).collect();
    let direct_children = stack.len();
    while let Some(v) = stack.pop() {
        let Some(c) = node::object(v as usize) else { continue };
        let e = contents.entry(s.class_of(c)).or_default();
        (e.0, e.1) = (e.0 + 1, e.1 + s.shallow_bytes(c));
        stack.extend(tree.successors(v as usize));
    }
    let mut contents: Vec<Accumulated> = contents
        .into_iter()
        .map(|(class, (count, bytes))| Accumulated {
            class: s.classes().get(class).name.clone(),
            count,
            shallow_bytes: bytes,
        })
        .collect();
    contents.sort_by(|a, b| b.shallow_bytes.cmp(&a.shallow_bytes).then(a.class.cmp(&b.class)));
    contents.truncate(6);
    let data_structure = data_structure(&chain);
    let root_path = paths.path(o);
    let root = root_path.as_ref().map(|p| p.root.label.clone()).unwrap_or_default();
    let path: Vec<PathStep> = root_path.map(|p| crate::paths::report_steps(s, &p.steps)).unwrap_or_default();
    let holder = path.iter().rev().find_map(|st| st.field.clone()).unwrap_or_default();
    let accumulation_point = (direct_children > 1).then(|| step(s, cur, None));
    let named = accumulation_point.as_ref().and_then(|_| person_name(&path, &chain));
    let title = match (group, named) {
        (Some((class, count, _)), _) => {
            format!("{} instances of {}", report::thousands(count), s.classes().get(class).name)
        }
        // What accumulates is named first, as a person would say it; the object that keeps
        // it is the suspect the dominator tree found.
        (None, Some(name)) => format!("{name}, kept by one {}", s.type_label(o)),
        (None, None) => {
            let held = if holder.is_empty() { String::new() } else { format!(" held by {holder}") };
            format!("one {}{held}", s.type_label(o))
        }
    };
    Suspect {
        title,
        retained_bytes: r.retained_bytes(o),
        share: r.retained_bytes(o) as f64 / live.max(1) as f64,
        path,
        root,
        chain,
        accumulation_point,
        data_structure,
        contents,
        instances: group.map_or(1, |g| g.1),
    }
}

/// The accumulating structure's name as a person says it (`growth::names`), from the path to
/// the suspect and the chain below it: `StandardManager.sessions (Tomcat's HTTP sessions)`.
fn person_name(path: &[PathStep], chain: &[PathStep]) -> Option<String> {
    let full: Vec<&PathStep> = path.iter().chain(chain.iter().skip(usize::from(!path.is_empty()))).collect();
    let n = full.len();
    let owner = if n >= 2 && full[n - 1].class.ends_with("[]") { n - 2 } else { n.checked_sub(1)? };
    let mut steps: Vec<growth::names::Step<'_>> = (1..=owner)
        .rev()
        .map(|k| growth::names::Step { owner: &full[k - 1].class, field: full[k].field.as_deref().unwrap_or("") })
        .collect();
    steps.push(growth::names::Step { owner: "", field: "" });
    let name = growth::names::person_name(&steps)?;
    Some(match (name.known_as, name.library) {
        (Some(k), _) => format!("{} ({k})", name.name),
        (None, Some(l)) => format!("{} ({l})", name.name),
        (None, None) => name.name,
    })
}

/// Names the data structure that accumulates: the owner of the accumulation point when that
/// is an array inside an object (a map's table), with the field that holds the owner.
fn data_structure(chain: &[PathStep]) -> Option<String> {
    let n = chain.len();
    let last = chain.last()?;
    let (owner, at) = if last.class.ends_with("[]") && n >= 2 { (&chain[n - 2], n - 2) } else { (last, n - 1) };
    let holder = (at >= 1).then(|| (&chain[at - 1], owner.field.as_deref().unwrap_or("?")));
    Some(match holder {
        Some((h, f)) => format!("{} {} in {}.{}", owner.class, owner.id, h.class, f.trim_start_matches("static ")),
        None => format!("{} {}", owner.class, owner.id),
    })
}
