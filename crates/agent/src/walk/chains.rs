//! The chains a walk learned, in words and as objects: what holds each container and watched
//! object, outwards, as class and field names for the run store, and as the objects (tags,
//! classes, JVMTI indexes) whose fields name each step after the walk.

use runstore::HolderChain;
use rustc_hash::FxHashMap;

use super::holders::{Held, Holders, Kind, Link, MAX_PATH};
use crate::jvmti::{Jint, Jlong};

/// One holder of a chain, outwards, as an object to find again after the walk (for the name
/// of the field that holds the step before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Step {
    /// A linked object: its tag and class id.
    Object(Jlong, u32),
    /// The static fields of a class.
    Statics(u32),
    /// A GC root, or a holder not known.
    Unnamed,
}

/// A container's (or a watched object's) chain as objects: its tag and class, then its holders
/// outwards, one per entry of [`HolderChain::path`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ChainObjects {
    /// The container.
    pub container: (Jlong, u32),
    /// Its holders outwards.
    pub steps: Vec<Step>,
    /// Per step, JVMTI's index of the reference by which it holds the object before it (the
    /// referrer's field as JVMTI numbers its class's fields, or the array element), -1 where
    /// not known: names the fields where the objects cannot be found again (a forked walk's).
    pub indexes: Vec<Jint>,
    /// A container's: JVMTI's index of its field that holds the big array, -1 if not known.
    pub array_index: Jint,
}

impl Holders {
    /// The class most elements of container `l`'s array had in the last walk, and how many.
    fn element_of(&self, l: &Link) -> Option<(u32, u64)> {
        let array = l.array_link?;
        self.elements.iter().filter(|((a, _), _)| *a == array).map(|(&(_, class), &n)| (class, n)).max_by_key(|e| e.1)
    }

    /// The chains of the containers (links that hold a big array) the last walk saw, with
    /// their objects for naming the fields; the biggest arrays first.
    pub fn chains(&self, names: &[String]) -> Vec<(HolderChain, ChainObjects)> {
        let name = |id: u32| class_name(names, id);
        let mut out: Vec<(HolderChain, ChainObjects)> = self
            .links
            .iter()
            .filter(|l| !l.retired && l.kind == Kind::Container && l.seen_in == self.walks)
            .map(|l| {
                let (path, (steps, indexes)): (Vec<String>, (Vec<Step>, Vec<Jint>)) =
                    self.outwards(l, names).into_iter().map(|(p, s, i)| (p, (s, i))).unzip();
                let element = self.element_of(l);
                let chain = HolderChain {
                    id: l.serial,
                    container: name(l.class),
                    element: element.map(|(c, _)| name(c)).unwrap_or_default(),
                    elements: element.map_or(0, |e| e.1),
                    array: name(l.array_class),
                    array_field: String::new(),
                    bytes: l.array_bytes,
                    fields: vec![String::new(); path.len()],
                    path,
                    time_ms: 0,
                    sizes: Vec::new(),
                };
                (chain, ChainObjects { container: (l.tag, l.class), steps, indexes, array_index: l.array_index })
            })
            .collect();
        out.sort_by_key(|c| std::cmp::Reverse(c.0.bytes));
        out
    }

    /// What holds link `l`, outwards, each holder with the object it is and the JVMTI index of
    /// its reference: class names, `class NAME` for static fields, `root KIND` for GC roots;
    /// ends in `…` where the path is not known further.
    fn outwards(&self, l: &Link, names: &[String]) -> Vec<(String, Step, Jint)> {
        let mut path = Vec::new();
        let mut cur = l;
        let unknown = || ("…".to_string(), Step::Unnamed, -1);
        loop {
            let Some(held) = cur.held else {
                path.push(unknown());
                return path;
            };
            let next = match held {
                Held::Instance(_, child) => child.and_then(|i| self.links.get(i as usize)),
                _ => None,
            };
            let step = match (held, next) {
                (Held::Statics(c), _) => Step::Statics(c),
                (Held::Instance(..), Some(n)) => Step::Object(n.tag, n.class),
                _ => Step::Unnamed,
            };
            let index = if matches!(held, Held::Root(_)) { -1 } else { cur.held_index };
            path.push((held_name(held, names), step, index));
            if let Held::Instance(..) = held {
                match next {
                    Some(n) if path.len() < MAX_PATH => {
                        cur = n;
                        continue;
                    }
                    _ => path.push(unknown()),
                }
            }
            return path;
        }
    }

    /// The class of the outermost linked holder of watched objects whose chain is not known to
    /// a root or a static field yet (the watched class itself when nothing holds one yet), the
    /// most common first: what a walk filtered by class reports next to learn their paths.
    pub fn watched_frontier(&self) -> Option<u32> {
        let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
        for l in self.links.iter().filter(|l| !l.retired && matches!(l.kind, Kind::Watched(_))) {
            let mut cur = l;
            for _ in 0..MAX_PATH {
                match cur.held {
                    Some(Held::Instance(_, Some(next))) => match self.links.get(next as usize) {
                        Some(n) if !n.retired => cur = n,
                        _ => break,
                    },
                    Some(Held::Statics(_) | Held::Root(_)) => break,
                    Some(Held::Instance(_, None)) | None => {
                        *counts.entry(cur.class).or_default() += 1;
                        break;
                    }
                }
            }
        }
        counts.into_iter().max_by_key(|c| (c.1, std::cmp::Reverse(c.0))).map(|c| c.0)
    }

    /// The watched objects the last full walk or a later walk filtered by class reached:
    /// access slot, class id, what holds them (outwards, as in [`Self::chains`]), and the
    /// object itself with its holders as objects (for naming their fields).
    pub fn watched(&self, names: &[String]) -> Vec<(u32, u32, Vec<String>, ChainObjects)> {
        self.links
            .iter()
            .filter(|l| !l.retired && l.reached >= self.full_start)
            .filter_map(|l| match l.kind {
                Kind::Watched(slot) => {
                    let (path, (steps, indexes)) =
                        self.outwards(l, names).into_iter().map(|(p, s, i)| (p, (s, i))).unzip();
                    let objects = ChainObjects { container: (l.tag, l.class), steps, indexes, array_index: -1 };
                    Some((slot, l.class, path, objects))
                }
                _ => None,
            })
            .collect()
    }
}

/// What references an object, in words: a class, `class C` for its static fields, `root KIND`.
pub(super) fn held_name(held: Held, names: &[String]) -> String {
    match held {
        Held::Statics(c) => growth::statics_of(&class_name(names, c)),
        Held::Instance(c, _) => class_name(names, c),
        Held::Root(k) => format!("root {}", root_kind(k)),
    }
}

/// The name of class `id`, or a placeholder for an id registered after `names` was taken.
pub(super) fn class_name(names: &[String], id: u32) -> String {
    names.get(id as usize).cloned().unwrap_or_else(|| format!("(class #{id})"))
}

pub(super) fn root_kind(kind: u32) -> &'static str {
    match kind {
        21 => "JNI global",
        22 => "system class",
        23 => "monitor",
        24 => "stack local",
        25 => "JNI local",
        26 => "thread",
        _ => "other",
    }
}
