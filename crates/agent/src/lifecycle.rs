//! The agent's life: loading and options, the one `Agent` the callbacks and the worker share,
//! events turned on and off, a failure disabling it, and shutdown.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::jvmti::{event, Capabilities, Env, EventCallbacks, Jint, Vm};
use crate::state::{guard, Agent, AGENT};
use crate::{classes, jvmti, sampler, watch, worker};
use runstore::Options;

/// Loads the agent into `vm` with the options `text`, its events calling `cb`; `live` when
/// attached to a running JVM.
pub(crate) fn load(vm: Vm, text: &str, live: bool, cb: &EventCallbacks) -> Jint {
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
    if let Err(e) = env.set_event_callbacks(cb) {
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
        expectations: crate::expectations::Expectations::default(),
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
