//! Heap walks on a forked copy of the JVM (issue 45): the VM thread forks inside the walk's
//! first callback, at the walk's safepoint; the JVM (the parent) ends its walk at once, so
//! that its pause is the fork's, and the child, a copy-on-write image of the heap as it was
//! at the safepoint, walks it whole and sends what it found over a pipe.
//!
//! What makes it sound, and what this module checks at run time:
//! - **The heap is private**: a fork snapshots a private mapping (G1, Parallel, Serial and
//!   Shenandoah on JDK 17 and 25); ZGC maps the heap shared (`/memfd:java_heap`), where the
//!   child would see the JVM's later writes. [`refusal`] refuses a writable shared mapping of
//!   16 MiB or more (`benches/fork-safety.sh`).
//! - **The child has one thread**, the VM thread, in the middle of the walk; the others are
//!   gone. It only walks (HotSpot's traversal and our callbacks) and then reports from a
//!   signal handler; glibc's `fork` leaves `malloc` usable in the child. HotSpot's walk
//!   takes one lock that other threads hold at any moment, its arena chunk pool's: the VM
//!   thread takes it before the fork and both sides release it after (`crate::fork_locks`).
//!   Another lock held at the fork can still stop the child: [`await_child`] kills it once
//!   its one thread has waited on a lock for [`STUCK`] with no CPU time spent, and at a hard
//!   timeout.
//! - **The end of the walk is a signal, not idle time**: the idle VM thread waits on one
//!   futex address (200 of 200 samples on every JDK and collector measured), the same address
//!   in the copy. The parent's VM thread is sampled while the child walks; when the child's
//!   VM thread waits on the address the parent's waits on most, its walk is over; elsewhere,
//!   it is walking or stuck.
//! - **The child touches nothing of the JVM's**: it closes every inherited descriptor but its
//!   pipe at once (a socket the JVM closes must close for its peer), points 0–2 at
//!   `/dev/null`, restores the default action of the fatal signals (no crash report of the
//!   JVM's), dies with the thread that forked it (`PR_SET_PDEATHSIG`), and never returns to
//!   the JVM's code after its report (`_exit`). The parent reaps it: no zombie.
//! - **The copy costs memory**: pages either process writes after the fork are copied. The
//!   fork is refused when the cgroup (else the machine) has less left than twice the heap in
//!   use, and the child is killed once its private memory passes half of what was left.

use std::ffi::{c_int, c_void};
use std::fs;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};
use std::time::{Duration, Instant};

/// A writable shared mapping this big is taken for the heap (ZGC's views).
const SHARED_HEAP_BYTES: u64 = 16 << 20;
/// How often the parent looks at its child (and samples its own VM thread's waits).
const POLL: Duration = Duration::from_millis(2);

/// A child whose only thread waits this long on one futex word that is not the JVM's idle
/// wait, spending no CPU time meanwhile, is stuck: no thread of its own is left to wake it (a
/// lock another thread of the JVM held at the fork). A walking child never waits: it walks,
/// in the kernel's copy-on-write faults as much as in HotSpot's code, and its CPU time grows.
pub(crate) const STUCK: Duration = Duration::from_secs(10);

/// The parent's VM thread must have waited on an address this many times, and at least as
/// often as on all others together, for it to be the idle one.
const IDLE_MIN_SAMPLES: u32 = 10;

/// What a forked walk needs of this JVM: its VM thread, whose idle wait tells the end of the
/// child's walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Support {
    vm_tid: u32,
}

/// Whether forked walks are possible in this JVM; `Err` says why not.
pub(crate) fn support() -> Result<Support, String> {
    if let Some(why) = refusal() {
        return Err(why);
    }
    let vm_tid = vm_thread().ok_or("no thread named \"VM Thread\" in /proc/self/task")?;
    Ok(Support { vm_tid })
}

/// Futex addresses the JVM's VM thread was seen waiting on, and how often: sampled while a
/// child walks (seconds), so that the collections, when it waits for the GC workers on
/// another address, are a minority. Learned once over 80 ms beforehand, the address was a
/// collection's on a 3 GB G1 heap and on Parallel, and no child's end was seen.
#[derive(Debug, Default)]
struct IdleWaits(Vec<(u64, u32)>);

impl IdleWaits {
    fn saw(&mut self, addr: u64) {
        match self.0.iter_mut().find(|w| w.0 == addr) {
            Some(w) => w.1 += 1,
            None => self.0.push((addr, 1)),
        }
    }

    /// Whether `addr` is where the VM thread waits when idle: its most frequent wait, seen
    /// [`IDLE_MIN_SAMPLES`] times or more and at least half of all.
    fn is_idle(&self, addr: u64) -> bool {
        let total: u32 = self.0.iter().map(|w| w.1).sum();
        let Some(&(top, n)) = self.0.iter().max_by_key(|w| w.1) else { return false };
        top == addr && n >= IDLE_MIN_SAMPLES && n * 2 >= total
    }

    /// The idle address, if one stands out (for messages).
    fn idle(&self) -> Option<u64> {
        self.most().filter(|&a| self.is_idle(a))
    }

    /// The address seen most, standing out or not.
    fn most(&self) -> Option<u64> {
        self.0.iter().max_by_key(|w| w.1).map(|w| w.0)
    }
}

/// Whether a child is stuck (see [`STUCK`]): fed each look at it, the futex word its thread
/// waits on (none when it is not in a futex wait, or waits on the idle word) and its CPU time.
#[derive(Debug, Default)]
struct Stuck {
    /// The word, the CPU time then, and since when both have stayed as they are.
    since: Option<(u64, u64, Instant)>,
}

impl Stuck {
    /// The word the child has waited on for [`STUCK`] or more with no CPU time spent.
    fn saw(&mut self, futex: Option<u64>, cpu_ticks: u64, now: Instant) -> Option<u64> {
        let Some(word) = futex else {
            self.since = None;
            return None;
        };
        match self.since {
            Some((w, ticks, since)) if w == word && ticks == cpu_ticks => {
                (now.duration_since(since) >= STUCK).then_some(word)
            }
            _ => {
                self.since = Some((word, cpu_ticks, now));
                None
            }
        }
    }
}

/// Test only (`test_fork_hang`): the child's thread waits as on a lock another thread held
/// at the fork, on a futex word nobody will change.
pub(crate) fn wait_forever_for_test() -> ! {
    static WORD: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    loop {
        // SAFETY: a futex wait on a static word that stays 0; it returns only on a signal.
        unsafe { libc::syscall(libc::SYS_futex, WORD.as_ptr(), libc::FUTEX_WAIT, 0, std::ptr::null::<c_void>()) };
    }
}

/// The CPU time of process `pid`, user and system, in clock ticks (`/proc/PID/stat`).
fn cpu_ticks(pid: libc::pid_t) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's ')': state is field 3, utime 14 and stime 15.
    let f: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Why a fork of this JVM would be no snapshot of its heap: a writable shared mapping of
/// [`SHARED_HEAP_BYTES`] or more (ZGC's `/memfd:java_heap`).
pub(crate) fn refusal() -> Option<String> {
    let maps = fs::read_to_string("/proc/self/maps").ok()?;
    let mut shared: Vec<(String, u64)> = Vec::new();
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(range), Some(perms)) = (f.first(), f.get(1)) else { continue };
        if !(perms.starts_with("rw") && perms.ends_with('s')) {
            continue;
        }
        let Some((lo, hi)) = range.split_once('-') else { continue };
        let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) else { continue };
        let name = f.get(5).map_or("(anonymous)", |n| n).to_string();
        match shared.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1 += hi - lo,
            None => shared.push((name, hi - lo)),
        }
    }
    let (name, bytes) = shared.into_iter().filter(|s| s.1 >= SHARED_HEAP_BYTES).max_by_key(|s| s.1)?;
    Some(format!(
        "the Java heap is mapped shared ({name}, {}: ZGC), so a forked copy would not keep it as it was",
        report::human_bytes(bytes)
    ))
}

/// The id of the JVM's VM thread, by its name.
fn vm_thread() -> Option<u32> {
    fs::read_dir("/proc/self/task").ok()?.flatten().find_map(|t| {
        let comm = fs::read_to_string(t.path().join("comm")).ok()?;
        (comm.trim_end() == "VM Thread").then(|| t.file_name().to_str()?.parse().ok()).flatten()
    })
}

/// The system call thread `tid` of `pid` waits in, and its first argument; none while it runs.
fn syscall_of(pid: u32, tid: u32) -> Option<(i64, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")).ok()?;
    let mut f = text.split_whitespace();
    let nr: i64 = f.next()?.parse().ok()?;
    let arg = u64::from_str_radix(f.next()?.trim_start_matches("0x"), 16).ok()?;
    Some((nr, arg))
}

/// Bytes the JVM may still use before a memory limit acts: the least over its memory cgroup
/// and that cgroup's ancestors (cgroup v2's `memory.max` less `memory.current`; v1's
/// `memory.limit_in_bytes` less `memory.usage_in_bytes`, as on hosts that mount v1's memory
/// hierarchy beside an empty v2 one), and the machine's available memory.
pub(crate) fn headroom() -> Option<u64> {
    let machine = fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let kb = m.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?.trim().strip_suffix("kB")?;
        Some(kb.trim().parse::<u64>().ok()? * 1024)
    });
    let cgroups = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut least = machine;
    for line in cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else { continue };
        let (root, files) = if controllers.is_empty() {
            ("/sys/fs/cgroup", ("memory.max", "memory.current"))
        } else if controllers.split(',').any(|c| c == "memory") {
            ("/sys/fs/cgroup/memory", ("memory.limit_in_bytes", "memory.usage_in_bytes"))
        } else {
            continue;
        };
        if let Some(left) = cgroup_headroom(std::path::Path::new(root), path.trim_end(), files) {
            least = Some(least.map_or(left, |l| l.min(left)));
        }
    }
    least
}

/// The least a limit leaves, over the cgroup at `path` under `root` and its ancestors, read
/// from `files` (limit, usage); `None` where none is limited. A limit of 2^60 or more is none
/// (v1 writes "no limit" as 2^63 rounded down to a page; v2 as `max`).
fn cgroup_headroom(root: &std::path::Path, path: &str, (max, current): (&str, &str)) -> Option<u64> {
    let read = |dir: &std::path::Path, f: &str| fs::read_to_string(dir.join(f)).ok()?.trim().parse::<u64>().ok();
    let mut least: Option<u64> = None;
    let mut dir = root.join(path.trim_start_matches('/'));
    loop {
        if let (Some(max), Some(current)) = (read(&dir, max), read(&dir, current)) {
            if max < 1 << 60 {
                let left = max.saturating_sub(current);
                least = Some(least.map_or(left, |l| l.min(left)));
            }
        }
        if dir.as_path() == root || !dir.pop() || !dir.starts_with(root) {
            return least;
        }
    }
}

/// A child walking, as the parent sees it.
#[derive(Debug)]
pub(crate) struct Child {
    pid: libc::pid_t,
    pipe: OwnedFd,
}

/// How a fork in the walk's callback went, on each side of it.
pub(crate) enum Forked {
    /// In the JVM: its walk ends now; the child walks on.
    Parent(Child),
    /// In the child: walk on; `report` (installed for `SIGUSR1`) sends the results on `pipe`.
    Child,
    /// No fork: the JVM's walk ends too, with nothing walked.
    Failed(String),
}

/// The child's end of the pipe, for its report.
static CHILD_PIPE: AtomicI32 = AtomicI32::new(-1);
/// The child's walk state, for its report.
static CHILD_STATE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Forks here, on the VM thread inside a heap walk callback. In the child, `state` is what
/// `report` will find through [`child_state`] and send through [`send`] once the parent asks
/// (`SIGUSR1`, when the walk is over).
///
/// # Safety
/// Must be called on the VM thread from a JVMTI heap callback (the JVM at a safepoint), with
/// `state` valid for the rest of the walk, and `report` async-signal-tolerant as far as the
/// child's single thread goes (it runs while that thread waits idle, holding nothing).
pub(crate) unsafe fn fork_here(state: *mut c_void, report: extern "C" fn(c_int)) -> Forked {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: a two-element array for pipe2.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Forked::Failed(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    let parent = std::process::id() as libc::pid_t;
    // HotSpot's locks the child's walk takes, free in the child (see `crate::fork_locks`);
    // released on both sides below, when `held` drops.
    let locks = crate::fork_locks::of_this_jvm().as_ref().ok();
    crate::fork_locks::held_by_another_for_test();
    let held = match locks.map(|l| l.take()).transpose() {
        Ok(held) => held,
        Err(why) => {
            // SAFETY: both ends are ours.
            unsafe {
                libc::close(fds[0]);
                libc::close(fds[1]);
            }
            return Forked::Failed(format!("fork put off: {why}"));
        }
    };
    // SAFETY: fork duplicates this thread only; the child below calls only what its single
    // thread can (see the module's comment), and never returns into the JVM's code after its
    // report.
    let pid = unsafe { libc::fork() };
    drop(held);
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: both ends are ours.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        return Forked::Failed(format!("fork: {e}"));
    }
    if pid > 0 {
        // SAFETY: the write end is the child's; the read end is ours from now on.
        unsafe { libc::close(fds[1]) };
        // SAFETY: fds[0] is open and owned by nothing else.
        return Forked::Parent(Child { pid, pipe: unsafe { OwnedFd::from_raw_fd(fds[0]) } });
    }
    // SAFETY: in the child, its own descriptors, signal dispositions and process attributes.
    unsafe { become_child(parent, fds[1], state, report) };
    // Test only: a lock found held here would stop the walk, as it did before the fence.
    if crate::fork_locks::holding_for_test() && locks.and_then(|l| l.any_held()).is_some() {
        wait_forever_for_test();
    }
    Forked::Child
}

/// The child's first steps: nothing of the JVM's left open, quiet on fatal signals, dead
/// with its parent, `report` on `SIGUSR1`.
///
/// # Safety
/// In the forked child only.
unsafe fn become_child(parent: libc::pid_t, pipe: RawFd, state: *mut c_void, report: extern "C" fn(c_int)) {
    // SAFETY (whole function): plain system calls on the child's own process state.
    unsafe {
        // Every descriptor but the pipe: 0–2 onto /dev/null, the rest closed.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            if null >= 0 {
                libc::dup2(null, fd);
            }
        }
        let pipe = if pipe < 3 { libc::fcntl(pipe, libc::F_DUPFD_CLOEXEC, 3) } else { pipe };
        close_from(3, pipe);
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::getppid() != parent {
            libc::_exit(3);
        }
        // A crash, or a signal sent to the JVM's process group, ends the child quietly: the
        // JVM's handlers would write its crash report or run its shutdown.
        for sig in [
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGILL,
            libc::SIGABRT,
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
        ] {
            libc::signal(sig, libc::SIG_DFL);
        }
        // The walk's CPU time is the JVM's machine's: the child yields to it.
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
        CHILD_PIPE.store(pipe, Ordering::SeqCst);
        CHILD_STATE.store(state, Ordering::SeqCst);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = report as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGUSR1);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Closes every descriptor from `from` on but `keep`.
///
/// # Safety
/// In the forked child only: the descriptors are the JVM's copies.
unsafe fn close_from(from: RawFd, keep: RawFd) {
    let ranges = [(from, keep - 1), (keep + 1, RawFd::MAX)];
    for (lo, hi) in ranges.into_iter().filter(|(lo, hi)| lo <= hi) {
        // SAFETY: close_range takes plain integers; it fails only on kernels before 5.9.
        let ok = unsafe { libc::syscall(libc::SYS_close_range, lo as u32, hi as u32, 0) } == 0;
        if !ok {
            // SAFETY: as above, one descriptor at a time.
            let mut limit = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
            limit = limit.clamp(1024, 1 << 20);
            for fd in lo..=hi.min(limit as RawFd) {
                // SAFETY: closing a descriptor of the child's own table.
                unsafe { libc::close(fd) };
            }
        }
    }
}

/// In the child's report: the walk state given to [`fork_here`].
pub(crate) fn child_state() -> *mut c_void {
    CHILD_STATE.load(Ordering::SeqCst)
}

/// In the child's report: writes `bytes` to the parent and ends the child.
pub(crate) fn send(bytes: &[u8]) -> ! {
    let fd = CHILD_PIPE.load(Ordering::SeqCst);
    let mut at = 0;
    while at < bytes.len() {
        // SAFETY: a valid buffer range; `fd` is the child's pipe.
        let n = unsafe { libc::write(fd, bytes[at..].as_ptr().cast(), bytes.len() - at) };
        if n <= 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        at += n as usize;
    }
    // SAFETY: ends the child without running the JVM's exit handlers or flushing its buffers.
    unsafe { libc::_exit(0) }
}

/// What bounds a child's walk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Kill the child after this long.
    pub timeout: Duration,
    /// Kill the child once its private memory (the copy) passes this many bytes.
    pub max_copy: u64,
}

/// How a child's walk went, as the parent saw it.
#[derive(Debug)]
pub(crate) struct Done {
    /// The child's report.
    pub bytes: Vec<u8>,
    /// From the fork to the end of its walk.
    pub walked: Duration,
    /// The most private memory it had (its copy of the pages either side wrote).
    pub copy: u64,
}

/// Waits for `child` to finish its walk (its VM thread back at `support`'s idle address),
/// asks for its report and reaps it; kills it at `limits`. `Err` says what happened.
pub(crate) fn await_child(child: Child, support: Support, limits: Limits) -> Result<Done, String> {
    let started = Instant::now();
    let pid = child.pid;
    let me = std::process::id();
    let mut copy = 0u64;
    let mut idle_seen = 0;
    let mut polls = 0u64;
    let mut waits = IdleWaits::default();
    let mut stuck = Stuck::default();
    let outcome = loop {
        if let Some((nr, a)) = syscall_of(me, support.vm_tid) {
            if nr == libc::SYS_futex {
                waits.saw(a);
            }
        }
        if let Some(status) = reaped(pid, false) {
            break Err(format!("the child ended before its walk did ({status})"));
        }
        if started.elapsed() > limits.timeout {
            let waiting = match syscall_of(pid as u32, pid as u32) {
                Some((nr, a)) if nr == libc::SYS_futex => match waits.idle() {
                    Some(idle) => format!("waiting on {a:#x}, the JVM's when idle {idle:#x}"),
                    None => format!("waiting on {a:#x}, the JVM's VM thread with no idle wait that stands out"),
                },
                Some((nr, _)) => format!("in system call {nr}"),
                None => "running".to_string(),
            };
            kill(pid);
            break Err(format!(
                "the child's walk did not end within {} (its VM thread {waiting}: a lock held at the fork, or a heap too big for it); it was killed",
                report::human_ms(limits.timeout.as_millis() as u64)
            ));
        }
        polls += 1;
        if polls.is_multiple_of(25) {
            copy = copy.max(private_bytes(pid).unwrap_or(0));
            if copy > limits.max_copy {
                kill(pid);
                break Err(format!(
                    "the child's copy of the heap reached {}, over its bound of {}; it was killed",
                    report::human_bytes(copy),
                    report::human_bytes(limits.max_copy)
                ));
            }
        }
        // Twice in a row at the idle address: the VM thread's operation is over.
        let futex = match syscall_of(pid as u32, pid as u32) {
            Some((nr, a)) if nr == libc::SYS_futex => Some(a),
            _ => None,
        };
        let idle = futex.is_some_and(|a| waits.is_idle(a));
        idle_seen = if idle { idle_seen + 1 } else { 0 };
        if idle_seen >= 2 {
            break Ok(started.elapsed());
        }
        let ticks = cpu_ticks(pid).unwrap_or(0);
        // Not at the JVM's most frequent wait, even one that does not stand out yet: a child
        // whose walk is over waits there.
        if let Some(word) = stuck.saw(futex.filter(|&a| Some(a) != waits.most()), ticks, Instant::now()) {
            kill(pid);
            break Err(format!(
                "the child's walk stopped: its VM thread waited {} on {word:#x} ({}) with no CPU time spent, a lock another thread held at the fork; it was killed",
                report::human_ms(STUCK.as_millis() as u64),
                waits.idle().map_or_else(|| "the JVM's VM thread has no idle wait that stands out".to_string(), |i| format!("the JVM's when idle is {i:#x}")),
            ));
        }
        std::thread::sleep(POLL);
    };
    let walked = match outcome {
        Ok(walked) => walked,
        Err(e) => {
            reaped(pid, true);
            return Err(e);
        }
    };
    copy = copy.max(private_bytes(pid).unwrap_or(0));
    // SAFETY: a signal to our own child, whose handler sends the report and exits.
    unsafe { libc::kill(pid, libc::SIGUSR1) };
    let bytes = read_until(&child.pipe, Instant::now() + limits.timeout.min(Duration::from_secs(30)));
    let status = reaped_within(pid, Duration::from_secs(5));
    match bytes {
        Some(bytes) if !bytes.is_empty() => Ok(Done { bytes, walked, copy }),
        _ => Err(format!("the child sent no report ({status})")),
    }
}

/// Reads `pipe` to its end, or until `deadline`.
fn read_until(pipe: &OwnedFd, deadline: Instant) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    // SAFETY: `pipe` stays open while this borrowed file is used; ManuallyDrop keeps it open.
    let mut file = std::mem::ManuallyDrop::new(unsafe { fs::File::from_raw_fd(pipe.as_raw_fd()) });
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        let mut poll = libc::pollfd { fd: pipe.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, left.as_millis().min(1000) as c_int) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
        if ready == 0 {
            continue;
        }
        match file.read(&mut buf) {
            Ok(0) => return Some(out),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// The child's private memory: `Private_Dirty` of `/proc/PID/smaps_rollup`.
fn private_bytes(pid: libc::pid_t) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let kb = text.lines().find_map(|l| l.strip_prefix("Private_Dirty:"))?.trim().strip_suffix("kB")?;
    Some(kb.trim().parse::<u64>().ok()? * 1024)
}

fn kill(pid: libc::pid_t) {
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// Reaps `pid` if it has ended (`wait`: waits for it); how it ended.
fn reaped(pid: libc::pid_t, wait: bool) -> Option<String> {
    let mut status = 0;
    // SAFETY: waits for our own child only; the JVM's own children are left to it.
    let r = unsafe { libc::waitpid(pid, &mut status, if wait { libc::__WALL } else { libc::WNOHANG | libc::__WALL }) };
    (r == pid).then(|| {
        if libc::WIFEXITED(status) {
            format!("exit {}", libc::WEXITSTATUS(status))
        } else if libc::WIFSIGNALED(status) {
            format!("signal {}", libc::WTERMSIG(status))
        } else {
            format!("status {status}")
        }
    })
}

/// Reaps `pid`, killing it if it has not ended within `within`.
fn reaped_within(pid: libc::pid_t, within: Duration) -> String {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if let Some(s) = reaped(pid, false) {
            return s;
        }
        std::thread::sleep(POLL);
    }
    kill(pid);
    reaped(pid, true).unwrap_or_else(|| "not reaped".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_stuck_only_after_waiting_on_one_word_with_no_cpu_time_for_the_whole_bound() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut stuck = Stuck::default();
        assert_eq!(stuck.saw(Some(0xa0), 500, at(0)), None);
        assert_eq!(stuck.saw(Some(0xa0), 500, at(9)), None);
        assert_eq!(stuck.saw(Some(0xa0), 500, at(10)), Some(0xa0));
        // CPU time spent (a timed wait that woke, a walk that went on) starts the count again.
        let mut woke = Stuck::default();
        woke.saw(Some(0xa0), 500, at(0));
        assert_eq!(woke.saw(Some(0xa0), 501, at(6)), None);
        assert_eq!(woke.saw(Some(0xa0), 501, at(12)), None);
        assert_eq!(woke.saw(Some(0xa0), 501, at(16)), Some(0xa0));
        // Another word, or no wait at all between two looks, likewise.
        let mut moved = Stuck::default();
        moved.saw(Some(0xa0), 500, at(0));
        assert_eq!(moved.saw(Some(0xb0), 500, at(10)), None);
        moved.saw(None, 500, at(11));
        assert_eq!(moved.saw(Some(0xb0), 500, at(20)), None);
    }

    #[test]
    fn a_thread_waiting_on_a_futex_is_seen_at_its_address() {
        // A thread of ours parked on a futex word: /proc shows the futex call and the word's
        // address, as for the VM thread.
        let word = Box::leak(Box::new(0u32));
        let addr = word as *mut u32 as u64;
        let (tx, rx) = std::sync::mpsc::channel();
        let w = word as *mut u32 as usize;
        std::thread::spawn(move || {
            // SAFETY: gettid has no arguments.
            tx.send(unsafe { libc::syscall(libc::SYS_gettid) } as u32).unwrap();
            // SAFETY: a futex wait on a word that stays 0 and lives forever (leaked).
            unsafe { libc::syscall(libc::SYS_futex, w as *mut u32, libc::FUTEX_WAIT, 0, std::ptr::null::<c_void>()) };
        });
        let tid = rx.recv().unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if syscall_of(std::process::id(), tid) == Some((libc::SYS_futex, addr)) {
                break;
            }
            assert!(Instant::now() < until, "{:?}", syscall_of(std::process::id(), tid));
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn the_idle_address_is_the_one_that_stands_out() {
        let mut waits = IdleWaits::default();
        let saw = |waits: &mut IdleWaits, addr: u64, n: u32| (0..n).for_each(|_| waits.saw(addr));
        saw(&mut waits, 7, 9);
        assert!(!waits.is_idle(7), "too few samples yet");
        saw(&mut waits, 7, 1);
        saw(&mut waits, 9, 6);
        assert!(waits.is_idle(7) && !waits.is_idle(9));
        // Waits spread over several addresses, none half of them: no idle address.
        saw(&mut waits, 9, 4);
        saw(&mut waits, 5, 10);
        assert_eq!(waits.idle(), None);
        assert!(!waits.is_idle(7));
    }

    #[test]
    fn the_least_limit_of_a_cgroup_and_its_ancestors_is_what_is_left() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        fs::create_dir_all(&dir).unwrap();
        let write = |d: &std::path::Path, max: &str, cur: &str| {
            fs::write(d.join("memory.limit_in_bytes"), max).unwrap();
            fs::write(d.join("memory.usage_in_bytes"), cur).unwrap();
        };
        let files = ("memory.limit_in_bytes", "memory.usage_in_bytes");
        // The leaf unlimited (v1's "no limit"), its parent limited: the parent's limit holds.
        write(&dir, "9223372036854771712\n", "100\n");
        write(&root.path().join("a"), "1000\n", "400\n");
        assert_eq!(cgroup_headroom(root.path(), "/a/b", files), Some(600));
        // A tighter leaf wins; usage past the limit leaves nothing.
        write(&dir, "650\n", "100\n");
        assert_eq!(cgroup_headroom(root.path(), "/a/b", files), Some(550));
        write(&dir, "50\n", "100\n");
        assert_eq!(cgroup_headroom(root.path(), "/a/b", files), Some(0));
        // No limit anywhere.
        write(&dir, "9223372036854771712\n", "100\n");
        write(&root.path().join("a"), "max\n", "400\n");
        assert_eq!(cgroup_headroom(root.path(), "/a/b", files), None);
    }

    #[test]
    fn no_shared_heap_mapping_in_a_plain_process_and_memory_is_left() {
        assert_eq!(refusal(), None);
        assert!(headroom().is_some_and(|h| h > 0));
    }
}
