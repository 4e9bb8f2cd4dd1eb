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
    assert!(text.starts_with("INCOMPLETE DUMP: "), "suspects on a dump still being written: {text}");
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
}
