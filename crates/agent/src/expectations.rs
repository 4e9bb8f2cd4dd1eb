//! What the agent knows of each object declared dead (`LeakScope.expectDead`): its slot in the
//! tag, whether `ObjectFree` saw it go, and what each heap walk found still referencing it.

use std::sync::Mutex;

use crate::classes::{EXPECT_BIT, SLOT_MASK, SLOT_SHIFT};
use crate::jvmti::Jlong;

/// Expectations the agent follows at most; later calls are counted, not followed.
pub const MAX_EXPECTATIONS: usize = 1 << 21;
/// References kept per reachable expectation.
const MAX_HELD_BY: usize = 3;

/// The slot in an expectation tag.
#[inline]
pub fn slot_of(tag: Jlong) -> Option<u32> {
    (tag & EXPECT_BIT != 0).then_some(((tag >> SLOT_SHIFT) & SLOT_MASK) as u32)
}

/// One object the program said should be dead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectation {
    /// Class id of the object.
    pub class: u32,
    /// Where `expectDead` was called (`Class.method(File.java:line)`).
    pub site: String,
    /// When, in ms since the epoch.
    pub at_ms: u64,
    /// Collected (`ObjectFree`).
    pub freed: bool,
    /// Time of the last walk that looked, and what referenced the object then (empty when the
    /// walk did not reach it).
    pub checked: Option<(u64, Vec<String>)>,
}

impl Expectation {
    /// As the run store keeps it; `names` names class ids.
    pub fn row(&self, names: &[String]) -> runstore::StoredExpectation {
        runstore::StoredExpectation {
            class: names.get(self.class as usize).map_or("(unknown class)", String::as_str).to_owned(),
            site: self.site.clone(),
            at_ms: self.at_ms,
            freed: self.freed,
            checked_ms: self.checked.as_ref().map(|(t, _)| *t),
            reached: self.checked.as_ref().is_some_and(|(_, held)| !held.is_empty()),
            held_by: self.checked.as_ref().map(|(_, held)| held.clone()).unwrap_or_default(),
        }
    }
}

/// Every expectation of this run, by slot.
#[derive(Debug, Default)]
pub struct Expectations {
    list: Mutex<Vec<Expectation>>,
    freed: Mutex<Vec<u32>>,
    /// Calls beyond [`MAX_EXPECTATIONS`].
    dropped: std::sync::atomic::AtomicU64,
}

impl Expectations {
    pub(crate) fn add(&self, e: Expectation) -> Option<u32> {
        let mut l = self.list.lock().unwrap_or_else(|p| p.into_inner());
        if l.len() >= MAX_EXPECTATIONS {
            self.dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return None;
        }
        l.push(e);
        Some(l.len() as u32 - 1)
    }

    /// Records a collected object (`ObjectFree`; only a lock, no JNI).
    pub fn freed(&self, tag: Jlong) {
        if let Some(slot) = slot_of(tag) {
            self.freed.lock().unwrap_or_else(|p| p.into_inner()).push(slot);
        }
    }

    /// Applies the frees reported since the last call; whether any were.
    pub fn drain_freed(&self) -> bool {
        let freed = std::mem::take(&mut *self.freed.lock().unwrap_or_else(|p| p.into_inner()));
        let mut l = self.list.lock().unwrap_or_else(|p| p.into_inner());
        for &s in &freed {
            if let Some(e) = l.get_mut(s as usize) {
                e.freed = true;
            }
        }
        !freed.is_empty()
    }

    /// Records what a walk at `time_ms` found: `reached` holds (slot, referrer) pairs.
    pub fn walked(&self, time_ms: u64, reached: &[(u32, String)]) {
        let mut l = self.list.lock().unwrap_or_else(|p| p.into_inner());
        for e in l.iter_mut().filter(|e| !e.freed) {
            e.checked = Some((time_ms, Vec::new()));
        }
        for (slot, by) in reached {
            if let Some((_, held)) = l.get_mut(*slot as usize).and_then(|e| e.checked.as_mut()) {
                if held.len() < MAX_HELD_BY && !held.contains(by) {
                    held.push(by.clone());
                }
            }
        }
    }

    /// A copy of every expectation, by slot.
    pub fn all(&self) -> Vec<Expectation> {
        self.list.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.list.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
