//! A walk that reports only the references to one class's instances (JVMTI's class filter):
//! about the cost of HotSpot's own traversal (40–60 ns an object, measured, against 200–250 ns
//! for a full walk), so it fits a pause a full walk no longer does. It learns one level of
//! what holds the linked objects of that class, and the containers of big arrays when the
//! class is an array class: what a leak that began after the heap grew too big to walk needs,
//! a level per walk, until its structure's chain reaches a root or a static field.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use super::common::{Aborted, Clock, WalkFailed};
use super::holders::{Held, Holders, Kind, Link, MAX_LEVEL};
use crate::classes::{class_id, with_link, HOLDER_BIT, WATCH_BIT};
use crate::jvmti::{reference, Env, HeapCallbacks, HeapReferenceCallback, Jint, Jlong, Jobject};

struct State<'h> {
    holders: &'h mut Holders,
    /// Per class id: whether its instances are arrays of references.
    object_arrays: &'h [bool],
    clock: Clock,
}

/// Walks from the roots reporting only references to instances of `klass` (class id
/// `class`), stopping once its callbacks have run for `deadline`: notes what holds each linked
/// object of the class, and makes the referrers of its big arrays containers. Returns the
/// pause.
pub fn walk_to(
    env: Env,
    klass: Jobject,
    holders: &mut Holders,
    names: &[String],
    deadline: Duration,
) -> Result<Result<Duration, Aborted>, WalkFailed> {
    let object_arrays = super::common::object_arrays(names);
    holders.begin_filtered();
    let mut state = State { holders, object_arrays: &object_arrays, clock: Clock::new(deadline) };
    let callbacks = HeapCallbacks {
        heap_iteration: std::ptr::null(),
        heap_reference: Some(on_reference as HeapReferenceCallback),
        primitive_field: std::ptr::null(),
        array_primitive_value: None,
        string_primitive_value: std::ptr::null(),
        reserved: [std::ptr::null(); 10],
    };
    env.follow_references_to(klass, &callbacks, (&mut state as *mut State).cast())?;
    state.clock.end(|| 0)
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_reference(
    kind: u32,
    _info: *const Jint,
    class_tag: Jlong,
    referrer_class_tag: Jlong,
    size: Jlong,
    tag_ptr: *mut Jlong,
    referrer_tag_ptr: *mut Jlong,
    length: Jint,
    user_data: *mut c_void,
) -> Jint {
    // SAFETY: `user_data` is the `State` that `walk_to` passed and outlives the walk.
    let state = unsafe { &mut *user_data.cast::<State>() };
    if state.clock.must_stop() {
        return crate::jvmti::VISIT_ABORT;
    }
    // An object referring to itself says nothing of what holds it; the same pointer is both.
    if tag_ptr.is_null() || tag_ptr == referrer_tag_ptr || kind == reference::CLASS {
        return crate::jvmti::VISIT_OBJECTS;
    }
    // SAFETY: the pointers are the referee's and the referrer's tags (distinct, checked
    // above), valid and writable during the callback.
    let (tag, referrer) = unsafe { (&mut *tag_ptr, referrer_tag_ptr.as_mut()) };
    let r = catch_unwind(AssertUnwindSafe(|| {
        visit(state, kind, class_tag, referrer_class_tag, size, length, tag, referrer)
    }));
    if r.is_err() {
        state.clock.panicked = true;
        return crate::jvmti::VISIT_ABORT;
    }
    crate::jvmti::VISIT_OBJECTS
}

/// One reference to an instance of the class: its referee tagged `tag`, its referrer tagged
/// `referrer` (none for a root).
#[allow(clippy::too_many_arguments)]
fn visit(
    state: &mut State,
    kind: u32,
    class_tag: Jlong,
    referrer_class_tag: Jlong,
    size: Jlong,
    length: Jint,
    tag: &mut Jlong,
    referrer: Option<&mut Jlong>,
) {
    let h = &mut *state.holders;
    let mut linked = h.live(*tag);
    // A watched object (tagged at birth by its constructor's hook) is linked when a walk
    // reports it, as a full walk links it: its holders are then learned a level a walk.
    if linked.is_none() && *tag & (WATCH_BIT | HOLDER_BIT) == WATCH_BIT {
        if let (Some(slot), Some(class)) = (crate::watch::slot_of(*tag), class_id(class_tag)) {
            h.order += 1;
            let order = h.order;
            if let Some(l) = h.add(Link::new(Kind::Watched(slot), true, class, order)) {
                *tag = h.tag_link(l, *tag);
                linked = Some(l);
            }
        }
    }
    if let Some(x) = linked {
        h.reach(x);
    }
    let held = match (kind, referrer.as_deref()) {
        (reference::STATIC_FIELD, Some(&r)) => class_id(r).map(Held::Statics),
        (reference::FIELD | reference::ARRAY_ELEMENT, Some(_)) => {
            class_id(referrer_class_tag).map(|c| Held::Instance(c, None))
        }
        (k, None) => Some(Held::Root(k)),
        _ => None,
    };
    let Some(referrer) = referrer else {
        if let (Some(x), Some(held)) = (linked, held) {
            h.note_end(x, held);
        }
        return;
    };
    match (linked, held) {
        (Some(x), Some(held @ Held::Statics(_))) => h.note_end(x, held),
        (Some(x), Some(Held::Instance(c, _))) => {
            // One level of holders a walk, one holder each: the first referrer, linked (or
            // linked now), holds `x`; a root or a static field found ends its chain.
            let known = h.links[x as usize].held;
            let ended = known.is_some_and(|k| matches!(k, Held::Statics(_) | Held::Root(_)));
            let followed = matches!(known, Some(Held::Instance(_, Some(_))));
            if !ended && !followed {
                let level = h.links[x as usize].level;
                let holder = match h.live(*referrer) {
                    Some(r) if !h.leads_to(r, x) => Some(r),
                    Some(_) => None,
                    None if level < MAX_LEVEL && with_link(*referrer, 0).is_some() => {
                        let mut link = Link::new(Kind::Holder, false, c, h.walk_start);
                        link.level = level + 1;
                        let new = h.add(link);
                        if let Some(new) = new {
                            *referrer = h.tag_link(new, *referrer);
                        }
                        new
                    }
                    None => None,
                };
                h.note_held(x, Held::Instance(c, holder));
            }
        }
        _ => {}
    }
    let object_array =
        class_id(class_tag).is_some_and(|c| state.object_arrays.get(c as usize).copied().unwrap_or(false));
    if kind == reference::FIELD && length >= 0 && size >= h.big_array(object_array) {
        if let (Some(container), Some(array)) = (class_id(referrer_class_tag), class_id(class_tag)) {
            h.contain(container, array, size as u64, referrer, tag);
        }
    }
}

/// [`visit`] for a test's walk, with a state of its own.
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub(super) fn visit_for_test(
    holders: &mut Holders,
    object_arrays: &[bool],
    kind: u32,
    class_tag: Jlong,
    referrer_class_tag: Jlong,
    size: Jlong,
    length: Jint,
    tag: &mut Jlong,
    referrer: Option<&mut Jlong>,
) {
    let mut state = State { holders, object_arrays, clock: Clock::new(Duration::from_secs(3600)) };
    visit(&mut state, kind, class_tag, referrer_class_tag, size, length, tag, referrer);
}
