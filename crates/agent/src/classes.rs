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

/// Tag bit of an object a heap walk keeps a link for (`walk::Holders`): a container of a big
/// array, a watched object, or an object on the path that holds one. The link's slot is in
/// the low 32 bits, or, for a sampled object (whose low bits are its sample slot), in
/// bits 32..55.
pub const HOLDER_BIT: Jlong = 1 << 59;
/// Tag bit of an object expected to be dead (`expect`); bits 36..57 are its slot. It combines
/// with a sample tag (low 32 bits), so that a sampled object can also be expected dead.
pub const EXPECT_BIT: Jlong = 1 << 58;
/// Where a sampled object's link slot sits.
const SAMPLE_LINK_SHIFT: u32 = 32;
const SAMPLE_LINK_MASK: Jlong = (1 << 24) - 1;
/// Link slots, at most (what a sampled object's tag can hold).
pub const MAX_LINK_SLOTS: usize = 1 << 24;

/// The link slot in a tag, if it has one.
#[inline]
pub fn link_of(tag: Jlong) -> Option<u32> {
    if tag & HOLDER_BIT == 0 {
        None
    } else if tag & SAMPLE_BIT != 0 {
        Some(((tag >> SAMPLE_LINK_SHIFT) & SAMPLE_LINK_MASK) as u32)
    } else {
        Some(tag as u32)
    }
}

/// `tag` with link slot `link` added, if it can carry one: an untagged, sampled or watched
/// object can; a class, an object expected dead (its slot bits are taken) or one that already
/// has a link cannot.
#[inline]
pub fn with_link(tag: Jlong, link: u32) -> Option<Jlong> {
    if tag & (CLASS_BIT | HOLDER_BIT | EXPECT_BIT) != 0 || link as usize >= MAX_LINK_SLOTS {
        None
    } else if tag & SAMPLE_BIT != 0 {
        Some(tag | HOLDER_BIT | (Jlong::from(link) << SAMPLE_LINK_SHIFT))
    } else {
        Some(tag | HOLDER_BIT | Jlong::from(link))
    }
}

/// `tag` without its link: what the sampler, the watch or nothing (a plain holder) gave it.
#[inline]
pub fn without_link(tag: Jlong) -> Jlong {
    if tag & HOLDER_BIT == 0 {
        tag
    } else if tag & SAMPLE_BIT != 0 {
        tag & !(HOLDER_BIT | (SAMPLE_LINK_MASK << SAMPLE_LINK_SHIFT))
    } else {
        tag & !(HOLDER_BIT | 0xFFFF_FFFF)
    }
}

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
        let name = crate::names::source_name(&env.class_signature(class)?);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_rides_beside_what_the_tag_had_and_leaves_it_as_it_was() {
        let watched = crate::watch::tag_of(9);
        for tag in [0, SAMPLE_BIT | 123_456, watched] {
            let linked = with_link(tag, 70_000).unwrap();
            assert_eq!(link_of(linked), Some(70_000), "{tag:x}");
            assert_eq!(without_link(linked), tag);
            assert_eq!(with_link(linked, 1), None, "one link per object");
        }
        assert_eq!(with_link(SAMPLE_BIT | 5, 3).map(|t| t as u32), Some(5), "the sample slot stays");
        assert_eq!(crate::watch::slot_of(with_link(watched, 70_000).unwrap()), Some(9));
        assert_eq!(with_link(CLASS_BIT | 3, 1), None);
        assert_eq!(with_link(EXPECT_BIT, 1), None);
        assert_eq!(with_link(0, MAX_LINK_SLOTS as u32), None);
        assert_eq!(link_of(SAMPLE_BIT | 5), None);
    }
}
