//! How long a heap walk would stop the JVM, and whether it fits `max_pause`: a walk is
//! started only when its predicted pause fits, and stopped early enough that the VM's own
//! cleanup after it still does.
//!
//! A walk's pause has three parts, measured here on JDK 17 and JDK 25 with 10–22 M objects
//! (`benches/walk-cost.sh`): HotSpot's traversal itself, 40–60 ns an object (the floor: a
//! walk with no callback); the callbacks, about 150 ns an object more even for a callback
//! that returns at once (HotSpot looks up four tags per reference for it), and 50 ns more for
//! the agent's own work; and, after a walk that stopped, HotSpot's cleanup (JDK 17 restores
//! every object's mark word: 170 ms after a walk stopped at 7 M objects of a heap of 8 M).

use std::time::Duration;

/// Pause per object of a walk before one is measured (210–250 ns measured, the callbacks
/// included): on the safe side, so that the first walk of a big heap is not started blind.
const FIRST_NS_PER_OBJECT: f64 = 250.0;
/// Cleanup per heap object after a stopped walk, before one is measured.
const FIRST_CLEANUP_NS: f64 = 25.0;
/// Mean bytes of a live object, before a walk measures it.
const FIRST_BYTES_PER_OBJECT: f64 = 48.0;
/// A heap dump's pause per byte of dump, a full collection included: 1.7 s for a 605 MiB dump
/// of 15 M objects on JDK 17 (2.4 s on JDK 25), 2 cores.
const DUMP_NS_PER_BYTE: f64 = 2.8;
/// Dump bytes per live byte: a dump writes references as 8-byte ids and an object head per
/// record (605 MiB of dump for 434 MiB live, measured).
const DUMP_BYTES_PER_LIVE_BYTE: f64 = 1.4;
/// A walk filtered by class, per heap object: HotSpot's traversal alone (40–60 ns measured
/// with no callback on JDK 17 and 25, 10–22 M objects; `benches/walk-cost.sh`).
const FLOOR_NS_PER_OBJECT: f64 = 60.0;
/// ... and per reported reference to the class's instances (the callback machinery and ours).
const FILTERED_NS_PER_REFERENCE: f64 = 250.0;
/// Time kept in hand below `max_pause` for the safepoint and the walk's start.
const MARGIN: Duration = Duration::from_millis(20);
/// Walks stopped in a row after which the time between trials stops doubling: a trial every
/// 16 × `walk_every` at least, each within `max_pause` and the budget.
const MAX_TRIAL_DOUBLINGS: u32 = 4;

/// What the walks so far say a walk costs.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    ns_per_object: f64,
    cleanup_ns: f64,
    bytes_per_object: f64,
    /// Objects and live bytes the last complete walk reached.
    last: Option<(u64, f64)>,
    /// Objects the rate `ns_per_object` was measured on: a rate from a few thousand objects
    /// gives way to one measured on more.
    rate_objects: u64,
    /// Walks stopped at their deadline since the last complete one.
    stops_in_a_row: u32,
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            ns_per_object: FIRST_NS_PER_OBJECT,
            cleanup_ns: FIRST_CLEANUP_NS,
            bytes_per_object: FIRST_BYTES_PER_OBJECT,
            last: None,
            rate_objects: 0,
            stops_in_a_row: 0,
        }
    }
}

/// A walk's predicted cost, or why it is not taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Prediction {
    /// Objects the heap is estimated to hold.
    pub objects: f64,
    /// The pause a whole walk would cause, cleanup included.
    pub pause: Duration,
    /// How long the walk's callbacks may run before it must stop to keep within `max_pause`.
    pub deadline: Duration,
    /// Whether the whole walk fits `max_pause`.
    pub fits: bool,
}

impl Plan {
    /// The objects of the heap now, from the estimates at hand, the largest (a walk predicted
    /// too short overruns the pause; one predicted too long is only put off): the last walk's
    /// objects scaled by how the sampled live bytes changed since; the sampled live objects
    /// (only those allocated since the agent started: an attached agent sees few); and the heap
    /// in use right after a collection, at the walks' bytes per object.
    pub(crate) fn objects(&self, sampled_bytes: f64, sampled_objects: f64, used_after_gc: Option<u64>) -> f64 {
        let scaled = match self.last {
            Some((objects, bytes)) if bytes > 0.0 => objects as f64 * (sampled_bytes / bytes).clamp(0.25, 4.0),
            _ => sampled_objects,
        };
        let used = used_after_gc.map_or(0.0, |u| u as f64 / self.bytes_per_object);
        scaled.max(used)
    }

    /// What a walk of a heap of `objects` would cost, against `max_pause`.
    pub(crate) fn predict(&self, objects: f64, max_pause: Duration) -> Prediction {
        let cleanup = Duration::from_secs_f64(objects * self.cleanup_ns * 1e-9);
        let walk = Duration::from_secs_f64(objects * self.ns_per_object * 1e-9);
        let deadline = max_pause.saturating_sub(cleanup + MARGIN);
        Prediction { objects, pause: walk + cleanup, deadline, fits: walk <= deadline }
    }

    /// The pause per object the next prediction uses.
    pub(crate) fn ns_per_object(&self) -> f64 {
        self.ns_per_object
    }

    /// What a walk filtered by a class of `instances` would cost on a heap of `objects`.
    pub(crate) fn predict_filtered(&self, objects: f64, instances: f64, max_pause: Duration) -> Prediction {
        let cleanup = Duration::from_secs_f64(objects * self.cleanup_ns * 1e-9);
        let walk =
            Duration::from_secs_f64((objects * FLOOR_NS_PER_OBJECT + instances * FILTERED_NS_PER_REFERENCE) * 1e-9);
        let deadline = max_pause.saturating_sub(cleanup + MARGIN);
        Prediction { objects, pause: walk + cleanup, deadline, fits: walk <= deadline }
    }

    /// Learns from a complete walk of `objects` and `bytes` that stopped the JVM for `pause`.
    pub(crate) fn walked(&mut self, pause: Duration, objects: u64, bytes: u64) {
        if objects > 0 {
            self.ns_per_object = pause.as_nanos() as f64 / objects as f64;
            self.bytes_per_object = (bytes as f64 / objects as f64).max(8.0);
            self.last = Some((objects, bytes as f64));
            self.rate_objects = objects;
        }
        self.stops_in_a_row = 0;
    }

    /// Learns the heap's size from a walk on a forked copy (`objects` and `bytes`): its pause
    /// was the fork's, which says nothing of a walk's rate.
    pub(crate) fn forked(&mut self, objects: u64, bytes: u64) {
        if objects > 0 {
            self.bytes_per_object = (bytes as f64 / objects as f64).max(8.0);
            self.last = Some((objects, bytes as f64));
        }
    }

    /// Learns from a walk stopped at its deadline after `until_stop` and `reached` objects,
    /// whose pause was `pause` in all, on a heap estimated at `objects`.
    /// The rate is the stopped walk's when it reached more objects than the rate was measured
    /// on (a bigger sample), else the slower of the two (the safe side).
    pub(crate) fn stopped(&mut self, pause: Duration, until_stop: Duration, reached: u64, objects: f64) {
        self.stops_in_a_row += 1;
        if reached > 0 {
            let rate = until_stop.as_nanos() as f64 / reached as f64;
            self.ns_per_object = if reached >= self.rate_objects { rate } else { self.ns_per_object.max(rate) };
            self.rate_objects = self.rate_objects.max(reached);
        }
        if objects > 0.0 {
            self.cleanup_ns = pause.saturating_sub(until_stop).as_nanos() as f64 / objects;
        }
    }

    /// How long after the last whole walk (complete or stopped at its deadline) a walk
    /// predicted not to fit is tried anyway, within `max_pause`: it stops at the same
    /// deadline. A rate is a moment's, not the heap's: the first walk of a JDK 25 service on
    /// a loaded machine stopped after 29,857 objects at 7.9 µs each (1.3 µs alone), and the
    /// first walk of a steady Tomcat, at its start beside three busy loops, completed at
    /// 7.8 µs an object; the walks predicted from then on (1.3–16 s) never ran, so the leak's
    /// holder was never learned and the steady service's sampled garbage was never refuted.
    /// Each stop in a row doubles the time, up to 16 × `walk_every`.
    pub(crate) fn retry_after(&self, walk_every: Duration) -> Duration {
        let doublings = self.stops_in_a_row.saturating_sub(1).min(MAX_TRIAL_DOUBLINGS);
        walk_every * (1 << doublings)
    }

    /// What it would take to see the heap now, when no walk fits `max_pause`: the pause of a
    /// walk and the `--max-pause` that allows it, and what a heap dump would cost instead.
    pub(crate) fn what_it_takes(&self, p: &Prediction, live_bytes: f64, max_pause: Duration) -> String {
        let needed = Duration::from_secs_f64((p.pause + MARGIN).as_secs_f64() * 1.25);
        let dump_bytes = live_bytes * DUMP_BYTES_PER_LIVE_BYTE;
        let dump_pause = Duration::from_secs_f64(dump_bytes * DUMP_NS_PER_BYTE * 1e-9);
        format!(
            "a heap walk would stop the JVM about {} now ({} objects at {:.0} ns each), over max_pause {}: --max-pause {} would allow it; a heap dump (--capture-on-leak) would stop it about {} and write about {}",
            report::human_ms(p.pause.as_millis() as u64),
            report::thousands(p.objects as u64),
            self.ns_per_object,
            report::human_ms(max_pause.as_millis() as u64),
            round_up(needed),
            report::human_ms(dump_pause.as_millis() as u64),
            report::human_bytes(dump_bytes as u64)
        )
    }
}

/// A duration as a `--max-pause` value a user would type: whole 100 ms below 1 s, else whole
/// or half seconds, rounded up.
fn round_up(d: Duration) -> String {
    let ms = d.as_millis() as u64;
    if ms < 1000 {
        format!("{}ms", ms.div_ceil(100) * 100)
    } else {
        let halves = ms.div_ceil(500);
        if halves.is_multiple_of(2) {
            format!("{}s", halves / 2)
        } else {
            format!("{}.5s", halves / 2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_fits_only_with_its_cleanup() {
        let mut plan = Plan::default();
        plan.walked(Duration::from_millis(200), 1_000_000, 48_000_000);
        // 200 ns an object: 4 M objects walk in 0.8 s, and their cleanup takes 0.1 s more.
        let p = plan.predict(4_000_000.0, Duration::from_secs(1));
        assert!(p.fits, "{p:?}");
        assert_eq!(p.pause, Duration::from_millis(900));
        assert_eq!(p.deadline, Duration::from_millis(880));
        assert!(!plan.predict(4_500_000.0, Duration::from_secs(1)).fits);
    }

    #[test]
    fn a_stopped_walk_teaches_its_rate_and_its_cleanup() {
        let mut plan = Plan::default();
        plan.walked(Duration::from_millis(20), 200_000, 9_600_000);
        // Stopped after 0.98 s at 7 M objects, 1.17 s in all, on a heap of 8 M.
        plan.stopped(Duration::from_millis(1170), Duration::from_millis(980), 7_000_000, 8e6);
        assert_eq!(plan.ns_per_object, 140.0);
        assert!((plan.cleanup_ns - 23.75).abs() < 1e-9, "{}", plan.cleanup_ns);
    }

    #[test]
    fn a_rate_from_a_few_objects_gives_way_to_a_bigger_sample() {
        let mut plan = Plan::default();
        // A first walk stopped after 29,857 objects at 7.6 µs each, as on a loaded machine.
        plan.stopped(Duration::from_millis(248), Duration::from_millis(227), 29_857, 30_000.0);
        assert!((plan.ns_per_object - 7602.9).abs() < 0.1, "{}", plan.ns_per_object);
        // A trial stopped after 900,000 objects at 250 ns each: the bigger sample's rate.
        plan.stopped(Duration::from_millis(240), Duration::from_millis(225), 900_000, 1e6);
        assert_eq!(plan.ns_per_object, 250.0);
        // A slower rate from fewer objects only makes it slower.
        plan.stopped(Duration::from_millis(240), Duration::from_millis(225), 450_000, 1e6);
        assert_eq!(plan.ns_per_object, 500.0);
        plan.stopped(Duration::from_millis(240), Duration::from_millis(225), 2_250_000, 3e6);
        assert_eq!(plan.ns_per_object, 100.0);
    }

    #[test]
    fn walks_stopped_in_a_row_are_tried_again_ever_less_often_until_one_completes() {
        let every = Duration::from_secs(15);
        let mut plan = Plan::default();
        assert_eq!(plan.retry_after(every), every);
        let stop = |plan: &mut Plan| plan.stopped(Duration::from_millis(250), Duration::from_millis(230), 1000, 1e6);
        stop(&mut plan);
        assert_eq!(plan.retry_after(every), every);
        stop(&mut plan);
        assert_eq!(plan.retry_after(every), every * 2);
        for _ in 0..10 {
            stop(&mut plan);
        }
        assert_eq!(plan.retry_after(every), every * 16);
        // A complete walk's rate is tried again as soon as a stopped one's first was.
        plan.walked(Duration::from_millis(100), 400_000, 19_200_000);
        assert_eq!(plan.retry_after(every), every);
    }

    #[test]
    fn an_attached_agent_counts_the_heap_in_use() {
        let plan = Plan::default();
        // Sampled since the attach: 10,000 objects; in use after a collection: 960 MB.
        assert_eq!(plan.objects(480_000.0, 10_000.0, Some(960_000_000)), 20_000_000.0);
    }

    #[test]
    fn what_it_takes_names_a_max_pause_that_fits() {
        let mut plan = Plan::default();
        plan.walked(Duration::from_millis(230), 1_000_000, 48_000_000);
        let p = plan.predict(20_000_000.0, Duration::from_secs(1));
        assert!(!p.fits);
        let note = plan.what_it_takes(&p, 1.5e9, Duration::from_secs(1));
        // 4.6 s of walk and 0.5 s of cleanup, a quarter more kept in hand: 6.4 s.
        assert!(note.contains("about 5.1 s now (20,000,000 objects at 230 ns each)"), "{note}");
        assert!(note.contains("--max-pause 6.5s would allow it"), "{note}");
        assert!(note.contains("write about 2.0 GiB"), "{note}");
    }

    #[test]
    fn max_pause_values_are_rounded_up_as_a_user_writes_them() {
        assert_eq!(round_up(Duration::from_millis(420)), "500ms");
        assert_eq!(round_up(Duration::from_millis(1001)), "1.5s");
        assert_eq!(round_up(Duration::from_millis(2000)), "2s");
    }
}
