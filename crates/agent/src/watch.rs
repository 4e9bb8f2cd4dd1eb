//! Staleness watching (`--watch rule:A>B>C`, the two-phase detector's phase 2). Every call of
//! an instance method of the rules' last classes reports `this` to the agent through
//! `LeakScope.touched(Object)`, a call the agent puts at the entry of each such method, and
//! every constructor through `LeakScope.created(Object)`, before its returns
//! ([`crate::instrument`]); the first call tags the object with an access slot. Heap walks tag
//! the instances not used yet, and make every watched object a link of
//! [`crate::walk::Holders`], so that later walks learn what holds it. The last access of each
//! watched object (time and the calling frame) is kept in a fixed table of atomics indexed by
//! its slot: recording takes no lock, so that the walk (in the VM thread, at a safepoint) and
//! threads running native code never wait on each other.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use crate::classes::{SLOT_MASK, SLOT_SHIFT, WATCH_BIT};
use crate::jvmti::{Env, FrameInfo, Jlocation, Jlong, JmethodId, Jobject};

/// Shortest time between two reads of the frame that uses one watched object.
pub const FRAME_EVERY_MS: u64 = 1000;

/// Objects watched at most (4 MB of access records); later ones are not watched.
pub const MAX_WATCHED: usize = 1 << 17;

/// The last access of one watched object.
#[derive(Debug, Default)]
struct Access {
    /// Milliseconds since the agent started, plus one; 0 when not accessed since watched.
    ms: AtomicU64,
    /// When the frame below was read, in the same clock.
    frame_ms: AtomicU64,
    method: AtomicUsize,
    location: AtomicI64,
    freed: AtomicBool,
}

/// What is known of a watched object's use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastAccess {
    /// Milliseconds since the agent started; `None` when not accessed since it was watched.
    pub ms: Option<u64>,
    /// The frame that called the watched method (null method when not accessed).
    pub frame: (JmethodId, Jlocation),
    /// Collected since.
    pub freed: bool,
}

/// How a watched object was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// One of its instance methods was entered.
    Method,
    /// One of its constructors is returning: it was just created.
    Creation,
}

/// The rules and the access table.
#[derive(Debug)]
pub struct Watch {
    rules: Vec<Vec<String>>,
    started: Instant,
    access: Vec<Access>,
    next: AtomicU32,
}

/// The access slot of a watched object's tag.
#[inline]
pub fn slot_of(tag: Jlong) -> Option<u32> {
    (tag & WATCH_BIT != 0).then_some(((tag >> SLOT_SHIFT) & SLOT_MASK) as u32)
}

/// The tag of a newly watched object with access slot `slot`.
#[inline]
pub fn tag_of(slot: u32) -> Jlong {
    WATCH_BIT | (Jlong::from(slot) << SLOT_SHIFT)
}

impl Watch {
    /// Watching the objects of `rules`.
    pub fn new(rules: Vec<Vec<String>>, started: Instant) -> Watch {
        Watch { rules, started, access: (0..MAX_WATCHED).map(|_| Access::default()).collect(), next: AtomicU32::new(0) }
    }

    /// A fresh access slot, if any is left.
    pub fn new_slot(&self) -> Option<u32> {
        let s = self.next.fetch_add(1, Ordering::Relaxed);
        ((s as usize) < MAX_WATCHED).then_some(s)
    }

    /// Slots handed out so far.
    pub fn slots_used(&self) -> usize {
        (self.next.load(Ordering::Relaxed) as usize).min(MAX_WATCHED)
    }

    /// Whether instances of the class with Java name `name` are watched (some rule's last
    /// element names it). Never leakscope's own class or `java.lang.Object`.
    pub fn watches(&self, name: &str) -> bool {
        !name.starts_with("io.leakscope.")
            && name != "java.lang.Object"
            && self.rules.iter().any(|r| r.last().is_some_and(|last| heap::names::rule_element_matches(last, name)))
    }

    /// Per class id (as `names` lists them): whether its instances are watched.
    pub fn watched_classes(&self, names: &[String]) -> Vec<bool> {
        names.iter().map(|n| self.watches(n)).collect()
    }

    /// Records an access to `o` (tagged `tag`) by the calling thread, now; an untagged object
    /// is tagged first. Reading the stack costs about a microsecond, so the calling frame of a
    /// method's use is read at most once per object and [`FRAME_EVERY_MS`]: the location of an
    /// object used again within that time may be up to that old, its time is exact. Creation
    /// always reads its frame (the frame that created it) and lets the first use after it read
    /// its own: an object created and used at once is located at the use.
    pub fn touched(&self, env: Env, o: Jobject, tag: Jlong, how: Use) {
        let slot = match tag {
            0 => {
                let Some(s) = self.new_slot() else { return };
                if env.set_tag(o, tag_of(s)).is_err() {
                    return;
                }
                s
            }
            t => match slot_of(t) {
                Some(s) => s,
                None => return,
            },
        };
        let Some(a) = self.access.get(slot as usize) else { return };
        let now = self.started.elapsed().as_millis() as u64 + 1;
        a.ms.store(now, Ordering::Relaxed);
        let framed = a.frame_ms.load(Ordering::Relaxed);
        if how == Use::Method && framed != 0 && now < framed + FRAME_EVERY_MS {
            return;
        }
        a.frame_ms.store(if how == Use::Creation { 0 } else { now }, Ordering::Relaxed);
        // touched0 or created0 (native), LeakScope's hook, the watched method or constructor,
        // its caller.
        let mut frames = [FrameInfo { method: std::ptr::null_mut(), location: 0 }; 4];
        if let Ok(n) = env.stack_trace(&mut frames) {
            if let Some(f) = frames[..n].get(3).or_else(|| frames[..n].last()) {
                a.method.store(f.method as usize, Ordering::Relaxed);
                a.location.store(f.location, Ordering::Relaxed);
            }
        }
    }

    /// Records that a watched object was collected (`ObjectFree`).
    pub fn freed(&self, tag: Jlong) {
        if let Some(a) = slot_of(tag).and_then(|s| self.access.get(s as usize)) {
            a.freed.store(true, Ordering::Relaxed);
        }
    }

    /// The last access of slot `slot`.
    pub fn last(&self, slot: u32) -> Option<LastAccess> {
        let a = self.access.get(slot as usize)?;
        let ms = a.ms.load(Ordering::Relaxed);
        Some(LastAccess {
            ms: ms.checked_sub(1),
            frame: (a.method.load(Ordering::Relaxed) as JmethodId, a.location.load(Ordering::Relaxed)),
            freed: a.freed.load(Ordering::Relaxed),
        })
    }

    /// Milliseconds since the agent started.
    pub fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_rules_last_classes_are_watched() {
        let w = Watch::new(vec![vec!["Registry".into(), "Session".into()], vec!["Object".into()]], Instant::now());
        assert!(w.watches("com.acme.Auth$Session"));
        assert!(!w.watches("com.acme.Registry"));
        assert!(!w.watches("java.lang.Object"), "every object would be watched");
        let s = w.new_slot().unwrap();
        let linked = tag_of(s) | crate::classes::HOLDER_BIT | 4242;
        assert_eq!(slot_of(linked), Some(s), "the link slot does not disturb the access slot");
        assert_eq!(slot_of(crate::classes::HOLDER_BIT | 7), None, "a plain holder");
        w.freed(linked);
        assert!(w.last(s).unwrap().freed && w.last(s).unwrap().ms.is_none());
        assert_eq!(w.slots_used(), 1);
    }
}
