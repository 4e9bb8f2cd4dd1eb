//! The application layer called as a library, on the bundled demo dump and on run stores
//! built in memory.

use std::path::{Path, PathBuf};

use app::inputs::{self, InputKind};
use app::series::{growth_of_series, SeriesRequest};
use app::{Error, ReadSettings};
use graph::NoProgress;

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/demo-jdk17.hprof")
}

#[test]
fn inputs_are_told_apart_by_what_they_hold() {
    assert_eq!(inputs::kind(&demo()).unwrap(), InputKind::Dump);
    let corpus =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus/openjdk_jdk11_04_x64.hprof.gz");
    assert_eq!(inputs::kind(&corpus).unwrap(), InputKind::Dump, "a gzip dump, by what it unpacks to");
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("s.json");
    let (s, _) = inputs::summarize_dump(&demo(), &ReadSettings::default(), &NoProgress, false).unwrap();
    std::fs::write(&summary, serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(inputs::kind(&summary).unwrap(), InputKind::Summary);
    assert_eq!(inputs::read_summary(&summary).unwrap().classes, s.classes);
    let other = dir.path().join("notes.txt");
    std::fs::write(&other, "hello").unwrap();
    assert!(matches!(inputs::kind(&other), Err(Error::Usage(m)) if m.contains("neither an HPROF heap dump")));
    let store = dir.path().join("run.db");
    runstore::Store::create(&store, &[]).unwrap();
    assert_eq!(inputs::kind(&store).unwrap(), InputKind::RunStore);
    let both = [store.clone(), demo()];
    assert!(matches!(inputs::run_store(&both), Err(Error::Usage(m)) if m.contains("give it alone")));
}

#[test]
fn a_series_of_one_heap_twice_grows_nothing_and_says_why() {
    let series = [demo(), demo()];
    let settings = ReadSettings::default();
    let options = growth::Options::default();
    let req = SeriesRequest { inputs: &series, settings: &settings, options: &options, explain: &[], keep_last: false };
    let report = growth_of_series(req, 5, 3, &NoProgress).unwrap();
    assert!(report.findings.is_empty() && report.candidates.is_empty());
    assert!(report.notes.iter().any(|n| n.contains("at least 3 heaps are needed")), "{:?}", report.notes);
    assert!(app::series::gate_can_judge(&options, 2, "heaps").is_err());
    assert!(app::series::gate_can_judge(&options, 3, "heaps").is_ok());
}

fn watched(class: &str, holders: &[&str], last_ms: Option<u64>, freed: bool) -> runstore::WatchedObject {
    runstore::WatchedObject {
        class: class.into(),
        holders: holders.iter().map(|h| h.to_string()).collect(),
        tagged_ms: 1_000,
        last_ms,
        location: last_ms.map(|_| "App.touch(App.java:7)".into()),
        freed,
    }
}

#[test]
fn staleness_groups_live_watched_objects_by_path_oldest_first() {
    let held = ["java.util.HashMap$Node", "java.util.HashMap", "Registry", "class App"];
    let run = runstore::Run {
        watched: vec![
            watched("Session", &held, Some(2_000), false),
            watched("Session", &held, Some(9_000), false),
            watched("Session", &held, None, false),
            watched("Session", &held, Some(1_500), true),
            watched("Session", &["Cache"], Some(5_000), false),
        ],
        ..Default::default()
    };
    let rules = vec![vec!["Registry".to_string(), "Session".to_string()]];
    let r = app::staleness::stale_report(&run, &rules, "run.db".into(), 10_000, 0);
    assert_eq!(r.paths.len(), 1);
    let p = &r.paths[0];
    assert_eq!(p.path, ["class App", "Registry", "java.util.HashMap", "java.util.HashMap$Node", "Session"]);
    // Ages at 10 s: never used since tagged at 1 s (9 s), used at 2 s (8 s), at 9 s (1 s).
    assert_eq!((p.count, p.last_access.longest_ms, p.last_access.most_recent_ms), (3, 9_000, 1_000));
    assert_eq!(r.unmatched, 1, "the cache session matches no rule: {r:?}");
    assert!(r.notes.iter().any(|n| n.contains("1 objects were not used")), "{:?}", r.notes);
    let older = app::staleness::stale_report(&run, &rules, "run.db".into(), 10_000, 5_000);
    assert_eq!(older.paths[0].count, 2);
}

#[test]
fn expectations_of_a_run_say_which_are_still_reachable() {
    let x = |at_ms, freed, checked_ms, reached| runstore::StoredExpectation {
        class: "Order".into(),
        site: "Shop.close(Shop.java:5)".into(),
        at_ms,
        freed,
        checked_ms,
        reached,
        held_by: if reached { vec!["java.util.HashMap$Node".into()] } else { Vec::new() },
    };
    let run = runstore::Run {
        expectations: vec![
            x(1_000, false, Some(4_000), true),
            x(2_000, true, Some(4_000), false),
            x(3_000, false, Some(4_000), false),
            x(5_000, false, Some(4_000), false),
        ],
        ..Default::default()
    };
    let r = app::expectations::of_run(&run, "the run");
    assert_eq!((r.expectations, r.collected, r.unchecked), (4, 2, 1));
    assert_eq!(r.reachable.len(), 1);
    assert_eq!(r.reachable[0].declared_ms_ago, 3_000);
}
