//! HotSpot's locks that a forked child's walk takes and that another thread of the JVM may
//! hold at the fork (see [`crate::fork`]): taken by the VM thread just before it forks and
//! released on both sides just after, as glibc does for `malloc`'s arenas, so that the child
//! starts with them free.
//!
//! The lock that stopped children (two hung children of a Jetty 9 shop on JDK 25, out of 160
//! forks, both at `VM_HeapWalkOperation::collect_stack_refs` → `Chunk::next_chop` →
//! `pthread_mutex_lock`) guards HotSpot's pool of arena chunks: every `ResourceMark` that
//! outgrew its first chunk gives chunks back to it, and the compiler threads (native code,
//! running through a safepoint) and the watcher thread take it all the time. It is a plain
//! `pthread_mutex_t`: `tc_mutex`, `ThreadCritical`'s, up to JDK 23 (which also guards the
//! chunk pool), and the one `GlobalChunkPoolMutex` points to from JDK 24 on. Neither is an
//! exported symbol: both are read from libjvm.so's symbol table (`.symtab`, which Debian's and
//! Temurin's builds keep).
//!
//! What makes taking them sound: the VM thread is at a safepoint, where no Java thread is in
//! the VM holding one of them (their sections never check for a safepoint); a thread that
//! holds one now runs native code (a compiler thread, the watcher thread) and lets go within
//! microseconds. Each is tried, never waited on blindly: a lock still held after
//! [`TAKE_WITHIN`] puts the fork off, and nothing is taken. Both are default-type mutexes
//! (`PTHREAD_MUTEX_INITIALIZER`, HotSpot's `PlatformMutex`), whose unlock checks no owner, so
//! the child's thread, which glibc gives a new id, may release what its parent's took.

use std::ffi::{c_int, c_void, CStr};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the VM thread tries for a lock before it puts the fork off.
const TAKE_WITHIN: Duration = Duration::from_millis(100);

/// HotSpot's symbols for the locks (file-scope statics, mangled as such), their names in
/// its sources, and whether the symbol is the mutex or a pointer to it.
const SYMBOLS: [(&str, &str, Kind); 2] = [
    ("_ZL8tc_mutex", "ThreadCritical's tc_mutex", Kind::Mutex),
    ("_ZL20GlobalChunkPoolMutex", "GlobalChunkPoolMutex", Kind::Pointer),
];

/// What a symbol's address holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The `pthread_mutex_t` itself.
    Mutex,
    /// A pointer to it, set while the JVM starts.
    Pointer,
}

/// The locks found in this JVM's libjvm.so: (name, its address in this process, kind).
#[derive(Debug)]
pub(crate) struct Locks(Vec<(&'static str, usize, Kind)>);

/// The locks of this JVM, found once; `Err` says why none was (then a fork is not fenced, and
/// a child that finds one held is killed as stuck).
pub(crate) fn of_this_jvm() -> &'static Result<Locks, String> {
    static LOCKS: OnceLock<Result<Locks, String>> = OnceLock::new();
    LOCKS.get_or_init(find)
}

fn find() -> Result<Locks, String> {
    let (path, bias) = libjvm().ok_or("libjvm.so is not loaded in this process")?;
    let data = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{path}: {e}"))?;
    use object::{Object, ObjectSymbol};
    let found: Vec<(&'static str, usize, Kind)> = file
        .symbols()
        .filter_map(|s| {
            let name = s.name().ok()?;
            let &(_, known_as, kind) = SYMBOLS.iter().find(|(n, _, _)| *n == name)?;
            Some((known_as, bias + s.address() as usize, kind))
        })
        .collect();
    if found.is_empty() {
        return Err(format!(
            "neither {} is in the symbol table of {path}",
            SYMBOLS.iter().map(|s| s.1).collect::<Vec<_>>().join(" nor ")
        ));
    }
    Ok(Locks(found))
}

/// The path of libjvm.so and its load bias, from the dynamic linker's list of objects.
fn libjvm() -> Option<(String, usize)> {
    extern "C" fn each(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut c_void) -> c_int {
        // SAFETY: the dynamic linker passes a valid entry; `data` is the Option below.
        let (info, out) = unsafe { (&*info, &mut *(data as *mut Option<(String, usize)>)) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: a NUL-terminated name owned by the dynamic linker.
        let name = unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy();
        if name.ends_with("/libjvm.so") {
            *out = Some((name.into_owned(), info.dlpi_addr as usize));
            return 1;
        }
        0
    }
    let mut out: Option<(String, usize)> = None;
    // SAFETY: the callback only reads each entry and writes `out`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut out as *mut _ as *mut c_void) };
    out
}

impl Locks {
    /// The mutexes now (a pointer symbol read at each call: it is set while the JVM starts).
    fn mutexes(&self) -> Vec<(&'static str, *mut libc::pthread_mutex_t)> {
        self.0
            .iter()
            .filter_map(|&(name, addr, kind)| {
                let m = match kind {
                    Kind::Mutex => addr as *mut libc::pthread_mutex_t,
                    // SAFETY: the address of a static pointer in libjvm.so's data, which stays mapped.
                    Kind::Pointer => unsafe { *(addr as *const *mut libc::pthread_mutex_t) },
                };
                (!m.is_null()).then_some((name, m))
            })
            .collect()
    }

    /// Takes every lock, trying each for [`TAKE_WITHIN`]; `Err` names one that stayed held
    /// (then none is held).
    pub(crate) fn take(&self) -> Result<Held, String> {
        let mut held = Held(Vec::new());
        for (name, m) in self.mutexes() {
            let until = Instant::now() + TAKE_WITHIN;
            // SAFETY: a live mutex of HotSpot's (see the module's comment).
            while unsafe { libc::pthread_mutex_trylock(m) } != 0 {
                if Instant::now() >= until {
                    return Err(format!(
                        "HotSpot's {name} stayed held by another thread for {} ms",
                        TAKE_WITHIN.as_millis()
                    ));
                }
                std::thread::sleep(Duration::from_micros(50));
            }
            held.0.push(m);
        }
        Ok(held)
    }

    /// Whether any lock is held now (test only: the child looks at once after the fork).
    pub(crate) fn any_held(&self) -> Option<&'static str> {
        self.mutexes().into_iter().find_map(|(name, m)| {
            // SAFETY: a live mutex of HotSpot's; released at once when taken.
            if unsafe { libc::pthread_mutex_trylock(m) } != 0 {
                return Some(name);
            }
            // SAFETY: taken just above.
            unsafe { libc::pthread_mutex_unlock(m) };
            None
        })
    }

    /// Test only (`test_hold_fork_lock`): a thread of the JVM's, outside Java as a compiler
    /// thread is, that takes the locks when a fork is about to be made and holds them 50 ms
    /// (see [`held_by_another_for_test`]); each child then looks at once whether it finds one
    /// held (see [`holding_for_test`]).
    pub(crate) fn hold_for_test(&'static self) {
        use std::sync::atomic::Ordering::SeqCst;
        HOLDING_FOR_TEST.store(true, SeqCst);
        std::thread::spawn(move || loop {
            if TEST_HOLDER.load(SeqCst) != ASKED {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            let held: Vec<_> = self.mutexes();
            // SAFETY: live mutexes of HotSpot's, released below by this same thread.
            held.iter().for_each(|&(_, m)| unsafe {
                libc::pthread_mutex_lock(m);
            });
            TEST_HOLDER.store(HOLDING, SeqCst);
            std::thread::sleep(Duration::from_millis(50));
            // SAFETY: taken above by this thread.
            held.iter().for_each(|&(_, m)| unsafe {
                libc::pthread_mutex_unlock(m);
            });
            TEST_HOLDER.store(IDLE, SeqCst);
        });
    }
}

static HOLDING_FOR_TEST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The test holder's state: idle, asked to take the locks, holding them.
static TEST_HOLDER: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(IDLE);
const IDLE: u8 = 0;
const ASKED: u8 = 1;
const HOLDING: u8 = 2;

/// Whether a test thread takes the locks at each fork (see [`Locks::hold_for_test`]).
pub(crate) fn holding_for_test() -> bool {
    HOLDING_FOR_TEST.load(std::sync::atomic::Ordering::SeqCst)
}

/// Test only: has the test thread take the locks now, as another thread of the JVM may hold
/// them at the fork, and waits until it has (1 s at most). A safepoint alone does not make
/// that happen: a thread holding `tc_mutex` keeps the Java threads waiting for it from
/// reaching the safepoint, so forks came just after its release.
pub(crate) fn held_by_another_for_test() {
    use std::sync::atomic::Ordering::SeqCst;
    if !holding_for_test() || TEST_HOLDER.compare_exchange(IDLE, ASKED, SeqCst, SeqCst).is_err() {
        return;
    }
    let until = Instant::now() + Duration::from_secs(1);
    while TEST_HOLDER.load(SeqCst) != HOLDING && Instant::now() < until {
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// Locks taken for a fork: released when dropped, in the parent and in the child.
#[derive(Debug)]
pub(crate) struct Held(Vec<*mut libc::pthread_mutex_t>);

impl Drop for Held {
    fn drop(&mut self) {
        for &m in self.0.iter().rev() {
            // SAFETY: taken by `Locks::take` before the fork; a default-type mutex, whose
            // unlock checks no owner (the child's thread has another id).
            unsafe { libc::pthread_mutex_unlock(m) };
        }
    }
}
