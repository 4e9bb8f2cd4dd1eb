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

use crate::classes::{class_id, is_reference, HOLDER_BIT, SAMPLE_BIT, WATCH_BIT};
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
/// Objects tagged as containers, watched objects or holders, at most.
pub const MAX_LINKS: usize = 65_536;
/// Links kept for containers and their holders, whatever the watched objects take: watched
/// sessions (tagged at birth by their constructors' hook) and their map nodes filled every
/// link in a registry's first walk, and the registry's own chain, the leak's holder, was
/// never learned.
const RESERVED_FOR_CONTAINERS: usize = 16_384;
/// How far from a container holders are followed (one level more per walk).
const MAX_LEVEL: i64 = 6;
/// What is remembered of the holders of one tagged object.
const MAX_HELD_BY: usize = 4;

/// What holds a tagged object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// A static field of a class.
    Statics(u32),
    /// An instance of a class; the tagged link for it, once tagged.
    Instance(u32, Option<u32>),
    /// A GC root of a JVMTI reference kind.
    Root(u32),
}

#[derive(Debug, Clone)]
struct Link {
    /// A watched object (`--watch`) and its access slot; not a container or a holder.
    watched: Option<u32>,
    /// A watched object or a holder of one (else a container or a holder of one).
    for_watch: bool,
    class: u32,
    level: i64,
    array_class: u32,
    array_bytes: u64,
    seen_in: u64,
    held_by: Vec<Held>,
}

/// Objects tagged because they hold a big array (containers, level 0) or hold such an
/// object (level n: n references away), kept across walks: each walk names what holds the
/// objects tagged before it and tags those holders, so that chains from containers to static
/// fields and thread roots grow by one level per walk without a path search.
#[derive(Debug, Default)]
pub struct Holders {
    links: Vec<Link>,
    containers: usize,
    walks: u64,
}

impl Holders {
    fn add(&mut self, link: Link) -> Option<Jlong> {
        let container = link.level == 0 && link.watched.is_none();
        let room = if link.for_watch { MAX_LINKS - RESERVED_FOR_CONTAINERS } else { MAX_LINKS };
        if self.links.len() >= room || (container && self.containers >= MAX_CONTAINERS) {
            return None;
        }
        self.containers += usize::from(container);
        self.links.push(link);
        Some(self.links.len() as Jlong - 1)
    }

    /// The chains of the containers (links that hold a big array) the last walk saw.
    pub fn chains(&self, names: &[String]) -> Vec<HolderChain> {
        let name = |id: u32| class_name(names, id);
        let mut out: Vec<HolderChain> = self
            .links
            .iter()
            .filter(|l| l.array_bytes > 0 && l.watched.is_none() && l.seen_in == self.walks)
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
    /// for GC roots; ends in `…` while the chain is still being followed.
    fn path_of(&self, l: &Link, names: &[String]) -> Vec<String> {
        let mut path = Vec::new();
        let mut cur = l;
        loop {
            // A static field says most about who keeps the object; transient roots (stack and
            // JNI locals of the thread using it) least.
            let held = cur.held_by.iter().min_by_key(|h| match h {
                Held::Statics(_) => 0,
                Held::Instance(_, Some(_)) => 1,
                Held::Root(26) => 2,
                Held::Instance(_, None) => 3,
                Held::Root(_) => 4,
            });
            let Some(&held) = held else {
                path.push("…".into());
                return path;
            };
            path.push(held_name(held, names));
            if let Held::Instance(_, child) = held {
                if let Some(next) = child.and_then(|i| self.links.get(i as usize)) {
                    if path.len() < MAX_LEVEL as usize + 1 {
                        cur = next;
                        continue;
                    }
                }
                path.push("…".into());
            }
            return path;
        }
    }

    /// Every watched object a walk reached: its access slot, class id, and what holds it
    /// (outwards, as in [`Self::chains`]).
    pub fn watched(&self, names: &[String]) -> Vec<(u32, u32, Vec<String>)> {
        self.links.iter().filter_map(|l| Some((l.watched?, l.class, self.path_of(l, names)))).collect()
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
    holders.walks += 1;
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
    // SAFETY: when not null, the pointers are the referent's and the referrer's tags, valid
    // (and writable) during the callback.
    let mut tag = if tag_ptr.is_null() { 0 } else { unsafe { *tag_ptr } };
    let referrer_tag = if referrer_tag_ptr.is_null() { 0 } else { unsafe { *referrer_tag_ptr } };
    let r = catch_unwind(AssertUnwindSafe(|| {
        if state.panic_for_test {
            panic!("test_panic:walk");
        }
        let r = on_reference_safe(state, kind, index, class_tag, referrer_class_tag, size, referrer_tag);
        if r != 0 && !tag_ptr.is_null() && (tag == 0 || tag & (WATCH_BIT | HOLDER_BIT) == WATCH_BIT) {
            if let Some(new_tag) = watch(state, tag, class_tag) {
                // SAFETY: as above; JVMTI lets the callback set the referee's tag.
                unsafe { *tag_ptr = new_tag };
                tag = new_tag;
            }
        }
        if r != 0 && tag & SAMPLE_BIT != 0 {
            state.seen_samples.push(tag as u32);
        }
        if let Some(slot) = crate::expect::slot_of(tag).filter(|_| r != 0) {
            let held = match kind {
                reference::STATIC_FIELD => class_id(referrer_tag).map(Held::Statics),
                reference::FIELD | reference::ARRAY_ELEMENT => {
                    class_id(referrer_class_tag).map(|c| Held::Instance(c, None))
                }
                _ => Some(Held::Root(kind)),
            };
            state.expected.extend(held.map(|h| (slot, h)));
        }
        if r != 0 && !referrer_tag_ptr.is_null() {
            if let Some(new_tag) =
                track_holders(state, kind, tag, class_tag, referrer_class_tag, size, length, referrer_tag)
            {
                // SAFETY: as above; JVMTI lets the callback set the referrer's tag.
                unsafe { *referrer_tag_ptr = new_tag };
            }
        } else if r != 0 && tag & HOLDER_BIT != 0 {
            note_held(state, tag as u32, Held::Root(kind));
        }
        r
    }));
    r.unwrap_or_else(|_| {
        state.panicked = true;
        crate::jvmti::VISIT_ABORT
    })
}

fn on_reference_safe(
    state: &mut State,
    kind: u32,
    index: Jint,
    class_tag: Jlong,
    referrer_class_tag: Jlong,
    size: Jlong,
    referrer_tag: Jlong,
) -> Jint {
    if kind == reference::CLASS {
        if let Some(c) = class_id(referrer_class_tag) {
            state.node(c).count += 1;
        }
        return crate::jvmti::VISIT_OBJECTS;
    }
    if kind == reference::FIELD && is_reference(referrer_class_tag) && Some(index) == state.referent_index {
        return 0;
    }
    let Some(to) = class_id(class_tag) else { return crate::jvmti::VISIT_OBJECTS };
    let n = state.node(to);
    n.in_refs += 1;
    n.in_bytes += size.max(0) as u64;
    let from = match kind {
        reference::FIELD | reference::ARRAY_ELEMENT => class_id(referrer_class_tag).map(u64::from),
        reference::STATIC_FIELD => class_id(referrer_tag).map(|c| u64::from(c) | STATICS),
        _ => None,
    };
    if let Some(from) = from {
        let e = state.edges.entry((from, to)).or_default();
        e.0 += size.max(0) as u64;
        e.1 += 1;
    }
    crate::jvmti::VISIT_OBJECTS
}

/// The new tag of a reached instance of a watched class that is untagged (it gets an access
/// slot) or watched but not yet a link (it becomes one, so that its holders are learned).
fn watch(state: &mut State<'_>, tag: Jlong, class_tag: Jlong) -> Option<Jlong> {
    let class = class_id(class_tag)?;
    if !state.watched_classes.get(class as usize).copied().unwrap_or(false) {
        return None;
    }
    let w = state.watch?;
    let tag = if tag == 0 { crate::watch::tag_of(w.new_slot()?) } else { tag };
    let slot = crate::watch::slot_of(tag)?;
    let walks = state.holders.walks;
    let link = Link {
        watched: Some(slot),
        for_watch: true,
        class,
        level: 0,
        array_class: 0,
        array_bytes: 0,
        seen_in: walks,
        held_by: Vec::new(),
    };
    Some(match state.holders.add(link) {
        Some(link) => tag | HOLDER_BIT | link,
        None => tag,
    })
}

/// Names what holds tagged objects and tags new containers and holders; returns a new tag
/// for the referrer when it gets one.
#[allow(clippy::too_many_arguments)]
fn track_holders(
    state: &mut State<'_>,
    kind: u32,
    tag: Jlong,
    class_tag: Jlong,
    referrer_class_tag: Jlong,
    size: Jlong,
    length: Jint,
    referrer_tag: Jlong,
) -> Option<Jlong> {
    let walks = state.holders.walks;
    let referrer_class = class_id(referrer_class_tag);
    if tag & HOLDER_BIT != 0 {
        let level = (tag >> 32) & 0xF;
        let mut held = match kind {
            reference::STATIC_FIELD => class_id(referrer_tag).map(Held::Statics),
            reference::FIELD | reference::ARRAY_ELEMENT => referrer_class.map(|c| Held::Instance(c, None)),
            _ => None,
        }?;
        let slot = tag as u32;
        let mut new_tag = None;
        if let Held::Instance(c, _) = held {
            if referrer_tag & HOLDER_BIT != 0 {
                // A holder at this level or below is held by this object (a Tomcat session
                // holds its manager, which holds the session map): a cycle, not a way out, so
                // it names a class and the chain does not follow it.
                let referrer_level = (referrer_tag >> 32) & 0xF;
                held = Held::Instance(c, (referrer_level > level).then_some(referrer_tag as u32));
            } else if referrer_tag == 0 && level < MAX_LEVEL {
                let for_watch = state.holders.links.get(slot as usize).is_some_and(|l| l.for_watch);
                let link = Link {
                    watched: None,
                    for_watch,
                    class: c,
                    level: level + 1,
                    array_class: 0,
                    array_bytes: 0,
                    seen_in: walks,
                    held_by: Vec::new(),
                };
                if let Some(child) = state.holders.add(link) {
                    held = Held::Instance(c, Some(child as u32));
                    new_tag = Some(HOLDER_BIT | ((level + 1) << 32) | child);
                }
            }
        }
        note_held(state, slot, held);
        return new_tag;
    }
    // A big array makes its referrer a container.
    if kind != reference::FIELD || length < 0 || size < BIG_ARRAY {
        return None;
    }
    let (referrer_class, array_class) = (referrer_class?, class_id(class_tag)?);
    // A holder found first on a watched object's chain (a registry's map, reached from its
    // sessions) is a container all the same.
    if referrer_tag & HOLDER_BIT != 0 {
        if let Some(l) = state.holders.links.get_mut(referrer_tag as u32 as usize).filter(|l| l.watched.is_none()) {
            l.array_bytes = size as u64;
            l.array_class = array_class;
            l.seen_in = walks;
        }
        return None;
    }
    if referrer_tag != 0 {
        // Sampled objects keep their tags.
        return None;
    }
    let link = Link {
        watched: None,
        for_watch: false,
        class: referrer_class,
        level: 0,
        array_class,
        array_bytes: size as u64,
        seen_in: walks,
        held_by: Vec::new(),
    };
    state.holders.add(link).map(|slot| HOLDER_BIT | slot)
}

fn note_held(state: &mut State<'_>, slot: u32, held: Held) {
    if let Some(l) = state.holders.links.get_mut(slot as usize) {
        if let Some(same) = l.held_by.iter_mut().find(|h| same_holder(h, &held)) {
            if let (Held::Instance(_, None), Held::Instance(_, Some(_))) = (*same, held) {
                *same = held;
            }
        } else if l.held_by.len() < MAX_HELD_BY {
            l.held_by.push(held);
        }
    }
}

fn same_holder(a: &Held, b: &Held) -> bool {
    match (a, b) {
        (Held::Instance(x, _), Held::Instance(y, _)) => x == y,
        _ => a == b,
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
