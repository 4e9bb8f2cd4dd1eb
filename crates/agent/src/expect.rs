//! The natives of `leakscope-api.jar`, bound by the agent, and `LeakScope.expectDead(o)`
//! (RTHeapDebug's assertion that an object should now be dead): what the agent knows of each
//! expectation. The object keeps its tag with [`EXPECT_BIT`] and a slot; `ObjectFree` says it
//! was collected; each heap walk says whether it is still reachable and what references it.
//! The Java side keeps a weak `LeakScope$Expected` per call, so that a heap dump holds the
//! expectations too and `leakscope check` can name the whole path and the retained bytes.

use std::ffi::c_void;

use crate::classes::{EXPECT_BIT, SLOT_SHIFT, WATCH_BIT};
use crate::expectations::*;
use crate::jvmti::{Env, FrameInfo, Jlong, Jni, Jobject};

/// The JVM name of the API class.
pub const API_CLASS: &str = "Lio/leakscope/LeakScope;";

/// Binds the natives of `io.leakscope.LeakScope` (`class`); with `announce`, also sets its
/// `agent` flag (for a class initialized before the agent came).
pub fn bind(jni: Jni, class: Jobject, announce: bool) -> bool {
    let ok = jni.register_natives(
        class,
        &[
            (c"bound0", c"()Z", bound0 as *const c_void),
            (c"expectDead0", c"(Ljava/lang/Object;)Ljava/lang/String;", expect_dead0 as *const c_void),
            (c"touched0", c"(Ljava/lang/Object;)V", touched0 as *const c_void),
            (c"created0", c"(Ljava/lang/Object;)V", created0 as *const c_void),
        ],
    );
    ok && (!announce || jni.set_static_boolean(class, c"agent", true))
}

/// `LeakScope.touched0(self)`: an instance method of a watched class was entered.
unsafe extern "C" fn touched0(_jni: *mut c_void, _class: Jobject, o: Jobject) {
    crate::state::guard("LeakScope.touched", (), || record_use(o, crate::watch::Use::Method))
}

/// `LeakScope.created0(self)`: a constructor of a watched class is returning.
unsafe extern "C" fn created0(_jni: *mut c_void, _class: Jobject, o: Jobject) {
    crate::state::guard("LeakScope.created", (), || record_use(o, crate::watch::Use::Creation))
}

fn record_use(o: Jobject, how: crate::watch::Use) {
    let Some(a) = crate::state::AGENT.get() else { return };
    if let (Some(w), false) = (a.watch.as_ref(), o.is_null()) {
        if let Ok(tag) = a.env.get_tag(o) {
            w.touched(a.env, o, tag, how);
        }
    }
}

unsafe extern "C" fn bound0(_jni: *mut c_void, _class: Jobject) -> u8 {
    u8::from(crate::state::AGENT.get().is_some())
}

// The same natives under their JNI names: HotSpot looks native methods up in agent libraries
// too, so a LeakScope class initialized before the agent could bind them (at startup, before
// class prepare events flow) links to the agent all the same.

/// `LeakScope.bound0`, found by name.
///
/// # Safety
/// Called by the JVM as a JNI native.
#[no_mangle]
pub unsafe extern "C" fn Java_io_leakscope_LeakScope_bound0(jni: *mut c_void, class: Jobject) -> u8 {
    bound0(jni, class)
}

/// `LeakScope.expectDead0`, found by name.
///
/// # Safety
/// Called by the JVM as a JNI native.
#[no_mangle]
pub unsafe extern "C" fn Java_io_leakscope_LeakScope_expectDead0(
    jni: *mut c_void,
    class: Jobject,
    o: Jobject,
) -> Jobject {
    expect_dead0(jni, class, o)
}

/// `LeakScope.touched0`, found by name.
///
/// # Safety
/// Called by the JVM as a JNI native.
#[no_mangle]
pub unsafe extern "C" fn Java_io_leakscope_LeakScope_touched0(jni: *mut c_void, class: Jobject, o: Jobject) {
    touched0(jni, class, o)
}

/// `LeakScope.created0`, found by name.
///
/// # Safety
/// Called by the JVM as a JNI native.
#[no_mangle]
pub unsafe extern "C" fn Java_io_leakscope_LeakScope_created0(jni: *mut c_void, class: Jobject, o: Jobject) {
    created0(jni, class, o)
}

/// `LeakScope.expectDead0(o)`: tags `o`, records the expectation, returns the call site.
unsafe extern "C" fn expect_dead0(jni: *mut c_void, _class: Jobject, o: Jobject) -> Jobject {
    crate::state::guard("LeakScope.expectDead", std::ptr::null_mut(), || {
        let Some(a) = crate::state::AGENT.get() else { return std::ptr::null_mut() };
        // SAFETY: the JVM passed this thread's JNIEnv to the native method.
        let jni = unsafe { Jni::from_raw(jni) };
        if o.is_null() || !a.active() {
            return std::ptr::null_mut();
        }
        let site = call_site(a.env);
        let Ok(old) = a.env.get_tag(o) else { return jni.new_string(&site) };
        if old & EXPECT_BIT != 0 {
            return jni.new_string(&site);
        }
        let klass = jni.object_class(o);
        let class = a.classes.id_of(a.env, jni, klass, a.reference_class()).unwrap_or(u32::MAX);
        jni.delete_local(klass);
        let e = Expectation { class, site: site.clone(), at_ms: crate::time::now_ms(), freed: false, checked: None };
        if let Some(slot) = a.expectations.add(e) {
            // A watched object's slot bits are its access slot: it stops being watched.
            // A heap walk's link is dropped: its slot bits are the expectation's now.
            let kept = if old & WATCH_BIT != 0 { 0 } else { crate::classes::without_link(old) };
            let _ = a.env.set_tag(o, kept | EXPECT_BIT | (Jlong::from(slot) << SLOT_SHIFT));
        }
        jni.new_string(&site)
    })
}

/// The first frame outside `io.leakscope.LeakScope`: the caller of `expectDead`.
fn call_site(env: Env) -> String {
    let mut frames = [FrameInfo { method: std::ptr::null_mut(), location: 0 }; 4];
    let n = env.stack_trace(&mut frames).unwrap_or(0);
    frames[..n]
        .iter()
        .map(|f| env.describe_frame(f))
        .find(|d| !d.starts_with("io.leakscope.LeakScope."))
        .unwrap_or_else(|| "(unknown)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_survive_the_other_tag_bits() {
        let sample = crate::classes::SAMPLE_BIT | 12345;
        let tag = sample | EXPECT_BIT | (Jlong::from(2_000_000u32) << SLOT_SHIFT);
        assert_eq!(slot_of(tag), Some(2_000_000));
        assert_eq!(tag as u32, 12345, "the sample slot is untouched");
        assert_eq!(slot_of(sample), None);
    }

    #[test]
    fn walks_record_holders_and_frees_stick() {
        let x = Expectations::default();
        for i in 0..3 {
            x.add(Expectation { class: i, site: "A.b(A.java:1)".into(), at_ms: 1, freed: false, checked: None });
        }
        x.freed(EXPECT_BIT | (2 << SLOT_SHIFT));
        assert!(x.drain_freed());
        x.walked(10, &[(0, "java.util.HashMap$Node".into()), (0, "java.util.HashMap$Node".into())]);
        let all = x.all();
        assert_eq!(all[0].checked, Some((10, vec!["java.util.HashMap$Node".to_string()])));
        assert_eq!(all[1].checked, Some((10, Vec::new())), "not reached");
        assert!(all[2].freed && all[2].checked.is_none());
    }
}
