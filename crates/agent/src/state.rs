//! The one `Agent` the VM's callbacks and the worker share: its state, the guard every
//! callback runs behind, a failure disabling it, and its events turned on and off.

use crate::jvmti::{event, Env, Jint, Jobject, Vm};
use crate::{classes, jvmti, sampler, watch};
use runstore::Options;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub(crate) struct Agent {
    pub(crate) env: Env,
    pub(crate) vm: Vm,
    pub(crate) opts: Options,
    pub(crate) text: String,
    pub(crate) sampling: bool,
    pub(crate) object_free: bool,
    pub(crate) sampler: sampler::Sampler,
    pub(crate) expectations: crate::expectations::Expectations,
    /// Tags of linked objects (`walk::Holders`) the collector freed, for the next walk.
    pub(crate) freed_links: Mutex<Vec<jvmti::Jlong>>,
    /// Staleness watching, when rules were given.
    pub(crate) watch: Option<watch::Watch>,
    /// What the class file load hook did, for the worker to record.
    pub(crate) instrumented: Mutex<Vec<String>>,
    /// Classes the hook instrumented as they loaded (no need to retransform them).
    pub(crate) hooked: Mutex<Vec<String>>,
    pub(crate) classes: classes::Classes,
    pub(crate) gc_count: AtomicU64,
    /// The sampler's sequence number when the last collection finished: samples from it on
    /// were allocated after it, and no collection has judged them yet.
    pub(crate) gc_seq: AtomicU64,
    /// `ObjectFree` events received, to tell when the collector's frees have all been posted.
    pub(crate) frees_seen: AtomicU64,
    /// Sampled allocations recorded, and the CPU nanoseconds their callbacks took (what a deeper
    /// stack costs, measured where it is spent).
    pub(crate) samples_taken: AtomicU64,
    pub(crate) sampling_ns: AtomicU64,
    pub(crate) disabled: AtomicBool,
    pub(crate) why_disabled: Mutex<Option<String>>,
    pub(crate) stop: AtomicBool,
    pub(crate) finished: AtomicBool,
    pub(crate) reference: AtomicUsize,
    pub(crate) started: Instant,
}

pub(crate) static AGENT: OnceLock<Agent> = OnceLock::new();

impl Agent {
    pub(crate) fn reference_class(&self) -> Option<Jobject> {
        let r = self.reference.load(Ordering::Acquire);
        (r != 0).then_some(r as Jobject)
    }

    pub(crate) fn active(&self) -> bool {
        !self.disabled.load(Ordering::Relaxed) && !self.stop.load(Ordering::Relaxed)
    }

    /// Waits, at most half a second, until the `ObjectFree` events of the last collection have
    /// been posted, so that a snapshot counts only what the collection kept.
    ///
    /// The VM posts them later, from its service thread. Changing the event's mode would post
    /// them at once (JDK-8212879), but on JDK 20+ that call waits for the service thread without
    /// letting a safepoint through, while the service thread waits for the safepoint: a
    /// `jcmd GC.heap_dump` during a flush hung the JVM for good. So we wait for the events to
    /// stop coming instead, on this thread, which holds nothing the VM needs.
    pub(crate) fn settle_frees(&self) {
        const STEP: Duration = Duration::from_millis(20);
        let deadline = Instant::now() + Duration::from_millis(500);
        let mut last = self.frees_seen.load(Ordering::Acquire);
        let mut quiet_steps = 0;
        while quiet_steps < 2 && Instant::now() < deadline {
            std::thread::sleep(STEP);
            let now = self.frees_seen.load(Ordering::Acquire);
            if now == last {
                quiet_steps += 1;
            } else {
                (last, quiet_steps) = (now, 0);
            }
        }
    }

    pub(crate) fn panics_in(&self, callback: &str) -> bool {
        self.opts.test_panic.as_deref() == Some(callback)
    }
}

/// Stops the agent's work after an internal error; the worker records why and turns the
/// events off. The JVM keeps running.
pub(crate) fn disable(why: String) {
    if let Some(a) = AGENT.get() {
        if !a.disabled.swap(true, Ordering::SeqCst) {
            eprintln!("leakscope agent: {why}; the agent is now disabled, the JVM keeps running");
            *a.why_disabled.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
        }
    }
}

/// Runs `f`, turning a panic into `disable` and `default`: no unwinding may cross into the VM.
pub(crate) fn guard<R>(what: &str, default: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => {
            disable(format!("internal error (panic) in {what}"));
            default
        }
    }
}

/// Turns the events on.
pub(crate) fn events_on(a: &Agent) -> jvmti::JResult<()> {
    a.env.set_event(true, event::GC_FINISH)?;
    a.env.set_event(true, event::CLASS_PREPARE)?;
    if a.object_free {
        a.env.set_event(true, event::OBJECT_FREE)?;
    }
    if a.sampling {
        a.env.set_heap_sampling_interval(a.opts.interval as Jint)?;
        a.env.set_event(true, event::SAMPLED_ALLOC)?;
    }
    Ok(())
}

/// Turns every event off (after an error or at shutdown).
pub(crate) fn events_off(a: &Agent) {
    // ObjectFree stays on: changing its mode waits for the service thread's posting, which can
    // deadlock against a safepoint on JDK 20+ (see `Agent::settle_frees`); its callback is cheap.
    for e in [event::SAMPLED_ALLOC, event::GC_FINISH, event::CLASS_PREPARE, event::CLASS_FILE_LOAD_HOOK] {
        let _ = a.env.set_event(false, e);
    }
}
