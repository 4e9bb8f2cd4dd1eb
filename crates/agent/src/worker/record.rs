//! What the worker writes to the run store after a collection: the sampled snapshot, new
//! allocation sites, watched objects and expectations.

use crate::time::now_ms;
use growth::{ClassVolume, HeapSummary};
use runstore::{Checked, SampledClass};
use std::sync::atomic::Ordering;

use super::{Worker, HEAP_FULL_READINGS, HEAP_FULL_SHARE, MAX_SITES, RECENT};

impl Worker<'_> {
    /// Notes in the store when the heap in use after collections stays near the JVM's
    /// maximum (`heap_full_ms`, when it began; empty again once it falls back): a heap
    /// that cannot grow holds a leak flat, and growth is judged up to then (Live's map filled
    /// 157 of 160 MiB through 56 full collections and `growth` said "No growing class").
    fn note_heap_full(&mut self, used: u64, max: u64) -> Result<(), String> {
        if max == 0 || max == u64::MAX {
            return Ok(());
        }
        let share = used as f64 / max as f64;
        let full = &mut self.heap_full;
        let now = now_ms();
        let msg = if share >= HEAP_FULL_SHARE {
            full.readings += 1;
            if full.readings != HEAP_FULL_READINGS || full.since.is_some() {
                return Ok(());
            }
            full.since = Some(now);
            self.store.set_meta("heap_max_bytes", &max.to_string()).map_err(|e| e.to_string())?;
            self.store.set_meta("heap_full_ms", &now.to_string()).map_err(|e| e.to_string())?;
            format!(
                "the heap in use after {HEAP_FULL_READINGS} collections in a row is {:.0}% or more of the JVM's maximum ({} of {}): it can hardly grow, so growth is judged on the snapshots before now",
                HEAP_FULL_SHARE * 100.0,
                report::human_bytes(used),
                report::human_bytes(max)
            )
        } else {
            full.readings = 0;
            if share >= HEAP_FULL_SHARE - 0.1 || full.since.take().is_none() {
                return Ok(());
            }
            self.store.set_meta("heap_full_ms", "").map_err(|e| e.to_string())?;
            format!(
                "the heap in use after a collection is back to {} of the JVM's maximum {}",
                report::human_bytes(used),
                report::human_bytes(max)
            )
        };
        self.store.event(now, &msg).map_err(|e| e.to_string())
    }

    pub(super) fn record_sample(&mut self, gc: u64, checked: Checked) -> Result<(), String> {
        let a = self.a;
        if checked == Checked::Collection && a.object_free {
            a.settle_frees();
        }
        if checked == Checked::Collection {
            if let Some((used, max)) = self.jni.heap_used() {
                self.used_after_gc = Some(used);
                self.note_heap_full(used, max)?;
            }
        }
        a.sampler.drain_freed();
        if a.expectations.drain_freed() {
            self.write_expectations()?;
        }
        let names = a.classes.names();
        let name = |id: usize| names.get(id).cloned().unwrap_or_else(|| format!("(class #{id})"));
        let judged = match checked {
            Checked::Walk => Some(self.walk_began),
            Checked::Collection => Some(a.gc_seq.load(Ordering::Acquire)),
            Checked::Nothing => None,
        };
        let (mut volumes, site_volumes) = a.sampler.volumes(judged);
        // Classes a walk counted that no sample has (made before sampling began) count too.
        volumes.resize(volumes.len().max(self.calibration.classes_end()), Default::default());
        let volumes: Vec<_> = volumes.iter().enumerate().map(|(id, v)| self.calibration.apply(id as u32, v)).collect();
        let classes: Vec<SampledClass> = volumes
            .iter()
            .enumerate()
            .filter(|(_, v)| v.live_samples > 0 || v.allocated_bytes > 0.0 || v.live_bytes > 0.0)
            .map(|(id, v)| SampledClass {
                name: name(id),
                instances: v.live_instances.round() as u64,
                bytes: v.live_bytes.round() as u64,
                allocated_bytes: v.allocated_bytes.round() as u64,
            })
            .collect();
        self.describe_new_sites(&names)?;
        let mut sites: Vec<(u32, u64, u64)> = site_volumes
            .iter()
            .enumerate()
            .filter(|(_, (_, v))| v.live_samples > 0)
            .map(|(id, (class, v))| {
                let v = self.calibration.apply_to_site(*class, v);
                (id as u32, v.live_bytes.round() as u64, v.allocated_bytes.round() as u64)
            })
            .collect();
        sites.sort_by_key(|s| std::cmp::Reverse(s.1));
        sites.truncate(MAX_SITES);
        let time = now_ms();
        self.store.write_sample(time, gc, checked, &classes, &sites).map_err(|e| e.to_string())?;
        let live: Vec<ClassVolume> = classes
            .iter()
            .filter(|c| c.bytes > 0)
            .map(|c| ClassVolume { name: c.name.clone(), instances: c.instances, bytes: c.bytes })
            .collect();
        self.recent.push((
            HeapSummary {
                source: format!("gc {gc}"),
                time_ms: Some(time),
                gc_count: Some(gc),
                total_bytes: live.iter().map(|c| c.bytes).sum(),
                total_instances: live.iter().map(|c| c.instances).sum(),
                classes: live,
                edges: Vec::new(),
                ..Default::default()
            },
            checked,
        ));
        if self.recent.len() > RECENT {
            self.recent.remove(0);
        }
        let opts = growth::Options::default().for_samples(u64::from(a.opts.interval));
        // As the run report ranks: on snapshots a collection or a walk checked when there are
        // enough, so that a collector's sawtooth does not trigger walks.
        let checked: Vec<HeapSummary> =
            self.recent.iter().filter(|(_, c)| *c >= Checked::Collection).map(|(s, _)| s.clone()).collect();
        self.ranked_checked = checked.len() >= opts.ratio.min_phases as usize + 2;
        let series = if self.ranked_checked { checked } else { self.recent.iter().map(|(s, _)| s.clone()).collect() };
        let report = growth::analyze_run(&series, &self.walk_summaries, &self.walk_holders, &opts, &[]);
        self.ranked = report.candidates.iter().map(|c| (c.class.clone(), c.slice.structure.is_some())).collect();
        self.candidates = growth::headline_candidates(&report);
        self.candidates.truncate(crate::metrics::MAX_CANDIDATES);
        // Walks are planned on a looser test: a class growing by the fixed minimum, even within
        // its sampling error, is worth a walk, which says whether it holds (the slice needs
        // walks during the growth). Without it, the Tomcat leak's first candidate came at 75 s
        // and too few walks followed for a slice by two minutes.
        let eager = growth::Options { sampling_interval: None, ..opts };
        self.worth_a_walk = !self.candidates.is_empty() || !growth::analyze(&series, &eager, &[]).candidates.is_empty();
        Ok(())
    }

    pub(super) fn describe_new_sites(&mut self, names: &[String]) -> Result<(), String> {
        let a = self.a;
        let sites = a.sampler.sites_from(self.known_sites);
        if sites.is_empty() || !self.jni.push_local_frame(16) {
            return Ok(());
        }
        let mut written = Ok(());
        for (k, (class, key)) in sites.iter().enumerate() {
            let frames: Vec<String> = key
                .iter()
                .map(|&(m, loc)| a.env.describe_frame(&crate::jvmti::FrameInfo { method: m as *mut _, location: loc }))
                .collect();
            let class = names.get(*class as usize).cloned().unwrap_or_default();
            written = self.store.add_site((self.known_sites + k) as u32, &class, &frames);
            if written.is_err() {
                break;
            }
        }
        // The local frame is popped whatever the store said.
        self.jni.pop_local_frame();
        written.map_err(|e| e.to_string())?;
        self.known_sites += sites.len();
        Ok(())
    }

    /// Writes the watched objects whose last use changed (all of them after a walk, which
    /// may have tagged new ones and learned more of what holds them).
    pub(super) fn write_watched(&mut self, after_walk: bool) -> Result<(), String> {
        let a = self.a;
        let Some(w) = a.watch.as_ref() else { return Ok(()) };
        let notes = std::mem::take(&mut *a.instrumented.lock().unwrap_or_else(|p| p.into_inner()));
        for n in notes {
            self.store.event(now_ms(), &n).map_err(|e| e.to_string())?;
        }
        let names = a.classes.names();
        if after_walk {
            let now = now_ms();
            let watched = self.holders.watched(&names);
            let containers = &mut self.containers;
            let jni = self.jni;
            let fields = fields_by_path(&watched, |chains| containers.fields_along(a.env, jni, chains));
            for (slot, class, path, _) in watched {
                self.tagged_ms.entry(slot).or_insert(now);
                let along = fields.get(&path).cloned().unwrap_or_default();
                let (path, along) = splice(path, along, &names[class as usize], &self.walk_holders);
                self.watched_paths.insert(slot, (class, path, along));
            }
        }
        let epoch = now_ms().saturating_sub(w.now_ms());
        let mut rows = Vec::new();
        for (slot, (class, holders, fields)) in &self.watched_paths {
            let Some(last) = w.last(*slot) else { continue };
            let key = (last.ms, last.freed);
            if !after_walk && self.watched_written.get(slot) == Some(&key) {
                continue;
            }
            self.watched_written.insert(*slot, key);
            let location = match last.frame {
                (m, _) if m.is_null() || last.ms.is_none() => None,
                (m, loc) => Some(
                    self.locations
                        .entry((m as usize, loc))
                        .or_insert_with(|| a.env.describe_frame(&crate::jvmti::FrameInfo { method: m, location: loc }))
                        .clone(),
                ),
            };
            rows.push((
                *slot,
                runstore::WatchedObject {
                    class: names.get(*class as usize).cloned().unwrap_or_default(),
                    holders: holders.clone(),
                    fields: fields.clone(),
                    tagged_ms: self.tagged_ms.get(slot).copied().unwrap_or(0),
                    last_ms: last.ms.map(|ms| epoch + ms),
                    location,
                    freed: last.freed,
                },
            ));
        }
        if after_walk {
            self.store.set_meta("watch_slots_used", &w.slots_used().to_string()).map_err(|e| e.to_string())?;
        }
        if rows.is_empty() {
            return Ok(());
        }
        self.store.write_watched(&rows).map_err(|e| e.to_string())
    }

    pub(super) fn write_expectations(&mut self) -> Result<(), String> {
        let names = self.a.classes.names();
        let rows: Vec<runstore::StoredExpectation> = self.a.expectations.all().iter().map(|x| x.row(&names)).collect();
        self.store.write_expectations(&rows).map_err(|e| e.to_string())
    }
}

/// A watched object's `path` (holders outwards, of an object of class `class`) and the
/// `fields` along it (entry for entry) that stops at an array not known further, continued
/// through the container whose array is of that class and holds elements of the class before
/// it: a copy-on-write list replaces its array at every addition, so the array a walk linked
/// is gone before the next walk can learn what holds it, while the list's chain, its fields
/// and its elements' class are known.
pub(super) fn splice(
    mut path: Vec<String>,
    mut fields: Vec<String>,
    class: &str,
    containers: &[runstore::HolderChain],
) -> (Vec<String>, Vec<String>) {
    let n = path.len();
    fields.resize(n, String::new());
    if n < 2 || path[n - 1] != "…" || !path[n - 2].ends_with("[]") {
        return (path, fields);
    }
    let element = if n >= 3 { path[n - 3].as_str() } else { class };
    let Some(c) = containers.iter().find(|c| c.array == path[n - 2] && c.element == element) else {
        return (path, fields);
    };
    path.pop();
    fields.pop();
    path.push(c.container.clone());
    fields.push(c.array_field.clone());
    path.extend(c.path.iter().cloned());
    fields.extend((0..c.path.len()).map(|i| c.fields.get(i).cloned().unwrap_or_default()));
    (path, fields)
}

/// Objects of one watched path whose fields are named after a walk, at most: enough to see
/// when they are held through different fields of the same classes.
const FIELD_SAMPLES: usize = 8;

/// The fields along each distinct path of `watched` (as [`Holders::watched`] gives them),
/// named on up to [`FIELD_SAMPLES`] of its objects by `name`; a step held through different
/// fields in different objects is `a|b`, one not named is empty.
///
/// [`Holders::watched`]: crate::walk::Holders::watched
pub(super) fn fields_by_path(
    watched: &[(u32, u32, Vec<String>, crate::walk::ChainObjects)],
    name: impl FnOnce(&[(&[String], &crate::walk::ChainObjects)]) -> Vec<Vec<String>>,
) -> rustc_hash::FxHashMap<Vec<String>, Vec<String>> {
    let mut sampled: rustc_hash::FxHashMap<&[String], usize> = Default::default();
    let mut chains = Vec::new();
    for (_, _, path, objects) in watched {
        let n = sampled.entry(path.as_slice()).or_default();
        if *n < FIELD_SAMPLES {
            *n += 1;
            chains.push((path.as_slice(), objects));
        }
    }
    let named = name(&chains);
    let mut out: rustc_hash::FxHashMap<&[String], runstore::FieldsSeen> = Default::default();
    for ((path, _), fields) in chains.iter().zip(named) {
        out.entry(path).or_default().add(&fields);
    }
    out.into_iter().map(|(path, seen)| (path.to_vec(), seen.merged(path.len()))).collect()
}
