//! Walks filtered by class ([`crate::walk::walk_to`]) when no whole walk fits `max_pause`:
//! which class to report next, and what the walk learned, kept as a walk's holders are.

use std::time::{Duration, Instant};

use runstore::Checked;

use super::Worker;
use crate::classes::{CLASS_BIT, REFERENCE_BIT};
use crate::jvmti::Jlong;
use crate::time::now_ms;

/// Walks filtered by class come at most this often.
const PROBE_EVERY: Duration = Duration::from_secs(5);

impl Worker<'_> {
    /// Walks the heap reporting only one class's instances, when that fits `max_pause` and
    /// the budget and a class needs it ([`Worker::probe_target`]); `objects` estimates the
    /// heap's. The chains learned are named, followed and stored as a walk's are.
    pub(super) fn maybe_probe(&mut self, objects: f64) -> Result<(), String> {
        let a = self.a;
        if self.last_probe.is_some_and(|t| t.elapsed() < PROBE_EVERY) {
            return Ok(());
        }
        let names = a.classes.names();
        let Some(class) = self.probe_target(&names) else { return Ok(()) };
        let instances = self.sampled_instances(&names[class as usize]);
        let predicted = self.plan.predict_filtered(objects, instances, a.opts.max_pause);
        let allowed = self.walk_budget();
        if !predicted.fits || (self.walk_spent + predicted.pause).as_secs_f64() > allowed {
            return Ok(());
        }
        self.last_probe = Some(Instant::now());
        // Classes loaded since the last walk have no tag yet: their references would be
        // reported without a class (Tomcat's loaded after the first walks).
        if !self.register_classes()? || !self.jni.push_local_frame(16) {
            return Ok(());
        }
        let names = a.classes.names();
        let tags = [CLASS_BIT | Jlong::from(class), CLASS_BIT | REFERENCE_BIT | Jlong::from(class)];
        let klass = a.env.objects_with_tags(&tags).ok().and_then(|found| found.first().map(|f| f.0));
        let walked = klass.map(|k| crate::walk::walk_to(a.env, k, &mut self.holders, &names, predicted.deadline));
        self.jni.pop_local_frame();
        let what = format!("heap walk filtered to {}", names[class as usize]);
        match walked {
            None => Ok(()),
            Some(Err(crate::walk::WalkFailed::Panicked)) => {
                Err("internal error (panic) in a heap walk callback".into())
            }
            Some(Err(crate::walk::WalkFailed::Jvmti(e))) => {
                self.store.event(now_ms(), &format!("{what} failed: {e}")).map_err(|e| e.to_string())
            }
            Some(Ok(Err(stopped))) => {
                self.walk_spent += stopped.pause;
                self.note_pause(stopped.pause)?;
                let msg = format!(
                    "{what} stopped at its deadline, {} in all",
                    report::human_ms(stopped.pause.as_millis() as u64)
                );
                self.store.event(now_ms(), &msg).map_err(|e| e.to_string())
            }
            Some(Ok(Ok(pause))) => {
                self.walk_spent += pause;
                self.note_pause(pause)?;
                let (mut holders, objects): (Vec<_>, Vec<_>) = self.holders.chains(&names).into_iter().unzip();
                self.containers.after_walk(a.env, self.jni, &mut holders, &objects);
                let time = now_ms();
                self.keep_known(&mut holders, time, false);
                let ms = pause.as_secs_f64() * 1000.0;
                self.store.write_probe(time, ms, &holders).map_err(|e| e.to_string())?;
                self.store.event(time, &format!("{what}: {ms:.0} ms")).map_err(|e| e.to_string())?;
                self.walk_holders = holders;
                self.chain_objects = objects;
                if a.watch.is_some() {
                    self.write_watched(true)?;
                }
                Ok(())
            }
        }
    }

    /// The class a walk filtered by class should report next, by class id: the outermost
    /// known class of a growing container's chain that does not reach a root yet (its
    /// holders are learned a level a walk); else, while the first candidate grows in no known
    /// structure, the array class its objects likely pile up in, whose big instances'
    /// referrers are containers.
    fn probe_target(&mut self, names: &[String]) -> Option<u32> {
        // With `--watch`, every other walk links the watched objects' paths.
        self.watch_turn = !self.watch_turn;
        if self.watch_turn {
            if let Some(c) = self.watch_target(names) {
                return Some(c);
            }
        }
        let id = |name: &str| names.iter().position(|n| n == name).map(|i| i as u32);
        for (h, o) in self.walk_holders.iter().zip(&self.chain_objects) {
            let grew = matches!((h.sizes.first(), h.sizes.last()), (Some(f), Some(l)) if l.1 > f.1);
            if !grew || h.path.last().is_none_or(|p| p != "…") {
                continue;
            }
            // The outermost holder that is a linked object: a walk reporting its class learns
            // what holds it (a class named after it without an object cannot be followed).
            let outermost = o.steps.iter().rev().find_map(|s| match s {
                crate::walk::Step::Object(_, class) => Some(*class),
                _ => None,
            });
            return Some(outermost.unwrap_or(o.container.1));
        }
        if self.ranked.first().is_none_or(|(_, structure)| *structure) {
            return None;
        }
        // An object array that grows itself; else the table of a map whose nodes grow; else
        // the array of lists, queues and copy-on-write lists.
        let primitive =
            |a: &str| hprof::BasicType::PRIMITIVES.iter().any(|t| a.strip_suffix("[]") == Some(t.java_name()));
        let classes = || self.ranked.iter().map(|(c, _)| c.as_str());
        classes()
            .filter(|c| c.ends_with("[]") && !primitive(c))
            .find_map(id)
            .or_else(|| {
                classes().filter(|c| c.contains("$Node") || c.contains("$Entry")).find_map(|c| id(&format!("{c}[]")))
            })
            .or_else(|| id("java.lang.Object[]"))
    }

    /// With `--watch`: the class whose report links the watched objects (the watched class,
    /// before any is linked), else the outermost linked holder of those whose paths are not
    /// known to a root yet.
    fn watch_target(&self, names: &[String]) -> Option<u32> {
        let w = self.a.watch.as_ref()?;
        self.holders.watched_frontier().or_else(|| {
            let watched = w.watched_classes(names);
            watched.iter().position(|&b| b).map(|i| i as u32)
        })
    }

    /// The newest checked estimate of the live objects of class `name`.
    fn sampled_instances(&self, name: &str) -> f64 {
        let newest = self.recent.iter().rev().find(|s| s.1 >= Checked::Collection).or(self.recent.last());
        newest.and_then(|s| s.0.classes.iter().find(|c| c.name == name)).map_or(0.0, |c| c.instances as f64)
    }
}
