//! The agent's life: loading and options, the one `Agent` the callbacks and the worker share,
//! events turned on and off, a failure disabling it, and shutdown.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::jvmti::{event, Capabilities, Env, EventCallbacks, Jint, Jobject, Vm};
use crate::{classes, entry, expect, jvmti, sampler, watch, worker};
use runstore::Options;

pub(crate) struct Agent {
    pub(crate) env: Env,
    pub(crate) vm: Vm,
    pub(crate) opts: Options,
    pub(crate) text: String,
    pub(crate) sampling: bool,
    pub(crate) object_free: bool,
    pub(crate) sampler: sampler::Sampler,
    pub(crate) expectations: expect::Expectations,
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

pub(crate) fn load(vm: Vm, text: &str, live: bool) -> Jint {
    if let Some(a) = AGENT.get() {
        // jcmd loads the same library again into the same process: keep the running agent.
        eprintln!(
            "leakscope agent: already running in this JVM, writing to {} (options `{text}` ignored)",
            a.opts.out.display()
        );
        return 0;
    }
    let opts = match Options::parse(text, std::process::id()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("leakscope agent: {e}");
            return 1;
        }
    };
    let env = match Env::of(&vm) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("leakscope agent: this JVM offers no JVMTI 11 environment ({e}); JDK 11 or newer is needed");
            return 1;
        }
    };
    let potential = env.potential_capabilities().unwrap_or_default();
    let mut want = Capabilities::default();
    for bit in [
        Capabilities::TAG_OBJECTS,
        Capabilities::GC_EVENTS,
        Capabilities::OBJECT_FREE,
        Capabilities::SAMPLED_ALLOC,
        Capabilities::LINE_NUMBERS,
        Capabilities::SOURCE_FILE_NAME,
    ] {
        if potential.has(bit) {
            want = want.with(bit);
        }
    }
    if !opts.watch.is_empty() {
        if !potential.has(Capabilities::RETRANSFORM) {
            eprintln!(
                "leakscope agent: this JVM cannot retransform classes, which watching needs; the agent stays off"
            );
            return 1;
        }
        want = want.with(Capabilities::RETRANSFORM);
    }
    if !want.has(Capabilities::TAG_OBJECTS) || !want.has(Capabilities::GC_EVENTS) {
        eprintln!("leakscope agent: this JVM cannot tag objects or report collections; the agent stays off");
        return 1;
    }
    let object_free = want.has(Capabilities::OBJECT_FREE);
    let sampling = want.has(Capabilities::SAMPLED_ALLOC) && object_free;
    if !sampling {
        eprintln!(
            "leakscope agent: heap sampling is held by another agent (only one may have it); \
             continuing with heap walks only"
        );
    }
    if let Err(e) = env.add_capabilities(&want) {
        eprintln!("leakscope agent: cannot add capabilities ({e})");
        return 1;
    }
    let mut cb = EventCallbacks::new();
    cb.set(event::VM_INIT, entry::on_vm_init as *const c_void);
    cb.set(event::VM_DEATH, entry::on_vm_death as *const c_void);
    cb.set(event::GC_FINISH, entry::on_gc_finish as *const c_void);
    cb.set(event::OBJECT_FREE, entry::on_object_free as *const c_void);
    cb.set(event::SAMPLED_ALLOC, entry::on_sampled_alloc as *const c_void);
    cb.set(event::CLASS_PREPARE, entry::on_class_prepare as *const c_void);
    cb.set(event::CLASS_FILE_LOAD_HOOK, entry::on_class_file_load as *const c_void);
    if let Err(e) = env.set_event_callbacks(&cb) {
        eprintln!("leakscope agent: cannot set event callbacks ({e})");
        return 1;
    }
    let watch = (!opts.watch.is_empty()).then(|| watch::Watch::new(opts.watch.clone(), Instant::now()));
    let agent = Agent {
        env,
        vm,
        sampler: sampler::Sampler::new(opts.interval),
        opts,
        text: text.to_string(),
        sampling,
        object_free,
        expectations: expect::Expectations::default(),
        freed_links: Mutex::new(Vec::new()),
        watch,
        instrumented: Mutex::new(Vec::new()),
        hooked: Mutex::new(Vec::new()),
        classes: classes::Classes::default(),
        gc_count: AtomicU64::new(0),
        gc_seq: AtomicU64::new(0),
        frees_seen: AtomicU64::new(0),
        samples_taken: AtomicU64::new(0),
        sampling_ns: AtomicU64::new(0),
        disabled: AtomicBool::new(false),
        why_disabled: Mutex::new(None),
        stop: AtomicBool::new(false),
        finished: AtomicBool::new(false),
        reference: AtomicUsize::new(0),
        started: Instant::now(),
    };
    if AGENT.set(agent).is_err() {
        return 0;
    }
    if AGENT.get().is_some_and(|a| a.watch.is_some()) {
        if let Err(e) = start_watching(&env) {
            eprintln!("leakscope agent: cannot watch ({e}); the agent stays off");
            return 1;
        }
    }
    let result = if live { begin() } else { env.set_event(true, event::VM_INIT) };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("leakscope agent: cannot start ({e})");
            1
        }
    }
}

/// Puts leakscope-api.jar on the bootstrap class path (the instrumented classes call
/// `LeakScope.touched`, whatever their loader) and turns the class file load hook on, so that
/// watched classes are instrumented as they load; the worker retransforms those loaded before.
pub(crate) fn start_watching(env: &Env) -> Result<(), String> {
    if crate::jars::BOOT_JAR.is_empty() {
        return Err("this agent was built without a JDK, so it has no leakscope-api.jar".into());
    }
    let jar =
        std::env::temp_dir().join(format!("leakscope-api-{}-{}.jar", env!("CARGO_PKG_VERSION"), std::process::id()));
    std::fs::write(&jar, crate::jars::BOOT_JAR).map_err(|e| format!("cannot write {}: {e}", jar.display()))?;
    let path = std::ffi::CString::new(jar.display().to_string()).map_err(|_| "bad temporary path".to_string())?;
    env.add_to_bootstrap(&path)
        .map_err(|e| format!("cannot add {} to the bootstrap class path: {e}", jar.display()))?;
    env.set_event(true, event::CLASS_FILE_LOAD_HOOK).map_err(|e| format!("cannot hook class loading: {e}"))
}

/// Starts the worker (live phase), which turns the events on once it knows
/// `java.lang.ref.Reference`.
pub(crate) fn begin() -> jvmti::JResult<()> {
    let Some(a) = AGENT.get() else { return Ok(()) };
    a.env.set_event(true, event::VM_DEATH)?;
    std::thread::Builder::new()
        .name("leakscope-agent".into())
        .spawn(|| guard("the worker thread", (), worker::run))
        .map_err(|_| jvmti::JvmtiError(110))?;
    Ok(())
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

pub(crate) fn shutdown() {
    if let Some(a) = AGENT.get() {
        a.stop.store(true, Ordering::SeqCst);
        // Let the worker write its last snapshot; never hold the JVM's exit for long.
        let deadline = Instant::now() + Duration::from_secs(3);
        while !a.finished.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
