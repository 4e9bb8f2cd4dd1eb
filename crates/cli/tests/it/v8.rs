//! V8 heap snapshots of a real Node.js service (`tests/node/leaky-service.js`, on the
//! machine's Node.js and its own `http` module), read by leakscope and held to an oracle
//! written with Python's json module alone (`tests/node/snapshot_oracle.py`): the histogram
//! by constructor, and retained sizes by brute-force reachability.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{leakscope, missing, BoundedOutput};

const REQUESTS: u64 = 1500;

fn node_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node")
}

/// A snapshot of the service after `REQUESTS` requests, written in `dir`; `None` (after
/// [`missing`]) without Node.js.
fn service_snapshot(dir: &Path) -> Option<PathBuf> {
    if Command::new("node").arg("--version").output().is_err() {
        missing("node (Node.js)");
        return None;
    }
    let out = dir.join("service.heapsnapshot");
    let run = Command::new("node")
        .arg(node_dir().join("leaky-service.js"))
        .arg(&out)
        .arg(REQUESTS.to_string())
        .bounded_output();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let said: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(said["sessions"], REQUESTS, "{said}");
    Some(out)
}

fn oracle(snapshot: &Path, ids: &[String]) -> Value {
    let run =
        Command::new("python3").arg(node_dir().join("snapshot_oracle.py")).arg(snapshot).args(ids).bounded_output();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    serde_json::from_slice(&run.stdout).unwrap()
}

fn json_of(args: &[&str]) -> Value {
    let out = leakscope(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_node_services_histogram_is_the_json_modules_count_by_constructor() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let ours = json_of(&["histogram", snap.to_str().unwrap(), "--json", "-q"]);
    let theirs = oracle(&snap, &[]);
    let rows = ours["classes"].as_array().unwrap();
    let expected = theirs["histogram"].as_object().unwrap();
    assert_eq!(rows.len(), expected.len(), "groups");
    for row in rows {
        let name = row["name"].as_str().unwrap();
        assert_eq!([&row["instances"], &row["shallow_bytes"]], [&expected[name][0], &expected[name][1]], "{name}");
    }
    // `info` counts the same objects, and splits them by what V8's root reaches.
    let info = json_of(&["info", snap.to_str().unwrap(), "--json", "-q"]);
    let instances: u64 = expected.values().map(|r| r[0].as_u64().unwrap()).sum();
    assert_eq!(info["objects"], instances, "{info}");
    assert_eq!(info["reachable_objects"].as_u64().unwrap() + info["unreachable_objects"].as_u64().unwrap(), instances);
    assert!(info["roots"].as_array().unwrap().iter().any(|r| r["kind"] == "(Global handles)"), "{info}");
    let session = rows.iter().find(|r| r["name"] == "Session").expect("a Session row");
    assert_eq!(session["instances"], REQUESTS, "one Session a request, as the service counted");
    // Each request's listener closure on the long-lived emitter is one of the closures.
    let closures = rows.iter().find(|r| r["name"] == "(closure)").unwrap();
    assert!(closures["instances"].as_u64().unwrap() > REQUESTS, "{closures}");
}

#[test]
fn retained_sizes_in_a_node_service_are_what_brute_force_reachability_frees() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let report = json_of(&["dominators", snap.to_str().unwrap(), "--flat", "--top", "6", "--json", "-q"]);
    let rows = report["objects"].as_array().unwrap();
    let ids: Vec<String> = rows.iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect();
    let truth = oracle(&snap, &ids);
    for row in rows {
        let id = row["id"].as_str().unwrap();
        assert_eq!(row["retained_bytes"], truth["retained"][id], "{row}");
    }
    // The biggest holder keeps every session: the module's context (its `sessions` Map and
    // the emitter whose listeners hold them too).
    let sessions = REQUESTS * 64;
    assert!(rows[0]["retained_bytes"].as_u64().unwrap() > sessions, "{}", rows[0]);
    // Descending from it reaches a Map or the EventEmitter.
    let top = rows[0]["id"].as_str().unwrap();
    let below = json_of(&["dominators", snap.to_str().unwrap(), "--children", top, "--top", "5", "--json", "-q"]);
    let classes: Vec<&str> =
        below["objects"].as_array().unwrap().iter().map(|r| r["class"].as_str().unwrap()).collect();
    assert!(classes.iter().any(|c| *c == "Map" || *c == "EventEmitter"), "{classes:?}");
    // The same node named as DevTools names it, `@` and its id in decimal.
    let devtools = format!("@{}", u64::from_str_radix(top.trim_start_matches("0x"), 16).unwrap());
    let same = json_of(&["dominators", snap.to_str().unwrap(), "--children", &devtools, "--top", "5", "--json", "-q"]);
    assert_eq!(same, below, "{devtools}");
}

#[test]
fn a_gzipped_snapshot_reads_the_same_and_a_cut_one_says_where_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let plain = json_of(&["histogram", snap.to_str().unwrap(), "--json", "-q"]);
    let bytes = std::fs::read(&snap).unwrap();
    let zipped = dir.path().join("service.heapsnapshot.gz");
    let gz = Command::new("sh")
        .arg("-c")
        .arg(format!("gzip -c '{}' > '{}'", snap.display(), zipped.display()))
        .bounded_output();
    assert!(gz.status.success());
    assert_eq!(json_of(&["histogram", zipped.to_str().unwrap(), "--json", "-q"]), plain);

    let cut = dir.path().join("cut.heapsnapshot");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let out = leakscope(&["dominators", cut.to_str().unwrap(), "-q"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("cut at byte {}", bytes.len() * 2 / 3)), "{err}");
}

#[test]
fn commands_that_read_jvm_dumps_only_say_so_on_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    for args in [vec!["suspects"], vec!["paths", "--select", "class:Session"], vec!["roots"]] {
        let mut all = args.clone();
        all.push(snap.to_str().unwrap());
        let out = leakscope(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("is a V8 heap snapshot"), "{args:?}: {err}");
    }
}
