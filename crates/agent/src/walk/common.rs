//! A walk's vocabulary: edge keys between classes, the deadline clock, and how a walk ended.

use std::time::{Duration, Instant};

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
