//! The run store written and read back, as the agent writes it and the binary reads it.

use growth::{ClassVolume, EdgeVolume, HeapSummary};
use runstore::{
    read, Checked, HolderChain, SampledClass, Store, StoreError, StoredExpectation, WatchedObject, MAX_SAMPLES,
};

fn class(name: &str, bytes: u64) -> SampledClass {
    SampledClass { name: name.into(), instances: bytes / 16, bytes, allocated_bytes: bytes * 3 }
}

#[test]
fn writes_and_reads_back_samples_walks_sites_events_and_objects() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.db");
    let mut s = Store::create(&path, &[("pid", "42".into())]).unwrap();
    s.add_site(7, "Session", &["Leak.add(Leak.java:10)".into(), "Main.main(Main.java:3)".into()]).unwrap();
    s.write_sample(1000, 3, Checked::Collection, &[class("Session", 1600), class("byte[]", 3200)], &[(7, 1600, 4800)])
        .unwrap();
    s.write_sample(2000, 5, Checked::Walk, &[class("Session", 3200)], &[(7, 3200, 9600)]).unwrap();
    let walk = HeapSummary {
        time_ms: Some(2500),
        gc_count: Some(6),
        total_bytes: 100,
        total_instances: 3,
        classes: vec![ClassVolume { name: "Session".into(), instances: 2, bytes: 64 }],
        edges: vec![EdgeVolume { from: "class Leak".into(), to: "Session".into(), bytes: 64, references: 2 }],
        ..Default::default()
    };
    let chain = HolderChain {
        id: 9,
        container: "java.util.HashMap".into(),
        array: "java.util.HashMap$Node[]".into(),
        array_field: "table".into(),
        bytes: 1 << 20,
        path: vec!["class Leak".into()],
        fields: vec!["SESSIONS".into()],
        ..Default::default()
    };
    s.write_walk(&walk, 12.5, std::slice::from_ref(&chain)).unwrap();
    s.write_container_sizes(2800, &[(9, 2 << 20), (4, 64)]).unwrap();
    s.write_container_sizes(2900, &[(9, 4 << 20)]).unwrap();
    s.event(3000, "walk skipped").unwrap();
    let watched = WatchedObject {
        class: "Session".into(),
        holders: vec!["java.util.HashMap$Node".into(), "java.util.HashMap".into(), "class Leak".into()],
        tagged_ms: 2500,
        last_ms: Some(2600),
        location: Some("Leak.touch(Leak.java:20)".into()),
        freed: false,
        // An unknown field in the middle keeps its place.
        fields: vec!["value".into(), String::new(), "SESSIONS".into()],
    };
    s.write_watched(&[(3, watched.clone())]).unwrap();
    let expected = StoredExpectation {
        class: "Order".into(),
        site: "Shop.close(Shop.java:5)".into(),
        at_ms: 2000,
        freed: false,
        checked_ms: Some(2500),
        reached: true,
        held_by: vec!["java.util.HashMap$Node".into()],
    };
    s.write_expectations(std::slice::from_ref(&expected)).unwrap();
    let run = read(&path, 0).unwrap();
    assert_eq!(run.meta["pid"], "42");
    assert_eq!(run.samples.len(), 2);
    assert_eq!(run.checked, vec![Checked::Collection, Checked::Walk]);
    assert_eq!(run.samples[0].source, "gc 3 (sampled after gc)");
    assert_eq!(run.samples[0].total_bytes, 4800);
    assert_eq!(run.samples[1].classes[0].bytes, 3200);
    assert_eq!(run.allocated[1]["Session"], 9600);
    assert_eq!(run.walks.len(), 1);
    assert_eq!(run.walks[0].edges[0].from, "class Leak");
    assert_eq!(run.walks[0].classes, walk.classes);
    assert_eq!(run.pauses_ms, vec![12.5]);
    assert_eq!(run.holders[0].path, chain.path);
    assert_eq!(run.holders[0].container, chain.container);
    assert_eq!((run.holders[0].array_field.as_str(), run.holders[0].fields.as_slice()), ("table", &chain.fields[..]));
    assert_eq!(run.holders[0].holder_name(0), "class Leak.SESSIONS");
    assert_eq!(run.holders[0].time_ms, 2500, "the walk's time");
    assert_eq!(run.holders[0].sizes, [(2800, 2 << 20), (2900, 4 << 20)], "its own readings only");
    assert_eq!(run.sites[0].frames, ["Leak.add(Leak.java:10)", "Main.main(Main.java:3)"]);
    assert_eq!(run.sites[0].live_bytes, 3200);
    assert_eq!(run.events, vec!["walk skipped".to_string()]);
    assert_eq!(run.watched, vec![watched]);
    assert_eq!(run.expectations, vec![expected]);
}

#[test]
fn readers_open_the_store_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.db");
    let mut s = Store::create(&path, &[]).unwrap();
    s.write_sample(1, 1, Checked::Nothing, &[class("A", 16)], &[]).unwrap();
    drop(s);
    // A store the reader may not write (another user's, or a copy on read-only media).
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms).unwrap();
    let before = std::fs::read(&path).unwrap();
    assert_eq!(read(&path, 0).unwrap().samples.len(), 1);
    assert_eq!(std::fs::read(&path).unwrap(), before, "reading changed the file");
}

#[test]
fn thinning_bounds_the_store_and_keeps_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.db");
    let mut s = Store::create(&path, &[]).unwrap();
    for t in 0..(MAX_SAMPLES as u64 * 3) {
        s.write_sample(t, t, Checked::Collection, &[class("A", t + 1)], &[]).unwrap();
    }
    let run = read(&path, 0).unwrap();
    assert!(run.samples.len() as i64 <= MAX_SAMPLES);
    assert_eq!(run.samples.last().unwrap().time_ms, Some(MAX_SAMPLES as u64 * 3 - 1));
    assert!(run.samples.windows(2).all(|w| w[0].time_ms < w[1].time_ms));
    assert_eq!(read(&path, 10).unwrap().samples.len(), 10);
}

#[test]
fn other_sqlite_files_stores_of_no_version_and_newer_stores() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t(x)").unwrap();
    assert!(matches!(read(&other, 0), Err(StoreError::NotARunStore(_))));
    // Stores written before the schema had a version number: version 1's tables only, with
    // `clean` where version 3 has `checked`.
    let old = dir.path().join("old.db");
    let mut s = Store::create(&old, &[]).unwrap();
    s.write_sample(1, 1, Checked::Walk, &[class("A", 16)], &[]).unwrap();
    drop(s);
    let c = rusqlite::Connection::open(&old).unwrap();
    c.execute_batch("ALTER TABLE snapshots RENAME COLUMN checked TO clean; PRAGMA user_version = 2;").unwrap();
    drop(c);
    assert_eq!(read(&old, 0).unwrap().checked, [Checked::Walk], "version 2's clean is a walk's check");
    let c = rusqlite::Connection::open(&old).unwrap();
    c.execute_batch("DROP TABLE watched; DROP TABLE expectations; PRAGMA user_version = 0;").unwrap();
    drop(c);
    let run = read(&old, 0).unwrap();
    assert_eq!((run.samples.len(), run.watched.len(), run.expectations.len()), (1, 0, 0));
    let c = rusqlite::Connection::open(&old).unwrap();
    c.execute_batch("PRAGMA user_version = 99;").unwrap();
    drop(c);
    let e = read(&old, 0).unwrap_err();
    assert!(matches!(e, StoreError::TooNew { found: 99, .. }), "{e}");
}
