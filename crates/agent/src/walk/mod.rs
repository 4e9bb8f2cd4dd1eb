//! One class points-from walk: JVMTI `FollowReferences` from the GC roots, summarised into
//! the exact `HeapSummary` of a dump, without tagging objects.
//!
//! Each reached object reports its class once (the `CLASS` reference), which counts it.
//! Sizes come with every reference *to* an object: constant per instance class, exact per
//! primitive array (reported once each), and for object arrays the mean over the references
//! to them (exact when each array has one referrer, as in collections). A reference's
//! referent field is neither followed nor counted, as offline.

mod chains;
mod filtered;
mod holders;
#[cfg(test)]
mod tests;

pub use filtered::walk_to;

mod common;
use common::*;
pub use common::{Aborted, WalkFailed};

use chains::{class_name, held_name};
pub use chains::{ChainObjects, Step};
use holders::{Held, Kind, Link, MAX_LEVEL, SIZE_BUCKETS};
pub use holders::{Holders, LinkPlan};

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

struct State<'h> {
    clock: Clock,
    /// Per class id: whether its instances are arrays of references.
    object_arrays: &'h [bool],
    /// How many object arrays fields referenced, by log2 of their bytes.
    array_sizes: [u64; SIZE_BUCKETS],
    holders: &'h mut Holders,
    /// Per class id: whether its instances are watched.
    watched_classes: &'h [bool],
    watch: Option<&'h crate::watch::Watch>,
    seen_samples: Vec<u32>,
    expected: Vec<(u32, Held)>,
    nodes: Vec<Node>,
    edges: FxHashMap<EdgeKey, (u64, u64)>,
    referent_index: Option<Jint>,
    panic_for_test: bool,
    /// A walk to fork at its first callback (see [`walk_forked`]).
    fork: Option<ForkPlan>,
}

/// A forked walk's own part of the walk state.
struct ForkPlan {
    /// The class names, for the child's report (read before the walk: no class loads at its
    /// safepoint, and the registry's lock may be held by a thread the child has not).
    names: Vec<String>,
    /// Not forked yet.
    pending: bool,
    /// In the JVM, after the fork: the child walking.
    child: Option<crate::fork::Child>,
    /// Why there was no fork.
    failed: Option<String>,
    /// Test only: the child stops in its walk, as on a lock held at the fork.
    hang_for_test: bool,
}

/// The callbacks of a whole walk, stop-the-world or forked: every reference, and the sizes of
/// primitive arrays.
fn whole_walk_callbacks() -> HeapCallbacks {
    HeapCallbacks {
        heap_iteration: std::ptr::null(),
        heap_reference: Some(on_reference::<State> as HeapReferenceCallback),
        primitive_field: std::ptr::null(),
        array_primitive_value: Some(on_primitive_array as ArrayPrimitiveCallback),
        string_primitive_value: std::ptr::null(),
        reserved: [std::ptr::null(); 10],
    }
}

impl State<'_> {
    /// The slots of the sampled objects the walk reached, sorted, each once.
    fn take_seen_samples(&mut self) -> Vec<u32> {
        let mut seen = std::mem::take(&mut self.seen_samples);
        seen.sort_unstable();
        seen.dedup();
        seen
    }

    /// After a complete walk, in the JVM or in a forked copy: the links it keeps, and the plan
    /// for the next walk's (see [`Holders::finish_walk`]).
    fn finish_links(&mut self) {
        let objects: Vec<u64> = self.nodes.iter().map(|n| n.count.max(n.prim_count)).collect();
        self.holders.finish_walk(&self.edges, &objects, self.watched_classes);
        self.holders.plan_containers(&self.array_sizes);
    }

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
    /// Containers of big arrays and what holds them, the biggest arrays first.
    pub holders: Vec<HolderChain>,
    /// The objects of each chain of `holders`, for naming their fields.
    pub chain_objects: Vec<ChainObjects>,
    /// Slots of the sampled objects the walk reached, sorted.
    pub seen_samples: Vec<u32>,
    /// Objects expected dead that the walk reached: slot, and what referenced them.
    pub expected: Vec<(u32, String)>,
}

/// Walks the heap of `env`, stopping once its callbacks have run for `deadline`; `names` names class ids;
/// `referent_index` is the JVMTI field index of `Reference.referent`; `holders` carries
/// tagged containers from walk to walk; `watching` is the watch and, per class id, whether its
/// instances are watched.
pub fn walk(
    env: Env,
    names: impl Fn() -> Vec<String>,
    referent_index: Option<Jint>,
    holders: &mut Holders,
    watching: Option<(&crate::watch::Watch, &[bool])>,
    deadline: Duration,
    panic_for_test: bool,
) -> Result<Result<Walk, Aborted>, WalkFailed> {
    holders.begin_walk();
    let object_arrays = object_arrays(&names());
    let mut state = State {
        clock: Clock::new(deadline),
        object_arrays: &object_arrays,
        array_sizes: [0; SIZE_BUCKETS],
        holders,
        watched_classes: watching.map_or(&[], |w| w.1),
        watch: watching.map(|w| w.0),
        seen_samples: Vec::new(),
        expected: Vec::new(),
        nodes: Vec::new(),
        edges: FxHashMap::default(),
        referent_index,
        panic_for_test,
        fork: None,
    };
    let callbacks = whole_walk_callbacks();
    let ended = match env.follow_references(&callbacks, (&mut state as *mut State).cast()) {
        Ok(()) => state.clock.end(|| state.nodes.iter().map(|n| n.count).sum()),
        Err(e) => Err(e.into()),
    };
    // A walk that did not end knows less than the complete one before it.
    let pause = match ended {
        Ok(Ok(pause)) => pause,
        Ok(Err(stopped)) => {
            state.holders.stopped_walk();
            return Ok(Err(stopped));
        }
        Err(failed) => {
            state.holders.stopped_walk();
            return Err(failed);
        }
    };
    state.finish_links();
    let names = names();
    let summary = summarise(&state, &names);
    let seen_samples = state.take_seen_samples();
    let expected = state.expected.iter().map(|&(slot, held)| (slot, held_name(held, &names))).collect();
    let (holders, chain_objects) = state.holders.chains(&names).into_iter().unzip();
    Ok(Ok(Walk { summary, pause, holders, chain_objects, seen_samples, expected }))
}

/// What a whole walk on a forked copy of the JVM found.
#[derive(Debug)]
pub struct ForkedWalk {
    /// The summary, classes named: the heap as it was at the fork.
    pub summary: HeapSummary,
    /// How long the JVM was stopped: the safepoint and the fork.
    pub pause: Duration,
    /// How long the child walked, from the fork to the end of its walk.
    pub walked: Duration,
    /// The most private memory the child had: its copy of the pages either side wrote.
    pub copy: u64,
    /// Slots of the sampled objects the walk reached, sorted.
    pub seen_samples: Vec<u32>,
    /// Containers of big arrays and what holds them, as the copy's links found them (fields
    /// not named yet: see [`ChainObjects::indexes`]), the biggest arrays first.
    pub holders: Vec<HolderChain>,
    /// The classes and JVMTI indexes along each chain of `holders` (the tags are the copy's).
    pub chain_objects: Vec<ChainObjects>,
    /// What the copy's walk planned for the next walk's links, for the JVM's state to adopt.
    pub links: LinkPlan,
}

/// Why a forked walk gave no result, and how long the JVM stopped for it.
#[derive(Debug)]
pub struct ForkFailed {
    /// What happened.
    pub why: String,
    /// The JVM's pause.
    pub pause: Duration,
}

/// What the child sends its parent.
#[derive(serde::Serialize, serde::Deserialize)]
struct ChildReport {
    summary: HeapSummary,
    seen_samples: Vec<u32>,
    chains: Vec<(HolderChain, ChainObjects)>,
    links: LinkPlan,
}

/// A forked walk under way: the child walking, and the JVM's pause for the fork.
#[derive(Debug)]
pub struct ForkStarted {
    child: crate::fork::Child,
    /// How long the JVM was stopped: the safepoint and the fork.
    pub pause: Duration,
}

/// Starts a whole walk of the heap of `env` on a forked copy of the JVM (see [`crate::fork`]):
/// the JVM stops for the fork only; [`forked_walk`] waits for the child. Classes are named by
/// `names` (read before the walk). The child links objects as a walk in the JVM would, from
/// its copy of `holders` (the JVM's own is left as it was: the child's tags stay in the
/// child), and reports the chains it found and the plan it made. No deadline but the child's
/// timeout. `Err` says why there is no fork.
pub fn walk_forked(
    env: Env,
    names: Vec<String>,
    referent_index: Option<Jint>,
    holders: &mut Holders,
    timeout: Duration,
    hang_for_test: bool,
) -> Result<ForkStarted, ForkFailed> {
    let object_arrays = object_arrays(&names);
    let mut state = State {
        // The JVM's side ends at the first callback; the child's runs until `timeout` at most.
        clock: Clock::new(timeout),
        object_arrays: &object_arrays,
        array_sizes: [0; SIZE_BUCKETS],
        holders,
        watched_classes: &[],
        watch: None,
        seen_samples: Vec::new(),
        expected: Vec::new(),
        nodes: Vec::new(),
        edges: FxHashMap::default(),
        referent_index,
        panic_for_test: false,
        fork: Some(ForkPlan { names, pending: true, child: None, failed: None, hang_for_test }),
    };
    let callbacks = whole_walk_callbacks();
    let walked = env.follow_references(&callbacks, (&mut state as *mut State).cast());
    let pause = state.clock.start.elapsed();
    let failed = |why: String| ForkFailed { why, pause };
    walked.map_err(|e| failed(e.to_string()))?;
    let plan = state.fork.take().expect("a forked walk's plan");
    if let Some(why) = plan.failed {
        return Err(failed(format!("no fork ({why})")));
    }
    let Some(child) = plan.child else {
        return Err(failed("the walk reported no reference to fork at (the JVM is ending)".into()));
    };
    Ok(ForkStarted { child, pause })
}

/// Waits for the child of `started` (off the worker: its walk takes seconds on a big heap),
/// within `limits`, and reads its report.
pub fn forked_walk(
    started: ForkStarted,
    support: crate::fork::Support,
    limits: crate::fork::Limits,
) -> Result<ForkedWalk, ForkFailed> {
    let pause = started.pause;
    let failed = |why: String| ForkFailed { why, pause };
    let done = crate::fork::await_child(started.child, support, limits).map_err(failed)?;
    let report: ChildReport = serde_json::from_slice(&done.bytes)
        .map_err(|e| failed(format!("the child's report could not be read: {e}")))?;
    let (holders, chain_objects) = report.chains.into_iter().unzip();
    Ok(ForkedWalk {
        summary: report.summary,
        pause,
        walked: done.walked,
        copy: done.copy,
        seen_samples: report.seen_samples,
        holders,
        chain_objects,
        links: report.links,
    })
}

/// In a forked child, on `SIGUSR1` once its walk is over: sends its summary to the parent
/// and ends the child.
extern "C" fn report_forked(_signal: std::ffi::c_int) {
    let bytes = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the child's walk state, given to `fork_here` and alive (the walk's frame is
        // below the VM thread's, which waits idle); nothing else runs in the child.
        let state = unsafe { &mut *crate::fork::child_state().cast::<State>() };
        let names = state.fork.as_mut().map(|f| std::mem::take(&mut f.names)).unwrap_or_default();
        state.finish_links();
        let summary = summarise(state, &names);
        let seen_samples = state.take_seen_samples();
        let chains = state.holders.chains(&names);
        let links = state.holders.link_plan();
        serde_json::to_vec(&ChildReport { summary, seen_samples, chains, links }).unwrap_or_default()
    }))
    .unwrap_or_default();
    crate::fork::send(&bytes)
}

impl State<'_> {
    /// At a forked walk's first callback: forks. In the JVM the walk ends here (the returned
    /// visit control); in the child it goes on, with no deadline but the parent's timeout.
    fn fork_now(&mut self) -> Option<Jint> {
        let me: *mut State = self;
        let plan = self.fork.as_mut()?;
        plan.pending = false;
        // SAFETY: on the VM thread in a heap callback; `me` lives until the walk ends, and in
        // the child until its report.
        match unsafe { crate::fork::fork_here(me.cast(), report_forked) } {
            crate::fork::Forked::Parent(child) => {
                plan.child = Some(child);
                Some(crate::jvmti::VISIT_ABORT)
            }
            crate::fork::Forked::Failed(why) => {
                plan.failed = Some(why);
                Some(crate::jvmti::VISIT_ABORT)
            }
            crate::fork::Forked::Child => {
                if plan.hang_for_test {
                    crate::fork::wait_forever_for_test();
                }
                self.clock.deadline = Instant::now() + Duration::from_secs(1 << 24);
                // The copy's links from here on: the JVM's state stays as it was.
                self.holders.begin_forked();
                None
            }
        }
    }
}

/// HotSpot's own traversal of the heap, with no callback: the floor of any walk's pause
/// (`benches/walk-cost.sh`); returns how long it stopped the JVM.
pub fn floor(env: Env) -> Result<Duration, WalkFailed> {
    let callbacks = HeapCallbacks {
        heap_iteration: std::ptr::null(),
        heap_reference: None,
        primitive_field: std::ptr::null(),
        array_primitive_value: None,
        string_primitive_value: std::ptr::null(),
        reserved: [std::ptr::null(); 10],
    };
    let start = Instant::now();
    env.follow_references(&callbacks, std::ptr::null_mut())?;
    Ok(start.elapsed())
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

impl Visitor for State<'_> {
    fn clock(&mut self) -> &mut Clock {
        &mut self.clock
    }

    fn visit(&mut self, r: &Reference, tag: Option<&mut Jlong>, referrer_tag: Option<&mut Jlong>) -> Jint {
        if self.panic_for_test {
            panic!("test_panic:walk");
        }
        if self.fork.as_ref().is_some_and(|f| f.pending) {
            if let Some(stop) = self.fork_now() {
                return stop;
            }
        }
        visit(self, r, tag, referrer_tag)
    }
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
    let expected = crate::expectations::slot_of(*tag);
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
                note_referrer(state, x, held, r.index, rt);
            }
            if r.kind == reference::ARRAY_ELEMENT {
                if let Some(array) = state.holders.live(*rt).filter(|&a| state.holders.links[a as usize].is_array) {
                    element(state, r, array);
                }
            }
            container(state, r, rt, tag);
        }
        None => {
            if let Some(x) = linked {
                state.holders.reach(x);
                state.holders.note_held(x, Held::Root(r.kind), -1);
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
            return state.holders.tag_link(slot, tag);
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
    Some(match state.holders.add(link) {
        Some(l) => state.holders.tag_link(l, tag),
        None => tag,
    })
}

/// Notes what holds link `x`, reached by a reference from a referrer tagged `referrer_tag`
/// (`held` names its class): the referrer's link if it was reached before
/// `x` (a later one would be a cycle, not a way out), else a new holder link for an untagged
/// referrer of a container or watched object within [`MAX_LEVEL`] (learned one level per walk
/// where no path class covered it).
fn note_referrer(state: &mut State<'_>, x: u32, held: Option<Held>, index: Jint, referrer_tag: &mut Jlong) {
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
                *referrer_tag = h.tag_link(new, *referrer_tag);
                held = Held::Instance(c, Some(new));
            }
        }
    }
    state.holders.note_held(x, held, index);
}

/// Makes the referrer of a big array a container (linking it if it is not yet), and links the
/// array (`tag`) as held by it: a watched object's chain that reaches the array goes on
/// through the container's (a listener in a list's array: the array has too many neighbours
/// of its class to be a path class, and the chain stopped there).
fn container(state: &mut State<'_>, r: &Reference, referrer_tag: &mut Jlong, tag: &mut Jlong) {
    if r.kind != reference::FIELD || r.length < 0 {
        return;
    }
    let object_array =
        class_id(r.class_tag).is_some_and(|c| state.object_arrays.get(c as usize).copied().unwrap_or(false));
    if object_array && r.size > 0 {
        state.array_sizes[(r.size.ilog2() as usize).min(SIZE_BUCKETS - 1)] += 1;
    }
    if r.size < state.holders.big_array(object_array) {
        return;
    }
    if let (Some(referrer_class), Some(array_class)) = (class_id(r.referrer_class_tag), class_id(r.class_tag)) {
        state.holders.contain(referrer_class, array_class, r.size as u64, r.index, referrer_tag, tag);
    }
}

/// Counts the element class of a reference from a container's big array (its link `array`).
fn element(state: &mut State<'_>, r: &Reference, array: u32) {
    if let Some(class) = class_id(r.class_tag) {
        *state.holders.elements.entry((array, class)).or_default() += 1;
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
    // SAFETY: `user_data` is the `State` that `walk` passed and outlives the walk.
    let state = unsafe { &mut *user_data.cast::<State>() };
    let r = catch_unwind(AssertUnwindSafe(|| {
        if let Some(c) = class_id(class_tag) {
            let n = state.node(c);
            n.prim_count += 1;
            n.prim_bytes += size.max(0) as u64;
        }
    }));
    if r.is_err() {
        state.clock.panicked = true;
        return crate::jvmti::VISIT_ABORT;
    }
    0
}
