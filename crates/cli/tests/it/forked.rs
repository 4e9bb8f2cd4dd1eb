//! Heap walks on a forked copy of the JVM (the default for a whole walk that would not fit
//! `--max-pause`, issue 45): the JVM stops for the fork only, and the child walks the heap as it was at the fork while the JVM runs on.
//!
//! `tests/java/Forked.java` holds a reachable heap known exactly (N nodes in a list, half of
//! them in a map, each with its own array) and churns garbage all along. Oracles: the program's
//! own structure (counts, references, and the fields that hold them), the JVM's class histogram (`jcmd
//! GC.class_histogram`, bytes per class), the JVM's safepoint log (`-Xlog:safepoint`: one heap
//! walk operation per walk the agent recorded, and no pause longer than the agent says), and
//! `/proc` for what the children hold.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{leakscope, Jdk};

/// Nodes the program keeps.
const N: u64 = 20_000;
/// Seconds it runs after READY.
const SECONDS: &str = "12";
/// Agent options: every whole walk too long for a 1 ms pause, so each one forks.
const FORKED: [&str; 8] = ["--max-pause", "1ms", "--budget", "50", "--walk-every", "1s", "--period", "300ms"];

/// `(instances, bytes)` of `class` in a `jcmd GC.class_histogram` listing.
fn jcmd_row(histogram: &str, class: &str) -> Option<(u64, u64)> {
    histogram.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 4 && f[3] == class).then(|| Some((f[1].parse().ok()?, f[2].parse().ok()?))).flatten()
    })
}

/// The JVM's safepoint log: the time at each heap walk operation's safepoint, in ms.
fn heap_walk_safepoints(log: &str) -> Vec<f64> {
    log.lines()
        .filter(|l| l.contains("\"HeapWalkOperation\""))
        .map(|l| {
            let at = l.split("At safepoint: ").nth(1).and_then(|r| r.split(" ns").next());
            at.and_then(|n| n.trim().parse::<f64>().ok()).map_or(0.0, |ns| ns / 1e6)
        })
        .collect()
}

/// Attaches the agent with forked walks to `Forked` on `jdk` with collector `gc`, and holds
/// every walk to the program, jcmd and the safepoint log.
fn counts_as_the_jvm_does(jdk: &Jdk, gc: &str) {
    let dir = jdk.compiled_with_agent("Forked");
    let db = dir.path().join("forked.db");
    let safepoints = dir.path().join("safepoint.log");
    let log_flag = format!("-Xlog:safepoint:file={}", safepoints.display());
    let mut jvm = jdk.start_with_args(dir.path(), "Forked", &["-Xmx128m", gc, &log_flag], &[&N.to_string(), SECONDS]);
    let pid = jvm.pid().to_string();
    let mut args = vec!["attach", &pid, "--out", db.to_str().unwrap()];
    args.extend(FORKED);
    let out = leakscope(&args);
    assert!(out.status.success(), "attach: {}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_secs(6));
    let histogram = jvm.jcmd(&["GC.class_histogram"]);
    let status = jvm.wait(Duration::from_secs(120)).expect("Forked did not end");
    assert!(status.success());
    let (instances, bytes) = jcmd_row(&histogram, "Forked$Node").expect("Forked$Node in jcmd's histogram");
    assert_eq!(instances, N, "{histogram}");

    let run = runstore::read(&db, 0).unwrap();
    let forked = run.events.iter().filter(|e| e.starts_with("heap walk forked")).count();
    let failed: Vec<&String> = run.events.iter().filter(|e| e.starts_with("forked heap walk failed")).collect();
    assert!(forked >= 2 && failed.is_empty(), "{gc}: {:#?}", run.events);
    assert_eq!(run.walks.len(), forked, "{gc}: one walk snapshot per forked walk: {:#?}", run.events);
    for w in &run.walks {
        let node = w.classes.iter().find(|c| c.name == "Forked$Node").expect("Forked$Node walked");
        assert_eq!((node.instances, node.bytes), (N, bytes), "{gc}: {} walked", w.source);
        let refs = |from: &str, to: &str| {
            w.edges.iter().filter(|e| e.from == from && e.to == to).map(|e| e.references).sum::<u64>()
        };
        assert_eq!(refs("java.lang.Object[]", "Forked$Node"), N, "{gc}: the list's array");
        assert_eq!(refs("java.util.HashMap$Node", "Forked$Node"), N / 2, "{gc}: the map's values");
        assert_eq!(refs("Forked$Node", "byte[]"), N, "{gc}: each node's array");
    }
    // What holds the two structures, named from the copy's links and JVMTI's field indexes,
    // as the program's source does: a static field, and a field declared after inherited and
    // interface fields.
    let chain = |container: &str| {
        run.holders
            .iter()
            .find(|h| h.container == container)
            .unwrap_or_else(|| panic!("{gc}: no chain of a {container} in the last forked walk: {:#?}", run.holders))
    };
    let list = chain("java.util.ArrayList");
    assert_eq!(
        (list.array_field.as_str(), &list.path, &list.fields),
        ("elementData", &vec!["class Forked".to_string()], &vec!["NODES".to_string()]),
        "{gc}: {list:#?}"
    );
    let map = chain("java.util.HashMap");
    assert_eq!(
        (map.array_field.as_str(), &map.path, &map.fields),
        (
            "table",
            &vec!["Forked$Holder".to_string(), "class Forked".to_string()],
            &vec!["byId".to_string(), "HOLDER".to_string()]
        ),
        "{gc}: {map:#?}"
    );
    // Each copy links its containers anew; a container is the same from walk to walk by its
    // chain, so its array's sizes are read at each walk that named it (the first names none).
    for h in [list, map] {
        assert!(h.id > 0 && h.sizes.iter().all(|s| s.1 == h.bytes), "{gc}: {h:#?}");
        assert!(h.sizes.len() + 1 >= forked.min(3), "{gc}: one reading per forked walk after the first: {h:#?}");
    }
    // The JVM's own log: one heap walk operation per fork (a walk filtered by class, at 1 ms,
    // never fits), and none longer than the longest pause the agent recorded.
    // A fork the JVM's end overtook is said as such.
    let unfinished = run.events.iter().filter(|e| e.starts_with("forked heap walk not finished")).count();
    let log = std::fs::read_to_string(&safepoints).unwrap();
    let walks = heap_walk_safepoints(&log);
    assert_eq!(
        walks.len(),
        forked + unfinished,
        "{gc}: heap walk safepoints in the JVM's log: {walks:?}; {:#?}",
        run.events
    );
    let longest: f64 = run.meta.get("longest_pause_ms").map_or(0.0, |l| l.parse().unwrap());
    let at_safepoint = walks.iter().copied().fold(0.0, f64::max);
    assert!(longest >= at_safepoint, "{gc}: the agent's longest pause {longest} ms, the JVM's {at_safepoint} ms");
    eprintln!("{gc} on JDK {}: {forked} forked walks, longest pause {longest:.1} ms (the JVM's log: {at_safepoint:.1} ms at the safepoint)", jdk.feature());
}

#[test]
fn forked_walks_count_the_heap_as_the_jvm_does_on_jdk17() {
    let jdk = Jdk::default_jdk();
    counts_as_the_jvm_does(&jdk, "-XX:+UseG1GC");
    counts_as_the_jvm_does(&jdk, "-XX:+UseParallelGC");
}

#[test]
fn forked_walks_count_the_heap_as_the_jvm_does_on_jdk25() {
    let Some(jdk) = Jdk::require25() else { return };
    counts_as_the_jvm_does(&jdk, "-XX:+UseG1GC");
    counts_as_the_jvm_does(&jdk, "-XX:+UseParallelGC");
}

/// ZGC maps the heap shared, so a fork would be no snapshot: the agent says so once and
/// plans its walks as without forks.
#[test]
fn no_fork_on_zgc_and_the_run_says_why() {
    let jdk = Jdk::default_jdk();
    let dir = jdk.compiled_with_agent("Forked");
    let db = dir.path().join("zgc.db");
    let java = jdk.bin.join("java");
    let cp = dir.path().to_str().unwrap();
    let mut args = vec!["run", "--out", db.to_str().unwrap()];
    args.extend(FORKED);
    args.extend(["--", java.to_str().unwrap(), "-Xmx128m", "-XX:+UseZGC", "-cp", cp, "Forked", "20000", "4"]);
    let out = leakscope(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = runstore::read(&db, 0).unwrap();
    let refused: Vec<&String> = run.events.iter().filter(|e| e.starts_with("no forked walks in this JVM")).collect();
    assert_eq!(refused.len(), 1, "{:#?}", run.events);
    assert!(refused[0].contains("mapped shared") && refused[0].contains("ZGC"), "{}", refused[0]);
    assert!(!run.events.iter().any(|e| e.starts_with("heap walk forked")), "{:#?}", run.events);
}

/// `--no-fork-walks` makes no fork, whatever the walks' pause: a whole walk too long for
/// `--max-pause` is skipped or tried and stopped at it, as the planner's events say.
#[test]
fn no_fork_with_no_fork_walks() {
    let events = forked_run(&Jdk::default_jdk(), None, &["-Xmx128m"], ("20000", "4"), &["--no-fork-walks"]);
    assert!(!events.iter().any(|e| e.contains("fork")), "{events:#?}");
    let planned = |e: &&String| e.starts_with("heap walk skipped") || e.starts_with("heap walk tried");
    assert!(events.iter().any(|e| planned(&e)), "{events:#?}");
    // Fork options ask for forks: with --no-fork-walks they are an error, said in one line.
    let out = leakscope(&["run", "--no-fork-walks", "--fork-timeout", "5s", "--", "java", "-version"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--fork-timeout"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The processes whose parent is `pid`, with their state letter.
fn children_of(pid: u32) -> Vec<(u32, char)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        // pid (comm) state ppid ...: the command may hold spaces, so read after its ')'.
        let Some(rest) = stat.rsplit_once(')').map(|r| r.1) else { continue };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            out.push((child, f[0].chars().next().unwrap_or('?')));
        }
    }
    out
}

/// A child that stops in its walk (as on a lock another thread held at the fork) is killed at
/// `--fork-timeout`, reaped, and the JVM runs on to its end; while it lives, it holds none of
/// the JVM's descriptors (only /dev/null and its pipe) and one thread.
#[test]
fn a_forked_walk_that_hangs_is_killed_and_the_jvm_runs_on() {
    let jdk = Jdk::default_jdk();
    let dir = jdk.compiled_with_agent("Forked");
    let db = dir.path().join("hang.db");
    let java = jdk.bin.join("java");
    let cp = dir.path().to_str().unwrap();
    let mut args = vec!["run", "--out", db.to_str().unwrap(), "--fork-timeout", "1s", "--test-fork-hang"];
    args.extend(FORKED);
    args.extend(["--", java.to_str().unwrap(), "-Xmx128m", "-cp", cp, "Forked", "20000", "8", cp]);
    let mut run = Command::new(env!("CARGO_BIN_EXE_leakscope"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let jvm = loop {
        if let Some((pid, _)) = children_of(run.id()).into_iter().next() {
            break pid;
        }
        assert!(Instant::now() < until, "no JVM started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut seen = 0;
    let mut zombie_since: Option<(u32, Instant)> = None;
    while run.try_wait().unwrap().is_none() {
        for (child, state) in children_of(jvm) {
            if state == 'Z' {
                match zombie_since {
                    Some((z, since)) if z == child => {
                        assert!(since.elapsed() < Duration::from_secs(3), "child {child} left a zombie")
                    }
                    _ => zombie_since = Some((child, Instant::now())),
                }
                continue;
            }
            let Ok(fds) = std::fs::read_dir(format!("/proc/{child}/fd")) else { continue };
            let targets: Vec<String> = fds
                .flatten()
                .filter_map(|f| std::fs::read_link(f.path()).ok())
                .map(|t| t.display().to_string())
                .collect();
            let Ok(status) = std::fs::read_to_string(format!("/proc/{child}/status")) else { continue };
            // A child seen before it closed the JVM's descriptors (its first microseconds)
            // still has the JVM's name for its only thread's; judge it once it is walking. One
            // being killed has closed all of them before it is a zombie (CI saw none held).
            if targets.is_empty() || targets.len() > 4 {
                continue;
            }
            seen += 1;
            assert!(status.contains("\nThreads:\t1\n"), "child {child}: {status}");
            let pipes = targets.iter().filter(|t| t.starts_with("pipe:")).count();
            let null = targets.iter().filter(|t| *t == "/dev/null").count();
            assert_eq!((null, pipes, targets.len()), (3, 1, 4), "child {child} holds {targets:?}");
        }
        assert!(Instant::now() < until, "the run did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut stdout = String::new();
    std::io::Read::read_to_string(run.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert!(run.wait().unwrap().success() && stdout.contains("done 20000"), "{stdout}");
    assert!(seen >= 1, "no forked child seen walking");
    let store = runstore::read(&db, 0).unwrap();
    let killed = store.events.iter().filter(|e| e.contains("did not end within 1.0 s") && e.contains("killed")).count();
    assert!(killed >= 1, "{:#?}", store.events);
    assert!(store.walks.is_empty(), "a killed child's walk is no snapshot");
    // Nothing of the run is left: the children carried the marker (the class path) in their
    // command line, as copies of the JVM.
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(cp) && c.contains("Forked"))
        .collect();
    assert!(left.is_empty(), "processes left: {left:?}");
}

/// A child stuck on a lock (its only thread waiting on a futex word, spending no CPU time) is
/// killed 10 s on, not at `--fork-timeout` (2 min): the event says where it waited; the JVM
/// runs on to its end.
#[test]
fn a_forked_walk_stuck_on_a_lock_is_killed_long_before_its_timeout() {
    let events = forked_run(&Jdk::default_jdk(), None, &["-Xmx128m"], ("20000", "20"), &["--test-fork-hang"]);
    let stuck: Vec<&String> = events.iter().filter(|e| e.contains("with no CPU time spent")).collect();
    assert!(!stuck.is_empty(), "{events:#?}");
    assert!(
        stuck[0].contains("waited 10.0 s on 0x") && stuck[0].contains("held at the fork; it was killed"),
        "{}",
        stuck[0]
    );
    assert!(!events.iter().any(|e| e.contains("did not end within")), "{events:#?}");
}

/// A thread of the JVM's takes HotSpot's chunk pool lock as each fork is made and holds it 50 ms
/// (the lock three hung children of a Jetty shop waited on forever: a compiler thread held it
/// at the fork), and each child stops if it finds it held: the VM thread takes it before it
/// forks, so every child finds it free and walks, where without that every one would stop.
fn forks_take_the_chunk_pool_lock_first(jdk: &Jdk) {
    let events = forked_run(jdk, None, &["-Xmx128m"], ("20000", "10"), &["--test-hold-fork-lock"]);
    let forked = events.iter().filter(|e| e.starts_with("heap walk forked")).count();
    assert!(forked >= 2, "JDK {}: {forked} forked walks: {events:#?}", jdk.feature());
    let failed: Vec<&String> =
        events.iter().filter(|e| e.contains("unfenced") || e.contains("killed") || e.contains("no report")).collect();
    assert!(failed.is_empty(), "JDK {}: {failed:#?}", jdk.feature());
}

#[test]
fn forks_take_the_chunk_pool_lock_first_on_jdk17() {
    forks_take_the_chunk_pool_lock_first(&Jdk::default_jdk());
}

#[test]
fn forks_take_the_chunk_pool_lock_first_on_jdk25() {
    let Some(jdk) = Jdk::require25() else { return };
    forks_take_the_chunk_pool_lock_first(&jdk);
}

/// Runs `Live SCENARIO` with every whole walk forked, and holds what `growth RUN.db` says of
/// its leak to the program's source: the growing structure is the collection in the static
/// field `field` (`class Live$SessionStore.sessions`), of class `container`, as the copies'
/// links and JVMTI's field indexes named it. Where the children walked too few times to read
/// the structure grow (a loaded machine: they run at nice 10), no structure may be named but
/// that one, and the events say how many walks there were.
fn names_the_holder_from_forked_walks(jdk: &Jdk, scenario: &str, gc: &str, container: &str, field: &str) {
    let dir = jdk.compiled_with_agent("Live");
    let db = dir.path().join(format!("{scenario}.db"));
    let java = jdk.bin.join("java");
    let cp = dir.path().to_str().unwrap();
    let mut args = vec!["run", "--out", db.to_str().unwrap(), "--interval", "64K"];
    args.extend(FORKED);
    args.extend(["--", java.to_str().unwrap(), "-Xmx160m", gc, "-cp", cp, "Live", scenario, "24"]);
    let out = leakscope(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = runstore::read(&db, 0).unwrap();
    let forked = run.events.iter().filter(|e| e.starts_with("heap walk forked")).count();
    let out = leakscope(&["growth", db.to_str().unwrap(), "--json", "--min-span", "5s"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let structures: Vec<&serde_json::Value> = report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["slice"]["structure"])
        .filter(|s| !s.is_null())
        .collect();
    let planted =
        |s: &&serde_json::Value| s["class"] == container && s["path"][0].as_str() == Some(&format!("class {field}"));
    let context = || {
        format!("{gc} {scenario} on JDK {}: {forked} forked walks; {structures:#?}; {:#?}", jdk.feature(), run.events)
    };
    assert!(structures.iter().all(planted), "a structure other than {field}: {}", context());
    // The first forked walk links the containers; from the second on their chains are named
    // and their arrays read: three growths take five walks.
    if forked >= 6 {
        assert!(!structures.is_empty(), "no growing structure named: {}", context());
        let first = &report["candidates"][0]["slice"]["structure"];
        assert!(planted(&first), "the first candidate's structure: {}", context());
    }
    let named: Vec<&str> = structures.iter().filter_map(|s| s["name"].as_str()).collect();
    eprintln!("{gc} {scenario} on JDK {}: {forked} forked walks; structures {named:?}", jdk.feature());
}

/// A map in a static field, on G1 (JDK 17); a listener list in a static field, on Parallel
/// (JDK 25): two shapes, each on its own JDK and collector.
#[test]
fn forked_walks_name_the_holder_of_a_leak_on_jdk17() {
    let jdk = Jdk::default_jdk();
    names_the_holder_from_forked_walks(&jdk, "map", "-XX:+UseG1GC", "java.util.HashMap", "Live$SessionStore.sessions");
}

#[test]
fn forked_walks_name_the_holder_of_a_leak_on_jdk25() {
    let Some(jdk) = Jdk::require25() else { return };
    names_the_holder_from_forked_walks(
        &jdk,
        "listeners",
        "-XX:+UseParallelGC",
        "java.util.ArrayList",
        "Live$EventBus.listeners",
    );
}

/// A memory cgroup of the test's own, with a limit: v1's memory hierarchy
/// (`/sys/fs/cgroup/memory`) or v2's (`/sys/fs/cgroup` with the memory controller); removed
/// on drop, once its processes are gone.
struct MemoryCgroup {
    dir: std::path::PathBuf,
}

impl MemoryCgroup {
    /// A new cgroup limited to `limit` bytes, or `None` (said; a failure under `CI=true`)
    /// where this machine lets no test make one.
    fn new(limit: u64) -> Option<MemoryCgroup> {
        let name = format!("leakscope-test-{}-{}", std::process::id(), limit);
        let (root, file) = if std::path::Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() {
            ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
        } else {
            ("/sys/fs/cgroup", "memory.max")
        };
        let dir = std::path::Path::new(root).join(name);
        let made = std::fs::create_dir(&dir).is_ok() && std::fs::write(dir.join(file), limit.to_string()).is_ok();
        if !made {
            let _ = std::fs::remove_dir(&dir);
            crate::support::missing(
                "a memory cgroup the test can make (root, and cgroup v1's memory hierarchy or v2's memory controller)",
            );
            return None;
        }
        Some(MemoryCgroup { dir })
    }

    /// The file a process joins it by.
    fn procs(&self) -> String {
        self.dir.join("cgroup.procs").display().to_string()
    }

    /// How many times the kernel's OOM killer acted in it (v1's `memory.oom_control`, v2's
    /// `memory.events`).
    fn oom_kills(&self) -> u64 {
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        let text = read("memory.oom_control") + &read("memory.events");
        text.lines().filter_map(|l| l.strip_prefix("oom_kill ")).filter_map(|n| n.trim().parse::<u64>().ok()).sum()
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Runs `Forked N SECONDS` on `jdk` under `leakscope run` with forked walks (and `extra`
/// options), the JVM in `cgroup` when given; the run's events, once the program has printed
/// its `done N` line.
fn forked_run(
    jdk: &Jdk,
    cgroup: Option<&MemoryCgroup>,
    jvm: &[&str],
    (n, seconds): (&str, &str),
    extra: &[&str],
) -> Vec<String> {
    let dir = jdk.compiled_with_agent("Forked");
    let db = dir.path().join("forked-run.db");
    let java = jdk.bin.join("java");
    let cp = dir.path().to_str().unwrap();
    let mut command = format!("exec {} {} -cp {cp} Forked {n} {seconds}", java.display(), jvm.join(" "));
    if let Some(c) = cgroup {
        command = format!("echo $$ > {} && {command}", c.procs());
    }
    let mut args = vec!["run", "--out", db.to_str().unwrap()];
    args.extend(FORKED);
    args.extend(extra);
    args.extend(["--", "sh", "-c", &command]);
    let out = leakscope(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("done {n}")),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    runstore::read(&db, 0).unwrap().events
}

/// In a cgroup whose limit leaves less than twice the heap in use, a forked walk's copy could
/// take the JVM past its limit: each one is refused and said, none is made, and the kernel
/// never acts; the JVM runs to its end. The heap is touched whole at start (`-Xms` =
/// `-Xmx`, `AlwaysPreTouch`), so the JVM's own use stays near where it starts.
#[test]
fn a_fork_the_cgroup_cannot_hold_is_refused_and_said() {
    // About 90 MB live in a 256 MB heap, about 340 MB used: 420 MB leaves some 80 MB.
    let Some(cgroup) = MemoryCgroup::new(420 << 20) else { return };
    let jvm = ["-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch", "-XX:+UseParallelGC"];
    let events = forked_run(&Jdk::default_jdk(), Some(&cgroup), &jvm, ("1000000", SECONDS), &[]);
    let refused: Vec<&String> = events.iter().filter(|e| e.starts_with("forked heap walk refused")).collect();
    assert!(!refused.is_empty(), "{events:#?}");
    // What was left is the cgroup's (some 80 MB), not the machine's (gigabytes).
    assert!(refused[0].contains("less than twice") && refused[0].contains(" MiB of memory left"), "{}", refused[0]);
    assert!(!events.iter().any(|e| e.starts_with("heap walk forked")), "{events:#?}");
    assert_eq!(cgroup.oom_kills(), 0, "the kernel's OOM killer acted in the JVM's cgroup");
}

/// A child whose copy passes `--fork-max-copy` is killed, and said, before it finishes; the
/// JVM runs on to its end (its `done` line, and the count it prints).
#[test]
fn a_copy_past_its_bound_is_killed_and_said() {
    let events = forked_run(&Jdk::default_jdk(), None, &["-Xmx128m"], ("200000", SECONDS), &["--fork-max-copy", "1M"]);
    let killed: Vec<&String> =
        events.iter().filter(|e| e.contains("over its bound of 1.0 MiB") && e.contains("killed")).collect();
    assert!(!killed.is_empty(), "{events:#?}");
    assert!(!events.iter().any(|e| e.starts_with("heap walk forked")), "{events:#?}");
}
