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
    assert_eq!([&said["sessions"], &said["listeners"]], [REQUESTS, REQUESTS], "{said}");
    Some(out)
}

/// Snapshots of the service (leaking, or `steady`) after each sixth of `SERIES_REQUESTS`
/// requests, written in `dir`, oldest first, with allocations tracked when `track`; `None`
/// (after [`missing`]) without Node.js.
fn service_series(dir: &Path, steady: bool, track: bool) -> Option<Vec<PathBuf>> {
    if Command::new("node").arg("--version").output().is_err() {
        missing("node (Node.js)");
        return None;
    }
    let out = dir.join(if steady { "steady.heapsnapshot" } else { "leaky.heapsnapshot" });
    let mut node = Command::new("node");
    if track {
        node.arg("--track-heap-objects");
    }
    node.arg("--expose-gc").arg(node_dir().join("leaky-service.js")).arg(&out);
    node.arg(SERIES_REQUESTS.to_string()).arg(SERIES.to_string());
    if steady {
        node.arg("steady");
    }
    let run = node.bounded_output();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let said: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(said["served"], SERIES_REQUESTS, "{said}");
    let stem = out.to_str().unwrap().trim_end_matches(".heapsnapshot");
    Some((1..=SERIES).map(|s| PathBuf::from(format!("{stem}-{s}.heapsnapshot"))).collect())
}

/// Snapshots in a series, and the requests the service serves over it.
const SERIES: u64 = 6;
const SERIES_REQUESTS: u64 = 6000;

fn oracle(snapshot: &Path, ids: &[String]) -> Value {
    let run =
        Command::new("python3").arg(node_dir().join("snapshot_oracle.py")).arg(snapshot).args(ids).bounded_output();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    serde_json::from_slice(&run.stdout).unwrap()
}

/// The first of `suspects`' findings on `snap` whose title has `part`.
fn suspect_titled(snap: &Path, part: &str) -> Value {
    let report = json_of(&["suspects", snap.to_str().unwrap(), "--json", "-q"]);
    let found = report["suspects"].as_array().unwrap().iter().find(|s| s["title"].as_str().unwrap().contains(part));
    found.cloned().unwrap_or_else(|| panic!("no suspect with {part}: {report:#}"))
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

/// Every Session is held by one path, the module's `sessions` Map, reached through the
/// request handler's closure and the module's context; each step of it is an edge of the
/// snapshot with that label, as Python's json module reads it.
/// The service's module context, which every leak of the service hangs from, is a suspect said
/// as a person would: the function whose context it is and its variables retaining the most,
/// in the order of their retained sizes as Python counts them by brute force.
#[test]
fn a_node_services_module_context_is_named_by_its_function_and_its_biggest_variables() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let report = json_of(&["suspects", snap.to_str().unwrap(), "--json", "-q"]);
    let context = report["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"].as_str().unwrap().starts_with("the context of "))
        .unwrap_or_else(|| panic!("no context: {report:#}"));
    let steps = context["path"].as_array().unwrap();
    let (last, before) = (&steps[steps.len() - 1], &steps[steps.len() - 2]);
    assert_eq!(last["field"], "context", "{context:#}");
    let title = context["title"].as_str().unwrap();
    assert!(
        title.starts_with(&format!(
            "the context of {} {}: ",
            before["class"].as_str().unwrap(),
            before["id"].as_str().unwrap()
        )),
        "{title}"
    );
    let id = last["id"].as_str().unwrap().to_owned();
    let theirs = oracle(&snap, std::slice::from_ref(&id));
    assert_eq!(theirs["retained"][&id], context["retained_bytes"], "{context:#}");
    // Its variables (its edges of type context), biggest alone first.
    let variables: Vec<(String, String)> = theirs["edges"][&id]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e[2] == "context")
        .map(|e| (e[0].as_str().unwrap().to_owned(), format!("{:#x}", e[1].as_u64().unwrap())))
        .collect();
    assert!(variables.iter().any(|(v, _)| v == "sessions"), "{variables:?}");
    let ids: Vec<String> = variables.iter().map(|(_, to)| to.clone()).collect();
    let sizes = oracle(&snap, &ids)["retained"].clone();
    let mut by_size: Vec<(u64, &str)> =
        variables.iter().map(|(label, to)| (sizes[to].as_u64().unwrap(), label.as_str())).collect();
    by_size.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let named: Vec<&str> =
        title.split(": ").nth(1).unwrap().split(", ").filter_map(|v| v.split(' ').next()).take(3).collect();
    let biggest: Vec<&str> = by_size.iter().take(3).map(|(_, label)| *label).collect();
    assert_eq!(named, biggest, "{title} against Python's {by_size:?}");
}

#[test]
fn paths_in_a_node_service_lead_through_the_module_context_to_the_sessions_map() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let report = json_of(&["paths", snap.to_str().unwrap(), "--select", "class:Session", "--json", "-q"]);
    assert_eq!(report["selected"], REQUESTS, "{report:#}");
    let first = &report["paths"][0];
    assert_eq!(first["count"], REQUESTS, "one shape for every session: {report:#}");
    let steps = first["steps"].as_array().unwrap();
    let fields: Vec<&str> = steps.iter().skip(1).map(|s| s["field"].as_str().unwrap()).collect();
    let classes: Vec<&str> = steps.iter().map(|s| s["class"].as_str().unwrap()).collect();
    let at = fields.iter().position(|f| *f == "sessions").unwrap_or_else(|| panic!("{fields:?}"));
    assert_eq!(&classes[at..], ["system / Context", "Map", "(array)", "Session"], "{classes:?}");
    assert_eq!(fields[at - 1], "context", "{fields:?}");
    // Each step is an edge of the snapshot with the label shown.
    let ids: Vec<String> = steps.iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect();
    let truth = oracle(&snap, &ids[..ids.len() - 1]);
    for (k, field) in fields.iter().enumerate() {
        let out = truth["edges"][&ids[k]].as_array().unwrap();
        let to = u64::from_str_radix(ids[k + 1].trim_start_matches("0x"), 16).unwrap();
        assert!(
            out.iter().any(|e| e[0] == *field && e[1] == to),
            "no edge {field} from {} to {}: {out:?}",
            ids[k],
            ids[k + 1]
        );
    }
}

/// The 100 biggest retained sizes anywhere in the service's heap are memlab's, to the byte
/// (memlab's own parser and dominator tree, through its heap-analysis API).
#[test]
fn retained_sizes_in_a_node_service_are_memlabs() {
    let npm_root = Command::new("npm").args(["root", "-g"]).output();
    let memlab = npm_root.ok().map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join("memlab"));
    if !memlab.is_some_and(|m| m.is_dir()) {
        missing("memlab (npm install -g memlab)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let report = json_of(&["dominators", snap.to_str().unwrap(), "--flat", "--top", "100", "--json", "-q"]);
    let rows = report["objects"].as_array().unwrap();
    let ids: Vec<String> = rows
        .iter()
        .map(|r| u64::from_str_radix(r["id"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap().to_string())
        .collect();
    let run = Command::new("node").arg(node_dir().join("memlab_retained.js")).arg(&snap).args(&ids).bounded_output();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let theirs: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap();
    assert_eq!(rows.len(), 100);
    for (row, id) in rows.iter().zip(&ids) {
        assert_eq!(row["retained_bytes"], theirs[id], "@{id} {row}");
    }
}

/// The listeners the service adds to its long-lived `bus` per request are a suspect, as many
/// as the service's own `bus.listenerCount('config')`, with the variable that holds the bus.
#[test]
fn suspects_in_a_node_service_count_the_listeners_on_its_bus() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let listeners = suspect_titled(&snap, "'config' listeners");
    assert_eq!(listeners["instances"], REQUESTS, "the service counted {REQUESTS}: {listeners:#}");
    assert_eq!(listeners["data_structure"], "bus (closure variable)", "{listeners:#}");
    assert_eq!(listeners["path"].as_array().unwrap().last().unwrap()["class"], "EventEmitter", "{listeners:#}");
}

/// A redacted copy of the service's snapshot answers as the snapshot does, holds none of the
/// texts its requests left (the client's user agent, the paths), and keeps equal texts equal
/// and different texts different, as Python's json module compares the string nodes of both.
#[test]
fn a_redacted_snapshot_answers_the_same_without_the_services_texts() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let key = dir.path().join("key");
    std::fs::write(&key, [7u8; 32]).unwrap();
    let copy = dir.path().join("copy.heapsnapshot");
    let args = ["redact", snap.to_str().unwrap(), "-o", copy.to_str().unwrap(), "--key-file", key.to_str().unwrap()];
    let said = json_of(&[&args[..], &["--json", "-q"]].concat());
    assert!(said["arrays"].as_u64().unwrap() > REQUESTS, "a path and more a request: {said}");
    for command in
        [&["histogram"][..], &["dominators", "--flat", "--top", "30"], &["paths", "--select", "class:Session"]]
    {
        let ask = |s: &Path| json_of(&[command, &[s.to_str().unwrap(), "--json", "-q"]].concat());
        assert_eq!(ask(&copy), ask(&snap), "{command:?}");
    }
    let bytes = std::fs::read(&copy).unwrap();
    for text in ["leaky-client/1.0", "/item/7"] {
        assert!(!bytes.windows(text.len()).any(|w| w == text.as_bytes()), "{text} is still in the copy");
    }
    let compare = r#"
import json, sys
def texts(path):
    d = json.load(open(path))
    m = d["snapshot"]["meta"]; nf = m["node_fields"]; w = len(nf); t = nf.index("type"); n = nf.index("name")
    kinds = m["node_types"][0]; nodes = d["nodes"]; strings = d["strings"]
    return [strings[nodes[i + n]] for i in range(0, len(nodes), w) if kinds[nodes[i + t]] == "string"]
a, b = texts(sys.argv[1]), texts(sys.argv[2])
pairs = set(zip(a, b))
print(json.dumps({"nodes": len(a), "same": len(a) == len(b), "function": len({x for x, _ in pairs}) == len(pairs), "injective": len({y for _, y in pairs}) == len(pairs), "changed": sum(x != y for x, y in pairs)}))
"#;
    let run = Command::new("python3").arg("-c").arg(compare).arg(&snap).arg(&copy).bounded_output();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let verdict: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!([&verdict["same"], &verdict["function"], &verdict["injective"]], [true, true, true], "{verdict}");
    assert!(verdict["changed"].as_u64().unwrap() > REQUESTS, "{verdict}");
    // The same key, the same copy: snapshots redacted with one key compare.
    let again = dir.path().join("again.heapsnapshot");
    let out = leakscope(&[
        "redact",
        snap.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
        "--key-file",
        key.to_str().unwrap(),
        "-q",
    ]);
    assert!(out.status.success());
    assert!(std::fs::read(&again).unwrap() == bytes, "two copies under one key differ");
}

/// The service keeps each client's JSON Web Token in its session: `secrets` finds them all,
/// in every string object the root reaches whose text holds one (as many as Python's json
/// module counts), says what holds each, and fails the check; its redacted copy holds none.
#[test]
fn secrets_finds_the_tokens_a_node_service_keeps_and_its_redacted_copy_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let out = leakscope(&["secrets", snap.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let jwts: Vec<&Value> = report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "jwt").collect();
    // Every token's header is the same JSON, {"alg":"HS256","typ":"JWT"}.
    let header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";
    let truth = oracle(&snap, &[format!("text:{header}")]);
    assert!(jwts.len() as u64 >= REQUESTS, "{} tokens for {REQUESTS} sessions", jwts.len());
    assert_eq!(jwts.len() as u64, truth["texts"][header].as_u64().unwrap(), "{:#?}", &jwts[..3]);
    assert!(jwts.iter().all(|f| f["owner"].is_object() && f["path"].is_object()), "{:#?}", &jwts[..3]);
    assert!(jwts.iter().all(|f| !f["excerpt"].as_str().unwrap().contains(&header[8..])), "excerpts are masked");
    let copy = dir.path().join("copy.heapsnapshot");
    let redacted = leakscope(&["redact", snap.to_str().unwrap(), "-o", copy.to_str().unwrap(), "-q"]);
    assert!(redacted.status.success());
    let after = leakscope(&["secrets", copy.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(after.status.code(), Some(0), "{}", String::from_utf8_lossy(&after.stdout));
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

/// `retained` on the service's snapshot: each group's objects and bytes are Python's count, and
/// what it retains is what Python's brute force finds the root no longer reaches without it.
#[test]
fn retained_sizes_of_groups_in_a_node_service_are_what_the_root_no_longer_reaches() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    let p = snap.to_str().unwrap();
    let ours = json_of(&["retained", p, "--select", "class:Session", "--select", "class:EventEmitter", "--json", "-q"]);
    let theirs = oracle(&snap, &["class:Session".to_owned(), "class:EventEmitter".to_owned()]);
    for (k, class) in ["Session", "EventEmitter"].iter().enumerate() {
        let group = &ours["groups"][k];
        assert_eq!(group["selector"], format!("class:{class}"), "{ours:#}");
        assert_eq!(
            [&group["objects"], &group["shallow_bytes"]],
            [&theirs["histogram"][class][0], &theirs["histogram"][class][1]]
        );
        assert_eq!(group["retained_bytes"], theirs["retained"][format!("class:{class}")], "{class}: {ours:#}");
    }
    // Each Session is held by the Map and by a listener's closure on the bus: the bus (an
    // EventEmitter) and the Sessions together retain more than each alone.
    let union = ours["union"]["retained_bytes"].as_u64().unwrap();
    assert!(union >= ours["groups"][0]["retained_bytes"].as_u64().unwrap(), "{ours:#}");
    assert!(union >= ours["groups"][1]["retained_bytes"].as_u64().unwrap(), "{ours:#}");
}

#[test]
fn commands_that_read_jvm_dumps_only_say_so_on_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = service_snapshot(dir.path()) else { return };
    for args in [vec!["group", "--by", "class"], vec!["roots"]] {
        let mut all = args.clone();
        all.push(snap.to_str().unwrap());
        let out = leakscope(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("is a V8 heap snapshot"), "{args:?}: {err}");
    }
}

/// A snapshot is not read out of core yet: under a --memory-limit below what it needs, the
/// commands say so at once, naming both (exit 2); above it, they answer as without a limit.
#[test]
fn a_limit_below_what_a_snapshot_needs_is_refused_at_once() {
    let snap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/demo-page.heapsnapshot.gz");
    let snap = snap.to_str().unwrap();
    for command in ["dominators", "suspects", "growth"] {
        let mut args = vec![command, snap, "--memory-limit", "10M"];
        if command == "growth" {
            args.insert(1, snap);
        }
        let out = leakscope(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert_eq!(err.lines().count(), 1, "{command}: {err}");
        assert!(err.contains("needs about") && err.contains("--memory-limit 10 MiB: too little"), "{command}: {err}");
    }
    let roomy = json_of(&["dominators", "--json", "-q", snap, "--memory-limit", "1G"]);
    assert_eq!(roomy, json_of(&["dominators", "--json", "-q", snap]));
}

/// The three leaks of the service, found over a series of its snapshots, each named by the
/// variable that holds it: the module's `sessions` Map (its path from the root through the
/// request handler's closure and the module's context, its element `Session`), the listeners
/// on the module's `bus` EventEmitter, and the rendering closure's `pages` cache; with
/// allocations tracked, where the Sessions were allocated. Oracles: the service's source
/// (where each leak was planted, the handler that allocates a Session) and, per snapshot, the
/// Sessions counted by Python's json module, which also reads the allocation sites from the
/// snapshot's trace tree.
#[test]
fn growth_over_a_node_services_snapshots_names_each_leak_by_the_variable_that_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(series) = service_series(dir.path(), false, true) else { return };
    let mut args = vec!["growth", "--json", "-q"];
    args.extend(series.iter().map(|p| p.to_str().unwrap()));
    let report = json_of(&args);
    let findings = report["findings"].as_array().unwrap();
    let named = |name: &str| {
        findings.iter().find(|f| f["structure"] == name).unwrap_or_else(|| panic!("no {name}: {findings:#?}"))
    };
    let steps = |f: &Value| -> Vec<(String, String)> {
        let text = |v: &Value| v.as_str().unwrap().to_owned();
        f["path"].as_array().unwrap().iter().map(|s| (text(&s["via"]), text(&s["class"]))).collect()
    };

    let sessions = named("sessions (closure variable)");
    assert_eq!([&sessions["class"], &sessions["element"]], ["Map", "Session"], "{sessions:#}");
    // Root → … → the request handler (a closure) → its context → `sessions` → the Map.
    let path = steps(sessions);
    let tail: Vec<(&str, &str)> = path.iter().rev().take(3).map(|(v, c)| (v.as_str(), c.as_str())).collect();
    assert_eq!(&tail[..2], [("sessions", "Map"), ("context", "system / Context")], "{path:?}");
    assert_eq!(tail[2].1, "(closure)", "{path:?}");
    // Every Session of every snapshot is in the Map, as Python counts them.
    let counted: Vec<u64> =
        series.iter().map(|s| oracle(s, &[])["histogram"]["Session"][0].as_u64().unwrap()).collect();
    let per_heap = SERIES_REQUESTS / SERIES;
    assert_eq!(counted, (1..=SERIES).map(|s| s * per_heap).collect::<Vec<_>>(), "the service's count");
    let below = &sessions["growing_paths"][0];
    assert_eq!(below["path"].as_array().unwrap().last().unwrap()["class"], "Session", "{below}");
    // The Sessions under the Map, heap by heap, are Python's count. Every function of the
    // module shares the module's context, so they tie for the shortest path to it: the search
    // takes the tie by the places' names, or one heap in five placed the Map elsewhere and
    // counted 0 there.
    let member = &sessions["members"][0];
    assert_eq!(member["class"], "Session", "{sessions:#}");
    let ours: Vec<u64> = member["instances"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(ours, counted, "{sessions:#}");

    // The Sessions' allocation sites, as the trace tree says: the request handler's
    // `new Session(...)` first.
    let session_sites = report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == "Session")
        .map(|c| c["allocation_sites"].clone())
        .unwrap_or_else(|| panic!("Session is no candidate: {report:#}"));
    let theirs = oracle(series.last().unwrap(), &["class:Session".to_owned()])["sites"]["Session"].clone();
    let theirs = theirs.as_array().unwrap();
    let ours = session_sites.as_array().unwrap();
    assert!(!ours.is_empty(), "no allocation site: {report:#}");
    for (o, t) in ours.iter().zip(theirs) {
        assert_eq!([&o["live_bytes"], &o["frames"]], [&t[0], &t[1]], "{ours:#?}");
    }
    // The trace tree records functions: the frame is the request handler that calls
    // `new Session(...)`, where it starts in the source (1-based, as DevTools shows it).
    let source = std::fs::read_to_string(node_dir().join("leaky-service.js")).unwrap();
    let (line, text) = source.lines().enumerate().find(|(_, l)| l.contains("http.createServer(")).unwrap();
    let column = text.find("(req, res)").unwrap() + 1;
    let top = ours[0]["frames"][0].as_str().unwrap();
    assert!(top.ends_with(&format!("leaky-service.js:{}:{column})", line + 1)), "{top} is not the handler");
    assert_eq!(ours[0]["application_frame"], 0, "{ours:#?}");
    let info = json_of(&["info", series.last().unwrap().to_str().unwrap(), "--json", "-q"]);
    assert_eq!(info["allocation_sites"], true, "{info}");

    let listeners = findings
        .iter()
        .find(|f| f["known_as"] == "an EventEmitter's listeners")
        .unwrap_or_else(|| panic!("no listeners: {findings:#?}"));
    assert_eq!(listeners["element"], "(closure)", "{listeners:#}");
    assert!(steps(listeners).iter().any(|(v, c)| v == "bus" && c == "EventEmitter"), "{listeners:#}");

    let pages = named("pages (closure variable)");
    assert!(steps(pages).iter().any(|(v, _)| v == "render"), "{pages:#}");
    // The text says the same first.
    let mut text = args.clone();
    text.retain(|a| *a != "--json");
    let out = leakscope(&text);
    let first = String::from_utf8_lossy(&out.stdout).lines().find(|l| l.starts_with("#1 ")).unwrap_or("").to_owned();
    assert!(first.contains("sessions (closure variable)") && first.contains("Session"), "{first}");
    // And the CI gate fails on it.
    text.push("--fail-on-growth");
    assert_eq!(leakscope(&text).status.code(), Some(1), "--fail-on-growth");
}

/// The same service cleaning up after each request: nothing grows, and the CI gate passes.
#[test]
fn a_steady_node_service_reports_nothing_and_passes_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let Some(series) = service_series(dir.path(), true, false) else { return };
    let mut args = vec!["growth", "--json", "-q", "--fail-on-growth"];
    args.extend(series.iter().map(|p| p.to_str().unwrap()));
    let out = leakscope(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["candidates"], serde_json::json!([]), "{report:#}");
    assert_eq!(report["findings"], serde_json::json!([]), "{report:#}");
}

/// A page in headless Chromium (Debian's) whose list view caches every row it renders: each
/// render detaches the rows before it, and the cache keeps them. `suspects` finds the detached
/// rows as one group, with the path that keeps them and the variable they are kept in. Oracles:
/// the page's own arithmetic (9 of its 10 renders of 100 rows are out of the document), the
/// nodes V8 marks detached as Python's json module counts them, and each step of the path an
/// edge of the snapshot.
#[test]
fn a_pages_detached_dom_rows_are_found_with_the_cache_that_keeps_them() {
    if Command::new("chromium").arg("--version").output().is_err() {
        missing("chromium");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("page.heapsnapshot");
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chromium/leaky-page.html");
    let url = format!("file://{}?renders=10&rows=100", page.display());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chromium/snapshot.py");
    let run = Command::new("python3").arg(script).arg(&url).arg(&snap).bounded_output();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let said: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(said["title"], "rendered 10", "{said}");

    let rows = suspect_titled(&snap, "detached DOM");
    let truth = oracle(&snap, &[]);
    assert_eq!(truth["detached"]["<li class=\"row\">"], 900, "{}", truth["detached"]);
    assert_eq!(rows["instances"], 900, "{rows:#}");
    // `info` counts them too, and says the snapshot was taken without allocation tracking.
    let info = json_of(&["info", snap.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(
        [&info["detached_dom_nodes"], &info["allocation_sites"]],
        [&serde_json::json!(900), &Value::Bool(false)]
    );
    assert_eq!(rows["data_structure"], "rowCache (closure variable)", "{rows:#}");
    let steps = rows["path"].as_array().unwrap();
    let fields: Vec<&str> = steps.iter().skip(1).map(|s| s["field"].as_str().unwrap()).collect();
    let at = fields.iter().position(|f| *f == "rowCache").unwrap_or_else(|| panic!("{fields:?}"));
    assert_eq!(steps[at + 1]["class"], "Map", "{steps:?}");
    assert_eq!(steps.last().unwrap()["class"], "<li class=\"row\">", "{steps:?}");
    let ids: Vec<String> = steps.iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect();
    let edges = oracle(&snap, &ids[..ids.len() - 1]);
    for (k, field) in fields.iter().enumerate() {
        let to = u64::from_str_radix(ids[k + 1].trim_start_matches("0x"), 16).unwrap();
        let out = edges["edges"][&ids[k]].as_array().unwrap();
        assert!(out.iter().any(|e| e[0] == *field && e[1] == to), "no edge {field} to {}: {out:?}", ids[k + 1]);
    }
}
