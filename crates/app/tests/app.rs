//! The application layer called as a library, on the bundled demo dump and on run stores
//! built in memory.

use std::path::{Path, PathBuf};

use app::inputs::{self, InputKind};
use app::series::{growth_of_series, SeriesRequest};
use app::{Error, ReadSettings};
use graph::NoProgress;
use runstore::Checked;

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
    assert!(app::series::gate_can_judge(&options, 2, "heap").is_err());
    assert!(app::series::gate_can_judge(&options, 3, "heap").is_ok());
}

fn watched(class: &str, holders: &[&str], last_ms: Option<u64>, freed: bool) -> runstore::WatchedObject {
    runstore::WatchedObject {
        class: class.into(),
        holders: holders.iter().map(|h| h.to_string()).collect(),
        tagged_ms: 1_000,
        last_ms,
        location: last_ms.map(|_| "App.touch(App.java:7)".into()),
        freed,
        fields: Vec::new(),
    }
}

#[test]
fn staleness_groups_live_watched_objects_by_path_oldest_first() {
    let held = ["java.util.HashMap$Node", "java.util.HashMap$Node[]", "java.util.HashMap", "Registry", "class App"];
    let run = runstore::Run {
        watched: vec![
            watched("Session", &held, Some(2_000), false),
            watched("Session", &held, Some(9_000), false),
            watched("Session", &held, None, false),
            watched("Session", &held, Some(1_500), true),
            watched("Session", &["Cache"], Some(5_000), false),
            // Followed two holders out, not yet to a root: the rule may match it later.
            watched("Session", &["java.util.HashMap$Node", "…"], Some(5_000), false),
            watched("Session", &[], Some(5_000), false),
            // Deeper in a bucket's chain of the same map: the same path, held by the inner
            // node's value, which its outer node holds by `next`.
            runstore::WatchedObject {
                fields: ["value", "next", "[]", "table", "sessions", "REGISTRY"].map(String::from).to_vec(),
                ..watched(
                    "Session",
                    &[
                        "java.util.HashMap$Node",
                        "java.util.HashMap$Node",
                        "java.util.HashMap$Node[]",
                        "java.util.HashMap",
                        "Registry",
                        "class App",
                    ],
                    Some(9_500),
                    false,
                )
            },
        ],
        ..Default::default()
    };
    let rules = vec![vec!["Registry".to_string(), "Session".to_string()]];
    let r = app::staleness::stale_report(&run, &rules, "run.db".into(), 10_000, 0);
    assert_eq!(r.paths.len(), 1);
    let p = &r.paths[0];
    assert_eq!(
        p.path,
        ["class App", "Registry", "java.util.HashMap", "java.util.HashMap$Node[]", "java.util.HashMap$Node", "Session"]
    );
    // The fields one object's path knew are the path's; the chain's step is held by `value`.
    assert_eq!(p.fields, ["REGISTRY", "sessions", "table", "[]", "value", ""]);
    // Ages at 10 s: never used since tagged at 1 s (9 s), used at 2 s (8 s), at 9 s (1 s).
    assert_eq!((p.count, p.last_access.longest_ms, p.last_access.most_recent_ms), (4, 9_000, 500));
    assert_eq!(r.unmatched, 1, "the cache session matches no rule: {r:?}");
    assert_eq!(r.not_followed, 2, "two sessions' paths are not followed to a root: {r:?}");
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

/// A run store in memory: one sampled snapshot every 10 s with `Session` at `bytes(i)`,
/// checked by `checked(i)`, and `Filler` steady.
fn sampled_run(n: usize, checked: impl Fn(usize) -> Checked, bytes: impl Fn(usize) -> u64) -> runstore::Run {
    let summary = |i: usize| {
        let classes = vec![
            growth::ClassVolume { name: "Session".into(), instances: bytes(i) / 64, bytes: bytes(i) },
            growth::ClassVolume { name: "Filler".into(), instances: 1_000, bytes: 64_000_000 },
        ];
        growth::HeapSummary {
            source: format!("gc {i}"),
            time_ms: Some(1_000_000 + 10_000 * i as u64),
            gc_count: Some(i as u64),
            total_bytes: classes.iter().map(|c| c.bytes).sum(),
            total_instances: classes.iter().map(|c| c.instances).sum(),
            classes,
            ..Default::default()
        }
    };
    runstore::Run {
        meta: [("interval".to_string(), "1048576".to_string()), ("walk_every_ms".into(), "60000".into())].into(),
        samples: (0..n).map(summary).collect(),
        checked: (0..n).map(checked).collect(),
        events: vec!["heap walk skipped: predicted pause 1.01 s exceeds max_pause 1.00 s".into()],
        ..Default::default()
    }
}

#[test]
fn a_run_whose_walks_stopped_early_is_ranked_on_all_its_snapshots() {
    // Tomcat's case (issue 17): walks ran while the heap was small, then were skipped for
    // their predicted pause while sessions piled up. The walk-checked snapshots alone show
    // nothing growing; the run as a whole does.
    let grows_late = |i: usize| if i < 8 { 4_000_000 } else { 4_000_000 + (i as u64 - 8) * 8_000_000 };
    let run = sampled_run(40, |i| if i < 8 { Checked::Walk } else { Checked::Nothing }, grows_late);
    let r = app::series::run_report(&run, &growth::Options::default(), &[]);
    assert_eq!(r.candidates.first().map(|c| c.class.as_str()), Some("Session"), "{:?}", r.notes);
    assert!(r.notes.iter().any(|n| n.contains("walk-checked snapshots end 5 min 20 s before")), "{:?}", r.notes);
    assert!(r.notes.iter().any(|n| n.contains("1 skipped or stopped") && n.contains("max_pause")), "{:?}", r.notes);
    // Walks that kept up: the walk-checked series is the one ranked, and a steady one is
    // judged (not "not enough data").
    let steady = sampled_run(40, |_| Checked::Walk, |_| 4_000_000);
    let r = app::series::run_report(&steady, &growth::Options::default(), &[]);
    assert!(r.candidates.is_empty() && r.not_enough_data.is_none(), "{:?}", r.candidates);
}

#[test]
fn a_collectors_sawtooth_is_not_growth_when_snapshots_after_collections_exist() {
    // Tomcat under steady load (issue 17): samples taken between collections also count the
    // garbage since the last one, which rises and falls; those right after a collection do
    // not. A collection every tenth snapshot (a large young generation under light load);
    // between them the garbage piles up, and the run ends before the next collection.
    let garbage = |i: usize| 4_000_000 + (i % 10) as u64 * 8_000_000;
    let after = |i: usize| if i.is_multiple_of(10) { Checked::Collection } else { Checked::Nothing };
    let r = app::series::run_report(&sampled_run(60, after, garbage), &growth::Options::default(), &[]);
    assert!(r.candidates.is_empty(), "{:?} {:?}", r.candidates.iter().map(|c| &c.class).collect::<Vec<_>>(), r.notes);
    assert!(
        r.notes.iter().any(|n| n.contains("ranked on the 6 snapshots sampled right after collections")),
        "{:?}",
        r.notes
    );
    assert_eq!(r.snapshots.len(), 6, "only the snapshots after collections are ranked");
}

#[test]
fn a_run_observed_for_less_than_a_minute_is_not_judged_yet() {
    // A service's warm-up grows too: six snapshots 10 s apart, growing all along.
    let run = sampled_run(6, |_| Checked::Walk, |i| 4_000_000 * (i as u64 + 1));
    let r = app::series::run_report(&run, &growth::Options::default(), &[]);
    assert!(r.candidates.is_empty(), "{:?}", r.candidates.iter().map(|c| &c.class).collect::<Vec<_>>());
    let why = r.not_enough_data.as_deref().expect("not enough data");
    assert!(why.contains("observed for 50.0 s") && why.contains("at least 1 min 0 s"), "{why}");
    // Asked to judge from 30 s on, the same run has its candidate.
    let short = growth::Options { min_span_ms: Some(30_000), ..Default::default() };
    let r = app::series::run_report(&run, &short, &[]);
    assert_eq!(r.candidates.first().map(|c| c.class.as_str()), Some("Session"), "{:?}", r.not_enough_data);
}

#[test]
fn a_leak_held_flat_by_a_full_heap_is_judged_on_the_snapshots_before_it_filled() {
    // 20 snapshots 10 s apart growing 4 MB each, then 40 flat at the heap's limit: judged to
    // the end, the ranking's decay takes the flat part for a leak that stopped.
    let run = sampled_run(60, |_| Checked::Walk, |i| 4_000_000 * (i.min(19) as u64 + 1));
    let r = app::series::run_report(&run, &growth::Options::default(), &[]);
    assert!(r.candidates.is_empty(), "before the agent says the heap is full: {:?}", r.notes);
    // The agent found the heap full at the 20th snapshot.
    let mut full = run.clone();
    full.meta.insert("heap_full_ms".into(), (1_000_000 + 10_000 * 19).to_string());
    full.meta.insert("heap_max_bytes".into(), "160000000".into());
    let r = app::series::run_report(&full, &growth::Options::default(), &[]);
    assert_eq!(r.candidates.first().map(|c| c.class.as_str()), Some("Session"), "{:?}", r.notes);
    assert_eq!(r.snapshots.len(), 20);
    let note = r.notes.iter().find(|n| n.contains("heap has been full")).expect("a note on the full heap");
    assert!(note.contains("judged on the 20 snapshots before it filled, 40 after left out"), "{note}");
    // Once the heap is no longer full (the agent clears the time), the whole run is judged.
    full.meta.insert("heap_full_ms".into(), String::new());
    let r = app::series::run_report(&full, &growth::Options::default(), &[]);
    assert!(r.candidates.is_empty() && r.snapshots.len() == 60);
}

#[test]
fn a_run_too_short_to_judge_says_so_instead_of_no_leak() {
    let run = sampled_run(2, |_| Checked::Walk, |i| 4_000_000 * (i as u64 + 1));
    let r = app::series::run_report(&run, &growth::Options::default(), &[]);
    assert!(r.candidates.is_empty());
    let why = r.not_enough_data.as_deref().expect("not enough data");
    assert!(why.contains("2 heaps"), "{why}");
}

#[test]
fn top_rates_allocation_over_a_second_not_over_a_walks_instant() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.db");
    let mut store = runstore::Store::create(&path, &[("pid", "1".into())]).unwrap();
    let session =
        |allocated_bytes| runstore::SampledClass { name: "Session".into(), instances: 10, bytes: 640, allocated_bytes };
    store.write_sample(1_000, 1, Checked::Nothing, &[session(0)], &[]).unwrap();
    store.write_sample(3_000, 2, Checked::Nothing, &[session(4_000_000)], &[]).unwrap();
    // A walk's snapshot 5 ms later: nothing allocated in between.
    store.write_sample(3_005, 2, Checked::Walk, &[session(4_000_000)], &[]).unwrap();
    drop(store);
    let v = app::live::top_view(&path).unwrap();
    let c = v.classes.iter().find(|c| c.name == "Session").unwrap();
    // 4 MB over the 2.005 s since the sample at 1 s.
    assert_eq!(c.allocated_bytes_per_s, 4_000_000 * 1000 / 2005);
}

#[test]
fn check_of_a_store_before_the_agents_first_walk_cannot_say_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.db");
    let mut store = runstore::Store::create(&path, &[("pid", "1".into())]).unwrap();
    let session = runstore::SampledClass { name: "Session".into(), instances: 10, bytes: 640, allocated_bytes: 0 };
    store.write_sample(1_000, 1, Checked::Nothing, std::slice::from_ref(&session), &[]).unwrap();
    let settings = ReadSettings::default();
    // Declarations are recorded at walks: before the first, "none declared" would be a guess.
    let err = app::expectations::of_file(&path, &settings, &NoProgress).unwrap_err();
    assert!(matches!(&err, Error::Usage(m) if m.contains("not walked the heap yet")), "{err}");
    // After a walk that saw none, none were declared: that is an answer.
    let walk = growth::HeapSummary { source: "walk".into(), time_ms: Some(2_000), ..Default::default() };
    store.write_walk(&walk, 3.0, &[]).unwrap();
    let report = app::expectations::of_file(&path, &settings, &NoProgress).unwrap();
    assert_eq!((report.expectations, report.reachable.len()), (0, 0));
}
