//! The cheap, continuous signal: sampled allocations whose survival is tracked.
//!
//! JVMTI samples one allocation per `interval` bytes on average (a Poisson process over
//! allocated bytes). An object of `size` bytes is sampled with probability
//! `1 - exp(-size / interval)`, so each sample stands for `size / (1 - exp(-size/interval))`
//! bytes, the unbiased estimate heap profilers use. A sample is tagged; when the collector
//! frees it, `ObjectFree` hands back its tag. The samples still alive estimate the live bytes
//! per class and per allocation site at any moment, with no heap walk.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashMap;

use crate::classes::SAMPLE_BIT;
use crate::jvmti::{FrameInfo, Jlong};

/// Frames of an allocation site, innermost first: (method id, bytecode index).
pub type SiteKey = Vec<(usize, i64)>;

#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    class: u32,
    site: u32,
    weight: u64,
    size: u64,
    seq: u64,
    /// Unreached by a heap walk: no longer counted, its slot awaits the object's ObjectFree.
    unreached: bool,
}

/// Estimated volumes of one class or site.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Volume {
    /// Estimated live bytes.
    pub live_bytes: f64,
    /// Estimated live objects.
    pub live_instances: f64,
    /// Estimated bytes allocated since the agent started.
    pub allocated_bytes: f64,
    /// Samples alive now.
    pub live_samples: u64,
}

/// The live samples and what they add up to.
#[derive(Debug, Default)]
struct Table {
    samples: Vec<Sample>,
    free: Vec<u32>,
    sites: FxHashMap<SiteKey, u32>,
    site_class: Vec<u32>,
    classes: Vec<Volume>,
    by_site: Vec<Volume>,
    next_seq: u64,
}

/// Sampled allocations, shared by the allocating threads and the agent's worker.
#[derive(Debug, Default)]
pub struct Sampler {
    interval: f64,
    table: Mutex<Table>,
    /// The next sample's sequence number, readable without the lock (from the collector's
    /// event, which must not wait for an allocating thread).
    seq: AtomicU64,
    // A separate lock: ObjectFree may run while an allocating thread holds `table`
    // (tag map maintenance can post it from inside SetTag).
    freed: Mutex<Vec<u32>>,
}

/// The bytes one sample of `size` bytes stands for at mean sampling `interval`.
pub fn weight(size: u64, interval: f64) -> f64 {
    let p = -(-(size as f64) / interval).exp_m1();
    if p <= 0.0 {
        interval
    } else {
        size as f64 / p
    }
}

impl Sampler {
    /// A sampler for heap sampling at `interval` bytes.
    pub fn new(interval: u32) -> Sampler {
        Sampler { interval: f64::from(interval.max(1)), ..Default::default() }
    }

    /// Records a sampled object of `class` and `size` allocated at `frames`; returns the tag
    /// to put on the object.
    pub fn record(&self, class: u32, size: u64, frames: &[FrameInfo]) -> Jlong {
        let w = weight(size, self.interval);
        let key: SiteKey = frames.iter().map(|f| (f.method as usize, f.location)).collect();
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let next = t.site_class.len() as u32;
        let site = *t.sites.entry(key).or_insert(next);
        if site == next {
            t.site_class.push(class);
            t.by_site.push(Volume::default());
        }
        let seq = t.next_seq;
        t.next_seq += 1;
        self.seq.store(t.next_seq, Ordering::Release);
        let sample = Sample { class, site, weight: w as u64, size: size.max(1), seq, unreached: false };
        let slot = match t.free.pop() {
            Some(s) => {
                t.samples[s as usize] = sample;
                s
            }
            None => {
                t.samples.push(sample);
                (t.samples.len() - 1) as u32
            }
        };
        if t.classes.len() <= class as usize {
            t.classes.resize(class as usize + 1, Volume::default());
        }
        let v = &mut t.classes[class as usize];
        add(v, &sample, 1.0);
        v.allocated_bytes += w;
        let s = &mut t.by_site[site as usize];
        add(s, &sample, 1.0);
        s.allocated_bytes += w;
        SAMPLE_BIT | Jlong::from(slot)
    }

    /// Forgets a sample whose tag could not be set.
    pub fn forget(&self, tag: Jlong) {
        self.remove(&[tag as u32]);
    }

    /// Called from `ObjectFree`: the object with `tag` is gone.
    pub fn freed(&self, tag: Jlong) {
        if tag & SAMPLE_BIT != 0 {
            self.freed.lock().unwrap_or_else(|p| p.into_inner()).push(tag as u32);
        }
    }

    /// Applies the frees reported since the last call; returns how many.
    pub fn drain_freed(&self) -> usize {
        let freed = std::mem::take(&mut *self.freed.lock().unwrap_or_else(|p| p.into_inner()));
        self.remove(&freed);
        freed.len()
    }

    fn remove(&self, slots: &[u32]) {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        for &slot in slots {
            let Some(sample) = t.samples.get(slot as usize).copied() else { continue };
            if sample.weight == 0 {
                continue;
            }
            t.samples[slot as usize].weight = 0;
            t.free.push(slot);
            if sample.unreached {
                continue;
            }
            if let Some(v) = t.classes.get_mut(sample.class as usize) {
                add(v, &sample, -1.0);
            }
            if let Some(v) = t.by_site.get_mut(sample.site as usize) {
                add(v, &sample, -1.0);
            }
        }
    }

    /// The sequence number the next sample gets, without the lock.
    pub fn seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// The sequence number the next sample gets: samples before it existed when a walk began.
    pub fn next_seq(&self) -> u64 {
        self.table.lock().unwrap_or_else(|p| p.into_inner()).next_seq
    }

    /// After a heap walk that began at `before_seq` and reached the samples in `seen`
    /// (sorted slots): the samples it did not reach are garbage the collector has not freed
    /// yet (dead objects in the old generation), so they stop counting as live. Returns how
    /// many.
    pub fn unreached(&self, before_seq: u64, seen: &[u32]) -> usize {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let mut n = 0;
        for slot in 0..t.samples.len() {
            let s = t.samples[slot];
            if s.weight == 0 || s.unreached || s.seq >= before_seq || seen.binary_search(&(slot as u32)).is_ok() {
                continue;
            }
            t.samples[slot].unreached = true;
            n += 1;
            if let Some(v) = t.classes.get_mut(s.class as usize) {
                add(v, &s, -1.0);
            }
            if let Some(v) = t.by_site.get_mut(s.site as usize) {
                add(v, &s, -1.0);
            }
        }
        n
    }

    /// Estimated volumes by class id, and by site id with each site's class; with `judged`
    /// (the sequence number a walk began at, or a collection ended at), only of the samples
    /// that walk or collection judged. Right after a walk, the samples taken since it began
    /// (while it waited for its safepoint and while its result was stored) are mostly garbage
    /// nothing has judged: a steady Tomcat's walk-checked estimate read 16.3 MiB against the
    /// walk's exact 6.4 MiB on a busy machine. After a collection the same holds of what was
    /// allocated since it: a loop that copied a list's array 20,000 times left 252 MiB of
    /// dead arrays in the young generation, all counted, until the next collection.
    pub fn volumes(&self, judged: Option<u64>) -> (Vec<Volume>, Vec<(u32, Volume)>) {
        let t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let mut classes = t.classes.clone();
        let mut sites = t.by_site.clone();
        if let Some(before) = judged {
            for s in t.samples.iter().filter(|s| s.weight > 0 && !s.unreached && s.seq >= before) {
                if let Some(v) = classes.get_mut(s.class as usize) {
                    add(v, s, -1.0);
                }
                if let Some(v) = sites.get_mut(s.site as usize) {
                    add(v, s, -1.0);
                }
            }
        }
        (classes, t.site_class.iter().copied().zip(sites).collect())
    }

    /// The class and frames of each site from id `from` on, in site id order.
    pub fn sites_from(&self, from: usize) -> Vec<(u32, SiteKey)> {
        let t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<(u32, SiteKey)> = t.site_class.iter().skip(from).map(|&c| (c, Vec::new())).collect();
        for (k, &id) in &t.sites {
            if id as usize >= from {
                out[id as usize - from].1 = k.clone();
            }
        }
        out
    }

    /// Samples alive now (for the footprint).
    pub fn live_samples(&self) -> usize {
        let t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        t.samples.len() - t.free.len()
    }
}

fn add(v: &mut Volume, s: &Sample, sign: f64) {
    v.live_bytes = (v.live_bytes + sign * s.weight as f64).max(0.0);
    v.live_instances = (v.live_instances + sign * s.weight as f64 / s.size as f64).max(0.0);
    v.live_samples = if sign > 0.0 { v.live_samples + 1 } else { v.live_samples.saturating_sub(1) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_unbiased_and_at_least_the_size() {
        assert!((weight(1 << 30, 1024.0) - (1u64 << 30) as f64).abs() < 1.0);
        // Small objects stand for about one interval each.
        assert!((weight(16, 512.0 * 1024.0) - 512.0 * 1024.0).abs() < 16.0);
        assert!(weight(100, 100.0) > 100.0);
    }

    #[test]
    fn frees_take_back_what_records_added() {
        let s = Sampler::new(1024);
        let frame = [FrameInfo { method: std::ptr::null_mut(), location: 3 }];
        let a = s.record(0, 64, &frame);
        let b = s.record(0, 64, &frame);
        let c = s.record(1, 4096, &[]);
        assert_eq!(s.volumes(None).0[0].live_samples, 2);
        s.freed(a);
        s.freed(c);
        s.freed(12345); // not a sample tag: ignored
        assert_eq!(s.drain_freed(), 2);
        let classes = s.volumes(None).0;
        assert_eq!(classes[0].live_samples, 1);
        assert!((classes[0].live_bytes - weight(64, 1024.0).trunc()).abs() < 1.0);
        assert_eq!(classes[1].live_bytes, 0.0);
        assert!(classes[1].allocated_bytes > 4096.0);
        // The slot is reused, and freeing twice counts once.
        let d = s.record(2, 8, &frame);
        assert!(d == a || d == c);
        s.forget(b);
        s.forget(b);
        assert_eq!(s.live_samples(), 1);
        assert_eq!(s.volumes(None).1.len(), 2);
    }

    #[test]
    fn samples_a_walk_did_not_reach_stop_counting_once() {
        let s = Sampler::new(1024);
        let tags: Vec<Jlong> = (0..4).map(|_| s.record(0, 100, &[])).collect();
        let before = s.next_seq();
        let late = s.record(0, 100, &[]);
        let slot = |t: Jlong| t as u32;
        // The walk reached samples 0 and 2; 1 and 3 are dead, the late one is too new to judge.
        assert_eq!(s.unreached(before, &[slot(tags[0]), slot(tags[2])]), 2);
        assert_eq!(s.volumes(None).0[0].live_samples, 3);
        assert_eq!(s.unreached(before, &[slot(tags[0]), slot(tags[2])]), 0);
        // Right after the walk, the late sample is left out of what the walk judged.
        assert_eq!(s.volumes(Some(before)).0[0].live_samples, 2);
        // Their ObjectFree later frees the slots without counting them twice.
        s.freed(tags[1]);
        s.freed(late);
        s.drain_freed();
        assert_eq!(s.volumes(None).0[0].live_samples, 2);
        assert_eq!(s.live_samples(), 3);
    }
}
