//! The agent's worker thread: records sampled snapshots after collections, ranks them, and
//! decides when a class points-from walk is worth its pause.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

mod probe;
mod record;
#[cfg(test)]
mod tests;
mod walks;

use growth::HeapSummary;

use crate::calibration::Calibration;
use crate::classes::REFERENCE;
use crate::jvmti::{Jint, Jni};
use crate::state::{disable, events_off, events_on, Agent, AGENT};
use crate::time::now_ms;
use runstore::{Checked, Store};

/// Sampled snapshots the online ranking looks at.
pub(super) const RECENT: usize = 64;
/// Sampled snapshots are recorded at least this often even without collections (ZGC posts
/// no collection events; an idle JVM collects rarely).
const IDLE_PERIOD: Duration = Duration::from_secs(10);
/// Walks taken whenever the budget allows, before any candidate: a walk-checked start of
/// the series the ranking prefers, and two walks whose edges can be growth-tested.
pub(super) const FIRST_WALKS: u64 = 2;
/// The share of the JVM's maximum heap in use after collections at which the heap is full, and
/// how many collections in a row must find it so (one after a burst of garbage in the old
/// generation is not a full heap); it is full no longer once a collection finds it under this
/// share less a tenth.
pub(super) const HEAP_FULL_SHARE: f64 = 0.9;
pub(super) const HEAP_FULL_READINGS: u32 = 3;

/// Collections in a row that found the heap full, and since when it is.
#[derive(Debug, Default)]
pub(super) struct HeapFull {
    pub(super) readings: u32,
    pub(super) since: Option<u64>,
}
/// The walk budget is a share of the time since this long before the agent started: the
/// first walks, while the heap is still small and cheap to walk, need not wait for the share
/// of a minute to build up (a leaking service grew to 311 MB in its first minute, without one).
pub(super) const BUDGET_HEAD_START: Duration = Duration::from_secs(60);
/// Walks the online ranking's slices look at: the run store keeps more, but a Tomcat walk's
/// class graph takes a few megabytes, and growing edges show over the newest walks.
pub(super) const RECENT_WALKS: usize = 16;
/// Sites recorded per sampled snapshot, most live bytes first.
pub(super) const MAX_SITES: usize = 500;

struct Worker<'a> {
    a: &'a Agent,
    jni: Jni,
    store: Store,
    referent_index: Option<Jint>,
    holders: crate::walk::Holders,
    known_sites: usize,
    /// The last sampled snapshots and what checked each.
    recent: Vec<(HeapSummary, Checked)>,
    candidates: Vec<crate::metrics::Candidate>,
    /// Whether some class grows enough to walk for (a looser test than a candidate's).
    worth_a_walk: bool,
    /// The sample sequence number the last walk began at: the samples it judged are older.
    walk_began: u64,
    /// Whether the candidates were ranked on checked snapshots (not on a collector's sawtooth).
    ranked_checked: bool,
    /// Heap dumps captured (`capture_on_leak`), and when the last was taken or declined.
    captures: u32,
    last_capture: Option<Instant>,
    /// Live volumes held to the walks' exact counts.
    calibration: Calibration,
    /// The newest walks' summaries (class points-from graphs) and containers' holders: the
    /// slices of the online ranking, as `growth RUN.db` makes them.
    walk_summaries: Vec<HeapSummary>,
    walk_holders: Vec<runstore::HolderChain>,
    /// The biggest containers, named and read between walks.
    containers: crate::containers::Containers,
    /// The objects of the chains of `walk_holders`, in their order.
    chain_objects: Vec<crate::walk::ChainObjects>,
    /// The candidates of the last ranking, most likely leak first, and whether each grows in
    /// a structure (for the class a walk filtered by class reports next).
    ranked: Vec<(String, bool)>,
    /// When the last walk filtered by class ran.
    last_probe: Option<Instant>,
    /// Whether the next walk filtered by class is the watch's turn.
    watch_turn: bool,
    walks: u64,
    /// Walks skipped for their predicted pause (as the run store's events say) or stopped at it.
    walks_skipped: u64,
    longest_pause: Duration,
    last_pause: Duration,
    walk_spent: Duration,
    /// When the last walk ended, the objects it reached, and their bytes.
    last_walk: Option<(Instant, u64, f64)>,
    /// What a walk costs, as the walks so far measured it.
    plan: crate::plan::Plan,
    /// The Java heap in use right after the last collection.
    used_after_gc: Option<u64>,
    /// Whether the heap in use after collections stays near the maximum (see `note_heap_full`).
    heap_full: HeapFull,
    /// The pause a whole walk would cause now, as last predicted.
    predicted_pause: Duration,
    last_skip_note: Option<Instant>,
    /// When a walk last waited for its budget (said once per `walk_every`).
    last_budget_note: Option<Instant>,
    /// When the last walk stopped at its deadline (see [`crate::plan::Plan::retry_after`]).
    last_stopped: Option<Instant>,
    /// Whether walks can run on a forked copy of this JVM (`fork_walks`), once asked: its VM
    /// thread, or why not.
    fork: Option<Result<crate::fork::Support, String>>,
    /// The forked walk under way, if any.
    pending_fork: Option<PendingFork>,
    /// The last forked walk's pause (the fork's), for the budget.
    fork_pause: Duration,
    /// When a forked walk was last refused for memory (said once per `walk_every`).
    last_fork_refusal: Option<Instant>,
    /// The numbers of the containers forked walks found, by chain (see `number_forked`).
    forked_ids: rustc_hash::FxHashMap<String, u64>,
    /// Watched objects walks reached, by access slot: class id, holders outwards as the last
    /// walk that reached them saw them (a collected object keeps its last path), and the
    /// fields along them.
    watched_paths: std::collections::BTreeMap<u32, (u32, Vec<String>, Vec<String>)>,
    /// When each watched slot was first seen tagged, ms since the epoch.
    tagged_ms: rustc_hash::FxHashMap<u32, u64>,
    /// What was last written per watched slot.
    watched_written: rustc_hash::FxHashMap<u32, (Option<u64>, bool)>,
    /// Frames described, by method and location.
    locations: rustc_hash::FxHashMap<(usize, i64), String>,
    /// What the metrics endpoint and the OTLP export show.
    published: crate::metrics::Shared,
    /// The OTLP export, flushed at the end.
    otlp: Option<opentelemetry_sdk::metrics::SdkMeterProvider>,
    jvm: String,
}

/// A forked walk under way: the thread that waits for its child, the sample sequence and the
/// collection count at the fork.
struct PendingFork {
    handle: std::thread::JoinHandle<Result<crate::walk::ForkedWalk, crate::walk::ForkFailed>>,
    before: u64,
    gc: u64,
}

/// Classes loaded before the agent's events were on, seen once: binds the natives of every
/// `io.leakscope.LeakScope` (one per loader that loaded the jar; later ones are bound as
/// they are prepared) and instruments the watched classes the load hook did not see.
fn catch_up_on_loaded(a: &Agent, jni: Jni) -> Result<(), String> {
    let classes = a.env.loaded_classes().map_err(|e| format!("cannot list loaded classes ({e})"))?;
    let hooked = a.hooked.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut watched = Vec::new();
    for &c in &classes {
        let Ok(signature) = a.env.class_signature(c) else { continue };
        if signature == crate::expect::API_CLASS {
            crate::expect::bind(jni, c, true);
        }
        if let Some(w) = &a.watch {
            let name = crate::names::source_name(&signature);
            if w.watches(&name) && !hooked.contains(&name) {
                watched.push(c);
            }
        }
    }
    let result = if watched.is_empty() { Ok(()) } else { a.env.retransform(&watched) };
    for c in classes {
        jni.delete_local(c);
    }
    result.map_err(|e| format!("cannot instrument the watched classes already loaded ({e}); they are not watched"))
}

/// The worker's body.
pub(crate) fn run() {
    let Some(a) = AGENT.get() else { return };
    let Some(jni) = a.vm.attach_daemon() else {
        disable("cannot attach the worker thread to the JVM".into());
        a.finished.store(true, Ordering::SeqCst);
        return;
    };
    match Worker::start(a, jni) {
        Ok(mut w) => {
            w.main_loop();
            w.finish();
        }
        Err(e) => disable(e),
    }
    if a.disabled.load(Ordering::SeqCst) {
        events_off(a);
    }
    a.finished.store(true, Ordering::SeqCst);
    a.vm.detach();
}

impl<'a> Worker<'a> {
    fn start(a: &'a Agent, jni: Jni) -> Result<Worker<'a>, String> {
        let env = a.env;
        let command = env.system_property(c"sun.java.command").unwrap_or_default();
        let vm_version = env.system_property(c"java.vm.version").unwrap_or_default();
        let gc = env.system_property(c"java.vm.info").unwrap_or_default();
        let meta = [
            ("pid", std::process::id().to_string()),
            ("command", command),
            ("jvm", vm_version.clone()),
            ("jvm_info", gc),
            ("started_ms", now_ms().to_string()),
            ("options", a.text.clone()),
            ("interval", a.opts.interval.to_string()),
            ("walk_every_ms", a.opts.walk_every.as_millis().to_string()),
            ("period_ms", a.opts.period.as_millis().to_string()),
            ("sampling", a.sampling.to_string()),
            ("agent", env!("CARGO_PKG_VERSION").to_string()),
        ];
        if let Some(dir) = a.opts.out.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let mut store = Store::create(&a.opts.out, &meta).map_err(|e| format!("cannot write the run store: {e}"))?;
        let pointer = runstore::pointer_file(std::process::id());
        if let Some(dir) = pointer.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let out = std::fs::canonicalize(&a.opts.out).unwrap_or_else(|_| a.opts.out.clone());
        let _ = std::fs::write(&pointer, out.display().to_string());
        let mut referent_index = None;
        if let Some(r) = jni.find_class(REFERENCE) {
            a.reference.store(jni.new_global(r) as usize, Ordering::Release);
            referent_index =
                env.class_field_names(r).ok().and_then(|f| f.iter().position(|n| n == "referent")).map(|i| i as Jint);
            jni.delete_local(r);
        }
        if jni.push_local_frame(64) {
            let _ = a.classes.register_loaded(env, jni, a.reference_class());
            jni.pop_local_frame();
        }
        events_on(a).map_err(|e| format!("cannot enable events ({e})"))?;
        if let Err(e) = catch_up_on_loaded(a, jni) {
            eprintln!("leakscope agent: {e}");
        }
        eprintln!("leakscope agent: recording to {}", a.opts.out.display());
        let published = crate::metrics::Shared::default();
        let (otlp, exporting) = start_exporters(a, &mut store, &published, &command_line(a));
        for note in exporting {
            eprintln!("leakscope agent: {note}");
            store.event(now_ms(), &note).map_err(|e| e.to_string())?;
        }
        Ok(Worker {
            a,
            jni,
            store,
            referent_index,
            holders: crate::walk::Holders::default(),
            known_sites: 0,
            recent: Vec::new(),
            candidates: Vec::new(),
            worth_a_walk: false,
            ranked_checked: false,
            walk_began: 0,
            captures: 0,
            last_capture: None,
            calibration: Calibration::new(a.opts.interval),
            walk_summaries: Vec::new(),
            walk_holders: Vec::new(),
            containers: Default::default(),
            chain_objects: Vec::new(),
            ranked: Vec::new(),
            last_probe: None,
            watch_turn: false,
            walks: 0,
            walks_skipped: 0,
            longest_pause: Duration::ZERO,
            last_pause: Duration::ZERO,
            walk_spent: Duration::ZERO,
            last_walk: None,
            plan: Default::default(),
            used_after_gc: None,
            heap_full: HeapFull::default(),
            predicted_pause: Duration::ZERO,
            last_skip_note: None,
            last_budget_note: None,
            last_stopped: None,
            fork: None,
            pending_fork: None,
            fork_pause: Duration::ZERO,
            last_fork_refusal: None,
            forked_ids: rustc_hash::FxHashMap::default(),
            watched_paths: Default::default(),
            tagged_ms: Default::default(),
            watched_written: Default::default(),
            locations: Default::default(),
            published,
            otlp,
            jvm: vm_version,
        })
    }

    fn main_loop(&mut self) {
        let mut seen_gc = 0;
        let mut last_sample = Instant::now();
        let mut last_read = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(20));
            if self.a.disabled.load(Ordering::SeqCst) || self.a.stop.load(Ordering::SeqCst) {
                return;
            }
            // The containers are read every period whether or not the JVM collected: a few
            // JNI calls, and a structure's growth is seen sooner than the collections come.
            if last_read.elapsed() >= self.a.opts.period {
                last_read = Instant::now();
                if let Err(e) = self.read_containers() {
                    disable(e);
                    return;
                }
            }
            let gc = self.a.gc_count.load(Ordering::Acquire);
            // A forked walk's child is done: its walk, and the exact snapshot after it.
            match self.collect_forked() {
                Ok(true) => {
                    if let Err(e) = self.record_sample(gc, Checked::Walk) {
                        disable(e);
                        return;
                    }
                    // The metrics say what the store now says, not a period later: `growth`
                    // named a shop's holder from a forked walk while /metrics had none yet.
                    self.publish("running");
                }
                Ok(false) => {}
                Err(e) => {
                    disable(e);
                    return;
                }
            }
            let since = last_sample.elapsed();
            let collected = gc != seen_gc;
            if (collected && since >= self.a.opts.period) || since >= IDLE_PERIOD.max(self.a.opts.period) {
                seen_gc = gc;
                last_sample = Instant::now();
                let checked = if collected { Checked::Collection } else { Checked::Nothing };
                if let Err(e) = self.tick(gc, checked) {
                    disable(e);
                    return;
                }
            }
        }
    }

    fn finish(&mut self) {
        let a = self.a;
        let why_disabled = a.why_disabled.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(why) = why_disabled {
            let _ = self.store.event(now_ms(), &format!("agent disabled: {why}"));
            let _ = self.store.set_meta("status", &format!("disabled: {why}"));
            self.publish("disabled");
        } else {
            if self.pending_fork.take().is_some() {
                // Its child dies with the JVM's VM thread (PR_SET_PDEATHSIG).
                let _ =
                    self.store.event(now_ms(), "forked heap walk not finished: the JVM ended while its child walked");
            }
            self.record_final();
            self.publish("ended");
        }
        if let Some(p) = self.otlp.take() {
            // One last export, so that the collector sees the end.
            let _ = p.shutdown();
        }
    }

    /// The last snapshot and what the run ends with.
    fn record_final(&mut self) {
        let a = self.a;
        // The last snapshot at exit: what the program held when it ended.
        let _ = self.record_sample(a.gc_count.load(Ordering::Acquire), Checked::Nothing);
        let _ = self.write_watched(false);
        let _ = self.store.set_meta("ended_ms", &now_ms().to_string());
        let _ = self.store.set_meta("live_samples", &a.sampler.live_samples().to_string());
        let _ = self.store.set_meta("samples_taken", &a.samples_taken.load(Ordering::Relaxed).to_string());
        let _ = self.store.set_meta("sampling_ns", &a.sampling_ns.load(Ordering::Relaxed).to_string());
        let _ = self.store.set_meta("walks", &self.walks.to_string());
        let _ = self.store.set_meta("walks_skipped", &self.walks_skipped.to_string());
        let _ = self.store.set_meta("status", "ended");
    }

    /// Hands the current figures to the metrics endpoint and the OTLP export.
    fn publish(&self, status: &str) {
        let newest = self.recent.iter().rev().find(|s| s.1 >= Checked::Collection).or(self.recent.last());
        let mut classes: Vec<(String, u64)> =
            newest.map(|s| s.0.classes.iter().map(|c| (c.name.clone(), c.bytes)).collect()).unwrap_or_default();
        classes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        classes.truncate(crate::metrics::TOP_CLASSES);
        let judged = self.judged();
        let r = crate::metrics::Readings {
            status: status.into(),
            jvm: self.jvm.clone(),
            live_bytes: newest.map_or(0, |s| s.0.total_bytes),
            classes,
            judged,
            candidates: if judged { self.candidates.clone() } else { Vec::new() },
            walks: self.walks,
            walks_skipped: self.walks_skipped,
            longest_pause_s: self.longest_pause.as_secs_f64(),
            last_pause_s: self.last_pause.as_secs_f64(),
            walked_bytes: self.last_walk.map_or(0, |w| w.2 as u64),
            walk_predicted_pause_s: self.predicted_pause.as_secs_f64(),
            samples: self.a.samples_taken.load(Ordering::Relaxed),
        };
        *self.published.lock().unwrap_or_else(|p| p.into_inner()) = r;
    }

    fn tick(&mut self, gc: u64, checked: Checked) -> Result<(), String> {
        self.record_sample(gc, checked)?;
        self.write_watched(false)?;
        if self.a.opts.walks && self.maybe_walk(gc)? {
            // Right after a walk the samples it did not reach are out: an exact snapshot.
            self.record_sample(gc, Checked::Walk)?;
            // The first walk learns which classes lie on the paths to containers and watched
            // objects (one level of holders); the second, wanted anyway, names whole paths:
            // it comes at once rather than a tick later.
            if self.walks == 1 && self.maybe_walk(gc)? {
                self.record_sample(gc, Checked::Walk)?;
            }
        }
        self.maybe_capture()?;
        self.publish("running");
        Ok(())
    }

    /// Tags the classes loaded since the last walk: a walk knows an object's class by its tag.
    /// False when no local frame could be had (the walk waits).
    fn register_classes(&mut self) -> Result<bool, String> {
        let a = self.a;
        if !self.jni.push_local_frame(64) {
            return Ok(false);
        }
        let registered = a.classes.register_loaded(a.env, self.jni, a.reference_class());
        self.jni.pop_local_frame();
        registered.map_err(|e| format!("cannot list loaded classes ({e})"))?;
        Ok(true)
    }

    /// Gives `holders`, the chains of a walk at `at_ms` (`whole` or filtered by class), the
    /// sizes read of the same containers so far (for the online ranking) and their date (see
    /// [`date`]), and the path an earlier walk learned where this walk's stops short of it:
    /// each full walk learns what holds each link anew, and one that ran out of time or
    /// dropped the path links (a map's table replaced at a resize) left the session
    /// registry's chain at `…` while the same container, still held, had been named to its
    /// root before.
    fn keep_known(&self, holders: &mut [runstore::HolderChain], at_ms: u64, whole: bool) {
        for h in holders {
            let old = self.walk_holders.iter().find(|o| o.id == h.id && h.id > 0);
            if let Some(old) = old {
                h.sizes = old.sizes.clone();
            }
            date(h, at_ms, whole);
            let Some(old) = old else { continue };
            if let Some(known) = known_further(&h.path, &old.path) {
                // This walk's fields where it knew the holder, the earlier walk's beyond.
                let ours = h.path.len() - 1;
                let field = |i: usize| {
                    let new = h.fields.get(i).filter(|f| i < ours && !f.is_empty());
                    new.or(old.fields.get(i)).cloned().unwrap_or_default()
                };
                h.fields = (0..known.len()).map(field).collect();
                h.path = known.to_vec();
            }
        }
    }

    /// Keeps the longest pause a walk caused, stopped ones included, in the store's meta
    /// (`longest_pause_ms`): the bound `max_pause` promises.
    fn note_pause(&mut self, pause: Duration) -> Result<(), String> {
        if pause > self.longest_pause {
            self.longest_pause = pause;
            let ms = format!("{:.1}", pause.as_secs_f64() * 1000.0);
            self.store.set_meta("longest_pause_ms", &ms).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Reads the followed containers' arrays (no pause): the structures' growth between walks.
    fn read_containers(&mut self) -> Result<(), String> {
        let sizes = self.containers.read(self.a.env, self.jni);
        if sizes.is_empty() {
            return Ok(());
        }
        let time = now_ms();
        for &(id, bytes) in &sizes {
            if let Some(h) = self.walk_holders.iter_mut().find(|h| h.id == id) {
                add_reading(h, time, bytes);
            }
        }
        self.store.write_container_sizes(time, &sizes).map_err(|e| e.to_string())
    }
}

/// Dates chain `h` at `at_ms`, when the walk that gave it ran. A walk filtered by class
/// measures only the arrays of its class; the others keep the size the last whole walk saw,
/// so after one (`whole` false) a chain's array is as big as its last reading says. Dated
/// now with the whole walk's size, a Tomcat shop's listener list read at 120 KB was written
/// at the 54 KB of a minute before: `growth` read a drop and called the structure stopped.
fn date(h: &mut runstore::HolderChain, at_ms: u64, whole: bool) {
    h.time_ms = at_ms;
    if let (false, Some(&(_, bytes))) = (whole, h.sizes.last()) {
        h.bytes = bytes;
    }
}

/// A reading of chain `h`'s array, `bytes` at `at_ms`, kept with the [`RECENT`] newest.
fn add_reading(h: &mut runstore::HolderChain, at_ms: u64, bytes: u64) {
    h.sizes.push((at_ms, bytes));
    if h.sizes.len() > RECENT {
        h.sizes.remove(0);
    }
}

/// A forked walk's own reading of chain `h`'s array joins its readings, as the store keeps it
/// (`write_container_sizes`): a forked walk's containers are read at no other time, and with
/// only the newest walk's size the agent's own ranking (the metrics' holder) never saw the
/// listener list of a Tomcat shop grow that `growth RUN.db` named from the store.
fn read_at_walk(h: &mut runstore::HolderChain, at_ms: u64) {
    if h.id > 0 {
        add_reading(h, at_ms, h.bytes);
    }
}

/// `old`, when it goes on past where `new` stops at `…` through the same holders: the path an
/// earlier walk learned of a container this walk reached without learning it whole.
fn known_further<'p>(new: &[String], old: &'p [String]) -> Option<&'p [String]> {
    let (last, prefix) = new.split_last()?;
    let ends = |p: &[String]| p.last().is_some_and(|l| l == "…");
    (last == "…" && !ends(old) && old.len() > prefix.len() && old.starts_with(prefix)).then_some(old)
}

/// The JVM's command line, for the OTLP resource (which JVM in the fleet this is).
fn command_line(a: &Agent) -> String {
    a.env.system_property(c"sun.java.command").unwrap_or_default()
}

/// Starts the metrics endpoint and the OTLP export the options ask for. A failure is noted and
/// the recording goes on without that exporter.
fn start_exporters(
    a: &Agent,
    store: &mut Store,
    published: &crate::metrics::Shared,
    command: &str,
) -> (Option<opentelemetry_sdk::metrics::SdkMeterProvider>, Vec<String>) {
    let mut notes = Vec::new();
    if let Some(addr) = a.opts.metrics {
        match crate::metrics::serve(addr, published.clone()) {
            Ok(bound) => {
                let _ = store.set_meta("metrics", &bound.to_string());
                notes.push(format!("metrics at http://{bound}/metrics"));
            }
            Err(e) => notes.push(format!("{e}; the recording goes on without the metrics endpoint")),
        }
    }
    let otlp = a.opts.otlp.as_deref().and_then(|endpoint| {
        let resource =
            vec![("process.pid", std::process::id().to_string()), ("process.command_line", command.to_string())];
        match crate::metrics::otlp(endpoint, a.opts.otlp_every, published.clone(), resource) {
            Ok(p) => {
                notes.push(format!("exporting metrics to {endpoint} every {:?}", a.opts.otlp_every));
                Some(p)
            }
            Err(e) => {
                notes.push(format!("{e}; the recording goes on without OTLP export"));
                None
            }
        }
    });
    (otlp, notes)
}
