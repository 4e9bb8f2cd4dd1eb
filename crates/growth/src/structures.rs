//! Growth per reference path: which data structure the candidate classes pile up in.
//!
//! Cork's class ranking finds what grows; a class-level summary cannot tell two maps of one
//! class apart. Each heap's path tree ([`crate::PathVolume`]) can: its nodes are places in the
//! heap's structure, matched across heaps by their whole path from a GC root. For each
//! candidate class, its objects in the last heap are followed up their path to the
//! *structure*: the first place above them that is neither multiplied (a place whose own
//! objects keep getting more, such as each session's attribute map) nor a collection's
//! internals (arrays, a JDK collection's entry and table classes). The candidate's bytes under
//! that structure, in every heap, are judged with the same ranking and noise tests as
//! classes; the structures that grow are findings, one per structure, ordered by growth.

use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

use crate::ranking::{judge, Options};
use crate::summary::{HeapSummary, PathVolume};

/// Places shown per finding below the structure.
const MAX_GROWING_PATHS: usize = 6;

/// Whether a class belongs to the JDK (`java.`, `javax.`, `jdk.`, `sun.`, `com.sun.`).
pub fn is_jdk_class(name: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."].iter().any(|p| name.starts_with(p))
}

/// Whether a class is a collection's internals rather than a structure of its own: an array,
/// or a nested class of the JDK (`HashMap$Node`, `ConcurrentHashMap$Node[]`, `TreeMap$Entry`,
/// `ThreadLocal$ThreadLocalMap`, `ConcurrentHashMap$KeySetView`).
pub fn is_internal(name: &str) -> bool {
    !name.starts_with("class ") && (name.ends_with("[]") || (is_jdk_class(name) && name.contains('$')))
}

/// Whether a class is the application's (not the JDK's, not an array): such classes head a
/// finding's members.
fn is_application(name: &str) -> bool {
    !is_jdk_class(name) && !name.ends_with("[]")
}

/// One heap's path tree with every node's key: a hash of its whole path, the same in every
/// heap for the same path.
struct Tree<'a> {
    nodes: &'a [PathVolume],
    keys: Vec<u64>,
    /// Own objects per key (nodes of one path from classes of the same name add up).
    own: FxHashMap<u64, u64>,
}

impl<'a> Tree<'a> {
    fn new(h: &'a HeapSummary) -> Tree<'a> {
        let mut keys = Vec::with_capacity(h.paths.len());
        let mut own: FxHashMap<u64, u64> = FxHashMap::default();
        for n in &h.paths {
            let mut hasher = FxHasher::default();
            let parent = n.parent.and_then(|p| keys.get(p as usize).copied());
            parent.hash(&mut hasher);
            n.via.hash(&mut hasher);
            n.class.hash(&mut hasher);
            let k = hasher.finish();
            keys.push(k);
            *own.entry(k).or_default() += n.objects;
        }
        Tree { nodes: &h.paths, keys, own }
    }

    fn parent(&self, i: usize) -> Option<usize> {
        self.nodes[i].parent.map(|p| p as usize).filter(|&p| p < i)
    }

    /// Bytes and objects of class `class` at or below each key.
    fn under(&self, class: &str) -> FxHashMap<u64, (u64, u64)> {
        let mut sums = vec![(0u64, 0u64); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            if n.class == class {
                sums[i] = (n.bytes, n.objects);
            }
        }
        let mut out: FxHashMap<u64, (u64, u64)> = FxHashMap::default();
        for i in (0..self.nodes.len()).rev() {
            let (b, o) = sums[i];
            if b == 0 && o == 0 {
                continue;
            }
            if let Some(p) = self.parent(i) {
                sums[p].0 += b;
                sums[p].1 += o;
            }
            let e = out.entry(self.keys[i]).or_default();
            e.0 += b;
            e.1 += o;
        }
        out
    }

    /// The path to node `i`, from its root.
    fn path(&self, i: usize) -> Vec<report::PathPart> {
        let mut out = Vec::new();
        let mut at = Some(i);
        while let Some(n) = at {
            out.push(report::PathPart { via: self.nodes[n].via.clone(), class: self.nodes[n].class.clone() });
            at = self.parent(n);
        }
        out.reverse();
        out
    }
}

/// The structure above node `i` of the last heap, and why, step by step.
fn structure_of(last: &Tree<'_>, first_own: &dyn Fn(u64) -> u64, i: usize) -> (usize, Vec<String>) {
    let mut why = Vec::new();
    let mut at = i;
    loop {
        let Some(p) = last.parent(at) else {
            why.push(format!("{} is held by a root ({})", last.nodes[at].class, last.nodes[at].via));
            return (at, why);
        };
        let node = &last.nodes[p];
        let key = last.keys[p];
        let now = last.own.get(&key).copied().unwrap_or(0);
        let then = first_own(key);
        if node.class.starts_with("class ") {
            // A class's statics: the structure is the static field's object.
            why.push(format!("{} is held by {} {}", last.nodes[at].class, node.class, last.nodes[at].via));
            return (at, why);
        }
        if now > 1 && now > then + (then / 4).max(1) {
            why.push(format!(
                "{} ({}) is multiplied ({} → {} objects there): each holds a part",
                node.class, last.nodes[at].via, then, now
            ));
        } else if is_internal(&node.class) {
            why.push(format!("{} is a collection's internals", node.class));
        } else {
            why.push(format!(
                "{} holds them and is not multiplied ({} → {} there): the structure",
                node.class, then, now
            ));
            return (p, why);
        }
        at = p;
    }
}

/// The findings: the structures the candidates grow in, most growth first. `candidates`
/// are the classes the ranking chose; heaps without path trees give none.
pub fn findings(summaries: &[HeapSummary], candidates: &[&str], o: &Options) -> Vec<report::Finding> {
    if summaries.is_empty() || summaries.iter().any(|h| h.paths.is_empty()) {
        return Vec::new();
    }
    let trees: Vec<Tree<'_>> = summaries.iter().map(Tree::new).collect();
    let last = trees.last().unwrap();
    let totals: Vec<u64> = summaries.iter().map(|h| h.total_bytes).collect();
    // Own objects of a key in the first heap that has the key at all.
    let first_own = |key: u64| trees.iter().find_map(|t| t.own.get(&key).copied()).unwrap_or(0);
    let mut by_structure: FxHashMap<u64, report::Finding> = FxHashMap::default();
    let mut order: Vec<u64> = Vec::new();
    for &c in candidates {
        let under: Vec<FxHashMap<u64, (u64, u64)>> = trees.iter().map(|t| t.under(c)).collect();
        let series =
            |key: u64| -> (Vec<u64>, Vec<u64>) { under.iter().map(|u| u.get(&key).copied().unwrap_or((0, 0))).unzip() };
        let mut seen: FxHashMap<usize, ()> = FxHashMap::default();
        let mut places: Vec<usize> = (0..last.nodes.len()).filter(|&i| last.nodes[i].class == c).collect();
        places.sort_by_key(|&i| std::cmp::Reverse(last.nodes[i].bytes));
        for i in places {
            let (s, why) = structure_of(last, &first_own, i);
            if seen.insert(s, ()).is_some() {
                continue;
            }
            let (volumes, instances) = series(last.keys[s]);
            let verdict = judge(&volumes, &totals, o);
            if !verdict.is_candidate() {
                continue;
            }
            let key = last.keys[s];
            let f = by_structure.entry(key).or_insert_with(|| {
                order.push(key);
                let path = last.path(s);
                report::Finding {
                    structure: structure_name(&path),
                    class: last.nodes[s].class.clone(),
                    path,
                    volumes: vec![0; summaries.len()],
                    growth_bytes: 0,
                    members: Vec::new(),
                    growing_paths: Vec::new(),
                    holders: Vec::new(),
                    why: Vec::new(),
                }
            });
            f.why.push(format!("{}: {}", c, why.join("; ")));
            for (v, add) in f.volumes.iter_mut().zip(&volumes) {
                *v += add;
            }
            f.growth_bytes += verdict.growth_bytes;
            f.members.push(report::Member {
                class: c.to_string(),
                instances,
                volumes,
                growth_bytes: verdict.growth_bytes,
            });
        }
    }
    let mut out: Vec<report::Finding> = order.into_iter().filter_map(|k| by_structure.remove(&k)).collect();
    for f in &mut out {
        f.members.sort_by(|a, b| {
            is_application(&b.class).cmp(&is_application(&a.class)).then(b.growth_bytes.cmp(&a.growth_bytes))
        });
        f.growing_paths = growing_paths(&trees, last, f);
    }
    out.sort_by(|a, b| b.growth_bytes.cmp(&a.growth_bytes).then(a.structure.cmp(&b.structure)));
    out
}

/// `Owner.field` for a structure at the end of `path`: the referrer's class and the field, or
/// for a path's first step, the root that holds it.
fn structure_name(path: &[report::PathPart]) -> String {
    let n = path.len();
    match n {
        0 => String::new(),
        1 => format!("{} held by {}", path[0].class, path[0].via),
        _ => {
            let owner = path[n - 2].class.strip_prefix("class ").unwrap_or(&path[n - 2].class);
            let field = path[n - 1].via.strip_prefix("static ").unwrap_or(&path[n - 1].via);
            format!("{owner}.{field}")
        }
    }
}

/// The places of the first member's objects below the structure, biggest last-heap bytes
/// first, with their series.
fn growing_paths(trees: &[Tree<'_>], last: &Tree<'_>, f: &report::Finding) -> Vec<report::GrowingPath> {
    let Some(member) = f.members.first() else { return Vec::new() };
    let depth = f.path.len();
    let mut places: Vec<usize> = (0..last.nodes.len())
        .filter(|&i| last.nodes[i].class == member.class)
        .filter(|&i| {
            let p = last.path(i);
            p.len() > depth && p[..depth] == f.path[..]
        })
        .collect();
    places.sort_by_key(|&i| std::cmp::Reverse(last.nodes[i].bytes));
    places.truncate(MAX_GROWING_PATHS);
    places
        .into_iter()
        .map(|i| {
            let key = last.keys[i];
            let (volumes, instances) = trees
                .iter()
                .map(|t| {
                    let at: Vec<usize> = (0..t.nodes.len()).filter(|&j| t.keys[j] == key).collect();
                    at.iter().fold((0, 0), |acc, &j| (acc.0 + t.nodes[j].bytes, acc.1 + t.nodes[j].objects))
                })
                .unzip();
            report::GrowingPath { path: last.path(i)[depth..].to_vec(), instances, volumes }
        })
        .collect()
}

/// Indices of the nodes of `tree` whose path from their root is `path`.
pub fn nodes_at(tree: &[PathVolume], path: &[report::PathPart]) -> Vec<u32> {
    // Per node, how deep it is when its whole path so far matches `path`'s first steps.
    let mut depth: Vec<Option<usize>> = Vec::with_capacity(tree.len());
    let mut out = Vec::new();
    for (i, n) in tree.iter().enumerate() {
        let d = match n.parent {
            None => Some(0),
            Some(p) => depth.get(p as usize).copied().flatten().map(|d| d + 1),
        };
        let ok = d.filter(|&d| path.get(d).is_some_and(|s| s.via == n.via && s.class == n.class));
        depth.push(ok);
        if ok == Some(path.len().wrapping_sub(1)) {
            out.push(i as u32);
        }
    }
    out
}
