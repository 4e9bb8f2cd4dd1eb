//! `LeakScope.expectDead` end to end: a Java program declares two objects dead, one of them
//! still held by a static map; `leakscope check` finds that one, with its path through the
//! map and its retained bytes, from a live process, a heap dump and the agent's run store,
//! and does not report the one that was collected.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{build_agent, leakscope, Jdk};

/// Compiles `ExpectDead.java` against the jar `leakscope api-jar` writes; the class path.
fn compiled(jdk: &Jdk, dir: &Path) -> String {
    compiled_program(jdk, dir, "ExpectDead")
}

/// Compiles `tests/java/NAME.java` against the jar `leakscope api-jar` writes; the class path.
fn compiled_program(jdk: &Jdk, dir: &Path, name: &str) -> String {
    build_agent();
    let jar = dir.join("leakscope-api.jar");
    // LeakScope alone: these programs need no JUnit (the junit test holds the default jar).
    let out = leakscope(&["api-jar", "--without-leak-test", "-o", jar.to_str().unwrap()]);
    assert!(out.status.success(), "api-jar: {}", String::from_utf8_lossy(&out.stderr));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/java/{name}.java"));
    let status = jdk.tool("javac").args(["--release", "17", "-cp"]).arg(&jar).arg("-d").arg(dir).arg(&src).status();
    assert!(status.expect("javac").success());
    format!("{}:{}", dir.display(), jar.display())
}

/// `ExpectDead.main(ExpectDead.java:N)` for the line marked `// MARK`.
fn site(mark: &str) -> String {
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/ExpectDead.java")).unwrap();
    let line = src.lines().position(|l| l.contains(&format!("// {mark}"))).expect("marked line") + 1;
    format!("ExpectDead.main(ExpectDead.java:{line})")
}

fn check(target: &str) -> (i32, Value) {
    let out = leakscope(&["check", "--quiet", "--json", target]);
    let code = out.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 1, "check {target}: {}", String::from_utf8_lossy(&out.stderr));
    (code, serde_json::from_slice(&out.stdout).expect("JSON"))
}

/// Polls `check TARGET` until `done` holds (60 s at most).
fn check_until(target: &str, done: impl Fn(&Value) -> bool) -> (i32, Value) {
    let deadline = Instant::now() + Duration::from_secs(60);
    // The agent creates its store before SQLite writes the file's header (at the first commit):
    // until then the file is empty, and rightly not a run store.
    while std::fs::metadata(target).map_or(0, |m| m.len()) < 100 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    loop {
        // Before the agent's first walk the store cannot say what was declared dead: exit 2.
        let early = leakscope(&["check", "--quiet", "--json", target]);
        if early.status.code() == Some(2) && Instant::now() < deadline {
            let err = String::from_utf8_lossy(&early.stderr);
            assert!(err.contains("the agent has not walked the heap yet"), "check {target}: {err}");
            std::thread::sleep(Duration::from_millis(300));
            continue;
        }
        let (code, v) = check(target);
        if done(&v) || Instant::now() > deadline {
            return (code, v);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn sites(v: &Value) -> Vec<String> {
    v["reachable"].as_array().unwrap().iter().map(|x| x["site"].as_str().unwrap().to_string()).collect()
}

/// The reachable `Order` declared dead at the EXPECT-LEAK line: a path through
/// `Registry.OPEN` and the 64 KiB it retains.
fn assert_leak_with_path(v: &Value) {
    let leak = v["reachable"].as_array().unwrap().iter().find(|x| x["site"] == site("EXPECT-LEAK").as_str());
    let leak = leak.unwrap_or_else(|| panic!("the leaked Order is not reported: {v}"));
    assert_eq!(leak["class"], "ExpectDead$Order");
    assert!(leak["retained_bytes"].as_u64().unwrap() >= 64 * 1024, "{leak}");
    let steps: Vec<String> = leak["path"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{} {}", s["field"].as_str().unwrap_or(""), s["class"].as_str().unwrap()))
        .collect();
    assert!(steps.iter().any(|s| s == "static OPEN java.util.HashMap"), "path: {steps:?}");
    assert_eq!(steps.last().map(String::as_str), Some("value ExpectDead$Order"), "path: {steps:?}");
}

#[test]
fn from_the_start_the_walks_and_a_dump_of_the_process_find_what_is_still_held() {
    let jdk = Jdk::default_jdk();
    let dir = tempfile::tempdir().unwrap();
    let cp = compiled(&jdk, dir.path());
    let db = dir.path().join("run.db");
    let lib = PathBuf::from(env!("CARGO_BIN_EXE_leakscope")).parent().unwrap().join("libleakscope_agent.so");
    let agentpath = format!("-agentpath:{}=out:{},budget:20,period:300ms,interval:64K", lib.display(), db.display());
    let mut jvm = jdk.start_with_args(Path::new(&cp), "ExpectDead", &["-Xmx128m", &agentpath], &["90"]);

    // The run store, as of the agent's walks: the early and the leaked Order are referenced
    // by HashMap nodes; the dropped one is collected.
    let (code, run) = check_until(db.to_str().unwrap(), |v| v["expectations"] == 3 && v["unchecked"] == 0);
    assert_eq!((code, &run["collected"]), (1, &Value::from(1)), "{run}");
    let mut found = sites(&run);
    found.sort();
    let mut wanted = vec![site("EXPECT-EARLY"), site("EXPECT-LEAK")];
    wanted.sort();
    assert_eq!(found, wanted);
    for x in run["reachable"].as_array().unwrap() {
        assert_eq!(x["class"], "ExpectDead$Order");
        assert_eq!(x["held_by"], serde_json::json!(["java.util.HashMap$Node"]), "{x}");
    }
    // `growth RUN.db` carries the same section.
    let out = leakscope(&["growth", db.to_str().unwrap(), "--json"]);
    let growth: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(growth["expected_dead"]["reachable"].as_array().map(Vec::len), Some(2));
    // Nothing was watched in this run: `stale` says how to watch.
    let out = leakscope(&["stale", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not recorded with --watch"));
    // So does the HTML report of the run.
    let html = dir.path().join("run.html");
    let out = leakscope(&["report", "--quiet", db.to_str().unwrap(), "-o", html.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Declared dead, still reachable") && page.contains(&site("EXPECT-LEAK")));

    // A dump of the process: whole paths and retained sizes.
    let pid = jvm.pid().to_string();
    let kept = dir.path().join("kept.hprof");
    let out = leakscope(&["check", "--quiet", "--json", &pid, "--keep-dump", kept.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let live: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&live["expectations"], &live["collected"]), (&Value::from(3), &Value::from(1)), "{live}");
    assert_eq!(live["reachable"].as_array().unwrap().len(), 2);
    assert_leak_with_path(&live);
    // The kept dump says the same, and the text names the site and the map.
    let (_, offline) = check(kept.to_str().unwrap());
    assert_eq!(offline["reachable"], live["reachable"]);
    let text = leakscope(&["check", "--quiet", kept.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&site("EXPECT-LEAK")) && text.contains("static OPEN"), "{text}");
    jvm.kill9();
}

#[test]
fn attached_late_calls_before_the_agent_cost_nothing_and_later_ones_are_checked_on_jdk25() {
    let Some(jdk) = Jdk::require25() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cp = compiled(&jdk, dir.path());
    let mut jvm = jdk.start_with_args(Path::new(&cp), "ExpectDead", &["-Xmx128m"], &["90"]);
    let pid = jvm.pid().to_string();
    // Without the agent the call before READY did nothing: no expectation in the heap.
    let (code, none) = check(&pid);
    assert_eq!((code, &none["expectations"]), (0, &Value::from(0)), "{none}");
    let db = dir.path().join("attached.db");
    let out = leakscope(&["attach", &pid, "--out", db.to_str().unwrap(), "--budget", "20", "--period", "300ms"]);
    assert!(out.status.success(), "attach: {}", String::from_utf8_lossy(&out.stderr));
    let (code, v) = check_until(&pid, |v| v["expectations"] == 2);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["collected"], 1, "the dropped Order is gone: {v}");
    assert_eq!(sites(&v), vec![site("EXPECT-LEAK")]);
    assert_leak_with_path(&v);
    jvm.kill9();
}

/// Group lines of `check`'s text: the rows under its header, up to the first blank line.
fn group_lines(text: &str) -> Vec<&str> {
    text.lines().skip_while(|l| !l.contains("declared ago")).skip(1).take_while(|l| !l.is_empty()).collect()
}

#[test]
fn hundreds_of_declared_objects_read_as_one_line_per_path_shape() {
    let jdk = Jdk::default_jdk();
    let dir = tempfile::tempdir().unwrap();
    let cp = compiled_program(&jdk, dir.path(), "ExpectMany");
    let db = dir.path().join("run.db");
    let lib = PathBuf::from(env!("CARGO_BIN_EXE_leakscope")).parent().unwrap().join("libleakscope_agent.so");
    let agentpath = format!("-agentpath:{}=out:{},budget:20,period:300ms,interval:64K", lib.display(), db.display());
    let mut jvm = jdk.start_with_args(Path::new(&cp), "ExpectMany", &["-Xmx128m", &agentpath], &["90"]);

    // A dump of the process: 500 reachable in two shapes, the maps' and the list's.
    let pid = jvm.pid().to_string();
    let kept = dir.path().join("many.hprof");
    let out = leakscope(&["check", "--quiet", "--json", &pid, "--keep-dump", kept.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&v["expectations"], &v["collected"]), (&Value::from(600), &Value::from(100)), "{}", v["groups"]);
    assert_eq!(v["reachable"].as_array().unwrap().len(), 500);
    let groups = v["groups"].as_array().unwrap();
    let rows: Vec<(&str, u64)> =
        groups.iter().map(|g| (g["class"].as_str().unwrap(), g["count"].as_u64().unwrap())).collect();
    assert_eq!(rows, [("ExpectMany$Session", 300), ("ExpectMany$Cart", 200)], "{groups:#?}");
    // Together the sessions retain themselves and their arrays; the map's nodes stay.
    let histogram = crate::support::json(&["histogram", "--json", kept.to_str().unwrap()]);
    let session = histogram["classes"].as_array().unwrap().iter().find(|c| c["name"] == "ExpectMany$Session").unwrap();
    let per_session = session["shallow_bytes"].as_u64().unwrap() / session["instances"].as_u64().unwrap();
    assert_eq!(groups[0]["retained_bytes"].as_u64(), Some(300 * (per_session + 16 + 512)), "{:#}", groups[0]);
    let last = |g: &Value| g["path"]["steps"].as_array().unwrap().last().unwrap()["class"].as_str().unwrap().to_owned();
    assert_eq!((last(&groups[0]), last(&groups[1])), ("ExpectMany$Session".into(), "ExpectMany$Cart".into()));
    let text = leakscope(&["check", "--quiet", kept.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    let lines = group_lines(&text);
    assert_eq!(lines.len(), 2, "one line per path shape:\n{text}");
    assert!(lines[0].contains("static SESSIONS") && lines[1].contains("static CARTS"), "{text}");
    let all = leakscope(&["check", "--quiet", "--all", kept.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&all.stdout).lines().count() > 500 * 3, "--all lists every object");

    // The run store, as of the agent's walks: the same two groups, by what references them.
    let (_, run) = check_until(db.to_str().unwrap(), |v| v["expectations"] == 600 && v["unchecked"] == 0);
    let groups = run["groups"].as_array().unwrap();
    let rows: Vec<(&str, u64)> =
        groups.iter().map(|g| (g["class"].as_str().unwrap(), g["count"].as_u64().unwrap())).collect();
    assert_eq!(rows, [("ExpectMany$Session", 300), ("ExpectMany$Cart", 200)], "{groups:#?}");
    let text = leakscope(&["check", "--quiet", db.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert_eq!(group_lines(&text).len(), 2, "{text}");
    let growth = leakscope(&["growth", "--quiet", db.to_str().unwrap()]);
    assert_eq!(group_lines(&String::from_utf8_lossy(&growth.stdout)).len(), 2);
    jvm.kill9();
}

#[test]
fn bad_targets_and_heaps_without_declarations_are_clear() {
    let fixture = Path::new(crate::support::DEMO);
    let out = leakscope(&["check", "--quiet", fixture.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "nothing declared is nothing reachable");
    assert!(String::from_utf8_lossy(&out.stdout).contains("no object was declared dead"));
    for (args, says) in [
        (vec!["check", "Cargo.toml"], "neither an HPROF heap dump"),
        (vec!["check", "4194999"], "no process 4194999"),
        (vec!["check", "nonsense"], "neither a process id"),
        (vec!["api-jar", "-o", "/nonexistent/dir/api.jar"], "cannot write"),
        (vec!["stale", "4194999"], "no process 4194999"),
    ] {
        let out = leakscope(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
