//! The JVM's entry points into the agent: `Agent_OnLoad`, `Agent_OnAttach`,
//! `Agent_OnUnload` and the JVMTI event callbacks. This module and `jvmti` are where raw
//! pointers from the VM become the agent's types; each callback is behind [`crate::state::guard`].

use std::ffi::{c_char, c_void, CStr};

use crate::jvmti::{event, EventCallbacks, Jint, Jlong, Jni, Jobject, Vm};
use std::sync::atomic::Ordering;

use crate::jvmti::FrameInfo;
use crate::lifecycle::*;
use crate::state::*;
use crate::{expect, instrument};

fn options_text(options: *const c_char) -> String {
    if options.is_null() {
        return String::new();
    }
    // SAFETY: the VM passes a NUL-terminated string.
    unsafe { CStr::from_ptr(options) }.to_string_lossy().into_owned()
}

/// Called by the JVM for `-agentpath:`.
///
/// # Safety
/// Called by the JVM with a valid `JavaVM*` and option string.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnLoad(vm: *mut c_void, options: *const c_char, _reserved: *mut c_void) -> Jint {
    // SAFETY: the JVM's JavaVM, as Agent_OnLoad receives it.
    guard("Agent_OnLoad", 1, || load(unsafe { Vm::from_raw(vm) }, &options_text(options), false, &callbacks()))
}

/// Called by the JVM for `jcmd PID JVMTI.agent_load`.
///
/// # Safety
/// Called by the JVM with a valid `JavaVM*` and option string.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnAttach(vm: *mut c_void, options: *const c_char, _reserved: *mut c_void) -> Jint {
    // SAFETY: the JVM's JavaVM, as Agent_OnAttach receives it.
    guard("Agent_OnAttach", 1, || load(unsafe { Vm::from_raw(vm) }, &options_text(options), true, &callbacks()))
}

/// Called by the JVM when it unloads the agent (at exit).
///
/// # Safety
/// Called by the JVM.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnUnload(_vm: *mut c_void) {
    guard("Agent_OnUnload", (), || {
        shutdown();
        if let Some(a) = AGENT.get() {
            events_off(a);
            // Releases the tags, capabilities (heap sampling is solo) and callbacks.
            a.env.dispose();
        }
    });
}

pub(crate) unsafe extern "C" fn on_vm_init(_jvmti: *mut c_void, _jni: *mut c_void, _thread: Jobject) {
    guard("VMInit", (), || {
        if let Err(e) = begin() {
            disable(format!("cannot start ({e})"));
        }
    });
}

pub(crate) unsafe extern "C" fn on_vm_death(_jvmti: *mut c_void, _jni: *mut c_void) {
    guard("VMDeath", (), shutdown);
}

pub(crate) unsafe extern "C" fn on_gc_finish(_jvmti: *mut c_void) {
    // Only raw monitors may be used here: count, and let the worker do the rest.
    guard("GarbageCollectionFinish", (), || {
        if let Some(a) = AGENT.get() {
            if a.panics_in("gc") {
                panic!("test_panic:gc");
            }
            // What was sampled before it: the objects this collection judged.
            a.gc_seq.store(a.sampler.seq(), Ordering::Release);
            a.gc_count.fetch_add(1, Ordering::Release);
        }
    });
}

pub(crate) unsafe extern "C" fn on_object_free(_jvmti: *mut c_void, tag: Jlong) {
    guard("ObjectFree", (), || {
        if let Some(a) = AGENT.get() {
            a.frees_seen.fetch_add(1, Ordering::Release);
            a.sampler.freed(tag);
            a.expectations.freed(tag);
            if crate::classes::link_of(tag).is_some() {
                a.freed_links.lock().unwrap_or_else(|p| p.into_inner()).push(tag);
            }
            if let Some(w) = &a.watch {
                w.freed(tag);
            }
        }
    });
}

pub(crate) unsafe extern "C" fn on_class_prepare(
    _jvmti: *mut c_void,
    jni: *mut c_void,
    _thread: Jobject,
    klass: Jobject,
) {
    guard("ClassPrepare", (), || {
        let Some(a) = AGENT.get() else { return };
        if a.active() && a.env.class_signature(klass).is_ok_and(|s| s == expect::API_CLASS) {
            // Not initialized yet: its static initializer asks bound0() and sets the flag.
            // SAFETY: the event thread's JNIEnv, as the callback receives it.
            expect::bind(unsafe { Jni::from_raw(jni) }, klass, false);
        }
    });
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn on_class_file_load(
    _jvmti: *mut c_void,
    _jni: *mut c_void,
    _class_being_redefined: Jobject,
    _loader: Jobject,
    name: *const c_char,
    _protection_domain: Jobject,
    len: Jint,
    data: *const u8,
    new_len: *mut Jint,
    new_data: *mut *mut u8,
) {
    guard("ClassFileLoadHook", (), || {
        let Some(a) = AGENT.get() else { return };
        let Some(w) = a.watch.as_ref().filter(|_| a.active() && !name.is_null() && !data.is_null()) else { return };
        // SAFETY: the VM passes a NUL-terminated internal name.
        let internal = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        let java = internal.replace('/', ".");
        if !w.watches(&java) {
            return;
        }
        // SAFETY: the VM passes `len` bytes of class file.
        let bytes = unsafe { std::slice::from_raw_parts(data, len.max(0) as usize) };
        let hook = instrument::LEAKSCOPE_HOOK;
        let note = match instrument::add_entry_hooks(bytes, hook) {
            Ok(Some((out, methods))) => match a.env.allocate_copy(&out) {
                Ok(p) => {
                    // SAFETY: out-pointers given by the VM.
                    unsafe {
                        *new_len = out.len() as Jint;
                        *new_data = p;
                    }
                    a.hooked.lock().unwrap_or_else(|p| p.into_inner()).push(java.clone());
                    format!("watching {java}: {methods} instance methods instrumented")
                }
                Err(e) => format!("cannot instrument {java}: {e}"),
            },
            Ok(None) => format!("watching {java}: it has no instance method to instrument"),
            Err(e) => format!("cannot instrument {java}: {e}"),
        };
        a.instrumented.lock().unwrap_or_else(|p| p.into_inner()).push(note);
    });
}

pub(crate) unsafe extern "C" fn on_sampled_alloc(
    _jvmti: *mut c_void,
    jni: *mut c_void,
    _thread: Jobject,
    object: Jobject,
    klass: Jobject,
    size: Jlong,
) {
    guard("SampledObjectAlloc", (), || {
        let Some(a) = AGENT.get() else { return };
        if !a.active() {
            return;
        }
        if a.panics_in("alloc") {
            panic!("test_panic:alloc");
        }
        // SAFETY: the allocating thread's JNIEnv, as the callback receives it.
        let jni = unsafe { Jni::from_raw(jni) };
        let start = thread_cpu_ns();
        let Ok(class) = a.classes.id_of(a.env, jni, klass, a.reference_class()) else { return };
        let mut frames = [FrameInfo { method: std::ptr::null_mut(), location: 0 }; 32];
        let depth = a.opts.depth.min(frames.len());
        let n = a.env.stack_trace(&mut frames[..depth]).unwrap_or(0);
        let tag = a.sampler.record(class, size.max(0) as u64, &frames[..n]);
        if a.env.set_tag(object, tag).is_err() {
            a.sampler.forget(tag);
        }
        a.samples_taken.fetch_add(1, Ordering::Relaxed);
        a.sampling_ns.fetch_add(thread_cpu_ns().saturating_sub(start), Ordering::Relaxed);
    });
}

/// CPU time of the calling thread, nanoseconds: what a callback costs, without the time the
/// thread waited or was descheduled.
fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given; the clock exists on Linux.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return 0;
    }
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The event callbacks: this module's entry points, by event.
fn callbacks() -> EventCallbacks {
    let mut cb = EventCallbacks::new();
    cb.set(event::VM_INIT, on_vm_init as *const c_void);
    cb.set(event::VM_DEATH, on_vm_death as *const c_void);
    cb.set(event::GC_FINISH, on_gc_finish as *const c_void);
    cb.set(event::OBJECT_FREE, on_object_free as *const c_void);
    cb.set(event::SAMPLED_ALLOC, on_sampled_alloc as *const c_void);
    cb.set(event::CLASS_PREPARE, on_class_prepare as *const c_void);
    cb.set(event::CLASS_FILE_LOAD_HOOK, on_class_file_load as *const c_void);
    cb
}
