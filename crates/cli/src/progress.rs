//! Progress bars on stderr, shown only on a terminal and only once work lasts a moment.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::warnings::ReadWarnings;

/// Work shorter than this never shows a bar.
const SHOW_AFTER: Duration = Duration::from_millis(400);

/// A [`graph::Progress`] drawn with indicatif.
pub struct Bar {
    bar: ProgressBar,
    started: Mutex<Instant>,
    /// Major page faults and CPU seconds when the phase started, for the timings lines.
    counters_at_start: Mutex<Counters>,
    shown: AtomicBool,
    enabled: bool,
    prefix: Mutex<String>,
    /// `LEAKSCOPE_TIMINGS=1`: print each phase's duration on stderr (for benchmarks).
    timings: bool,
    /// `--quiet`: no bar and no warnings.
    quiet: bool,
    /// The warnings of the dumps read through this bar; `None` until one is read.
    read: Mutex<Option<ReadWarnings>>,
}

impl Bar {
    /// A bar that draws when stderr is a terminal and `quiet` is false.
    pub fn new(quiet: bool) -> Bar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{msg:>22} [{bar:40}] {percent:>3}% {elapsed_precise} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        let enabled = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
        Bar {
            bar,
            started: Mutex::new(Instant::now()),
            counters_at_start: Mutex::default(),
            shown: AtomicBool::new(false),
            enabled,
            prefix: Mutex::default(),
            timings: std::env::var_os("LEAKSCOPE_TIMINGS").is_some_and(|v| v == "1"),
            quiet,
            read: Mutex::new(None),
        }
    }

    /// The warnings of the dumps read through this bar so far, for the verdict printed at the
    /// end; `None` when it read none.
    pub fn read_warnings(&self) -> Option<ReadWarnings> {
        self.read.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Prints the warnings of a read unless quiet, the known-harmless ones too with why they
    /// are harmless (as `info` does), and keeps them.
    pub fn warnings_explained(&self, w: &heap::Warnings) {
        self.keep(w, true);
    }

    fn keep(&self, w: &heap::Warnings, explain: bool) {
        let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        read.get_or_insert_with(Default::default).report(w, self.quiet, explain);
    }

    /// Puts `prefix` before every later phase name (such as `dump 3 of 8: `, for one heap of a series).
    pub fn set_prefix(&self, prefix: &str) {
        if let Ok(mut p) = self.prefix.lock() {
            *p = prefix.to_owned();
        }
    }
}

impl graph::Progress for Bar {
    fn start(&self, phase: &str, total: u64) {
        // A bar that finished a previous phase stays finished (and silent) until reset.
        self.bar.reset();
        self.bar.set_length(total);
        self.bar.set_position(0);
        let prefix = self.prefix.lock().map(|p| p.clone()).unwrap_or_default();
        self.bar.set_message(format!("{prefix}{phase}"));
        if let Ok(mut s) = self.started.lock() {
            *s = Instant::now();
        }
        if self.timings {
            if let Ok(mut c) = self.counters_at_start.lock() {
                *c = Counters::now();
            }
        }
    }

    fn advance(&self, done: u64) {
        self.bar.inc(done);
        if self.enabled && !self.shown.load(Ordering::Relaxed) {
            let late = self.started.lock().map(|s| s.elapsed() > SHOW_AFTER).unwrap_or(false);
            if late && !self.shown.swap(true, Ordering::Relaxed) {
                self.bar.set_draw_target(ProgressDrawTarget::stderr());
            }
        }
    }

    fn finish(&self) {
        if self.timings {
            let took = self.started.lock().map(|s| s.elapsed()).unwrap_or_default();
            let since = self.counters_at_start.lock().map(|c| Counters::now().since(&c)).unwrap_or_default();
            eprintln!("timing: {:>8.3} s  {}{}{since}", took.as_secs_f64(), self.bar.message(), memory_note());
        }
        if self.shown.load(Ordering::Relaxed) {
            self.bar.finish_and_clear();
            self.bar.set_draw_target(ProgressDrawTarget::hidden());
            self.shown.store(false, Ordering::Relaxed);
        }
    }
}

/// The bar is also how the application layer reports: warnings of each input on stderr (and
/// kept for `--json`), which input of a series is read, and notes.
impl app::Reporter for Bar {
    fn warnings(&self, w: &heap::Warnings) {
        self.keep(w, false);
    }

    fn input(&self, i: usize, n: usize) {
        self.set_prefix(&format!("dump {i} of {n}: "));
    }

    fn note(&self, message: &str) {
        if !self.quiet {
            eprintln!("warning: {message}");
        }
    }

    fn plan(&self, message: &str) {
        if !self.quiet {
            eprintln!("leakscope: {message}");
        }
    }
}

/// `  (resident 412 MiB, peak 430 MiB)` from `/proc/self/status`, for the timings lines: where
/// memory goes is what a benchmark of the index needs besides time. Empty elsewhere than Linux.
fn memory_note() -> String {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return String::new() };
    let kib = |key: &str| {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    };
    // The process's own memory apart from the pages of mapped files (the dump, the index's
    // temporary files), which the kernel can take back.
    let anon = kib("RssAnon:").map(|a| format!(", {} MiB of it anonymous", a / 1024)).unwrap_or_default();
    match (kib("VmRSS:"), kib("VmHWM:")) {
        (Some(rss), Some(hwm)) => format!("  (resident {} MiB{anon}, peak {} MiB)", rss / 1024, hwm / 1024),
        _ => String::new(),
    }
}

/// Major page faults and CPU time of this process so far, from `/proc/self/stat`: out of
/// core, a phase's faults say how much of its time went to waiting for the disk.
#[derive(Default, Clone, Copy)]
struct Counters {
    major_faults: u64,
    user_ticks: u64,
    system_ticks: u64,
}

impl Counters {
    fn now() -> Counters {
        let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return Counters::default() };
        // The fields after the command name, which is in parentheses and may hold spaces.
        let Some((_, rest)) = stat.rsplit_once(") ") else { return Counters::default() };
        let field = |i: usize| rest.split_whitespace().nth(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
        // Fields 12, 14 and 15 of proc(5), counted from the state (field 3) here.
        Counters { major_faults: field(9), user_ticks: field(11), system_ticks: field(12) }
    }

    /// `  (12345 major faults, user 3.2 s, system 0.4 s)`: what changed since `start`; empty
    /// elsewhere than Linux.
    fn since(&self, start: &Counters) -> String {
        if self.user_ticks == 0 {
            return String::new();
        }
        // Clock ticks are 1/100 s: USER_HZ is 100 on every Linux.
        let secs = |now: u64, then: u64| now.saturating_sub(then) as f64 / 100.0;
        format!(
            "  ({} major faults, user {:.1} s, system {:.1} s)",
            self.major_faults.saturating_sub(start.major_faults),
            secs(self.user_ticks, start.user_ticks),
            secs(self.system_ticks, start.system_ticks)
        )
    }
}
