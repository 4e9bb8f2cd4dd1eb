//! One class points-from walk: JVMTI `FollowReferences` from the GC roots, summarised into
//! the exact `HeapSummary` of a dump, without tagging objects.
//!
//! Each reached object reports its class once (the `CLASS` reference), which counts it.
//! Sizes come with every reference *to* an object: constant per instance class, exact per
//! primitive array (reported once each), and for object arrays the mean over the references
//! to them (exact when each array has one referrer, as in collections). A reference's
//! referent field is neither followed nor counted, as offline.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use growth::{statics_of, ClassVolume, EdgeVolume, HeapSummary};
use runstore::HolderChain;
use rustc_hash::FxHashMap;

use crate::classes::{class_id, is_reference, link_of, with_link, without_link, HOLDER_BIT, SAMPLE_BIT, WATCH_BIT};
use crate::jvmti::{reference, ArrayPrimitiveCallback, Env, HeapCallbacks, HeapReferenceCallback, Jint, Jlong};

#[derive(Debug, Default, Clone, Copy)]
struct Node {
    count: u64,
    in_refs: u64,
    in_bytes: u64,
    prim_count: u64,
    prim_bytes: u64,
}

/// Edge key: referrer class id, with bit 32 set for a class's statics; referent class id.
type EdgeKey = (u64, u32);
const STATICS: u64 = 1 << 32;

/// An array at least this big makes the object that references it a container worth naming.
const BIG_ARRAY: i64 = 64 * 1024;
/// Objects tagged as containers, at most.
const MAX_CONTAINERS: usize = 512;
/// Objects linked (tagged for a path: containers, watched objects, what holds them), at most.
const MAX_LINKS: usize = 131_072;
/// Links kept for containers and their holders, whatever the watched objects and path links
/// take: watched sessions (tagged at birth by their constructors' hook) and their map nodes
/// filled every link in a registry's first walk, and the registry's own chain, the leak's
/// holder, was never learned.
const RESERVED_FOR_CONTAINERS: usize = 16_384;
/// How many references from a container or watched class a class may be and still have its
/// objects linked when first reached; and how far holders are learned one level per walk.
const MAX_LEVEL: u32 = 8;
/// The longest path named, in holders.
const MAX_PATH: usize = 16;
/// Objects the path classes may have together, and each (by the last walk's counts): the
/// classes nearest a container or watched class come first, the ones with fewer objects first
/// among equally near, so that the few objects on a path to a container (a manager, a
/// context, a registry, a map's table) are linked, not every map node of the JVM: a real
/// server's class graph puts most classes within a few references of some container.
const PATH_OBJECTS: u64 = 24_576;
const PATH_CLASS_OBJECTS: u64 = 8_192;
/// Path links alive at once, and added per walk, at most: the bound on what linking costs.
const MAX_PATH_LINKS: usize = 32_768;
const PATH_LINKS_PER_WALK: usize = 8_192;

/// What holds a linked object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// A static field of a class.
    Statics(u32),
    /// An instance of a class; its link, when it has one reached before this object.
    Instance(u32, Option<u32>),
    /// A GC root of a JVMTI reference kind.
    Root(u32),
}

impl Held {
    /// Lower is more telling: a static field says most about who keeps an object; transient
    /// roots (stack and JNI locals of the thread using it) least.
    fn rank(self) -> u8 {
        match self {
            Held::Statics(_) => 0,
            Held::Instance(_, Some(_)) => 1,
            Held::Root(26) => 2,
            Held::Instance(_, None) => 3,
            Held::Root(_) => 4,
        }
    }
}

/// Why an object is linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// It holds a big array.
    Container,
    /// It is watched (`--watch`); its access slot.
    Watched(u32),
    /// It holds a container or a watched object, `level` references away.
    Holder,
    /// Its class lies on a path of the class graph to a container or watched class, so it was
    /// linked when first reached; it becomes a holder if a path goes through it, else it is
    /// dropped after the walk.
    Path,
}

#[derive(Debug, Clone)]
struct Link {
    kind: Kind,
    /// A watched object or a holder learned from one: counts against the links left after
    /// the containers' reserve and the path links' (100,000 watched sessions and their map
    /// nodes took every link, and the map's table, shared by all of them, got none).
    limited: bool,
    class: u32,
    level: u32,
    array_class: u32,
    array_bytes: u64,
    /// The walk that last saw its big array.
    seen_in: u64,
    /// When the walk that last reached it first did (`Holders::order`).
    reached: u64,
    /// The most telling referrer the last walk reported.
    held: Option<Held>,
    /// Dropped: its object's tag is cleared when next reached.
    retired: bool,
    /// Its object's tag is cleared or the object is gone (`ObjectFree`): the slot can be reused.
    slot_free: bool,
}

impl Link {
    fn new(kind: Kind, limited: bool, class: u32, reached: u64) -> Link {
        Link {
            kind,
            limited,
            class,
            level: 0,
            array_class: 0,
            array_bytes: 0,
            seen_in: 0,
            reached,
            held: None,
            retired: false,
            slot_free: false,
        }
    }
}

/// Objects a walk follows outwards, tagged with their link slot and kept across walks:
/// containers (holders of a big array), watched objects, and what holds them.
///
/// A referrer is reported after the references *to* it (it is visited after being reached),
/// so an object tagged only when it refers to a linked one misses its own referrers in that
/// walk: chains learned that way grow one level per walk. So each walk also links, when first
/// reached, the objects of the classes that the previous walk's class graph puts within
/// [`MAX_LEVEL`] references of a container or watched class (`path_classes`, the classes with
/// few objects first); since every object is reached before it is visited, such an object's
/// referrer is linked before it, and the whole path from a root is named in one walk. Path
/// links stay while their class is a path class and walks reach them; the others no path
/// goes through are dropped after the walk.
#[derive(Debug, Default)]
pub struct Holders {
    links: Vec<Link>,
    /// Slots of dropped links whose objects are cleared or gone. A dropped link whose object a
    /// walk does not reach (kept only by a `Reference`, or dead but not yet collected) keeps
    /// its slot until `ObjectFree` reports the object.
    free: Vec<u32>,
    containers: usize,
    limited: usize,
    /// Live links of kind `Path`.
    paths: usize,
    walks: u64,
    /// Counts first reaches; a walk's start takes one, so every link it reaches has a later one.
    order: u64,
    walk_start: u64,
    /// Per class id: whether its objects are linked when first reached.
    path_classes: Vec<bool>,
    path_added: usize,
}

impl Holders {
    fn add(&mut self, link: Link) -> Option<u32> {
        let container = link.kind == Kind::Container;
        let path = link.kind == Kind::Path;
        let used = self.links.len() - self.free.len();
        if used >= MAX_LINKS
            || (link.limited && self.limited >= MAX_LINKS - RESERVED_FOR_CONTAINERS - MAX_PATH_LINKS)
            || (container && self.containers >= MAX_CONTAINERS)
            || (path && self.paths >= MAX_PATH_LINKS)
        {
            return None;
        }
        self.containers += usize::from(container);
        self.limited += usize::from(link.limited);
        self.paths += usize::from(path);
        Some(match self.free.pop() {
            Some(slot) => {
                self.links[slot as usize] = link;
                slot
            }
            None => {
                self.links.push(link);
                self.links.len() as u32 - 1
            }
        })
    }

    /// A live link's slot in `tag`.
    fn live(&self, tag: Jlong) -> Option<u32> {
        link_of(tag).filter(|&s| self.links.get(s as usize).is_some_and(|l| !l.retired))
    }

    /// Takes back the slots of linked objects the collector freed (their tags, as
    /// `ObjectFree` reported them).
    pub fn freed(&mut self, tags: &[Jlong]) {
        for &tag in tags {
            if let Some(slot) = link_of(tag) {
                self.release(slot);
            }
        }
    }

    /// Drops link `slot` and frees it: its object no longer carries it.
    fn release(&mut self, slot: u32) {
        self.retire(slot);
        if let Some(l) = self.links.get_mut(slot as usize).filter(|l| !l.slot_free) {
            l.slot_free = true;
            self.free.push(slot);
        }
    }

    /// Drops link `slot`; its object's tag still names it.
    fn retire(&mut self, slot: u32) {
        if let Some(l) = self.links.get_mut(slot as usize).filter(|l| !l.retired) {
            l.retired = true;
            l.held = None;
            self.containers -= usize::from(l.kind == Kind::Container);
            self.limited -= usize::from(l.limited);
            self.paths -= usize::from(l.kind == Kind::Path);
        }
    }

    fn begin_walk(&mut self) {
        self.walks += 1;
        self.order += 1;
        self.walk_start = self.order;
        for l in &mut self.links {
            l.held = None;
        }
        self.path_added = 0;
    }

    /// Marks link `slot` reached, if this walk had not reached it yet.
    fn reach(&mut self, slot: u32) {
        if let Some(l) = self.links.get_mut(slot as usize) {
            if l.reached < self.walk_start {
                self.order += 1;
                l.reached = self.order;
            }
        }
    }

    /// A link for an untagged (or sampled) object of a path class reached for the first time.
    fn path_link(&mut self, class: u32) -> Option<u32> {
        if !self.path_classes.get(class as usize).copied().unwrap_or(false) || self.path_added >= PATH_LINKS_PER_WALK {
            return None;
        }
        self.order += 1;
        let slot = self.add(Link::new(Kind::Path, false, class, self.order))?;
        self.path_added += 1;
        Some(slot)
    }

    /// After a complete walk: keeps the links on the paths of the containers it saw and of
    /// the watched objects (their path links become holders), plans the next walk's path
    /// classes from this walk's class graph and object counts (`objects`, by class id), and
    /// drops the other links, except path links the walk reached whose class is still a path
    /// class: they stay linked, so that a steady heap is not linked again in every walk.
    fn finish_walk(&mut self, edges: &FxHashMap<EdgeKey, (u64, u64)>, objects: &[u64], watched_classes: &[bool]) {
        let mut keep = vec![false; self.links.len()];
        for i in 0..self.links.len() {
            let l = &self.links[i];
            let target = !l.retired
                && match l.kind {
                    Kind::Container => l.seen_in == self.walks,
                    Kind::Watched(_) => true,
                    Kind::Holder | Kind::Path => false,
                };
            if !target {
                continue;
            }
            keep[i] = true;
            let mut cur = i;
            for level in 1..=MAX_PATH as u32 {
                let Some(Held::Instance(_, Some(next))) = self.links[cur].held else { break };
                let next = next as usize;
                let l = &mut self.links[next];
                if l.kind == Kind::Path {
                    l.kind = Kind::Holder;
                    l.level = level;
                    self.paths -= 1;
                } else if l.kind == Kind::Holder {
                    l.level = l.level.min(level);
                }
                if keep[next] {
                    break;
                }
                keep[next] = true;
                cur = next;
            }
        }
        self.path_classes = self.plan_paths(edges, objects, watched_classes);
        for (i, kept) in keep.into_iter().enumerate() {
            let l = &self.links[i];
            let linger = l.kind == Kind::Path
                && l.reached >= self.walk_start
                && self.path_classes.get(l.class as usize).copied().unwrap_or(false);
            if !kept && !linger && !matches!(l.kind, Kind::Watched(_)) {
                self.retire(i as u32);
            }
        }
    }

    /// The path classes: those within [`MAX_LEVEL`] references of a container's or a watched
    /// object's class in the class graph `edges` (referrer → referent, statics excluded), the
    /// nearest first and, among equally near, the ones with fewer objects, while they have
    /// [`PATH_OBJECTS`] together and [`PATH_CLASS_OBJECTS`] each. Watched classes are not
    /// among them (the watch links their objects).
    fn plan_paths(
        &self,
        edges: &FxHashMap<EdgeKey, (u64, u64)>,
        objects: &[u64],
        watched_classes: &[bool],
    ) -> Vec<bool> {
        let mut referrers: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for &(from, to) in edges.keys() {
            if from & STATICS == 0 {
                referrers.entry(to).or_default().push(from as u32);
            }
        }
        let watched = |c: u32| watched_classes.get(c as usize).copied().unwrap_or(false);
        let mut frontier: Vec<u32> = (0..watched_classes.len() as u32).filter(|&c| watched(c)).collect();
        frontier.extend(self.links.iter().filter(|l| !l.retired && l.kind == Kind::Container).map(|l| l.class));
        let top = referrers.keys().chain(referrers.values().flatten()).chain(&frontier).max().map_or(0, |&m| m + 1);
        let count = |c: u32| objects.get(c as usize).copied().unwrap_or(0);
        let mut reached = vec![false; top as usize];
        frontier.retain(|&c| !std::mem::replace(&mut reached[c as usize], true));
        let mut chosen = vec![false; top as usize];
        let mut total = 0;
        for _ in 0..=MAX_LEVEL {
            let mut level = frontier.clone();
            level.sort_by_key(|&c| (count(c), c));
            for c in level.into_iter().filter(|&c| !watched(c)) {
                if count(c) <= PATH_CLASS_OBJECTS && total + count(c) <= PATH_OBJECTS {
                    total += count(c);
                    chosen[c as usize] = true;
                }
            }
            let mut next = Vec::new();
            for c in frontier {
                for &f in referrers.get(&c).into_iter().flatten() {
                    if !std::mem::replace(&mut reached[f as usize], true) {
                        next.push(f);
                    }
                }
            }
            frontier = next;
        }
        chosen
    }

    /// The chains of the containers (links that hold a big array) the last walk saw.
    pub fn chains(&self, names: &[String]) -> Vec<HolderChain> {
        let name = |id: u32| class_name(names, id);
        let mut out: Vec<HolderChain> = self
            .links
            .iter()
            .filter(|l| !l.retired && l.kind == Kind::Container && l.seen_in == self.walks)
            .map(|l| HolderChain {
                container: name(l.class),
                array: name(l.array_class),
                bytes: l.array_bytes,
                path: self.path_of(l, names),
            })
            .collect();
        out.sort_by_key(|c| std::cmp::Reverse(c.bytes));
        out
    }

    /// What holds link `l`, outwards: class names, `class NAME` for static fields, `root KIND`
    /// for GC roots; ends in `…` where the path is not known further.
    fn path_of(&self, l: &Link, names: &[String]) -> Vec<String> {
        let mut path = Vec::new();
        let mut cur = l;
        loop {
            let Some(held) = cur.held else {
                path.push("…".into());
                return path;
            };
            path.push(held_name(held, names));
            if let Held::Instance(_, child) = held {
                if let Some(next) = child.and_then(|i| self.links.get(i as usize)) {
                    if path.len() < MAX_PATH {
                        cur = next;
                        continue;
                    }
                }
                path.push("…".into());
            }
            return path;
        }
    }

    /// The watched objects the last walk reached: access slot, class id, and what holds
    /// them (outwards, as in [`Self::chains`]).
    pub fn watched(&self, names: &[String]) -> Vec<(u32, u32, Vec<String>)> {
        self.links
            .iter()
            .filter(|l| l.reached >= self.walk_start)
            .filter_map(|l| match l.kind {
                Kind::Watched(slot) => Some((slot, l.class, self.path_of(l, names))),
                _ => None,
            })
            .collect()
    }

    /// Whether the holders of link `from`, outwards as far as a path is named, include link
    /// `to`: holding `to` by `from` would then be a cycle, not a way out.
    fn leads_to(&self, from: u32, to: u32) -> bool {
        let mut cur = from;
        for _ in 0..=MAX_PATH {
            if cur == to {
                return true;
            }
            match self.links.get(cur as usize).and_then(|l| l.held) {
                Some(Held::Instance(_, Some(next))) => cur = next,
                _ => return false,
            }
        }
        false
    }

    /// Links in use, and how many of them the last walk added for paths (for tests and notes).
    pub fn counts(&self) -> (usize, usize) {
        (self.links.iter().filter(|l| !l.retired).count(), self.path_added)
    }
}

/// What references an object, in words: a class, `class C` for its static fields, `root KIND`.
fn held_name(held: Held, names: &[String]) -> String {
    match held {
        Held::Statics(c) => growth::statics_of(&class_name(names, c)),
        Held::Instance(c, _) => class_name(names, c),
        Held::Root(k) => format!("root {}", root_kind(k)),
    }
}

/// The name of class `id`, or a placeholder for an id registered after `names` was taken.
fn class_name(names: &[String], id: u32) -> String {
    names.get(id as usize).cloned().unwrap_or_else(|| format!("(class #{id})"))
}

fn root_kind(kind: u32) -> &'static str {
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

struct State<'h> {
    deadline: Instant,
    calls: u64,
    aborted: bool,
    holders: &'h mut Holders,
    /// Per class id: whether its instances are watched.
    watched_classes: &'h [bool],
    watch: Option<&'h crate::watch::Watch>,
    seen_samples: Vec<u32>,
    expected: Vec<(u32, Held)>,
    nodes: Vec<Node>,
    edges: FxHashMap<EdgeKey, (u64, u64)>,
    referent_index: Option<Jint>,
    panicked: bool,
    panic_for_test: bool,
}

impl State<'_> {
    fn node(&mut self, id: u32) -> &mut Node {
        let i = id as usize;
        if i >= self.nodes.len() {
            self.nodes.resize(i + 1, Node::default());
        }
        &mut self.nodes[i]
    }
}

/// What one walk found, before names are attached.
#[derive(Debug)]
pub struct Walk {
    /// The summary, classes named.
    pub summary: HeapSummary,
    /// How long the JVM was stopped.
    pub pause: Duration,
    /// Containers of big arrays and what holds them.
    pub holders: Vec<HolderChain>,
    /// Slots of the sampled objects the walk reached, sorted.
    pub seen_samples: Vec<u32>,
    /// Objects expected dead that the walk reached: slot, and what referenced them.
    pub expected: Vec<(u32, String)>,
}

/// Callbacks between two looks at the clock.
const CLOCK_EVERY: u64 = 4096;

/// A walk that reached its pause limit and stopped, unfinished.
#[derive(Debug, Clone, Copy)]
pub struct Aborted {
    /// How long it stopped the JVM.
    pub pause: Duration,
    /// Objects it had reached.
    pub objects: u64,
}

/// Why a walk gave no result at all.
#[derive(Debug)]
pub enum WalkFailed {
    /// JVMTI refused the walk.
    Jvmti(crate::jvmti::JvmtiError),
    /// A callback panicked (the panic was caught; the agent must disable itself).
    Panicked,
}

impl From<crate::jvmti::JvmtiError> for WalkFailed {
    fn from(e: crate::jvmti::JvmtiError) -> WalkFailed {
        WalkFailed::Jvmti(e)
    }
}

/// Walks the heap of `env`, stopping at `max_pause`; `names` names class ids;
/// `referent_index` is the JVMTI field index of `Reference.referent`; `holders` carries
/// tagged containers from walk to walk; `watching` is the watch and, per class id, whether its
/// instances are watched.
pub fn walk(
    env: Env,
    names: impl Fn() -> Vec<String>,
    referent_index: Option<Jint>,
    holders: &mut Holders,
    watching: Option<(&crate::watch::Watch, &[bool])>,
    max_pause: Duration,
    panic_for_test: bool,
) -> Result<Result<Walk, Aborted>, WalkFailed> {
    holders.begin_walk();
    let start = Instant::now();
    let mut state = State {
        deadline: start + max_pause,
        calls: 0,
        aborted: false,
        holders,
        watched_classes: watching.map_or(&[], |w| w.1),
        watch: watching.map(|w| w.0),
        seen_samples: Vec::new(),
        expected: Vec::new(),
        nodes: Vec::new(),
        edges: FxHashMap::default(),
        referent_index,
        panicked: false,
        panic_for_test,
    };
    let callbacks = HeapCallbacks {
        heap_iteration: std::ptr::null(),
        heap_reference: Some(on_reference as HeapReferenceCallback),
        primitive_field: std::ptr::null(),
        array_primitive_value: Some(on_primitive_array as ArrayPrimitiveCallback),
        string_primitive_value: std::ptr::null(),
        reserved: [std::ptr::null(); 10],
    };
    env.follow_references(&callbacks, (&mut state as *mut State).cast())?;
    let pause = start.elapsed();
    if state.panicked {
        return Err(WalkFailed::Panicked);
    }
    if state.aborted {
        return Ok(Err(Aborted { pause, objects: state.nodes.iter().map(|n| n.count).sum() }));
    }
    let objects: Vec<u64> = state.nodes.iter().map(|n| n.count.max(n.prim_count)).collect();
    state.holders.finish_walk(&state.edges, &objects, state.watched_classes);
    let names = names();
    let summary = summarise(&state, &names);
    let mut seen_samples = std::mem::take(&mut state.seen_samples);
    seen_samples.sort_unstable();
    seen_samples.dedup();
    let expected = state.expected.iter().map(|&(slot, held)| (slot, held_name(held, &names))).collect();
    Ok(Ok(Walk { summary, pause, holders: state.holders.chains(&names), seen_samples, expected }))
}

fn summarise(state: &State, names: &[String]) -> HeapSummary {
    let name = |id: u32| class_name(names, id);
    let mut classes = Vec::new();
    for (id, n) in state.nodes.iter().enumerate() {
        let count = n.count.max(n.prim_count);
        if count == 0 {
            continue;
        }
        let bytes = if n.prim_count > 0 {
            n.prim_bytes
        } else if n.in_refs > 0 {
            (u128::from(count) * u128::from(n.in_bytes) / u128::from(n.in_refs)) as u64
        } else {
            0
        };
        classes.push(ClassVolume { name: name(id as u32), instances: count, bytes });
    }
    classes.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
    let mut edges: Vec<EdgeVolume> = state
        .edges
        .iter()
        .map(|(&(from, to), &(bytes, references))| EdgeVolume {
            from: if from & STATICS != 0 { statics_of(&name(from as u32)) } else { name(from as u32) },
            to: name(to),
            bytes,
            references,
        })
        .collect();
    edges.sort_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
    HeapSummary {
        source: String::new(),
        time_ms: None,
        gc_count: None,
        total_bytes: classes.iter().map(|c| c.bytes).sum(),
        total_instances: classes.iter().map(|c| c.instances).sum(),
        classes,
        edges,
        ..Default::default()
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_reference(
    kind: u32,
    info: *const Jint,
    class_tag: Jlong,
    referrer_class_tag: Jlong,
    size: Jlong,
    tag_ptr: *mut Jlong,
    referrer_tag_ptr: *mut Jlong,
    length: Jint,
    user_data: *mut c_void,
) -> Jint {
    // SAFETY: `user_data` is the `State` that `walk` passed and outlives the walk.
    let state = unsafe { &mut *user_data.cast::<State>() };
    if state.panicked || state.aborted {
        return crate::jvmti::VISIT_ABORT;
    }
    state.calls += 1;
    if state.calls % CLOCK_EVERY == 0 && Instant::now() > state.deadline {
        // The pause limit holds whatever the prediction said.
        state.aborted = true;
        return crate::jvmti::VISIT_ABORT;
    }
    // SAFETY: `info` points at the reference info of this kind when not null.
    let index = if info.is_null() { -1 } else { unsafe { *info } };
    // An object referring to itself gets one pointer for both tags (JVMTI says so); the
    // reference says nothing of what holds it, so it is counted as a reference only.
    let itself = !tag_ptr.is_null() && tag_ptr == referrer_tag_ptr;
    let mut referrer_copy = if itself {
        // SAFETY: as below, read only.
        Some(unsafe { *tag_ptr })
    } else {
        None
    };
    // SAFETY: when not null, the pointers are the referent's and the referrer's tags, valid
    // (and writable: JVMTI lets the callback set both) during the callback, and distinct
    // (the same pointer is read into a copy above).
    let (tag, referrer_tag) = unsafe {
        match referrer_copy.as_mut() {
            Some(copy) => (tag_ptr.as_mut(), Some(copy)),
            None => (tag_ptr.as_mut(), referrer_tag_ptr.as_mut()),
        }
    };
    let r = catch_unwind(AssertUnwindSafe(|| {
        if state.panic_for_test {
            panic!("test_panic:walk");
        }
        let reference = Reference { kind, index, class_tag, referrer_class_tag, size, length, itself };
        visit(state, &reference, tag, referrer_tag)
    }));
    r.unwrap_or_else(|_| {
        state.panicked = true;
        crate::jvmti::VISIT_ABORT
    })
}

/// One reference a walk reports, as JVMTI describes it.
#[derive(Debug, Clone, Copy)]
struct Reference {
    kind: u32,
    index: Jint,
    class_tag: Jlong,
    referrer_class_tag: Jlong,
    size: Jlong,
    length: Jint,
    /// The referrer is the referee.
    itself: bool,
}

/// Counts one reference and keeps the links: `tag` is the referee's tag and `referrer_tag`
/// the referrer's (none for a root), both of which it may change.
fn visit(state: &mut State, r: &Reference, tag: Option<&mut Jlong>, referrer_tag: Option<&mut Jlong>) -> Jint {
    let followed = on_reference_safe(state, r, referrer_tag.as_deref().copied().unwrap_or(0));
    if followed == 0 || r.kind == reference::CLASS {
        return followed;
    }
    let mut local = 0;
    let tag = match tag {
        Some(t) => {
            *t = referee_tag(state, *t, r.class_tag);
            t
        }
        None => &mut local,
    };
    if *tag & SAMPLE_BIT != 0 {
        state.seen_samples.push(*tag as u32);
    }
    // Most references are to objects neither expected dead nor linked: what holds them is
    // not worked out for them.
    let expected = crate::expect::slot_of(*tag);
    let linked = state.holders.live(*tag).filter(|_| !r.itself);
    let held = if expected.is_some() || linked.is_some() {
        held_by(r, referrer_tag.as_deref().copied().unwrap_or(0))
    } else {
        None
    };
    if let (Some(slot), Some(held)) = (expected, held) {
        state.expected.push((slot, held));
    }
    if r.itself {
        return followed;
    }
    match referrer_tag {
        Some(rt) => {
            if let Some(x) = linked {
                note_referrer(state, x, held, rt);
            }
            container(state, r, rt);
        }
        None => {
            if let Some(x) = linked {
                state.holders.reach(x);
                note_held(state, x, Held::Root(r.kind));
            }
        }
    }
    followed
}

/// What holds the referee of `r`, before links: the class whose statics or instance refer to
/// it, or the root kind.
fn held_by(r: &Reference, referrer_tag: Jlong) -> Option<Held> {
    match r.kind {
        reference::STATIC_FIELD => class_id(referrer_tag).map(Held::Statics),
        reference::FIELD | reference::ARRAY_ELEMENT => class_id(r.referrer_class_tag).map(|c| Held::Instance(c, None)),
        k => Some(Held::Root(k)),
    }
}

fn on_reference_safe(state: &mut State, r: &Reference, referrer_tag: Jlong) -> Jint {
    if r.kind == reference::CLASS {
        if let Some(c) = class_id(r.referrer_class_tag) {
            state.node(c).count += 1;
        }
        return crate::jvmti::VISIT_OBJECTS;
    }
    if r.kind == reference::FIELD && is_reference(r.referrer_class_tag) && Some(r.index) == state.referent_index {
        return 0;
    }
    let Some(to) = class_id(r.class_tag) else { return crate::jvmti::VISIT_OBJECTS };
    let n = state.node(to);
    n.in_refs += 1;
    n.in_bytes += r.size.max(0) as u64;
    let from = match r.kind {
        reference::FIELD | reference::ARRAY_ELEMENT => class_id(r.referrer_class_tag).map(u64::from),
        reference::STATIC_FIELD => class_id(referrer_tag).map(|c| u64::from(c) | STATICS),
        _ => None,
    };
    if let Some(from) = from {
        let e = state.edges.entry((from, to)).or_default();
        e.0 += r.size.max(0) as u64;
        e.1 += 1;
    }
    crate::jvmti::VISIT_OBJECTS
}

/// The referee's tag after the links have seen it: a dropped link's tag is cleared, an
/// untagged instance of a watched class is watched, and an object of a path class reached
/// for the first time is linked.
fn referee_tag(state: &mut State<'_>, mut tag: Jlong, class_tag: Jlong) -> Jlong {
    if let Some(slot) = link_of(tag).filter(|_| state.holders.live(tag).is_none()) {
        tag = without_link(tag);
        state.holders.release(slot);
    }
    let Some(class) = class_id(class_tag) else { return tag };
    if tag == 0 || tag & (WATCH_BIT | HOLDER_BIT) == WATCH_BIT {
        if let Some(watched) = watch(state, tag, class) {
            return watched;
        }
    }
    if with_link(tag, 0).is_some() {
        if let Some(slot) = state.holders.path_link(class) {
            return with_link(tag, slot).unwrap_or(tag);
        }
    }
    tag
}

/// The new tag of a reached instance of a watched class that is untagged (it gets an access
/// slot) or watched but not yet a link (it becomes one, so that its holders are learned).
fn watch(state: &mut State<'_>, tag: Jlong, class: u32) -> Option<Jlong> {
    if !state.watched_classes.get(class as usize).copied().unwrap_or(false) {
        return None;
    }
    let w = state.watch?;
    let tag = if tag == 0 { crate::watch::tag_of(w.new_slot()?) } else { tag };
    let slot = crate::watch::slot_of(tag)?;
    state.holders.order += 1;
    let link = Link::new(Kind::Watched(slot), true, class, state.holders.order);
    Some(state.holders.add(link).and_then(|l| with_link(tag, l)).unwrap_or(tag))
}

/// Notes what holds link `x`, reached by a reference from a referrer tagged `referrer_tag`
/// (`held` names its class): the referrer's link if it was reached before
/// `x` (a later one would be a cycle, not a way out), else a new holder link for an untagged
/// referrer of a container or watched object within [`MAX_LEVEL`] (learned one level per walk
/// where no path class covered it).
fn note_referrer(state: &mut State<'_>, x: u32, held: Option<Held>, referrer_tag: &mut Jlong) {
    let h = &mut *state.holders;
    h.reach(x);
    let Some(mut held) = held.filter(|h| !matches!(h, Held::Root(_))) else { return };
    if let (Held::Instance(c, _), Some(link)) = (held, h.links.get(x as usize)) {
        let (reached, level, kind, limited) = (link.reached, link.level, link.kind, link.limited);
        // A session in a local variable of the thread using it is reached from that root
        // before the list that holds it: its holder, reached later, is still the way out.
        let rooted = link.held.is_none_or(|h| matches!(h, Held::Root(_)));
        if let Some(r) = h.live(*referrer_tag) {
            if h.leads_to(r, x) {
                return;
            }
            let earlier = h.links.get(r as usize).is_some_and(|l| l.reached >= h.walk_start && l.reached < reached);
            held = Held::Instance(c, (earlier || rooted).then_some(r));
        } else if kind != Kind::Path && level < MAX_LEVEL && with_link(*referrer_tag, 0).is_some() {
            // The referrer is being visited, so it was reached before everything this walk
            // reaches from now on: it takes the walk's start as its order.
            let mut link = Link::new(Kind::Holder, limited, c, h.walk_start);
            link.level = level + 1;
            if let Some(new) = h.add(link) {
                *referrer_tag = with_link(*referrer_tag, new).unwrap_or(*referrer_tag);
                held = Held::Instance(c, Some(new));
            }
        }
    }
    note_held(state, x, held);
}

/// Makes the referrer of a big array a container (linking it if it is not yet).
fn container(state: &mut State<'_>, r: &Reference, referrer_tag: &mut Jlong) {
    if r.kind != reference::FIELD || r.length < 0 || r.size < BIG_ARRAY {
        return;
    }
    let (Some(referrer_class), Some(array_class)) = (class_id(r.referrer_class_tag), class_id(r.class_tag)) else {
        return;
    };
    let h = &mut *state.holders;
    let walks = h.walks;
    let slot = match h.live(*referrer_tag) {
        Some(slot) => slot,
        None if with_link(*referrer_tag, 0).is_some() => {
            let Some(slot) = h.add(Link::new(Kind::Container, false, referrer_class, h.walk_start)) else { return };
            *referrer_tag = with_link(*referrer_tag, slot).unwrap_or(*referrer_tag);
            slot
        }
        None => return,
    };
    let containers = h.containers;
    let Some(l) = h.links.get_mut(slot as usize) else { return };
    match l.kind {
        Kind::Watched(_) => return,
        Kind::Holder | Kind::Path if containers >= MAX_CONTAINERS => return,
        Kind::Holder | Kind::Path => {
            l.kind = Kind::Container;
            l.level = 0;
            h.containers += 1;
        }
        Kind::Container => {}
    }
    l.array_bytes = r.size as u64;
    l.array_class = array_class;
    l.seen_in = walks;
}

fn note_held(state: &mut State<'_>, slot: u32, held: Held) {
    if let Some(l) = state.holders.links.get_mut(slot as usize) {
        if l.held.is_none_or(|h| held.rank() < h.rank()) {
            l.held = Some(held);
        }
    }
}

unsafe extern "C" fn on_primitive_array(
    class_tag: Jlong,
    size: Jlong,
    _tag_ptr: *mut Jlong,
    _count: Jint,
    _element_type: u32,
    _elements: *const c_void,
    user_data: *mut c_void,
) -> Jint {
    // SAFETY: as in `on_reference`.
    let state = unsafe { &mut *user_data.cast::<State>() };
    let r = catch_unwind(AssertUnwindSafe(|| {
        if let Some(c) = class_id(class_tag) {
            let n = state.node(c);
            n.prim_count += 1;
            n.prim_bytes += size.max(0) as u64;
        }
    }));
    if r.is_err() {
        state.panicked = true;
        return crate::jvmti::VISIT_ABORT;
    }
    0
}

#[cfg(test)]
mod tests {
    //! A walk driven as HotSpot's `FollowReferences` drives it (a visit stack; an object's
    //! class reference, then its fields, each referee pushed until visited) over small graphs.
    use super::*;
    use crate::classes::CLASS_BIT;
    use crate::watch::Watch;

    /// Class ids of the test graphs.
    const REGISTRY: u32 = 0;
    const MAP: u32 = 1;
    const TABLE: u32 = 2;
    const NODE: u32 = 3;
    const SESSION: u32 = 4;
    const CLASS: u32 = 5;
    const OTHER: u32 = 6;

    fn names() -> Vec<String> {
        ["Registry", "Map", "Map$Node[]", "Map$Node", "Session", "java.lang.Class", "Other"].map(String::from).to_vec()
    }

    #[derive(Default)]
    struct Heap {
        class: Vec<u32>,
        size: Vec<i64>,
        length: Vec<i32>,
        fields: Vec<Vec<usize>>,
        tags: Vec<Jlong>,
        /// Static fields: class, object.
        statics: Vec<(u32, usize)>,
        /// Thread roots.
        threads: Vec<usize>,
        /// Local variables of threads, reported after the threads.
        locals: Vec<usize>,
    }

    impl Heap {
        fn object(&mut self, class: u32, size: i64, length: i32) -> usize {
            self.class.push(class);
            self.size.push(size);
            self.length.push(length);
            self.fields.push(Vec::new());
            self.tags.push(0);
            self.class.len() - 1
        }

        fn refer(&mut self, from: usize, to: usize) {
            self.fields[from].push(to);
        }

        /// A registry (static) holding a map of `n` sessions, each holding the registry back,
        /// and, reached first from a thread, a map of `other` nodes nothing watched is in.
        fn registry(n: usize, other: usize) -> Heap {
            let mut h = Heap::default();
            let unrelated = h.object(MAP, 48, -1);
            let unrelated_table = h.object(TABLE, 16 + 4 * other as i64, other as i32);
            h.refer(unrelated, unrelated_table);
            for _ in 0..other {
                let node = h.object(NODE, 32, -1);
                let value = h.object(OTHER, 16, -1);
                h.refer(unrelated_table, node);
                h.refer(node, value);
            }
            h.threads.push(unrelated);
            let registry = h.object(REGISTRY, 16, -1);
            let map = h.object(MAP, 48, -1);
            let table = h.object(TABLE, 16 + 4 * 65_536, 65_536);
            h.refer(registry, map);
            h.refer(map, table);
            for _ in 0..n {
                let node = h.object(NODE, 32, -1);
                let session = h.object(SESSION, 24, -1);
                h.refer(table, node);
                h.refer(node, session);
                h.refer(session, registry);
            }
            h.statics.push((REGISTRY, registry));
            h
        }

        /// Walks the heap into `holders` as the agent's walk does, with sessions watched.
        fn walk(&mut self, holders: &mut Holders, watch: &Watch) -> Vec<u32> {
            let watched_classes: Vec<bool> = names().iter().map(|n| watch.watches(n)).collect();
            holders.begin_walk();
            let mut state = State {
                deadline: Instant::now() + Duration::from_secs(3600),
                calls: 0,
                aborted: false,
                holders,
                watched_classes: &watched_classes,
                watch: Some(watch),
                seen_samples: Vec::new(),
                expected: Vec::new(),
                nodes: Vec::new(),
                edges: FxHashMap::default(),
                referent_index: None,
                panicked: false,
                panic_for_test: false,
            };
            let class_tag = |c: u32| CLASS_BIT | Jlong::from(c);
            let mut stack = Vec::new();
            let mut marked = vec![false; self.class.len()];
            for &(c, o) in &self.statics {
                let r = self.reference(reference::STATIC_FIELD, CLASS, o);
                let mut mirror = class_tag(c);
                if visit(&mut state, &r, Some(&mut self.tags[o]), Some(&mut mirror)) != 0 {
                    stack.push(o);
                }
            }
            for &o in &self.threads {
                let r = self.reference(26, 0, o);
                if visit(&mut state, &r, Some(&mut self.tags[o]), None) != 0 {
                    stack.push(o);
                }
            }
            for &o in &self.locals {
                let r = self.reference(24, 0, o);
                if visit(&mut state, &r, Some(&mut self.tags[o]), None) != 0 {
                    stack.push(o);
                }
            }
            while let Some(o) = stack.pop() {
                if std::mem::replace(&mut marked[o], true) {
                    continue;
                }
                let r = Reference {
                    kind: reference::CLASS,
                    index: -1,
                    class_tag: class_tag(CLASS),
                    referrer_class_tag: class_tag(self.class[o]),
                    size: 0,
                    length: -1,
                    itself: false,
                };
                let mut mirror = class_tag(self.class[o]);
                visit(&mut state, &r, Some(&mut mirror), None);
                for i in 0..self.fields[o].len() {
                    let to = self.fields[o][i];
                    let kind = if self.length[o] >= 0 { reference::ARRAY_ELEMENT } else { reference::FIELD };
                    let r = self.reference(kind, self.class[o], to);
                    let (mut tag, mut referrer) = (self.tags[to], self.tags[o]);
                    let followed = visit(&mut state, &r, Some(&mut tag), Some(&mut referrer));
                    self.tags[to] = tag;
                    // The referrer's new tag wins where both are the same object.
                    self.tags[o] = referrer;
                    if followed != 0 && !marked[to] {
                        stack.push(to);
                    }
                }
            }
            let objects: Vec<u64> = state.nodes.iter().map(|n| n.count.max(n.prim_count)).collect();
            state.holders.finish_walk(&state.edges, &objects, state.watched_classes);
            state.seen_samples
        }

        fn reference(&self, kind: u32, referrer_class: u32, to: usize) -> Reference {
            Reference {
                kind,
                index: 0,
                class_tag: CLASS_BIT | Jlong::from(self.class[to]),
                referrer_class_tag: CLASS_BIT | Jlong::from(referrer_class),
                size: self.size[to],
                length: self.length[to],
                itself: false,
            }
        }
    }

    /// A watch on the sessions, and no links yet.
    fn watching_sessions() -> (Watch, Holders) {
        (Watch::new(vec![vec!["Session".into()]], Instant::now()), Holders::default())
    }

    fn registry_path() -> Vec<String> {
        ["Map$Node", "Map$Node[]", "Map", "Registry", "class Registry"].map(String::from).to_vec()
    }

    #[test]
    fn the_first_walk_learns_one_level_and_the_second_names_whole_paths() {
        let mut heap = Heap::registry(300, 2_000);
        let (watch, mut holders) = watching_sessions();
        heap.walk(&mut holders, &watch);
        let first = holders.watched(&names());
        assert_eq!(first.len(), 300);
        assert!(first.iter().all(|(_, c, p)| *c == SESSION && p == &["Map$Node", "…"]), "{:?}", first[0]);
        let chains = holders.chains(&names());
        assert_eq!(chains.len(), 1, "{chains:?}");
        assert_eq!((chains[0].container.as_str(), chains[0].path.as_slice()), ("Map", &["…".to_string()][..]));

        heap.walk(&mut holders, &watch);
        let second = holders.watched(&names());
        assert_eq!(second.len(), 300);
        for (_, _, path) in &second {
            assert_eq!(path, &registry_path(), "the sessions hold the registry back: no cycle");
        }
        let chains = holders.chains(&names());
        assert_eq!(chains[0].path, ["Registry", "class Registry"]);
        // Path links cover the unrelated map's nodes too, and stay for the next walks.
        let (used, added) = holders.counts();
        assert!(added >= 2_000, "{added}");
        assert!(used <= 300 * 2 + 2_000 + 10, "{used} links");
        heap.walk(&mut holders, &watch);
        assert_eq!(holders.counts(), (used, 0), "a steady heap is not linked again");
        assert_eq!(holders.watched(&names())[0].2, registry_path());
    }

    #[test]
    fn path_classes_are_the_ones_with_few_objects() {
        // 30,000 unrelated nodes: more than the path classes may have, so map nodes are left
        // to the watch's one-level links; the table, the map and the registry stay.
        let mut heap = Heap::registry(100, 30_000);
        let (watch, mut holders) = watching_sessions();
        heap.walk(&mut holders, &watch);
        let chosen: Vec<usize> = (0..holders.path_classes.len()).filter(|&c| holders.path_classes[c]).collect();
        assert_eq!(chosen, [REGISTRY as usize, MAP as usize, TABLE as usize]);
        heap.walk(&mut holders, &watch);
        assert!(holders.counts().1 < 10, "{:?}", holders.counts());
        assert_eq!(holders.watched(&names())[0].2, registry_path(), "the nodes the first walk linked");
    }

    #[test]
    fn dropped_links_are_cleared_and_their_slots_reused() {
        let mut heap = Heap::registry(50, 1_000);
        let (watch, mut holders) = watching_sessions();
        heap.walk(&mut holders, &watch);
        heap.walk(&mut holders, &watch);
        let unrelated: Vec<usize> = (0..heap.class.len()).filter(|&o| heap.class[o] == NODE).take(1_000).collect();
        assert!(unrelated.iter().all(|&o| link_of(heap.tags[o]).is_some()), "linked when first reached");
        let slots = holders.links.len();
        // Unreachable for a walk, the unrelated map's links are dropped; reached again, their
        // tags are cleared and they are linked anew, in the same slots.
        let thread = heap.threads.pop().unwrap();
        heap.walk(&mut holders, &watch);
        let dropped = |h: &Holders, tag: Jlong| h.live(tag).is_none();
        assert!(unrelated.iter().all(|&o| dropped(&holders, heap.tags[o])));
        heap.threads.push(thread);
        heap.walk(&mut holders, &watch);
        assert!(unrelated.iter().all(|&o| !dropped(&holders, heap.tags[o])), "linked anew");
        assert_eq!(holders.links.len(), slots, "in the slots their cleared tags gave back");
        // Unreachable again and then collected: ObjectFree gives the slots back.
        heap.threads.pop();
        heap.walk(&mut holders, &watch);
        let tags: Vec<Jlong> = unrelated.iter().map(|&o| heap.tags[o]).collect();
        holders.freed(&tags);
        assert!(holders.free.len() >= 1_000, "{}", holders.free.len());
        assert_eq!(holders.watched(&names())[0].2, registry_path());
    }

    #[test]
    fn sampled_objects_on_a_path_are_linked_and_stay_sampled() {
        let mut heap = Heap::registry(20, 10);
        let table = (0..heap.class.len()).rfind(|&o| heap.class[o] == TABLE).unwrap();
        heap.tags[table] = SAMPLE_BIT | 77;
        let (watch, mut holders) = watching_sessions();
        heap.walk(&mut holders, &watch);
        let seen = heap.walk(&mut holders, &watch);
        assert!(seen.contains(&77), "{seen:?}");
        assert!(link_of(heap.tags[table]).is_some() && heap.tags[table] as u32 == 77, "{:x}", heap.tags[table]);
        assert_eq!(holders.watched(&names())[0].2, registry_path());
    }

    #[test]
    fn a_session_in_a_local_variable_is_still_named_by_its_holder() {
        // Seen on JDK 25: the session the loop was using was reached from the thread's stack
        // before the list holding it, and its path stopped at the list's array.
        let mut heap = Heap::registry(30, 10);
        let sessions: Vec<usize> = (0..heap.class.len()).filter(|&o| heap.class[o] == SESSION).collect();
        heap.locals.push(sessions[7]);
        let (watch, mut holders) = watching_sessions();
        heap.walk(&mut holders, &watch);
        heap.walk(&mut holders, &watch);
        let watched = holders.watched(&names());
        assert_eq!(watched.len(), 30);
        assert!(watched.iter().all(|(_, _, p)| p == &registry_path()), "{watched:?}");
    }

    #[test]
    fn an_object_reached_first_from_a_local_is_not_held_by_what_it_holds() {
        // The registry is kept only by a session in a local variable: the map's nodes reach
        // that session after it, but they are held through it, so naming them its holder
        // would be a cycle.
        let mut heap = Heap::registry(5, 0);
        heap.statics.clear();
        let session = (0..heap.class.len()).find(|&o| heap.class[o] == SESSION).unwrap();
        heap.locals.push(session);
        let (watch, mut holders) = watching_sessions();
        heap.walk(&mut holders, &watch);
        heap.walk(&mut holders, &watch);
        let watched = holders.watched(&names());
        assert_eq!(watched.len(), 5);
        let through = ["Map$Node", "Map$Node[]", "Map", "Registry", "Session", "root stack local"];
        for (slot, _, path) in &watched {
            let expected: &[&str] = if *slot == 0 { &["root stack local"] } else { &through };
            assert_eq!(path, expected, "every path ends at the local, none loops");
        }
    }
}
