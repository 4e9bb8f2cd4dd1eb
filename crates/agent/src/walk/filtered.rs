//! A walk that reports only the references to one class's instances (JVMTI's class filter):
//! about the cost of HotSpot's own traversal (40–60 ns an object, measured, against 200–250 ns
//! for a full walk), so it fits a pause a full walk no longer does. It learns one level of
//! what holds the linked objects of that class, and the containers of big arrays when the
//! class is an array class: what a leak that began after the heap grew too big to walk needs,
//! a level per walk, until its structure's chain reaches a root or a static field.

use std::time::Duration;

use super::common::{on_reference, Aborted, Clock, Reference, Visitor, WalkFailed};
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
        heap_reference: Some(on_reference::<State> as HeapReferenceCallback),
        primitive_field: std::ptr::null(),
        array_primitive_value: None,
        string_primitive_value: std::ptr::null(),
        reserved: [std::ptr::null(); 10],
    };
    env.follow_references_to(klass, &callbacks, (&mut state as *mut State).cast())?;
    state.clock.end(|| 0)
}

impl Visitor for State<'_> {
    fn clock(&mut self) -> &mut Clock {
        &mut self.clock
    }

    fn visit(&mut self, r: &Reference, tag: Option<&mut Jlong>, referrer_tag: Option<&mut Jlong>) -> Jint {
        // An object referring to itself says nothing of what holds it.
        if let Some(tag) = tag.filter(|_| !r.itself && r.kind != reference::CLASS) {
            visit(self, r, tag, referrer_tag);
        }
        crate::jvmti::VISIT_OBJECTS
    }
}

/// One reference to an instance of the class: its referee tagged `tag`, its referrer tagged
/// `referrer` (none for a root).
fn visit(state: &mut State, r: &Reference, tag: &mut Jlong, referrer: Option<&mut Jlong>) {
    let Reference { kind, index, class_tag, referrer_class_tag, size, length, .. } = *r;
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
            h.note_end(x, held, index);
        }
        return;
    };
    match (linked, held) {
        (Some(x), Some(held @ Held::Statics(_))) => h.note_end(x, held, index),
        (Some(x), Some(Held::Instance(c, _))) => {
            // One level of holders a walk, one holder each: the first referrer, linked (or
            // linked now), holds `x`; a root or a static field found ends its chain, but a
            // stack or JNI local does not: a Tomcat shop's listener array, reached first from
            // the stack of a thread iterating it, kept every watched cart on a path of "root
            // stack local" that no filtered walk could take further.
            let known = h.links[x as usize].held;
            let ended = known.is_some_and(|k| matches!(k, Held::Statics(_) | Held::Root(_)) && !k.transient());
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
                h.note_held(x, Held::Instance(c, holder), index);
            }
        }
        _ => {}
    }
    let object_array =
        class_id(class_tag).is_some_and(|c| state.object_arrays.get(c as usize).copied().unwrap_or(false));
    if kind == reference::FIELD && length >= 0 && size >= h.big_array(object_array) {
        if let (Some(container), Some(array)) = (class_id(referrer_class_tag), class_id(class_tag)) {
            h.contain(container, array, size as u64, index, referrer, tag);
        }
    }
}

/// [`visit`] for a test's walk, with a state of its own.
#[cfg(test)]
pub(super) fn visit_for_test(
    holders: &mut Holders,
    object_arrays: &[bool],
    r: &Reference,
    tag: &mut Jlong,
    referrer: Option<&mut Jlong>,
) {
    let mut state = State { holders, object_arrays, clock: Clock::new(Duration::from_secs(3600)) };
    visit(&mut state, r, tag, referrer);
}
