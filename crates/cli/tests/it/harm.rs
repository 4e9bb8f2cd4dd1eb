//! leakscope does no harm: a closed pipe ends a command quietly, `attach` and `check` never
//! signal a process that is not a JVM, and `run` passes SIGTERM on to the JVM it started.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{await_line, build_agent, leakscope, on_jdk17_and_jdk25, BoundedOutput, Jdk};

use crate::support::DEMO;

/// Reads one line of `args`' stdout, closes the pipe, and returns the exit status and stderr.
fn first_line_then_close(args: &[&str]) -> (String, Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_leakscope"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (line, child.wait().unwrap().code(), err)
}

#[test]
fn a_closed_pipe_ends_every_printing_command_quietly() {
    // Each prints well over a pipe's 64 KiB buffer, so the write after the close fails.
    for args in [
        vec!["dominators", "--flat", "--top", "100000", DEMO],
        vec!["dominators", "--flat", "--top", "100000", "--json", DEMO],
        vec!["histogram", "--top", "0", "--by", "class", DEMO],
        vec!["summary", DEMO],
    ] {
        let (line, code, err) = first_line_then_close(&args);
        assert!(!line.is_empty(), "{args:?} printed nothing");
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
    }
}

/// A process that is not a JVM, and sure to die of SIGQUIT if it gets one.
fn not_a_jvm() -> std::process::Child {
    Command::new("python3").args(["-c", "import time; time.sleep(60)"]).spawn().expect("python3")
}

#[test]
fn attach_and_check_refuse_a_process_that_is_not_a_jvm_at_once_and_leave_it_alive() {
    build_agent();
    let mut victim = not_a_jvm();
    std::thread::sleep(Duration::from_millis(300));
    let pid = victim.id().to_string();
    for args in [vec!["attach", pid.as_str()], vec!["check", pid.as_str()]] {
        let started = Instant::now();
        let out = leakscope(&args);
        let took = started.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(took < Duration::from_secs(1), "{args:?} took {took:?}");
        assert!(err.contains("is not a HotSpot JVM") && err.contains("nothing was sent"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line, no Java stack trace: {err}");
        assert!(!err.contains("\tat "), "{err}");
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(victim.try_wait().unwrap().is_none(), "the process died");
    let _ = victim.kill();
    let _ = victim.wait();
}

/// Process ids of `pid`'s children.
fn children(pid: u32) -> Vec<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(path).unwrap_or_default().split_whitespace().filter_map(|p| p.parse().ok()).collect()
}

fn alive(pid: u32) -> bool {
    // A zombie is dead for this purpose: it runs no code and waits for its parent.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')))
}

#[test]
fn sigterm_to_run_ends_the_jvm_too() {
    let jdk = Jdk::default_jdk();
    let dir = jdk.compiled_with_agent("Quiescent");
    let db = dir.path().join("run.db");
    let java = jdk.bin.join("java");
    let mut run = Command::new(env!("CARGO_BIN_EXE_leakscope"))
        .args(["run", "--out", db.to_str().unwrap(), "--no-walks", "--"])
        .arg(java)
        .args(["-cp", dir.path().to_str().unwrap(), "Quiescent"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let ready = await_line(run.stdout.take().unwrap(), "Quiescent's READY", |l| (l.trim() == "READY").then_some(()));
    assert!(ready.is_some(), "Quiescent exited before READY");
    let jvm = *children(run.id()).first().expect("the JVM is run's child");
    Command::new("kill").args(["-TERM", &run.id().to_string()]).status().unwrap();
    let status = run.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(jvm) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!alive(jvm), "the JVM {jvm} outlived `leakscope run`");
    // The JVM's own status: 143 is Java's exit on SIGTERM (128 + 15).
    assert_eq!(status.code(), Some(143), "{status:?}");
}

/// Runs leakscope with each phase's duration printed (`timing:` lines once a phase ends).
fn timed(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_leakscope")).args(args).env("LEAKSCOPE_TIMINGS", "1").bounded_output()
}

#[test]
fn outputs_that_cannot_be_written_fail_before_the_analysis() {
    // The demo dump takes a moment to analyse; an unwritable output must fail at once, with
    // the output's path, and nothing is left behind.
    for args in [
        vec!["report", DEMO, "-o", "/nonexistent/dir/x.html"],
        vec!["summary", DEMO, "-o", "/nonexistent/dir/x.json"],
        vec!["growth", DEMO, DEMO, DEMO, "--dot", "/nonexistent/dir/x.dot"],
    ] {
        let out = timed(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("cannot write /nonexistent/dir/"), "{args:?}: {err}");
        assert!(!err.contains("timing:"), "the analysis ran first: {err}");
    }
    // A busy port is refused before the dumps are read.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = timed(&["serve", DEMO, "--port", &port]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot listen") && !err.contains("timing:"), "{err}");
    // A missing dump names its path once.
    let err = String::from_utf8_lossy(&leakscope(&["histogram", "nope.hprof"]).stderr).into_owned();
    assert_eq!(err.matches("nope.hprof").count(), 1, "{err}");
}

/// The names in `dir`, sorted.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn a_full_disk_leaves_no_partial_output_and_says_it_could_not_write() {
    // A 16 KiB file system: the demo's report (60 KiB), summary and redacted copy do not fit.
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("full");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", "size=16k", "tmpfs"]).arg(&small).status();
    if !mounted.is_ok_and(|s| s.success()) {
        crate::support::missing("a tmpfs mount (mount -t tmpfs needs root)");
        return;
    }
    let out = |name: &str| small.join(name).to_str().unwrap().to_owned();
    let runs = [
        vec!["report".to_owned(), DEMO.into(), "-o".into(), out("x.html")],
        vec!["summary".to_owned(), DEMO.into(), "-o".into(), out("x.json")],
        vec!["redact".to_owned(), DEMO.into(), "-o".into(), out("x.hprof")],
    ];
    let mut failures = Vec::new();
    for args in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).chain(["--quiet"]).collect();
        let result = leakscope(&args);
        let err = String::from_utf8_lossy(&result.stderr).into_owned();
        failures.push((args[0].to_owned(), result.status.code(), err, names_in(&small)));
    }
    let _ = Command::new("umount").arg(&small).status();
    for (cmd, code, err, left) in failures {
        assert_eq!(code, Some(2), "{cmd}: {err}");
        assert!(err.starts_with("error: cannot write ") && err.contains("No space left on device"), "{cmd}: {err}");
        assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
        assert!(left.is_empty(), "{cmd} left {left:?}");
    }
}

#[test]
fn an_interrupted_redact_leaves_nothing_behind() {
    // 64 MiB of arrays to mask: long enough to be interrupted while it writes.
    let mut h = testkit::HeapBuilder::new();
    let arrays: Vec<_> = (0..256).map(|_| Some(h.primitive_array(hprof::BasicType::Byte, 256 << 10))).collect();
    let holder = h.object_array("[Ljava/lang/Object;", &arrays);
    h.root(hprof::RootKind::JniGlobal, holder);
    let (_d, dump) = crate::support::temp_dump(&h.build());
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_leakscope"))
        .args(["redact", "--quiet", dump.to_str().unwrap(), "-o"])
        .arg(dir.path().join("shared.hprof"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while names_in(dir.path()).is_empty() && Instant::now() < deadline && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(2));
    }
    let writing = names_in(dir.path());
    assert!(writing.iter().any(|n| n.starts_with(".leakscope-redact-")), "not caught while writing: {writing:?}");
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "{status:?}");
    assert_eq!(names_in(dir.path()), Vec::<String>::new(), "left behind after Ctrl-C");
}

/// What a dump's GC roots hold, by kind and class, without class mirrors (the agent keeps a
/// global reference to `java.lang.ref.Reference`'s class, which is loaded anyway) and without
/// thread objects (the agent's own thread is one); then suspect 1's root kind and structure.
fn roots_and_suspect(dump: &std::path::Path) -> (Vec<(String, String)>, (String, String)) {
    let s = heap::Snapshot::build(heap::Dump::open(dump).unwrap(), &Default::default(), &graph::NoProgress).unwrap();
    let mut held: Vec<(String, String)> = s
        .roots
        .iter()
        .filter(|r| s.mirror_class(r.object).is_none() && r.kind != hprof::RootKind::ThreadObject)
        .filter(|r| !r.kind.held_by_frame() || r.kind == hprof::RootKind::JniLocal)
        .map(|r| (r.kind.name().to_owned(), s.type_label(r.object)))
        .collect();
    held.sort();
    let out = leakscope(&["suspects", "--quiet", "--json", dump.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &v["suspects"][0];
    let root = first["root"].as_str().unwrap();
    let kind = root.rsplit_once('(').map_or(root, |(_, k)| k.trim_end_matches(')')).to_owned();
    let structure = first["data_structure"].as_str().unwrap_or("");
    let structure: Vec<&str> = structure.split(' ').filter(|w| !w.starts_with("0x")).collect();
    (held, (kind, structure.join(" ")))
}

#[test]
fn the_agent_leaves_the_roots_and_suspects_of_a_heap_as_they_were() {
    // The same leaking program twice, one with the agent attached and walking the heap: each
    // dump names the same roots (JNI locals and globals included) and the same suspect.
    let jdk = Jdk::default_jdk();
    let dir = jdk.compiled_with_agent("Live");
    let plain = jdk.start_with_args(dir.path(), "Live", &["-Xmx200m"], &["map", "40"]);
    let observed = jdk.start_with_args(dir.path(), "Live", &["-Xmx200m"], &["map", "40"]);
    let db = dir.path().join("run.db");
    let pid = observed.pid().to_string();
    let out = leakscope(&["attach", &pid, "--out", db.to_str().unwrap(), "--budget", "20", "--period", "300ms"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_secs(8));
    let dump = |name: &str, jvm: &crate::support::Jvm| {
        let path = dir.path().join(format!("{name}.hprof"));
        jvm.jcmd(&["GC.heap_dump", path.to_str().unwrap()]);
        roots_and_suspect(&path)
    };
    let without = dump("plain", &plain);
    // A dump taken while a walk is under way has the walk's own JNI locals as roots (seen
    // once under CI's load: six of them, a class loader's maps among them, and the leak's
    // map named without its field). Those end with the walk; locals the agent left behind
    // would be in every dump, so a dump that differs is taken again, twice at most.
    let mut with = dump("observed", &observed);
    for again in 1..=2 {
        if with == without {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
        with = dump(&format!("observed-{again}"), &observed);
    }
    let walks = leakscope(&["growth", "--json", db.to_str().unwrap()]);
    assert!(walks.status.success(), "the agent recorded: {}", String::from_utf8_lossy(&walks.stderr));
    assert_eq!(with, without);
    assert_eq!(with.1 .1, "java.util.HashMap in class Live$SessionStore.sessions");
}

/// Dumps `Live steady` on `jdk` with G1.
fn g1_dump(jdk: &Jdk, dir: &std::path::Path) -> std::path::PathBuf {
    jdk.compile("Live", dir);
    let jvm = jdk.start_with_args(dir, "Live", &["-XX:+UseG1GC", "-Xmx200m"], &["steady", "30"]);
    let path = dir.join("g1.hprof");
    jvm.jcmd(&["GC.heap_dump", path.to_str().unwrap()]);
    path
}

fn harmless_missing_objects_are_explained_once_in_info(jdk: &Jdk) {
    // HotSpot's G1 dumps name objects of the class-data-sharing archive they leave out: info
    // says so once, with why it does not matter; the analyses do not repeat it.
    let dir = tempfile::tempdir().unwrap();
    let dump = g1_dump(jdk, dir.path());
    let p = dump.to_str().unwrap();
    let info = leakscope(&["info", p]);
    let err = String::from_utf8_lossy(&info.stderr);
    assert!(err.contains("references point to no object") && err.contains("class-data-sharing"), "{err}");
    assert!(!err.contains("warning:"), "{err}");
    for cmd in ["suspects", "dominators", "roots"] {
        let out = leakscope(&[cmd, p]);
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("no object") && !err.contains("warning:"), "{cmd}: {err}");
    }
}

on_jdk17_and_jdk25!(harmless_missing_objects_are_explained_once_in_info);

#[test]
fn jvms_lists_a_running_jvm_from_its_performance_counters() {
    let jdk = Jdk::default_jdk();
    let dir = tempfile::tempdir().unwrap();
    jdk.compile("Live", dir.path());
    let jvm = jdk.start_with_args(dir.path(), "Live", &["-Xmx64m"], &["steady", "30"]);
    let out = leakscope(&["jvms", "--json"]);
    assert!(out.status.success());
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(all["schema_version"], report::SCHEMA_VERSION);
    let me = all["jvms"].as_array().unwrap().iter().find(|j| j["pid"] == jvm.pid()).expect("the JVM is listed");
    assert_eq!(me["command"], "Live steady 30");
    // Counters sampled every 50 ms may still say 0 bytes used right after start.
    assert!(me["heap_used_bytes"].as_u64().is_some() && me["uptime_ms"].as_u64().is_some(), "{me}");
    assert_eq!(me["agent_store"], serde_json::Value::Null);
}
