//! Never green without the evidence: a verdict on input that could not be read whole, or on
//! heaps of more than one JVM process, says so, and a CI gate (`growth --fail-on-growth`)
//! cannot pass on it. The dumps are the JVM's own (`HotSpotDiagnosticMXBean`, `jcmd`), cut
//! where a crash or a copy cuts them; the oracles are the complete series' verdict and the
//! processes that wrote the dumps.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::growth::series_on;
use crate::support::{leakscope, Jdk, DEMO};

fn gate(dumps: &[&Path]) -> std::process::Output {
    let mut args = vec!["growth", "--fail-on-growth"];
    args.extend(dumps.iter().map(|d| d.to_str().unwrap()));
    leakscope(&args)
}

fn report(dumps: &[&Path]) -> Value {
    let mut args = vec!["growth", "--quiet", "--json"];
    args.extend(dumps.iter().map(|d| d.to_str().unwrap()));
    let out = leakscope(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Writes the first `len` bytes of `dump` beside it, as `NAME-cut-LEN.hprof`.
fn cut(dump: &Path, len: usize) -> PathBuf {
    let bytes = std::fs::read(dump).unwrap();
    let out = dump.with_file_name(format!("cut-{len}.hprof"));
    std::fs::write(&out, &bytes[..len]).unwrap();
    out
}

#[test]
fn a_series_with_a_cut_dump_never_passes_the_gate() {
    let (_dir, dumps) = series_on(&Jdk::default_jdk(), "phases", 4);
    let whole: Vec<&Path> = dumps.iter().map(PathBuf::as_path).collect();
    let out = gate(&whole);
    assert_eq!(out.status.code(), Some(0), "the whole series passes: {}", String::from_utf8_lossy(&out.stdout));
    let len = std::fs::metadata(&dumps[3]).unwrap().len() as usize;
    // Inside the first records, inside the heap, at its end, and at a record boundary: the
    // dump without its HEAP DUMP END record, as a copy taken between two writes leaves it.
    for at in [len / 20, len / 2, len * 19 / 20, len - 9] {
        let last = cut(&dumps[3], at);
        let series = [whole[0], whole[1], whole[2], last.as_path()];
        let out = gate(&series);
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "cut at {at} of {len}: the gate passed: {text}");
        if at > len / 20 {
            assert_eq!(out.status.code(), Some(2), "cut at {at} of {len}: {text}{err}");
            assert!(text.contains("INCOMPLETE INPUT: ") && err.contains("could not read whole"), "{text}{err}");
            let r = report(&series);
            let incomplete = r["incomplete"].as_array().unwrap();
            assert_eq!(incomplete.len(), 1, "{r:#}");
            assert!(incomplete[0].as_str().unwrap().starts_with(last.to_str().unwrap()), "{incomplete:?}");
        }
    }
}

#[test]
fn a_cut_dump_is_said_where_the_verdict_is_and_suspects_are_not_named_without_threads() {
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo.hprof");
    std::fs::copy(DEMO, &demo).unwrap();
    let len = std::fs::metadata(&demo).unwrap().len() as usize;
    let last = cut(&demo, len * 9 / 10);
    let cut_dump = last.to_str().unwrap();
    // What the cut took: HotSpot wrote the threads and the GC roots after the objects.
    let out = leakscope(&["info", "--quiet", "--json", cut_dump]);
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let took = info["cut"].as_str().unwrap_or_else(|| panic!("{info:#}"));
    assert!(took.contains("the cut took the threads") && took.contains("0 GC roots"), "{took}");
    assert_eq!(info["threads"], 0);
    let whole: Value = serde_json::from_slice(&leakscope(&["info", "--quiet", "--json", DEMO]).stdout).unwrap();
    assert!(
        whole.get("cut").is_none() && whole["threads"].as_u64().unwrap() > 0,
        "the oracle: the whole dump has threads"
    );
    let text = String::from_utf8_lossy(&leakscope(&["info", "--quiet", cut_dump]).stdout).into_owned();
    assert!(text.lines().any(|l| l.starts_with("cut ") && l.contains("the cut took the threads")), "{text}");
    // suspects cannot judge: one line, exit 2 (the whole dump names SessionLeak's registry).
    let out = leakscope(&["suspects", "--quiet", cut_dump]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}{err}", String::from_utf8_lossy(&out.stdout));
    assert!(err.contains("cannot name suspects") && err.lines().count() == 1, "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Suspect 1"));
    // The report's page says so at its top and instead of a green verdict, for a series and
    // for the dump alone; it exits as growth does without its gate.
    let page = dir.path().join("r.html");
    for inputs in [vec![DEMO, DEMO, cut_dump], vec![cut_dump]] {
        let mut args = vec!["report", "--quiet", "-o", page.to_str().unwrap()];
        args.extend(&inputs);
        let out = leakscope(&args);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.contains("Incomplete input: 1 of the heaps was not read whole"), "{inputs:?}");
        assert!(!html.contains(r#"class="verdict ok""#), "{inputs:?}: a green verdict");
        if inputs.len() == 1 {
            assert!(html.contains("cannot name suspects"), "the suspects section says why it is empty");
        }
    }
}

#[test]
fn a_dump_copied_while_jcmd_writes_it_is_no_verdict() {
    let jdk = Jdk::default_jdk();
    let dir = tempfile::tempdir().unwrap();
    jdk.compile("Held", dir.path());
    let jvm = jdk.start_with_args(dir.path(), "Held", &["-Xmx1g"], &["3000000"]);
    let full = dir.path().join("full.hprof");
    let copy = dir.path().join("copy.hprof");
    let mut jcmd = jdk
        .tool("jcmd")
        .args([&jvm.pid().to_string(), "GC.heap_dump", full.to_str().unwrap()])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Copy as soon as the file holds more than its first records, while jcmd still writes.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let size = std::fs::metadata(&full).map_or(0, |m| m.len());
        if size > 4 << 20 {
            std::fs::copy(&full, &copy).unwrap();
            break;
        }
        assert!(jcmd.try_wait().unwrap().is_none(), "jcmd ended before the dump could be copied");
        assert!(Instant::now() < deadline, "the dump did not grow");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(jcmd.wait().unwrap().success());
    let (copied, written) = (std::fs::metadata(&copy).unwrap().len(), std::fs::metadata(&full).unwrap().len());
    assert!(copied < written, "the copy is whole ({copied} of {written} bytes): copied too late");
    let out = leakscope(&["suspects", copy.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    // Cut before the threads (HotSpot writes them last): no suspect can be named; cut after
    // them, the suspects of what was read, said to be so first.
    match out.status.code() {
        Some(2) => assert!(err.contains("cannot name suspects") && err.contains("the cut took the threads"), "{err}"),
        _ => assert!(text.starts_with("INCOMPLETE DUMP: "), "suspects on a dump still being written: {text}"),
    }
    let out = gate(&[&full, &full, &full, &copy]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_restart_and_another_program_are_not_one_series() {
    let Some(jdk25) = Jdk::require25() else { return };
    let (_a, before) = series_on(&Jdk::default_jdk(), "map", 3);
    let (_b, after) = series_on(&jdk25, "map", 2);
    let one: Vec<&Path> = before.iter().map(PathBuf::as_path).collect();
    assert_eq!(report(&one)["other_processes"], Value::Null, "one process's heaps are one series");

    let restarted: Vec<&Path> = before.iter().chain(&after).map(PathBuf::as_path).collect();
    let r = report(&restarted);
    let left_out: Vec<&str> = r["other_processes"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert_eq!(left_out, before.iter().map(|p| p.to_str().unwrap()).collect::<Vec<_>>(), "{r:#}");
    assert_eq!(r["snapshots"].as_array().unwrap().len(), 2);
    let notes = r["notes"].to_string();
    assert!(notes.contains("2 JVM processes") && notes.contains("main class Growth"), "{notes}");
    assert_eq!(gate(&restarted).status.code(), Some(2));

    let mixed: Vec<&Path> = std::iter::once(Path::new(DEMO)).chain(one.iter().copied()).collect();
    let r = report(&mixed);
    assert_eq!(r["other_processes"], serde_json::json!([DEMO]), "{r:#}");
    let notes = r["notes"].to_string();
    assert!(notes.contains("main class SessionLeak") && notes.contains("main class Growth"), "{notes}");

    // Two programs dumped in turn are two processes, and every heap of the last one's is
    // judged (it was "5 JVM processes", and one heap judged).
    let interleaved = [one[0], Path::new(DEMO), one[1], Path::new(DEMO), one[2]];
    let r = report(&interleaved);
    assert_eq!(r["other_processes"], serde_json::json!([DEMO, DEMO]), "{r:#}");
    assert_eq!(r["snapshots"].as_array().unwrap().len(), 3);
    let notes = r["notes"].to_string();
    assert!(notes.contains("2 JVM processes") && notes.contains("heaps 1, 3, 5 (main class Growth)"), "{notes}");
    // diff across programs says so; within one, nothing.
    let diff = |a: &Path, b: &Path| {
        crate::support::json(&["diff", "--quiet", "--json", a.to_str().unwrap(), b.to_str().unwrap()])
    };
    let across = diff(Path::new(DEMO), one[2]);
    assert!(
        across["notes"].to_string().contains("two JVM processes (main classes SessionLeak and Growth)"),
        "{across}"
    );
    assert_eq!(diff(one[0], one[2]).get("notes"), None);
}
