//! Retention on real JVM heaps: retained sizes checked by reachability, shared ownership,
//! and a compiler's deep, heavily shared heap.

use analysis::{retention_roots, strong_closure, ObjSet};
use graph::NoProgress;
use heap::{Dump, ObjIdx, Snapshot};

use crate::support::{json, leakscope, BoundedOutput, Jdk};

/// Dumps a Java program from `tests/java` after it printed READY.
fn dump_of(main: &str, args: &[&str], xmx: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let jdk = Jdk::default_jdk();
    let dir = tempfile::tempdir().unwrap();
    jdk.compile(main, dir.path());
    let jvm = jdk.start_with_args(dir.path(), main, &[xmx], args);
    let path = dir.path().join(format!("{main}.hprof"));
    jvm.jcmd(&["GC.heap_dump", path.to_str().unwrap()]);
    (dir, path)
}

/// retained(X) by its definition: live bytes minus bytes still strongly reachable when X is never entered.
fn retained_by_reachability(s: &Snapshot, x: &[ObjIdx]) -> u64 {
    let roots = retention_roots(s);
    let bytes = |set: &ObjSet| set.iter().map(|o| s.shallow_bytes(o)).sum::<u64>();
    let mut avoid = ObjSet::new(s.object_count());
    x.iter().for_each(|&o| {
        avoid.insert(o);
    });
    bytes(&strong_closure(s, &roots, None)) - bytes(&strong_closure(s, &roots, Some(&avoid)))
}

fn snapshot(path: &std::path::Path) -> Snapshot {
    Snapshot::build(Dump::open(path).unwrap(), &Default::default(), &NoProgress).unwrap()
}

/// The top of the dominator tree, each checked against the definition.
fn check_top_dominators(path: &std::path::Path, n: usize) -> serde_json::Value {
    let report = json(&["dominators", "--json", "--top", &n.to_string(), path.to_str().unwrap()]);
    let s = snapshot(path);
    for row in report["objects"].as_array().unwrap() {
        let id = u64::from_str_radix(row["id"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
        let o = s.find(id).unwrap();
        assert_eq!(row["retained_bytes"].as_u64().unwrap(), retained_by_reachability(&s, &[o]), "{row}");
    }
    report
}

#[test]
fn two_indexes_share_ownership() {
    let (_dir, path) = dump_of("TwoMaps", &["5000"], "-Xmx256m");
    let p = path.to_str().unwrap();
    let r = json(&["retained", "--json", "--select", "static:TwoMaps.BY_ID", "--select", "static:TwoMaps.BY_NAME", p]);
    let retained = |g: &serde_json::Value| g["retained_bytes"].as_u64().unwrap();
    let (by_id, by_name, both) = (retained(&r["groups"][0]), retained(&r["groups"][1]), retained(&r["union"]));
    // Each Item is 24 bytes, its long[16] 144: 5000 items, payloads and names are freed only with both maps.
    assert!(both >= by_id + by_name + 5000 * (24 + 144), "{r}");
    let s = snapshot(&path);
    let maps: Vec<ObjIdx> = ["static:TwoMaps.BY_ID", "static:TwoMaps.BY_NAME"]
        .iter()
        .flat_map(|sel| sel.parse::<analysis::Selector>().unwrap().select(&s).unwrap())
        .collect();
    assert_eq!(both, retained_by_reachability(&s, &maps));
    assert_eq!(by_id, retained_by_reachability(&s, &maps[..1]));
    check_top_dominators(&path, 8);
}

#[test]
fn compiler_heap_retained_sizes_are_exact() {
    let (_dir, path) = dump_of("JavacHeap", &["300"], "-Xmx512m");
    let report = check_top_dominators(&path, 6);
    let s = snapshot(&path);
    let keep = "static:JavacHeap.KEEP".parse::<analysis::Selector>().unwrap().select(&s).unwrap();
    let live = report["live_bytes"].as_u64().unwrap();
    let kept = retained_by_reachability(&s, &keep);
    let r = json(&["retained", "--json", "--select", "static:JavacHeap.KEEP", path.to_str().unwrap()]);
    assert_eq!(r["groups"][0]["retained_bytes"].as_u64().unwrap(), kept);
    // The compiler's state is most of the heap; an approximate dominator tree shows a fraction.
    assert!(kept * 2 > live, "KEEP retains {kept} of {live} live bytes");
}

/// How many ascending runs of object addresses `path`'s heap records hold, in file order (an
/// independent reading with the format crate alone).
fn ascending_runs(path: &std::path::Path) -> usize {
    let data = std::fs::read(path).unwrap();
    let header = hprof::Header::parse(&data).unwrap();
    let (mut runs, mut last) = (1, 0);
    let heap = hprof::Records::new(&data, header.len)
        .map(Result::unwrap)
        .filter(|r| r.tag == hprof::tag::HEAP_DUMP_SEGMENT || r.tag == hprof::tag::HEAP_DUMP);
    for r in heap {
        for item in hprof::SubRecords::new(r.body, r.body_offset(), header.id_size) {
            let id = match item.unwrap().1 {
                hprof::SubRecord::Instance { head, .. } => head.object_id,
                hprof::SubRecord::ObjArray { head, .. } => head.object_id,
                hprof::SubRecord::PrimArray { head, .. } => head.object_id,
                _ => continue,
            };
            runs += usize::from(id < last);
            last = id;
        }
    }
    runs
}

#[test]
fn a_compiler_heap_dumped_by_two_threads_on_jdk25_is_read_once_out_of_core() {
    // JDK 21 and later dump in parallel (jcmd's -parallel; since JDK 23 by default for the
    // MXBean and on OutOfMemoryError too): one file per thread, each in address order,
    // joined. Out of core, leakscope merges the runs and reads the dump once; its answers
    // are those of the build in memory, which reads the records twice.
    let Some(jdk) = Jdk::require25() else { return };
    let dir = tempfile::tempdir().unwrap();
    jdk.compile("JavacHeap", dir.path());
    let jvm = jdk.start_with_args(dir.path(), "JavacHeap", &["-Xmx512m"], &["300"]);
    let path = dir.path().join("javac-parallel.hprof");
    // HotSpot dumps with fewer threads than asked when its workers are busy (a loaded
    // machine: one run was seen): ask again, a few times, for a dump that is parallel.
    for _ in 0..4 {
        let _ = std::fs::remove_file(&path);
        jvm.jcmd(&["GC.heap_dump", "-parallel=2", path.to_str().unwrap()]);
        if ascending_runs(&path) >= 2 {
            break;
        }
    }
    drop(jvm);
    assert!(ascending_runs(&path) >= 2, "not a parallel dump: {} run", ascending_runs(&path));
    let p = path.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for args in [vec!["dominators", "--json", "--top", "0"], vec!["suspects", "--json"]] {
        let in_memory = leakscope(&[args.as_slice(), &[p]].concat());
        let limited = std::process::Command::new(env!("CARGO_BIN_EXE_leakscope"))
            .args(&args)
            // Below the estimate in memory (its fixed part alone is 64 MiB) and above the
            // least out of core (about 51 MiB).
            .args([p, "--memory-limit", "62M", "--tmp-dir", tmp.path().to_str().unwrap()])
            .env("LEAKSCOPE_TIMINGS", "1")
            .bounded_output();
        let said = String::from_utf8_lossy(&limited.stderr);
        assert!(limited.status.success(), "{args:?}: {said}");
        assert!(said.contains("reading objects (the dump read once)"), "{args:?}: {said}");
        assert_eq!(String::from_utf8_lossy(&limited.stdout), String::from_utf8_lossy(&in_memory.stdout), "{args:?}");
    }
}

/// A dump streamed by `testkit::scale` (the generator of `benches/scale.sh`) to `dir`.
fn scale_dump(dir: &std::path::Path, name: &str, sessions: u64) -> (std::path::PathBuf, testkit::scale::ScaleStats) {
    let path = dir.join(name);
    let spec = testkit::scale::ScaleSpec { objects: 60_000, sessions, seed: 3 };
    let stats = testkit::scale::write_scale_heap(std::fs::File::create(&path).unwrap(), &spec).unwrap();
    (path, stats)
}

#[test]
fn the_scale_benchmarks_heaps_are_read_whole_with_exact_retained_sizes_and_their_leak() {
    let dir = tempfile::tempdir().unwrap();
    let (path, stats) = scale_dump(dir.path(), "a.hprof", 1000);
    let p = path.to_str().unwrap();
    let info = json(&["info", "--json", p]);
    assert_eq!(info["objects"].as_u64().unwrap(), stats.objects + stats.classes, "{info}");
    assert_eq!(info["unreachable_objects"], 0, "every unit is held by a block");
    // Its chain runs through a fifth of the heap: the dominator tree is deep, and every
    // retained size of its top agrees with reachability.
    check_top_dominators(&path, 6);
    let in_memory = json(&["dominators", "--json", "--top", "0", p]);
    let tmp = tempfile::tempdir().unwrap();
    let limited = json(&[
        "dominators",
        "--json",
        "--top",
        "0",
        p,
        "--memory-limit",
        "50M",
        "--tmp-dir",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(in_memory, limited);
    // Sessions pile up in the registry from dump to dump, and nothing else does.
    let later: Vec<std::path::PathBuf> =
        [4000, 7000].iter().map(|&s| scale_dump(dir.path(), &format!("s{s}.hprof"), s).0).collect();
    let growth = json(&["growth", "--json", p, later[0].to_str().unwrap(), later[1].to_str().unwrap()]);
    let structures: Vec<&str> =
        growth["findings"].as_array().unwrap().iter().map(|f| f["structure"].as_str().unwrap()).collect();
    assert_eq!(structures, ["scale.Registry.sessions"], "{growth}");
}
