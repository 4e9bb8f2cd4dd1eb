//! When a walk is worth its pause, taking it, checking the estimates against it, and a heap
//! dump captured when a leak is judged.

use crate::time::now_ms;
use growth::HeapSummary;
use runstore::Checked;
use std::time::{Duration, Instant};

use super::{Worker, BUDGET_HEAD_START, FIRST_WALKS, RECENT_WALKS};

impl Worker<'_> {
    /// Walks when the budgets allow and a walk is wanted: the first few, while a class is a
    /// candidate (its slice needs growing edges), and at least every `walk_every`. Returns
    /// whether it walked.
    pub(super) fn maybe_walk(&mut self, gc: u64) -> Result<bool, String> {
        let a = self.a;
        // The newest snapshot a collection or walk checked: between collections the samples
        // also count the garbage since the last one (a steady Tomcat's 6 MiB read 250 MiB),
        // which would predict pauses that never come. Even so, sampled live objects count
        // some dead ones: a prediction on the safe side.
        let newest = self.recent.iter().rev().find(|s| s.1 >= Checked::Collection).or(self.recent.last());
        let live_bytes = newest.map_or(0, |s| s.0.total_bytes) as f64;
        let live_objects = newest.map_or(0, |s| s.0.total_instances) as f64;
        let objects = self.plan.objects(live_bytes, live_objects, self.used_after_gc);
        let predicted = self.plan.predict(objects, a.opts.max_pause);
        let wanted = self.walks < FIRST_WALKS
            || self.worth_a_walk
            || self.last_walk.is_none_or(|(t, _, _)| t.elapsed() >= a.opts.walk_every);
        // No other walk while a forked one is under way: its child's result comes first.
        if !wanted || self.pending_fork.is_some() {
            return Ok(false);
        }
        // The heap in use: what a fork's copy may cost, and a dump's size.
        let heap_bytes = self.used_after_gc.map_or(live_bytes, |u| u as f64).max(live_bytes);
        if !predicted.fits && a.opts.fork_walks {
            if let Some(walked) = self.maybe_forked_walk(gc, heap_bytes as u64)? {
                return Ok(walked);
            }
        }
        // A walk predicted not to fit is tried again now and then, stopping at the same
        // deadline: the rate it was predicted on may be a loaded moment's (see
        // `Plan::retry_after`).
        let last_tried = self.last_stopped.max(self.last_walk.map(|w| w.0)).unwrap_or(a.started);
        let trial = !predicted.fits
            && !predicted.deadline.is_zero()
            && last_tried.elapsed() >= self.plan.retry_after(a.opts.walk_every);
        if !predicted.fits && !trial {
            let takes = self.plan.what_it_takes(&predicted, heap_bytes, a.opts.max_pause);
            if self.last_skip_note.is_none_or(|t| t.elapsed() >= a.opts.walk_every) {
                self.last_skip_note = Some(Instant::now());
                self.walks_skipped += 1;
                let msg = format!("heap walk skipped: {takes}; candidates are still ranked from samples");
                self.store.event(now_ms(), &msg).map_err(|e| e.to_string())?;
                self.store.set_meta("walk_blocked", &takes).map_err(|e| e.to_string())?;
            }
            self.predicted_pause = predicted.pause;
            self.maybe_probe(objects)?;
            return Ok(false);
        }
        self.predicted_pause = predicted.pause;
        // A trial may take the whole of max_pause.
        let cost = if trial { a.opts.max_pause } else { predicted.pause };
        let allowed = self.walk_budget();
        if (self.walk_spent + cost).as_secs_f64() > allowed {
            self.note_budget(cost, allowed)?;
            return Ok(false);
        }
        if trial {
            self.last_stopped = Some(Instant::now());
            let msg = format!(
                "heap walk tried though predicted to stop the JVM {} ({} objects at {:.0} ns each): that rate is a past walk's, which a loaded moment may have slowed; it stops at the same deadline",
                report::human_ms(predicted.pause.as_millis() as u64),
                report::thousands(predicted.objects as u64),
                self.plan.ns_per_object()
            );
            self.store.event(now_ms(), &msg).map_err(|e| e.to_string())?;
        }
        if !self.register_classes()? {
            return Ok(false);
        }
        if a.opts.walk_floor {
            if let Ok(floor) = crate::walk::floor(a.env) {
                let msg = format!("floor walk: {:.3} ms", floor.as_secs_f64() * 1000.0);
                self.store.event(now_ms(), &msg).map_err(|e| e.to_string())?;
            }
        }
        let before = a.sampler.next_seq();
        let watched_classes = a.watch.as_ref().map(|w| w.watched_classes(&a.classes.names())).unwrap_or_default();
        self.holders.freed(&std::mem::take(&mut *a.freed_links.lock().unwrap_or_else(|p| p.into_inner())));
        let walk = match crate::walk::walk(
            a.env,
            || a.classes.names(),
            self.referent_index,
            &mut self.holders,
            a.watch.as_ref().map(|w| (w, watched_classes.as_slice())),
            predicted.deadline,
            a.panics_in("walk"),
        ) {
            Ok(Ok(w)) => w,
            Ok(Err(aborted)) => {
                self.walk_spent += aborted.pause;
                self.walks_skipped += 1;
                self.note_pause(aborted.pause)?;
                self.plan.stopped(aborted.pause, aborted.until_stop, aborted.objects, objects);
                self.last_stopped = Some(Instant::now());
                let msg = format!(
                    "heap walk stopped at its deadline ({} of max_pause {}) after {} objects, {} in all (predicted {}); the next predictions use its rate",
                    report::human_ms(predicted.deadline.as_millis() as u64),
                    report::human_ms(a.opts.max_pause.as_millis() as u64),
                    report::thousands(aborted.objects),
                    report::human_ms(aborted.pause.as_millis() as u64),
                    report::human_ms(predicted.pause.as_millis() as u64)
                );
                self.store.event(now_ms(), &msg).map_err(|e| e.to_string())?;
                return Ok(false);
            }
            Err(crate::walk::WalkFailed::Panicked) => {
                return Err("internal error (panic) in a heap walk callback".into())
            }
            Err(crate::walk::WalkFailed::Jvmti(e)) => {
                self.store.event(now_ms(), &format!("heap walk failed: {e}")).map_err(|e| e.to_string())?;
                return Ok(false);
            }
        };
        if walk.summary.total_instances == 0 {
            // A live heap always holds objects: this walk raced the JVM's exit (seen on JDK 25,
            // where it would have marked every sample unreached and ended the run at 0 B).
            self.store.event(now_ms(), "heap walk reached no object: the JVM is ending").map_err(|e| e.to_string())?;
            return Ok(false);
        }
        let mut summary = walk.summary;
        self.took_walk(&mut summary, &walk.seen_samples, before, (gc, "walk"), now_ms(), walk.pause)?;
        self.walk_spent += walk.pause;
        self.note_pause(walk.pause)?;
        self.plan.walked(walk.pause, summary.total_instances, summary.total_bytes);
        let mut holders = walk.holders;
        self.containers.after_walk(a.env, self.jni, &mut holders, &walk.chain_objects);
        self.keep_known(&mut holders, summary.time_ms.unwrap_or(0), true);
        self.store.write_walk(&summary, walk.pause.as_secs_f64() * 1000.0, &holders).map_err(|e| e.to_string())?;
        let (links, added) = self.holders.counts();
        let links = format!("{links} objects linked after the last walk, which linked {added} on paths");
        self.store.set_meta("walk_links", &links).map_err(|e| e.to_string())?;
        self.keep_summary(summary.clone());
        self.walk_holders = holders;
        self.chain_objects = walk.chain_objects;
        if !a.expectations.is_empty() {
            a.expectations.drain_freed();
            a.expectations.walked(summary.time_ms.unwrap_or(0), &walk.expected);
            self.write_expectations()?;
        }
        if a.watch.is_some() {
            self.write_watched(true)?;
        }
        Ok(true)
    }

    /// Starts a whole walk on a forked copy of the JVM, for one that would not fit `max_pause`
    /// (see [`crate::fork`]); a thread waits for its child, and [`Self::collect_forked`] takes
    /// the result. `None` where forks cannot be used (then the planner goes on as without
    /// them), else `Some(false)`: no walk has ended yet.
    fn maybe_forked_walk(&mut self, gc: u64, heap: u64) -> Result<Option<bool>, String> {
        let a = self.a;
        let support = match &self.fork {
            Some(Ok(s)) => *s,
            Some(Err(_)) => return Ok(None),
            None => match crate::fork::support() {
                Ok(s) => {
                    self.fork = Some(Ok(s));
                    // Found here, on the worker: reading libjvm.so's symbol table must not add
                    // to the pause of the first fork, whose VM thread uses what this finds.
                    match crate::fork_locks::of_this_jvm() {
                        Ok(locks) if a.opts.test_hold_fork_lock => locks.hold_for_test(),
                        Ok(_) => {}
                        Err(why) => {
                            let msg = format!(
                                "forked walks unfenced: {why}; HotSpot's chunk pool lock cannot be taken around a fork, so a child that finds it held by another thread is stuck, and is killed {} on",
                                report::human_ms(crate::fork::STUCK.as_millis() as u64)
                            );
                            self.store.event(now_ms(), &msg).map_err(|e| e.to_string())?;
                        }
                    }
                    s
                }
                Err(why) => {
                    let msg = format!("no forked walks in this JVM: {why}; walks that do not fit max_pause are planned as with --no-fork-walks");
                    self.store.event(now_ms(), &msg).map_err(|e| e.to_string())?;
                    self.fork = Some(Err(why));
                    return Ok(None);
                }
            },
        };
        // The copy may cost up to the heap in use (pages either side writes while the child
        // walks): refused with less than twice that left, the child killed past half of it.
        let headroom = crate::fork::headroom().unwrap_or(0);
        if headroom < heap.saturating_mul(2) {
            if self.last_fork_refusal.is_none_or(|t| t.elapsed() >= a.opts.walk_every) {
                self.last_fork_refusal = Some(Instant::now());
                let msg = format!(
                    "forked heap walk refused: {} of memory left to this JVM's cgroup (else the machine), less than twice the {} heap in use that its copy may take",
                    report::human_bytes(headroom),
                    report::human_bytes(heap)
                );
                self.store.event(now_ms(), &msg).map_err(|e| e.to_string())?;
            }
            return Ok(None);
        }
        let allowed = self.walk_budget();
        if (self.walk_spent + self.fork_pause).as_secs_f64() > allowed {
            self.note_budget(self.fork_pause, allowed)?;
            return Ok(Some(false));
        }
        if !self.register_classes()? {
            return Ok(Some(false));
        }
        let before = a.sampler.next_seq();
        let max_copy = a.opts.fork_max_copy.map_or(headroom / 2, |m| m.min(headroom / 2));
        let limits = crate::fork::Limits { timeout: a.opts.fork_timeout, max_copy };
        let names = a.classes.names();
        self.holders.freed(&std::mem::take(&mut *a.freed_links.lock().unwrap_or_else(|p| p.into_inner())));
        let started = crate::walk::walk_forked(
            a.env,
            names,
            self.referent_index,
            &mut self.holders,
            limits.timeout,
            a.opts.test_fork_hang,
        );
        let pause = match &started {
            Ok(s) => s.pause,
            Err(f) => f.pause,
        };
        self.walk_spent += pause;
        self.fork_pause = pause;
        self.note_pause(pause)?;
        match started {
            Ok(started) => {
                let handle = std::thread::Builder::new()
                    .name("leakscope forked walk".into())
                    .spawn(move || crate::walk::forked_walk(started, support, limits))
                    .map_err(|e| format!("cannot start the thread that waits for a forked walk: {e}"))?;
                self.pending_fork = Some(super::PendingFork { handle, before, gc });
            }
            Err(failed) => self.forked_failed(&failed)?,
        }
        Ok(Some(false))
    }

    /// Takes the result of the forked walk under way once its child is done: `true` when it
    /// gave a walk.
    pub(super) fn collect_forked(&mut self) -> Result<bool, String> {
        let Some(p) = self.pending_fork.take_if(|p| p.handle.is_finished()) else { return Ok(false) };
        let result = p.handle.join().map_err(|_| "internal error (panic) waiting for a forked walk".to_string())?;
        let walk = match result {
            Ok(w) => w,
            Err(failed) => {
                self.forked_failed(&failed)?;
                return Ok(false);
            }
        };
        if walk.summary.total_instances == 0 {
            self.store.event(now_ms(), "forked heap walk reached no object").map_err(|e| e.to_string())?;
            return Ok(false);
        }
        let mut summary = walk.summary;
        // The heap as it was at the fork.
        let at = now_ms().saturating_sub(walk.walked.as_millis() as u64);
        self.took_walk(&mut summary, &walk.seen_samples, p.before, (p.gc, "forked walk"), at, walk.pause)?;
        self.plan.forked(summary.total_instances, summary.total_bytes);
        // The copy's links stay in the copy: its plan for the next walk is the JVM's now, and
        // its chains are named from JVMTI's indexes and numbered by their paths.
        self.holders.adopt(walk.links);
        let mut holders = walk.holders;
        self.containers.name_by_index(self.a.env, self.jni, &mut holders, &walk.chain_objects);
        self.number_forked(&mut holders);
        self.keep_known(&mut holders, at, true);
        holders.iter_mut().for_each(|h| super::read_at_walk(h, at));
        let sizes: Vec<(u64, u64)> = holders.iter().filter(|h| h.id > 0).map(|h| (h.id, h.bytes)).collect();
        self.store.write_container_sizes(at, &sizes).map_err(|e| e.to_string())?;
        let pause_ms = walk.pause.as_secs_f64() * 1000.0;
        self.store.write_walk(&summary, pause_ms, &holders).map_err(|e| e.to_string())?;
        self.walk_holders = holders;
        self.chain_objects = Vec::new();
        let msg = format!(
            "heap walk forked: the JVM stopped {} for the fork; the copy walked {} objects in {}, its own memory at most {}",
            report::human_ms(walk.pause.as_millis() as u64),
            report::thousands(summary.total_instances),
            report::human_ms(walk.walked.as_millis() as u64),
            report::human_bytes(walk.copy)
        );
        self.store.event(at, &msg).map_err(|e| e.to_string())?;
        self.keep_summary(summary);
        Ok(true)
    }

    /// Numbers the chains of a forked walk: its containers are linked anew in each copy, so a
    /// container is the same from walk to walk by its class, its array's field and its two
    /// nearest holders (with their fields), when no other container of the walk has those;
    /// the others get a number of their own (0: followed by no reading). Not the whole path:
    /// beyond the nearest holders it runs through whichever thread the walk reached first (a
    /// Tomcat shop's listener list was held through a different `Thread[]` slot each walk).
    fn number_forked(&mut self, holders: &mut [runstore::HolderChain]) {
        let key = |h: &runstore::HolderChain| {
            let near: Vec<String> = (0..h.path.len().min(2)).map(|i| h.holder_name(i)).collect();
            let known = near.first().is_some_and(|n| n != "…");
            known.then(|| format!("{}\u{1f}{}\u{1f}{}", h.container, h.array_field, near.join("\u{1e}")))
        };
        let keys: Vec<Option<String>> = holders.iter().map(key).collect();
        for (h, k) in holders.iter_mut().zip(&keys) {
            let unique = k.is_some() && keys.iter().filter(|o| *o == k).count() == 1;
            match k.as_ref().filter(|_| unique) {
                Some(k) => match self.forked_ids.get(k) {
                    Some(&id) => h.id = id,
                    None => {
                        self.forked_ids.insert(k.clone(), h.id);
                    }
                },
                None => h.id = 0,
            }
        }
    }

    /// What every walk that reached the heap changes, stop-the-world or forked: the samples
    /// it did not reach (from those before `before`) are dead, the live volumes are held to
    /// its counts, and `summary` is dated `at_ms` and named after collection `gc` and `what`
    /// walked; it counts as the last walk, and a note that no walk fits is over.
    fn took_walk(
        &mut self,
        summary: &mut HeapSummary,
        seen_samples: &[u32],
        before: u64,
        (gc, what): (u64, &str),
        at_ms: u64,
        pause: Duration,
    ) -> Result<(), String> {
        self.a.sampler.unreached(before, seen_samples);
        self.walk_began = before;
        self.calibrate(summary);
        summary.source = format!("gc {gc} ({what})");
        summary.time_ms = Some(at_ms);
        summary.gc_count = Some(gc);
        self.walks += 1;
        self.last_pause = pause;
        if self.last_skip_note.take().is_some() {
            self.store.set_meta("walk_blocked", "").map_err(|e| e.to_string())?;
        }
        self.last_walk = Some((Instant::now(), summary.total_instances, summary.total_bytes as f64));
        Ok(())
    }

    /// Keeps a walk's summary among the newest [`RECENT_WALKS`], the online ranking's slices.
    fn keep_summary(&mut self, summary: HeapSummary) {
        self.walk_summaries.push(summary);
        if self.walk_summaries.len() > RECENT_WALKS {
            self.walk_summaries.remove(0);
        }
    }

    /// The JVM's pause the walks may have taken so far, in seconds: `budget` percent of the
    /// time since the agent started, and of a minute more (so that the first walks come while
    /// the heap is small).
    pub(super) fn walk_budget(&self) -> f64 {
        let a = self.a;
        (a.started.elapsed() + BUDGET_HEAD_START).as_secs_f64() * a.opts.budget_percent / 100.0
    }

    /// Says why a forked walk gave nothing.
    fn forked_failed(&mut self, failed: &crate::walk::ForkFailed) -> Result<(), String> {
        self.walks_skipped += 1;
        let msg = format!(
            "forked heap walk failed: {}; the JVM stopped {} for the fork",
            failed.why,
            report::human_ms(failed.pause.as_millis() as u64)
        );
        self.store.event(now_ms(), &msg).map_err(|e| e.to_string())
    }

    /// Says, once per `walk_every`, that a wanted walk waits for its budget: without it a run
    /// whose walks stopped was silent about why none came after (a steady Tomcat's one trial
    /// walk, 1.0 s on a loaded machine, took its two-minute run's budget).
    fn note_budget(&mut self, cost: Duration, allowed: f64) -> Result<(), String> {
        let a = self.a;
        if self.last_budget_note.is_some_and(|t| t.elapsed() < a.opts.walk_every) {
            return Ok(());
        }
        self.last_budget_note = Some(Instant::now());
        let msg = format!(
            "heap walk put off: walks have stopped the JVM {} in all, and this one may take {}, over the {} the budget allows so far ({}% of the time since the agent started plus a minute; --budget raises it)",
            report::human_ms(self.walk_spent.as_millis() as u64),
            report::human_ms(cost.as_millis() as u64),
            report::human_ms((allowed * 1000.0) as u64),
            a.opts.budget_percent
        );
        self.store.event(now_ms(), &msg).map_err(|e| e.to_string())
    }

    /// Holds the live volumes to what the walk of `summary` counted (see [`Calibration`]).
    pub(super) fn calibrate(&mut self, summary: &HeapSummary) {
        let names = self.a.classes.names();
        let ids: rustc_hash::FxHashMap<&str, u32> =
            names.iter().enumerate().map(|(id, n)| (n.as_str(), id as u32)).collect();
        let exact = summary
            .classes
            .iter()
            .filter_map(|c| ids.get(c.name.as_str()).map(|&id| (id, (c.bytes, c.instances))))
            .collect();
        let (sampled, _) = self.a.sampler.volumes(Some(self.walk_began));
        self.calibration.walked(&exact, &sampled);
    }

    /// Whether growth can be judged yet, as `growth RUN.db` judges: not before the run has
    /// been observed for its minimum span.
    pub(super) fn judged(&self) -> bool {
        self.a.started.elapsed() >= Duration::from_millis(growth::RUN_MIN_SPAN_MS)
    }

    /// Takes a live heap dump beside the run store once a candidate is confirmed (the run is
    /// judged, and ranked on checked snapshots): at most one per `capture_every`, and none
    /// while the live heap (the last walk's, else the sampled estimate) is over
    /// `capture_max_heap`, which is said once per `capture_every` instead.
    pub(super) fn maybe_capture(&mut self) -> Result<(), String> {
        let a = self.a;
        let confirmed = a.opts.capture_on_leak && self.judged() && self.ranked_checked;
        let Some(class) = self.candidates.first().filter(|_| confirmed).map(|c| c.class.clone()) else {
            return Ok(());
        };
        if self.last_capture.is_some_and(|t| t.elapsed() < a.opts.capture_every) {
            return Ok(());
        }
        self.last_capture = Some(Instant::now());
        let live = match self.last_walk {
            Some((_, _, bytes)) => bytes as u64,
            None => self.recent.last().map_or(0, |s| s.0.total_bytes),
        };
        let reason = format!("{class} grows ({} live)", report::human_bytes(live));
        if live > a.opts.capture_max_heap {
            let msg = format!(
                "heap dump not captured: the live heap ({}) is over capture_max_heap ({}); {reason}",
                report::human_bytes(live),
                report::human_bytes(a.opts.capture_max_heap)
            );
            return self.store.event(now_ms(), &msg).map_err(|e| e.to_string());
        }
        let n = self.captures + 1;
        let path = runstore::capture_file(&a.opts.out, n);
        // The JVM refuses to overwrite: a dump of an earlier run under this name goes.
        let _ = std::fs::remove_file(&path);
        let started = Instant::now();
        let msg = match self.jni.dump_heap(&path.to_string_lossy(), true) {
            Ok(()) => {
                self.captures = n;
                let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
                self.store.write_capture(now_ms(), &file, live, &reason).map_err(|e| e.to_string())?;
                format!("heap dump captured in {:.1} s: {} ({reason})", started.elapsed().as_secs_f64(), path.display())
            }
            Err(e) => format!("heap dump capture failed: {e}"),
        };
        self.store.event(now_ms(), &msg).map_err(|e| e.to_string())
    }
}
