//! Loaded classes, each tagged with a dense id so that heap walk callbacks, which see only
//! tags, know every object's class without a lookup.

use std::ffi::CStr;
use std::sync::Mutex;

use crate::jvmti::{Env, JResult, Jlong, Jni, Jobject};

/// Tag bit of a class object; the low 32 bits are the class id.
pub const CLASS_BIT: Jlong = 1 << 62;
/// Tag bit of a class whose instances are `java.lang.ref.Reference`s.
pub const REFERENCE_BIT: Jlong = 1 << 61;
/// Tag bit of a sampled object; the low 32 bits are its slot.
pub const SAMPLE_BIT: Jlong = 1 << 60;

/// Tag bit of an object that holds a big array (a container) or holds such a holder; bits
/// 32..35 are its distance from the container, the low 32 bits its slot.
pub const HOLDER_BIT: Jlong = 1 << 59;

/// Tag bit of a watched object (`--watch`); bits 36..57 are its access slot (the bits an
/// expectation uses: an object is watched or expected dead, not both). Once a walk has
/// reached it, [`HOLDER_BIT`] is set too and the low 32 bits are its link slot.
pub const WATCH_BIT: Jlong = 1 << 57;
/// Where access and expectation slots sit in a tag.
pub const SLOT_SHIFT: u32 = 36;
/// Their width.
pub const SLOT_MASK: Jlong = (1 << 21) - 1;

/// The class id in a class tag, if it is one.
#[inline]
pub fn class_id(tag: Jlong) -> Option<u32> {
    (tag & CLASS_BIT != 0).then_some(tag as u32)
}

/// Whether a class tag marks a `Reference` subclass.
#[inline]
pub fn is_reference(tag: Jlong) -> bool {
    tag & REFERENCE_BIT != 0
}

/// Class names by id, registered on first sight.
#[derive(Debug, Default)]
pub struct Classes {
    names: Mutex<Vec<String>>,
}

impl Classes {
    /// The id of `class`, tagging and naming it when seen for the first time.
    /// `reference` is a global reference to `java.lang.ref.Reference`, when known.
    pub fn id_of(&self, env: Env, jni: Jni, class: Jobject, reference: Option<Jobject>) -> JResult<u32> {
        if let Some(id) = class_id(env.get_tag(class)?) {
            return Ok(id);
        }
        let name = crate::source_name(&env.class_signature(class)?);
        let is_ref = reference.is_some_and(|r| jni.is_assignable(class, r));
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        // Another thread may have registered it meanwhile.
        if let Some(id) = class_id(env.get_tag(class)?) {
            return Ok(id);
        }
        let id = names.len() as u32;
        names.push(name);
        env.set_tag(class, CLASS_BIT | if is_ref { REFERENCE_BIT } else { 0 } | Jlong::from(id))?;
        Ok(id)
    }

    /// Tags every loaded class not tagged yet.
    pub fn register_loaded(&self, env: Env, jni: Jni, reference: Option<Jobject>) -> JResult<()> {
        for c in env.loaded_classes()? {
            // A class can be unloaded or not yet prepared: skip it rather than fail the walk.
            let _ = self.id_of(env, jni, c, reference);
            jni.delete_local(c);
        }
        Ok(())
    }

    /// The names of all registered classes, by id.
    pub fn names(&self) -> Vec<String> {
        self.names.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// `java/lang/ref/Reference` as a JNI name.
pub const REFERENCE: &CStr = c"java/lang/ref/Reference";
