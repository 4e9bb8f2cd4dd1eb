//! Growth over a series of heaps (Cork): Java programs that leak in different ways and
//! programs that do not, each run in phases with a live heap dump after every phase.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{leakscope, wait_bounded, BoundedOutput, Jdk};

/// Runs `tests/java/Growth.java` SCENARIO for `phases` phases; the dumps, oldest first.
pub(crate) fn series(scenario: &str, phases: usize) -> (tempfile::TempDir, Vec<PathBuf>) {
    series_on(&Jdk::default_jdk(), scenario, phases)
}

/// [`series`] on `jdk`.
pub(crate) fn series_on(jdk: &Jdk, scenario: &str, phases: usize) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    jdk.compile("Growth", dir.path());
    let out = jdk
        .tool("java")
        .args(["-Xmx256m", "-XX:+UseG1GC", "-cp"])
        .arg(dir.path())
        .args(["Growth", scenario, &phases.to_string()])
        .arg(dir.path())
        .bounded_output();
    assert!(out.status.success(), "Growth {scenario}: {}", String::from_utf8_lossy(&out.stderr));
    let dumps = (1..=phases).map(|p| dir.path().join(format!("{scenario}-{p:02}.hprof"))).collect();
    (dir, dumps)
}

fn args_of<'a>(cmd: &'a str, dumps: &'a [PathBuf], extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![cmd, "--quiet"];
    args.extend(dumps.iter().map(|p| p.to_str().unwrap()));
    args.extend_from_slice(extra);
    args
}

fn growth(dumps: &[PathBuf], extra: &[&str]) -> Value {
    let out = leakscope(&args_of("growth", dumps, &[&["--json"], extra].concat()));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn classes(report: &Value) -> Vec<String> {
    report["candidates"].as_array().unwrap().iter().map(|c| c["class"].as_str().unwrap().to_owned()).collect()
}

/// Checks the first finding: it is headed by the leaking application class, its holders
/// are reached through `field` and retain something, and no collection internals head any
/// finding. The class ranking still has the leaking class as a candidate.
fn assert_found(report: &Value, leaking: &str, field: &str) {
    assert!(classes(report).iter().any(|c| c == leaking), "{leaking} is no candidate: {:?}", classes(report));
    let first = &report["findings"][0];
    assert_eq!(first["members"][0]["class"], leaking, "first finding: {first:#}");
    let holders = first["holders"].as_array().unwrap();
    let fields: Vec<&str> =
        holders.iter().flat_map(|h| h["path"].as_array().unwrap()).filter_map(|s| s["field"].as_str()).collect();
    assert!(fields.contains(&field), "no holder reached through {field}: {fields:?}");
    assert!(holders[0]["retained_bytes"].as_u64().unwrap() > 0);
    for f in report["findings"].as_array().unwrap() {
        let head = f["members"][0]["class"].as_str().unwrap();
        let internal = head.contains("$Node")
            || head.contains("$Entry")
            || head.ends_with("KeySetView")
            || head == "java.lang.Object[]";
        assert!(!internal, "{head} heads {}", f["structure"]);
    }
}

/// Growth over the last three dumps of a leaking series (a leak already under way, seen
/// "yesterday, today, tomorrow"): its first finding is `structure`, named with a holder, and
/// the gate fails; over a steady series nothing is named and the gate passes.
pub(crate) fn assert_last_three(dumps: &[PathBuf], structure: Option<&str>) {
    let last = &dumps[dumps.len() - 3..];
    let report = growth(last, &["--holders", "1"]);
    let notes = report["notes"].to_string();
    assert!(notes.contains("3 heaps are fewer than the ranking needs"), "{notes}");
    let gate = leakscope(&args_of("growth", last, &["--fail-on-growth", "--holders", "0"])).status.code();
    match structure {
        Some(name) => {
            let first = &report["findings"][0];
            assert_eq!(first["structure"], name, "last three dumps: {report:#}");
            let holder = &first["holders"][0];
            assert!(holder["retained_bytes"].as_u64().unwrap_or(0) > 0, "a holder retains it: {first:#}");
            assert_eq!(gate, Some(1), "the gate fails on a leak under way");
        }
        None => {
            assert_eq!(
                (classes(&report), report["findings"].clone()),
                (Vec::new(), serde_json::json!([])),
                "{report:#}"
            );
            assert_eq!(gate, Some(0), "the gate passes a steady series: {}", report["not_enough_data"]);
        }
    }
}

#[test]
fn a_map_that_is_never_cleaned() {
    let (_dir, dumps) = series("map", 8);
    let report = growth(&dumps, &[]);
    assert_found(&report, "Growth$Session", "static sessions");
    // The structure's bytes are all it holds (sessions, their ids and strings, the map's
    // nodes and table), as its holder's retained size counts them, not its members alone.
    let first = &report["findings"][0];
    let held = first["volumes"].as_array().unwrap().last().unwrap().as_u64().unwrap();
    let retained = first["holders"][0]["retained_bytes"].as_u64().unwrap();
    let members: u64 = first["members"].as_array().unwrap().iter().map(|m| m["volumes"][7].as_u64().unwrap()).sum();
    assert!(held * 10 >= retained * 9 && held * 10 <= retained * 11, "held {held}, the holder retains {retained}");
    assert!(held > members, "held {held}, members alone {members}");
    assert_last_three(&dumps, Some("Growth$SessionStore.sessions"));
    assert_eq!(report["snapshots"].as_array().unwrap().len(), 8);
    let first = &report["candidates"][0];
    let edges = first["slice"]["edges"].as_array().unwrap();
    assert!(edges.iter().any(|e| e["from"] == "java.util.HashMap$Node[]" && e["to"] == "java.util.HashMap$Node"));
    assert_eq!(first["allocation_sites"], serde_json::json!([]));
}

#[test]
fn listeners_never_unregistered() {
    let (_dir, dumps) = series("listeners", 8);
    assert_found(&growth(&dumps, &[]), "Growth$Widget", "static listeners");
    assert_last_three(&dumps, Some("Growth$EventBus.listeners"));
}

#[test]
fn thread_locals_of_pool_threads() {
    let (_dir, dumps) = series("threadlocal", 8);
    let report = growth(&dumps, &[]);
    assert_found(&report, "Growth$Trace", "threadLocals");
    let holders = report["candidates"][0]["holders"].as_array().unwrap();
    assert!(holders.iter().all(|h| h["root"]["kind"] == "thread"), "held from pool threads: {holders:?}");
    assert!(holders.len() >= 2, "one list per pool thread");
    assert_last_three(&dumps, Some("java.lang.Thread.threadLocals"));
}

#[test]
fn kept_by_one_of_two_indexes() {
    let (_dir, dumps) = series("twoindexes", 8);
    let report = growth(&dumps, &[]);
    assert_found(&report, "Growth$Customer", "static byName");
    let fields: Vec<&str> = report["candidates"][0]["holders"][0]["path"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["field"].as_str())
        .collect();
    assert!(!fields.contains(&"static byId"), "the index that lets go is not the holder");
    assert_last_three(&dumps, Some("Growth$Directory.byName"));
}

#[test]
fn a_slow_leak_under_a_fluctuating_working_set() {
    let (_dir, dumps) = series("slowjitter", 12);
    assert_found(&growth(&dumps, &[]), "Growth$Record", "static records");
}

#[test]
fn phases_that_rise_and_fall_are_not_a_leak() {
    let (_dir, dumps) = series("phases", 8);
    let report = growth(&dumps, &[]);
    assert_eq!(classes(&report), Vec::<String>::new());
    let totals: Vec<u64> =
        report["snapshots"].as_array().unwrap().iter().map(|s| s["total_bytes"].as_u64().unwrap()).collect();
    assert!(totals.windows(2).any(|w| w[1] < w[0]) && totals.windows(2).any(|w| w[1] > w[0]), "{totals:?}");
    assert_last_three(&dumps, None);
}

#[test]
fn a_bounded_cache_that_filled_up_is_not_a_leak_though_cork_says_so() {
    let (_dir, dumps) = series("cache", 8);
    assert_eq!(classes(&growth(&dumps, &[])), Vec::<String>::new());
    let cork = growth(&dumps, &["--method", "cork", "--holders", "0"]);
    assert!(classes(&cork).contains(&"java.util.LinkedHashMap$Entry".to_owned()), "{:?}", classes(&cork));
    let out = leakscope(&args_of("growth", &dumps, &["--explain", "java.util.LinkedHashMap$Entry"]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("stopped growing"));
    // While it still fills, it grows: the first three heaps report it.
    assert!(classes(&growth(&dumps[..3], &["--holders", "0"])).contains(&"java.util.LinkedHashMap$Entry".to_owned()));
    // Full, under a working set swinging by up to 2 MiB: three heaps do not take it for a leak.
    assert_last_three(&dumps, None);
}

#[test]
fn fail_on_growth_fails_a_leaking_scenario_only() {
    let (_dir, leak) = series("map", 5);
    let (_dir2, fine) = series("cache", 8);
    let code = |d: &[PathBuf]| leakscope(&args_of("growth", d, &["--fail-on-growth", "--holders", "0"])).status.code();
    assert_eq!(code(&leak), Some(1));
    assert_eq!(code(&fine), Some(0));
}

#[test]
fn streaming_summary_equals_the_snapshots() {
    let (_dir, dumps) = series("twoindexes", 2);
    let fixture = PathBuf::from(crate::support::DEMO);
    for path in [dumps[1].clone(), fixture] {
        let dump = heap::Dump::open(&path).unwrap();
        let graph = heap::ClassGraph::build_keeping(&dump, &Default::default(), &graph::NoProgress).unwrap();
        let streamed = analysis::summarize(&graph, "x");
        let snap = heap::Snapshot::build(dump, &Default::default(), &graph::NoProgress).unwrap();
        let mut from_snapshot = analysis::summarize_snapshot(&snap, "x");
        let mut streamed_edges = streamed.edges.clone();
        let key = |e: &growth::EdgeVolume| (e.from.clone(), e.to.clone(), e.bytes, e.references);
        streamed_edges.sort_by_key(key);
        from_snapshot.edges.sort_by_key(key);
        assert_eq!(streamed_edges, from_snapshot.edges, "{}", path.display());
        assert_eq!(streamed.classes, from_snapshot.classes);
        assert_eq!(streamed.paths, from_snapshot.paths, "the same path tree, node for node");
        let traced = snap.live(true).unwrap();
        let kept = graph.objects.as_ref().unwrap();
        assert_eq!(kept.node_of, traced.node_of, "objects numbered alike, each at the same place");
        assert_eq!(kept.parent, traced.parent);
        assert!(streamed.paths.len() > 100, "{}", streamed.paths.len());
        assert_eq!(
            (
                streamed.total_instances + streamed.unreachable_instances,
                streamed.total_bytes + streamed.unreachable_bytes
            ),
            (graph.census.total().instances, graph.census.total().shallow_bytes),
            "live and unreachable objects together are the census"
        );
        assert!(streamed.edges.iter().any(|e| e.from == "class Growth$Directory" || e.from.starts_with("class ")));
    }
}

#[test]
fn saved_summaries_stand_in_for_dumps_and_diff_counts_the_leak() {
    let (dir, dumps) = series("map", 6);
    let mut saved = Vec::new();
    for (i, d) in dumps.iter().enumerate() {
        let json = dir.path().join(format!("s{i}.json"));
        let out = leakscope(&["summary", "-q", d.to_str().unwrap(), "-o", json.to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        saved.push(json);
    }
    let from_dumps = growth(&dumps, &["--holders", "0"]);
    let from_saved = growth(&saved, &[]);
    assert_eq!(classes(&from_dumps), classes(&from_saved));
    assert_eq!(from_dumps["candidates"][0]["slice"], from_saved["candidates"][0]["slice"]);
    // 3000 sessions a phase, and every fourth is never removed: 750 more per phase.
    let out = leakscope(&["diff", "-q", saved[0].to_str().unwrap(), dumps[5].to_str().unwrap(), "--json"]);
    let diff: Value = serde_json::from_slice(&out.stdout).unwrap();
    let session = diff["classes"].as_array().unwrap().iter().find(|c| c["class"] == "Growth$Session").unwrap();
    assert_eq!(session["delta_instances"], 5 * 750);
    let held = diff["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["from"] == "java.util.HashMap$Node" && e["to"] == "Growth$Session")
        .unwrap();
    assert_eq!(held["delta_bytes"], session["delta_bytes"], "each session is referenced by one map node");
}

#[test]
fn dot_graph_and_bad_inputs() {
    let (dir, dumps) = series("listeners", 4);
    let dot = dir.path().join("slice.dot");
    let out = leakscope(&args_of("growth", &dumps, &["--holders", "0", "--dot", dot.to_str().unwrap()]));
    assert!(out.status.success());
    let text = std::fs::read_to_string(&dot).unwrap();
    assert!(
        text.starts_with("digraph")
            && text.contains("\"java.util.concurrent.CopyOnWriteArrayList\" -> \"java.lang.Object[]\""),
        "{text}"
    );
    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, "hello").unwrap();
    let out = leakscope(&["growth", dumps[0].to_str().unwrap(), junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither an HPROF heap dump"));
    let out = leakscope(&["growth", dumps[0].to_str().unwrap(), "--decay", "150"]);
    assert_eq!(out.status.code(), Some(2));
    let one = growth(&dumps[..1], &[]);
    assert!(one["notes"][0].as_str().unwrap().contains("at least 3 heaps"), "{one}");
}

/// The jars of Debian's H2, Lucene 4.10 and Tomcat 10 packages, if installed (`scripts/test`
/// installs them).
fn debian_app_jars() -> Option<String> {
    let dir = Path::new("/usr/share/java");
    let mut jars: Vec<PathBuf> = ["h2.jar", "lucene-core-4.10.4.jar", "lucene-analyzers-common-4.10.4.jar"]
        .iter()
        .map(|j| dir.join(j))
        .collect();
    let tomcat = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        name.starts_with("tomcat10-") && !name.contains("-10.")
    });
    jars.extend(tomcat);
    if jars.iter().take(3).any(|j| !j.exists()) || jars.len() < 10 {
        return None;
    }
    Some(jars.iter().map(|j| j.to_string_lossy().into_owned()).collect::<Vec<_>>().join(":"))
}

#[test]
fn real_applications_under_steady_load_are_not_leaks() {
    let Some(jars) = debian_app_jars() else {
        crate::support::missing("Debian's libh2-java, liblucene4.10-java and libtomcat10-java");
        return;
    };
    let jdk = Jdk::default_jdk();
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/SteadyApps.java");
    let ok =
        jdk.tool("javac").args(["--release", "17", "-cp", &jars, "-d"]).arg(dir.path()).arg(&src).status().unwrap();
    assert!(ok.success());
    let cp = format!("{jars}:{}", dir.path().display());
    let runs: Vec<_> = ["h2", "lucene", "tomcat"]
        .iter()
        .map(|app| {
            let child = jdk
                .tool("java")
                .args(["-Xmx256m", "-cp", &cp, "SteadyApps", app, "8"])
                .arg(dir.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .process_group(0)
                .spawn()
                .unwrap();
            (app, child)
        })
        .collect();
    for (app, child) in runs {
        let out = wait_bounded(child, app);
        assert!(out.status.success(), "{app}: {}", String::from_utf8_lossy(&out.stderr));
        let dumps: Vec<PathBuf> = (1..=8).map(|p| dir.path().join(format!("{app}-{p:02}.hprof"))).collect();
        let report = growth(&dumps, &["--holders", "0"]);
        assert_eq!(classes(&report), Vec::<String>::new(), "{app} under steady load");
        assert!(report["snapshots"][0]["total_bytes"].as_u64().unwrap() > 4 << 20, "{app} did real work");
        assert_last_three(&dumps, None);
    }
}

use crate::support::DEMO;

#[test]
fn two_heaps_are_not_enough_to_say_no_leak() {
    let out = leakscope(&["growth", "--quiet", DEMO, DEMO]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Not enough data yet to judge growth: 2 heaps"), "{text}");
    assert!(!text.contains("No growing class"), "{text}");
    let out = leakscope(&["growth", "--quiet", "--json", DEMO, DEMO]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["not_enough_data"].as_str().unwrap().contains("at least 3 heaps"), "{doc}");
}
