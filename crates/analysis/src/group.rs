//! AntTracks' classification tree: objects grouped by a sequence of classifiers, with count,
//! shallow, deep (transitive) and retained bytes per node.
//!
//! Counts and shallow bytes are kept for every node. Deep and retained sizes are computed for
//! the nodes shown (the biggest `top` children of each shown node): a node's transitive
//! closure is the union of its children's closures when all its children are shown (bitset
//! OR, as AntTracks does), and a closure from its own objects otherwise; its GC closure then
//! follows from that transitive closure (see [`crate::Closures`]).

use std::collections::{BTreeMap, HashMap};
use std::str::FromStr;

use heap::{ObjIdx, RootDetail, Snapshot};
use report::GroupNode;

use crate::closures::Closures;
use crate::retention::{path_starts, strong_bfs, strong_closure, ObjSet, Reached};

/// A way to split a group of objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classifier {
    /// By class.
    Class,
    /// By Java package.
    Package,
    /// By the class loader that defined the object's class.
    Loader,
    /// By the type hierarchy: one level per superclass, from `java.lang.Object` down.
    Hierarchy,
    /// By the GC roots that reference the object directly: root kind, then the static field's
    /// class and field, the thread and frame, ...; or not directly rooted.
    DirectlyRooted,
    /// By the GC root whose shortest strong path reaches the object (kind, then the root).
    IndirectlyRooted,
}

impl std::fmt::Display for Classifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Classifier::Class => "class",
            Classifier::Package => "package",
            Classifier::Loader => "loader",
            Classifier::Hierarchy => "hierarchy",
            Classifier::DirectlyRooted => "directly-rooted",
            Classifier::IndirectlyRooted => "indirectly-rooted",
        })
    }
}

impl FromStr for Classifier {
    type Err = String;

    fn from_str(s: &str) -> Result<Classifier, String> {
        Ok(match s.trim() {
            "class" | "type" => Classifier::Class,
            "package" => Classifier::Package,
            "loader" | "classloader" => Classifier::Loader,
            "hierarchy" => Classifier::Hierarchy,
            "directly-rooted" | "direct" | "rooted" => Classifier::DirectlyRooted,
            "indirectly-rooted" | "indirect" => Classifier::IndirectlyRooted,
            other => {
                return Err(format!(
                    "unknown classifier {other:?}; use class, package, loader, hierarchy, directly-rooted or indirectly-rooted"
                ))
            }
        })
    }
}

/// Precomputed per-object facts the rooted classifiers need.
struct RootFacts {
    /// Objects GC roots reference directly, with their key paths.
    direct: HashMap<ObjIdx, Vec<Vec<String>>>,
    /// Per object, the index (into `starts`) of the root its shortest path begins at.
    via: Vec<u32>,
    /// The root objects, and their descriptions.
    starts: Vec<(ObjIdx, Vec<String>)>,
}

const NOT_REACHED: u32 = u32::MAX;

/// Builds the tree over all objects of `s`, classified by `by` in order, showing the `top`
/// biggest children of each shown node.
pub fn classify(s: &Snapshot, closures: &Closures<'_>, by: &[Classifier], top: usize) -> GroupNode {
    let tree = GroupTree::build(s, by);
    let mut out = tree.node(GroupTree::ROOT, top);
    fill_sizes(s, closures, &tree, GroupTree::ROOT, &mut out);
    out
}

fn class_based(c: Classifier) -> bool {
    !matches!(c, Classifier::DirectlyRooted | Classifier::IndirectlyRooted)
}

/// The whole classification tree with counts and shallow bytes per node, for browsing it one
/// node at a time (`leakscope serve`); deep and retained sizes are asked per node.
#[derive(Default)]
pub struct GroupTree {
    nodes: Vec<TreeNode>,
}

#[derive(Default)]
struct TreeNode {
    key: String,
    children: BTreeMap<String, usize>,
    objects: Vec<ObjIdx>,
    count: u64,
    shallow: u64,
}

impl GroupTree {
    /// The node that holds all objects.
    pub const ROOT: usize = 0;

    /// Classifies every object of `s` by `by`, outermost first.
    pub fn build(s: &Snapshot, by: &[Classifier]) -> GroupTree {
        let facts = by
            .iter()
            .any(|c| matches!(c, Classifier::DirectlyRooted | Classifier::IndirectlyRooted))
            .then(|| root_facts(s));
        // Keys that depend only on the class are made once per class, not once per object.
        let per_class: Vec<Option<Vec<Vec<String>>>> = by
            .iter()
            .map(|&c| class_based(c).then(|| s.classes().iter().map(|(i, _)| class_keys(s, c, i)).collect()))
            .collect();
        let mut tree = GroupTree { nodes: vec![TreeNode { key: "all objects".into(), ..TreeNode::default() }] };
        let mut mirror_key = Vec::new();
        for o in s.objects() {
            let mut path: Vec<&str> = Vec::with_capacity(by.len() * 2);
            let is_mirror = s.mirror_class(o).is_some();
            if is_mirror {
                mirror_key = vec![s.type_label(o)];
            }
            for (k, &c) in by.iter().enumerate() {
                match &per_class[k] {
                    Some(_) if is_mirror && c == Classifier::Class => path.push(&mirror_key[0]),
                    Some(keys) => path.extend(keys[s.class_of(o).index()].iter().map(String::as_str)),
                    None => object_keys(facts.as_ref(), c, o, &mut path),
                }
            }
            tree.add(&path, o, s.shallow_bytes(o));
        }
        tree
    }

    fn add(&mut self, path: &[&str], o: ObjIdx, bytes: u64) {
        let mut cur = Self::ROOT;
        self.nodes[cur].count += 1;
        self.nodes[cur].shallow += bytes;
        for key in path {
            let next = match self.nodes[cur].children.get(*key) {
                Some(&n) => n,
                None => {
                    self.nodes.push(TreeNode { key: (*key).to_owned(), ..TreeNode::default() });
                    let n = self.nodes.len() - 1;
                    self.nodes[cur].children.insert((*key).to_owned(), n);
                    n
                }
            };
            cur = next;
            self.nodes[cur].count += 1;
            self.nodes[cur].shallow += bytes;
        }
        self.nodes[cur].objects.push(o);
    }

    /// Whether `i` names a node of this tree.
    pub fn contains(&self, i: usize) -> bool {
        i < self.nodes.len()
    }

    /// Node `i` alone: its key, count and shallow bytes, no children and no closure sizes.
    pub fn row(&self, i: usize) -> GroupNode {
        let n = &self.nodes[i];
        GroupNode {
            key: n.key.clone(),
            count: n.count,
            shallow_bytes: n.shallow,
            deep_bytes: None,
            retained_bytes: None,
            children: Vec::new(),
            more_children: n.children.len() as u64,
        }
    }

    /// The children of node `i`, biggest shallow bytes first (then by key).
    pub fn children(&self, i: usize) -> Vec<usize> {
        let mut kids: Vec<usize> = self.nodes[i].children.values().copied().collect();
        kids.sort_by(|&a, &b| {
            self.nodes[b].shallow.cmp(&self.nodes[a].shallow).then(self.nodes[a].key.cmp(&self.nodes[b].key))
        });
        kids
    }

    /// The report node for tree node `i`, with its `top` biggest children (recursively).
    fn node(&self, i: usize, top: usize) -> GroupNode {
        let kids = self.children(i);
        let shown = if top == 0 { kids.len() } else { top.min(kids.len()) };
        GroupNode {
            children: kids[..shown].iter().map(|&c| self.node(c, top)).collect(),
            more_children: (kids.len() - shown) as u64,
            ..self.row(i)
        }
    }

    /// Every object in the subtree of node `i`.
    pub fn members(&self, i: usize) -> Vec<ObjIdx> {
        let mut out = Vec::with_capacity(self.nodes[i].count as usize);
        self.collect(i, &mut out);
        out
    }

    fn collect(&self, i: usize, out: &mut Vec<ObjIdx>) {
        out.extend_from_slice(&self.nodes[i].objects);
        for &c in self.nodes[i].children.values() {
            self.collect(c, out);
        }
    }
}

/// Computes deep and retained sizes of the shown nodes bottom-up; returns the node's
/// transitive closure so that its parent can take the union.
fn fill_sizes(s: &Snapshot, closures: &Closures<'_>, tree: &GroupTree, i: usize, node: &mut GroupNode) -> ObjSet {
    let mut child_closures = Vec::new();
    for child in node.children.iter_mut() {
        let c = tree.nodes[i].children[&child.key];
        child_closures.push(fill_sizes(s, closures, tree, c, child));
    }
    let members = tree.members(i);
    let t = if node.more_children == 0 && !node.children.is_empty() && tree.nodes[i].objects.is_empty() {
        let mut t = child_closures.pop().unwrap_or_else(|| ObjSet::new(s.object_count()));
        child_closures.iter().for_each(|c| t.union_with(c));
        t
    } else {
        strong_closure(s, &members, None)
    };
    let mut set = ObjSet::new(s.object_count());
    members.iter().for_each(|&o| {
        set.insert(o);
    });
    node.deep_bytes = Some(t.iter().map(|o| s.shallow_bytes(o)).sum());
    node.retained_bytes = Some(closures.gc_closure(&set, &t).iter().map(|o| s.shallow_bytes(o)).sum());
    t
}

/// The keys of a class-based classifier for instances of `class`.
fn class_keys(s: &Snapshot, c: Classifier, class: heap::ClassIdx) -> Vec<String> {
    let classes = s.classes();
    match c {
        Classifier::Class => vec![classes.get(class).name.clone()],
        Classifier::Package => {
            vec![crate::histogram::package_label(&classes.get(class).name).to_owned()]
        }
        Classifier::Loader => {
            let loader = classes.get(class).loader_id;
            vec![match s.find(loader).filter(|_| loader != 0) {
                Some(l) => format!("{} {}", s.type_label(l), report::ObjectId(loader)),
                None => "<bootstrap loader>".into(),
            }]
        }
        Classifier::Hierarchy => {
            let mut chain: Vec<String> = classes.chain(class).map(|k| classes.get(k).name.clone()).collect();
            chain.reverse();
            chain
        }
        Classifier::DirectlyRooted | Classifier::IndirectlyRooted => Vec::new(),
    }
}

const NOT_DIRECT: &str = "Not directly referenced by a GC root";
const NOT_REACHED_KEY: &str = "Not reachable from a GC root (strongly)";

/// The keys of a root-based classifier for object `o`.
fn object_keys<'f>(facts: Option<&'f RootFacts>, c: Classifier, o: ObjIdx, out: &mut Vec<&'f str>) {
    let Some(f) = facts else { return };
    match c {
        Classifier::DirectlyRooted => match f.direct.get(&o) {
            Some(paths) => out.extend(paths[0].iter().map(String::as_str)),
            None => out.push(NOT_DIRECT),
        },
        Classifier::IndirectlyRooted => match f.via[o.index()] {
            NOT_REACHED => out.push(NOT_REACHED_KEY),
            v => out.extend(f.starts[v as usize].1.iter().map(String::as_str)),
        },
        _ => {}
    }
}

/// Direct root references (roots and static fields) and, by breadth-first search, the root
/// each object's shortest strong path starts from.
fn root_facts(s: &Snapshot) -> RootFacts {
    let mut direct: HashMap<ObjIdx, Vec<Vec<String>>> = HashMap::new();
    for r in &s.roots {
        let mut key = vec![format!("Root: {}", r.kind.name())];
        match r.detail {
            RootDetail::Thread { thread, frame } => {
                let t = &s.threads[thread];
                key.push(crate::paths::thread_label(s, thread));
                if let Some(f) = frame.and_then(|d| t.frames.get(d as usize)) {
                    key.push(crate::paths::frame_text(f));
                }
            }
            _ => key.push(s.type_label(r.object)),
        }
        direct.entry(r.object).or_default().push(key);
    }
    for (class, field, target) in s.static_refs() {
        let c = s.classes().get(class);
        let key = vec!["Root: static field".into(), c.name.clone(), c.statics[field as usize].name.clone()];
        direct.entry(target).or_default().insert(0, key);
    }
    let (starts_objs, first) = path_starts(s);
    let describe = |o: ObjIdx| -> Vec<String> {
        match direct.get(&o) {
            Some(paths) => paths[0].clone(),
            None => vec!["Root: class held by the VM".into(), s.type_label(o)],
        }
    };
    let starts: Vec<(ObjIdx, Vec<String>)> = starts_objs.iter().map(|&o| (o, describe(o))).collect();
    let mut via = vec![NOT_REACHED; s.object_count() as usize];
    let claim = |o: ObjIdx, how: Reached| {
        let fresh = via[o.index()] == NOT_REACHED;
        if fresh {
            via[o.index()] = match how {
                Reached::Start(i) => i as u32,
                Reached::From(p) => via[p.index()],
            };
        }
        fresh
    };
    strong_bfs(s, &starts_objs, first, claim, &graph::NoProgress);
    RootFacts { direct, via, starts }
}
