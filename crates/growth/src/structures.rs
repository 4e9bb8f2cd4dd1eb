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

use crate::names::{is_collection_part, person_name, PersonName, Step};
use crate::platform::{is_jdk_class, is_platform_class};
use crate::ranking::{grows_steadily, is_short, judge_at, Options};
use crate::summary::{HeapSummary, PathVolume};

/// Places shown per finding below the structure.
const MAX_GROWING_PATHS: usize = 6;

/// Whether a class is a collection's internals rather than a structure of its own: an array,
/// or a nested class of the JDK (`HashMap$Node`, `ConcurrentHashMap$Node[]`, `TreeMap$Entry`,
/// `ThreadLocal$ThreadLocalMap`, `ConcurrentHashMap$KeySetView`), or V8's ([`crate::v8::is_internal`]).
pub fn is_internal(name: &str) -> bool {
    !name.starts_with("class ")
        && (name.ends_with("[]") || (is_jdk_class(name) && name.contains('$')) || crate::v8::is_internal(name))
}

/// Whether a class is the application's (not the JDK's, not an array): such classes head a
/// finding's members.
pub(crate) fn is_application(name: &str) -> bool {
    !is_jdk_class(name) && !name.ends_with("[]")
}

/// Meaningful steps (not a collection's internals) that name a place: a place is matched
/// across heaps by the end of its path, not the whole, because the shortest path from a GC
/// root to a structure changes from heap to heap (a request thread's frame in one, the
/// connector's thread in the next) while its last steps do not.
const KEY_STEPS: usize = 4;

/// One heap's path tree with every node's key: a hash of the end of its path (see
/// [`KEY_STEPS`]), the same in every heap for the same place.
struct Tree<'a> {
    nodes: &'a [PathVolume],
    keys: Vec<u64>,
    /// Own objects per key (nodes of one place add up).
    own: FxHashMap<u64, u64>,
}

impl<'a> Tree<'a> {
    fn new(h: &'a HeapSummary) -> Tree<'a> {
        let nodes = &h.paths;
        let mut own: FxHashMap<u64, u64> = FxHashMap::default();
        let mut keys = Vec::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            let mut hasher = FxHasher::default();
            let mut meaningful = 0;
            let mut at = Some(i);
            while let Some(j) = at {
                let x = &nodes[j];
                x.via.hash(&mut hasher);
                x.class.hash(&mut hasher);
                meaningful += usize::from(!is_internal(&x.class));
                if meaningful == KEY_STEPS {
                    break;
                }
                at = x.parent.map(|p| p as usize).filter(|&p| p < j);
                if at.is_none() {
                    "root".hash(&mut hasher);
                }
            }
            let k = hasher.finish();
            keys.push(k);
            *own.entry(k).or_default() += n.objects;
        }
        Tree { nodes, keys, own }
    }

    fn parent(&self, i: usize) -> Option<usize> {
        self.nodes[i].parent.map(|p| p as usize).filter(|&p| p < i)
    }

    /// Bytes of every object placed at or below a node whose key is `key` (the places under
    /// one of them counted once, though a key repeats below itself).
    fn held_under(&self, key: u64) -> u64 {
        let mut under = vec![false; self.nodes.len()];
        let mut bytes = 0;
        for i in 0..self.nodes.len() {
            under[i] = self.keys[i] == key || self.parent(i).is_some_and(|p| under[p]);
            if under[i] {
                bytes += self.nodes[i].bytes;
            }
        }
        bytes
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

/// Own objects of each place in the first and in the last heap that has it: a place whose
/// objects keep getting more is multiplied (each of them holds a part of what is below).
struct Counts(FxHashMap<u64, (u64, u64)>);

impl Counts {
    fn new(trees: &[Tree<'_>]) -> Counts {
        let mut m: FxHashMap<u64, (u64, u64)> = FxHashMap::default();
        for t in trees {
            for (&k, &n) in &t.own {
                m.entry(k).and_modify(|e| e.1 = n).or_insert((n, n));
            }
        }
        Counts(m)
    }

    fn get(&self, key: u64) -> (u64, u64) {
        self.0.get(&key).copied().unwrap_or((0, 0))
    }

    fn multiplied(&self, key: u64) -> bool {
        let (then, now) = self.get(key);
        now > 1 && now > then + (then / 4).max(1)
    }
}

/// The structure above node `i` of `tree`: its node there, and why, step by step.
fn structure_of(tree: &Tree<'_>, counts: &Counts, i: usize) -> (usize, Vec<String>) {
    let mut why = Vec::new();
    let mut at = i;
    loop {
        let here = &tree.nodes[at];
        let Some(p) = tree.parent(at) else {
            why.push(format!("{} is held by a root ({})", here.class, here.via));
            return (at, why);
        };
        let node = &tree.nodes[p];
        let (then, now) = counts.get(tree.keys[p]);
        if node.class.starts_with("class ") {
            // A class's statics: the structure is the static field's object.
            why.push(format!("{} is held by {} {}", here.class, node.class, here.via));
            return (at, why);
        }
        if counts.multiplied(tree.keys[p]) {
            why.push(format!(
                "{} ({}) is multiplied ({then} → {now} objects there): each holds a part",
                node.class, here.via
            ));
        } else if is_internal(&node.class) {
            why.push(format!("{} is a collection's internals", node.class));
        } else {
            why.push(format!("{} holds them and is not multiplied ({then} → {now} there): the structure", node.class));
            return (p, why);
        }
        at = p;
    }
}

/// A candidate's objects at one place (a node key), per heap, and the structure they belong to.
struct Place {
    structure: u64,
    /// Where the place was last seen: heap and node.
    at: (usize, usize),
    volumes: Vec<u64>,
    instances: Vec<u64>,
}

/// A structure's node in some heap (the last that has it), and why it is the structure.
struct Found {
    at: (usize, usize),
    why: Vec<String>,
}

/// The findings: the structures the candidates grow in, most growth first. `candidates`
/// are the classes the ranking chose; heaps without path trees give none.
pub fn findings(
    summaries: &[HeapSummary],
    candidates: &[&str],
    at: Option<&[f64]>,
    o: &Options,
) -> Vec<report::Finding> {
    let short = is_short(summaries.len(), o);
    if summaries.is_empty() || summaries.iter().any(|h| h.paths.is_empty()) {
        return Vec::new();
    }
    let n = summaries.len();
    let trees: Vec<Tree<'_>> = summaries.iter().map(Tree::new).collect();
    let counts = Counts::new(&trees);
    let totals: Vec<u64> = summaries.iter().map(|h| h.total_bytes).collect();
    let mut by_structure: FxHashMap<u64, report::Finding> = FxHashMap::default();
    let mut order: Vec<u64> = Vec::new();
    let mut growing_by_member: Vec<((u64, String), Vec<report::GrowingPath>)> = Vec::new();
    for &c in candidates {
        // Every place of the class in every heap, each with its structure.
        let mut places: FxHashMap<u64, Place> = FxHashMap::default();
        let mut structures: FxHashMap<u64, Found> = FxHashMap::default();
        for (h, t) in trees.iter().enumerate() {
            for i in (0..t.nodes.len()).filter(|&i| t.nodes[i].class == c) {
                let place = places.entry(t.keys[i]).or_insert_with(|| {
                    let (s, why) = structure_of(t, &counts, i);
                    structures.entry(t.keys[s]).or_insert(Found { at: (h, s), why });
                    Place { structure: t.keys[s], at: (h, i), volumes: vec![0; n], instances: vec![0; n] }
                });
                place.at = (h, i);
                place.volumes[h] += t.nodes[i].bytes;
                place.instances[h] += t.nodes[i].objects;
            }
        }
        // The structure's own node in the last heap that has it.
        for (&k, f) in structures.iter_mut() {
            if let Some((h, t)) = trees.iter().enumerate().rev().find(|(_, t)| t.own.contains_key(&k)) {
                if let Some(i) = t.keys.iter().position(|&x| x == k) {
                    f.at = (h, i);
                }
            }
        }
        let mut keys: Vec<u64> = structures.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            let mine: Vec<&Place> = places.values().filter(|p| p.structure == key).collect();
            let mut volumes = vec![0; n];
            let mut instances = vec![0; n];
            for p in &mine {
                for h in 0..n {
                    volumes[h] += p.volumes[h];
                    instances[h] += p.instances[h];
                }
            }
            // A short series' members are the classes that pile up there at a steady pace,
            // however little each: the structure is judged by all it holds, below.
            let verdict = judge_at(&volumes, &totals, at, o);
            let member = if short { grows_steadily(&volumes, at, o) } else { verdict.is_candidate() };
            if !member {
                continue;
            }
            let found = &structures[&key];
            let (h, s) = found.at;
            let f = by_structure.entry(key).or_insert_with(|| {
                order.push(key);
                let path = trees[h].path(s);
                let name = structure_name(&path);
                report::Finding {
                    structure: name.name,
                    library: name.library,
                    known_as: name.known_as.map(str::to_string),
                    element: None,
                    class: trees[h].nodes[s].class.clone(),
                    path,
                    volumes: vec![0; n],
                    growth_bytes: 0,
                    members: Vec::new(),
                    growing_paths: Vec::new(),
                    holders: Vec::new(),
                    why: Vec::new(),
                }
            });
            f.why.push(format!("{c}: {}", found.why.join("; ")));
            f.growth_bytes += verdict.growth_bytes;
            f.members.push(report::Member {
                class: c.to_string(),
                instances,
                volumes,
                growth_bytes: verdict.growth_bytes,
            });
            // The member's places below the structure, kept for the first member shown.
            let depth = f.path.len();
            let mut below: Vec<&Place> = mine;
            below.sort_by_key(|p| std::cmp::Reverse(p.volumes[n - 1]));
            let growing: Vec<report::GrowingPath> = below
                .iter()
                .take(MAX_GROWING_PATHS)
                .map(|p| {
                    let path = trees[p.at.0].path(p.at.1);
                    report::GrowingPath {
                        path: path.get(depth..).unwrap_or_default().to_vec(),
                        instances: p.instances.clone(),
                        volumes: p.volumes.clone(),
                    }
                })
                .collect();
            growing_by_member.push(((key, c.to_string()), growing));
        }
    }
    let mut out: Vec<report::Finding> = order
        .into_iter()
        .filter_map(|k| by_structure.remove(&k).map(|f| (k, f)))
        .filter_map(|(k, mut f)| {
            // What the structure holds is everything placed under it, not only the candidate
            // classes: a session map's growth counts the sessions' strings, tokens and map
            // nodes too, as its holder's retained size does.
            f.volumes = trees.iter().map(|t| t.held_under(k)).collect();
            let kept = crate::ranking::kept(&f.volumes);
            let from = crate::ranking::span_start(&kept).min(n - 1);
            f.growth_bytes = f.growth_bytes.max(kept[n - 1].saturating_sub(kept[from]));
            if short && !judge_at(&f.volumes, &totals, at, o).is_candidate() {
                return None;
            }
            let by_growth = |a: &report::Member, b: &report::Member| {
                is_application(&b.class).cmp(&is_application(&a.class)).then(b.growth_bytes.cmp(&a.growth_bytes))
            };
            f.members.sort_by(by_growth);
            let paths_of = |class: &str| {
                growing_by_member.iter().find(|((key, c), _)| *key == k && c == class).map(|(_, g)| g.clone())
            };
            // The element the structure holds directly, on the members' main paths: the
            // application's class one of them shows (a member held by a wrapper shows the
            // wrapper only), else the first member's. It heads the members when it is one.
            let elements: Vec<String> =
                f.members.iter().filter_map(|m| element_of(&paths_of(&m.class)?.first()?.path)).collect();
            f.element = elements.iter().find(|e| !is_platform_class(e)).or(elements.first()).cloned();
            if let Some(at) = f.members.iter().position(|m| Some(&m.class) == f.element.as_ref()) {
                let element = f.members.remove(at);
                f.members.insert(0, element);
            }
            if let Some(g) = f.members.first().and_then(|m| paths_of(&m.class)) {
                f.growing_paths = g;
            }
            Some(f)
        })
        .collect();
    out.sort_by(|a, b| b.growth_bytes.cmp(&a.growth_bytes).then(a.structure.cmp(&b.structure)));
    out
}

/// In one heap: the structure that holds most of `class`'s bytes, as [`findings`] names
/// structures over a series, with a place of two or more objects taken as multiplied (each
/// holds a part); its path from a GC root and its name (`Owner.field`). None when the heap has
/// no path tree or no object of the class. For a run whose agent captured one dump.
pub fn structure_in_one_heap(h: &HeapSummary, class: &str) -> Option<(Vec<report::PathPart>, String)> {
    if h.paths.is_empty() {
        return None;
    }
    let tree = Tree::new(h);
    let counts = Counts(tree.own.iter().map(|(&k, &n)| (k, (0, n))).collect());
    let mut bytes: FxHashMap<usize, u64> = FxHashMap::default();
    for i in (0..tree.nodes.len()).filter(|&i| tree.nodes[i].class == class) {
        let (s, _) = structure_of(&tree, &counts, i);
        *bytes.entry(s).or_default() += tree.nodes[i].bytes;
    }
    let (&s, _) = bytes.iter().max_by_key(|&(&s, &b)| (b, std::cmp::Reverse(s)))?;
    let path = tree.path(s);
    let name = structure_name(&path).name;
    Some((path, name))
}

/// The name of a structure at the end of `path` as a person says it ([`names::person_name`]),
/// or for a structure held by a root alone, the root that holds it.
fn structure_name(path: &[report::PathPart]) -> PersonName {
    let Some(last) = path.last() else {
        return PersonName { name: String::new(), library: None, known_as: None };
    };
    let mut steps: Vec<Step<'_>> =
        path.windows(2).rev().map(|w| Step { owner: &w[0].class, field: &w[1].via }).collect();
    steps.push(Step { owner: "", field: &path[0].via });
    person_name(&steps).unwrap_or_else(|| {
        let name = match path {
            [only] => format!("{} held by {}", only.class, only.via),
            [.., owner, _] => {
                let s = Step { owner: &owner.class, field: &last.via };
                format!(
                    "{}.{}",
                    s.owner.strip_prefix("class ").unwrap_or(s.owner),
                    s.field.trim_start_matches("static ")
                )
            }
            [] => unreachable!("a path with a last step"),
        };
        PersonName { name, library: None, known_as: None }
    })
}

/// The class a structure holds directly below it on `below` (its path from the structure):
/// the first that is no collection's part; a library's wrappers, one field after another,
/// give way to the application's object they wrap (the MBean server's `NamedObject` and
/// `StandardMBeanSupport` to the MBean, a lambda to the object it captured), while a library
/// object holding a collection of the application's (a session's attributes) is the element.
fn element_of(below: &[report::PathPart]) -> Option<String> {
    let at = below.iter().position(|p| !is_collection_part(&p.class))?;
    let wrapped = below[at..]
        .iter()
        .take_while(|p| !is_collection_part(&p.class))
        .find(|p| !is_platform_class(&p.class) && !p.class.contains("$$Lambda"));
    Some(wrapped.unwrap_or(&below[at]).class.clone())
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

/// Applications whose live copies (loaders of one class defining the same classes) keep
/// getting more over the series: in at least `min_phases` intervals, and two or more now.
pub fn loader_leaks(summaries: &[HeapSummary], min_phases: u32) -> Vec<report::LoaderLeak> {
    let n = summaries.len();
    let mut by_key: FxHashMap<(&str, &str), (usize, Vec<u64>)> = FxHashMap::default();
    for (h, s) in summaries.iter().enumerate() {
        for l in &s.loaders {
            let first = l.classes.first().map_or("", String::as_str);
            let e = by_key.entry((&l.loader, first)).or_insert_with(|| (h, vec![1; n]));
            e.0 = h;
            e.1[h] = l.copies;
        }
    }
    let mut out: Vec<report::LoaderLeak> = by_key
        .into_values()
        .filter(|(_, copies)| {
            let rises = copies.windows(2).filter(|w| w[1] > w[0]).count();
            let (first, last) = (copies[0], copies[n - 1]);
            last >= 2 && last > first && rises >= min_phases as usize
        })
        .map(|(h, copies)| {
            let l = summaries[h].loaders.iter().find(|l| l.copies == copies[h]).unwrap_or(&summaries[h].loaders[0]);
            report::LoaderLeak {
                loader: l.loader.clone(),
                classes: l.classes.clone(),
                class_count: l.class_count,
                copies,
                held_by: Vec::new(),
                stale: 0,
                retained_bytes: None,
            }
        })
        .collect();
    out.sort_by(|a, b| b.copies.last().cmp(&a.copies.last()).then(a.classes.cmp(&b.classes)));
    out
}

#[cfg(test)]
mod tests {
    use super::structure_in_one_heap;
    use crate::{HeapSummary, PathVolume};

    #[test]
    fn one_heap_names_the_structure_its_class_piles_up_in() {
        let node = |parent: Option<u32>, via: &str, class: &str, objects: u64, bytes: u64| PathVolume {
            parent,
            via: via.into(),
            class: class.into(),
            objects,
            bytes,
        };
        // A registry's static map of 5,000 sessions (some in bucket chains), and a cache
        // holding 10 of them more deeply.
        let paths = vec![
            node(None, "system class", "class Registry", 1, 0),
            node(Some(0), "static SESSIONS", "java.util.concurrent.ConcurrentHashMap", 1, 64),
            node(Some(1), "table", "java.util.concurrent.ConcurrentHashMap$Node[]", 1, 32_784),
            node(Some(2), "[]", "java.util.concurrent.ConcurrentHashMap$Node", 4_000, 128_000),
            node(Some(3), "val", "Session", 4_000, 96_000),
            node(Some(3), "next", "java.util.concurrent.ConcurrentHashMap$Node", 1_000, 32_000),
            node(Some(5), "val", "Session", 1_000, 24_000),
            node(None, "thread", "Worker", 1, 24),
            node(Some(7), "cache", "java.util.ArrayList", 1, 24),
            node(Some(8), "elementData", "java.lang.Object[]", 1, 56),
            node(Some(9), "[]", "Session", 10, 240),
        ];
        let h = HeapSummary { paths, ..Default::default() };
        let (path, name) = structure_in_one_heap(&h, "Session").unwrap();
        assert_eq!(name, "Registry.SESSIONS");
        assert_eq!(path.len(), 2, "{path:?}");
        assert_eq!(structure_in_one_heap(&h, "Absent"), None);
        assert_eq!(structure_in_one_heap(&HeapSummary::default(), "Session"), None, "no path tree");
    }
}
