//! A walk's vocabulary: edge keys between classes, the deadline clock, the reference
//! callback both walks share, and how a walk ended.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use crate::jvmti::{Jint, Jlong, VISIT_ABORT};

/// Edge key: referrer class id, with bit 32 set for a class's statics; referent class id.
pub(super) type EdgeKey = (u64, u32);
pub(super) const STATICS: u64 = 1 << 32;

/// A walk's deadline, looked at every [`CLOCK_EVERY`] callbacks, and how the walk ended.
#[derive(Debug)]
pub(super) struct Clock {
    pub(super) start: Instant,
    pub(super) deadline: Instant,
    pub(super) calls: u64,
    /// When the walk passed its deadline and stopped.
    pub(super) stopped_at: Option<Instant>,
    /// A callback panicked (the panic was caught).
    pub(super) panicked: bool,
}

impl Clock {
    /// A clock started now, for callbacks that may run for `deadline`.
    pub(super) fn new(deadline: Duration) -> Clock {
        let start = Instant::now();
        Clock { start, deadline: start + deadline, calls: 0, stopped_at: None, panicked: false }
    }

    /// Counts a callback; whether the walk must stop now (it stopped already, a callback
    /// panicked, or the deadline has passed): the pause limit holds whatever the prediction.
    pub(super) fn must_stop(&mut self) -> bool {
        if self.panicked || self.stopped_at.is_some() {
            return true;
        }
        self.calls += 1;
        if self.calls.is_multiple_of(CLOCK_EVERY) && Instant::now() > self.deadline {
            self.stopped_at = Some(Instant::now());
            return true;
        }
        false
    }

    /// How the walk that has just returned ended: an error if a callback panicked, a stop
    /// at the deadline (`reached` objects by then), or its pause.
    pub(super) fn end(&self, reached: impl FnOnce() -> u64) -> Result<Result<Duration, Aborted>, WalkFailed> {
        let pause = self.start.elapsed();
        if self.panicked {
            return Err(WalkFailed::Panicked);
        }
        Ok(match self.stopped_at {
            Some(t) => Err(Aborted { pause, until_stop: t.duration_since(self.start), objects: reached() }),
            None => Ok(pause),
        })
    }
}

/// Callbacks between two looks at the clock.
pub(super) const CLOCK_EVERY: u64 = 4096;

/// A walk that reached its deadline and stopped, unfinished.
#[derive(Debug, Clone, Copy)]
pub struct Aborted {
    /// How long it stopped the JVM.
    pub pause: Duration,
    /// How long its callbacks ran before it stopped (the rest of the pause is the VM's cleanup).
    pub until_stop: Duration,
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

/// Per class id of `names`: whether its instances are arrays of references.
pub(super) fn object_arrays(names: &[String]) -> Vec<bool> {
    names
        .iter()
        .map(|n| {
            n.strip_suffix("[]").is_some_and(|elem| {
                elem.ends_with("[]") || !hprof::BasicType::PRIMITIVES.iter().any(|t| t.java_name() == elem)
            })
        })
        .collect()
}

/// One reference a walk reports, as JVMTI describes it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reference {
    pub(super) kind: u32,
    /// The field or element index, -1 where JVMTI gives none.
    pub(super) index: Jint,
    pub(super) class_tag: Jlong,
    pub(super) referrer_class_tag: Jlong,
    pub(super) size: Jlong,
    pub(super) length: Jint,
    /// The referrer is the referee.
    pub(super) itself: bool,
}

/// A walk's state, as the reference callback reaches it through JVMTI's user data.
pub(super) trait Visitor {
    /// The walk's clock: whether to stop, and where a caught panic is noted.
    fn clock(&mut self) -> &mut Clock;

    /// One reference: `tag` is the referee's tag and `referrer_tag` the referrer's (none for
    /// a root), either of which it may change. Returns JVMTI's visit control.
    fn visit(&mut self, r: &Reference, tag: Option<&mut Jlong>, referrer_tag: Option<&mut Jlong>) -> Jint;
}

/// `jvmtiHeapReferenceCallback` for a walk whose user data is a `V`: stops the walk at the
/// clock's deadline, hands the tags over as distinct references, and turns a panic into an
/// aborted walk.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn on_reference<V: Visitor>(
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
    // SAFETY: `user_data` is the `V` the walk passed, and outlives the walk.
    let state = unsafe { &mut *user_data.cast::<V>() };
    if state.clock().must_stop() {
        return VISIT_ABORT;
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
    let r = Reference { kind, index, class_tag, referrer_class_tag, size, length, itself };
    catch_unwind(AssertUnwindSafe(|| state.visit(&r, tag, referrer_tag))).unwrap_or_else(|_| {
        state.clock().panicked = true;
        VISIT_ABORT
    })
}
