//! Real JVMs: compile and run a Java program, dump it with jcmd, and check that
//! `leakscope histogram` equals `jcmd GC.class_histogram` of the same heap.

use std::collections::BTreeMap;

use crate::support::{leakscope, Jdk};

/// Instances and bytes per class name.
pub type Counts = BTreeMap<String, (u64, u64)>;

/// jcmd prints Java names already, except arrays in descriptor form (`[Ljava.lang.Object;`).
fn jcmd_name(raw: &str) -> String {
    if raw.starts_with('[') {
        heap::names::java_name(raw.as_bytes())
    } else {
        raw.to_owned()
    }
}

pub fn parse_jcmd(text: &str) -> Counts {
    let mut out = Counts::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(num), Some(n), Some(b), Some(name)) = (it.next(), it.next(), it.next(), it.next()) else { continue };
        if !num.ends_with(':') {
            continue;
        }
        let (Ok(n), Ok(b)) = (n.parse::<u64>(), b.parse::<u64>()) else { continue };
        let e = out.entry(jcmd_name(name)).or_default();
        (e.0, e.1) = (e.0 + n, e.1 + b);
    }
    out
}

pub fn parse_leakscope(json: &[u8]) -> Counts {
    let h: report::Histogram = serde_json::from_slice(json).expect("histogram JSON");
    let mut out = Counts::new();
    for r in h.classes {
        let e = out.entry(r.name).or_default();
        (e.0, e.1) = (e.0 + r.instances, e.1 + r.shallow_bytes);
    }
    assert_eq!(out.values().map(|v| v.0).sum::<u64>(), h.total_instances);
    out
}

/// Checks every class: the dump, taken between two jcmd histograms, must lie between them
/// (the Cleaner and Reference Handler threads may free a few objects in between).
fn compare(before: &Counts, dump: &Counts, after: &Counts) -> usize {
    let names: std::collections::BTreeSet<&String> = before.keys().chain(dump.keys()).chain(after.keys()).collect();
    let mut exact = 0;
    let mut bad = Vec::new();
    for name in names {
        if name == "java.lang.Class" {
            continue; // a dump holds classes as class records, not instances
        }
        let (a, d, b) = (
            before.get(name).copied().unwrap_or_default(),
            dump.get(name).copied().unwrap_or_default(),
            after.get(name).copied().unwrap_or_default(),
        );
        let within = |x: u64, y: u64, z: u64| x.min(z) <= y && y <= x.max(z);
        if !within(a.0, d.0, b.0) || !within(a.1, d.1, b.1) {
            bad.push(format!("{name}: jcmd before {a:?}, dump {d:?}, jcmd after {b:?}"));
        }
        exact += usize::from(a == d && d == b);
    }
    assert!(bad.is_empty(), "classes that differ from jcmd:\n{}", bad.join("\n"));
    exact
}

fn check_jdk(jdk: &Jdk, fillers_as_int_arrays: bool) {
    let dir = tempfile::tempdir().unwrap();
    jdk.compile("Quiescent", dir.path());
    let jvm = jdk.start(dir.path(), "Quiescent", &["-Xmx256m"]);
    jvm.jcmd(&["VM.version"]); // starts the attach listener before anything is counted
    let before = parse_jcmd(&jvm.jcmd(&["GC.class_histogram"]));
    let thread_names = parse_thread_names(&jvm.jcmd(&["Thread.print"]));
    let dump_path = dir.path().join("q.hprof");
    jvm.jcmd(&["GC.heap_dump", dump_path.to_str().unwrap()]);
    let after = parse_jcmd(&jvm.jcmd(&["GC.class_histogram"]));
    drop(jvm);

    let out = leakscope(&["histogram", "--json", dump_path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dump = parse_leakscope(&out.stdout);

    let fold_fillers = |mut c: Counts| {
        if fillers_as_int_arrays {
            if let Some(f) = c.remove("jdk.internal.vm.FillerElement[]") {
                let e = c.entry("int[]".into()).or_default();
                (e.0, e.1) = (e.0 + f.0, e.1 + f.1);
            }
        }
        c
    };
    let exact = compare(&fold_fillers(before.clone()), &dump, &fold_fillers(after));
    assert!(exact * 100 >= before.len() * 95, "only {exact} of {} classes exactly equal", before.len());
    for name in [
        "java.lang.invoke.MemberName",
        "Quiescent$Node",
        "Quiescent$Wide",
        "java.lang.Thread",
        "java.lang.String",
        "java.util.HashMap$Node",
        "long[][]",
        "java.lang.Object[][]",
    ] {
        assert_eq!(dump.get(name), before.get(name), "{name}");
        assert!(dump.contains_key(name), "{name} missing");
    }
    assert!(dump.keys().any(|k| k.starts_with("Quiescent$$Lambda") && k.contains("/0x")), "lambda classes missing");
    check_threads_and_paths(dump_path.to_str().unwrap(), &thread_names);
}

/// The names `jcmd Thread.print` lists: its lines `"worker-0" #21 daemon prio=5 ...`.
fn parse_thread_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix('"'))
        .filter_map(|l| l.split_once("\" ").map(|(name, _)| name.to_owned()))
        .collect()
}

/// Threads in `roots` and paths carry the names jcmd gives them; the path to a static
/// field's object reads in at most three lines.
fn check_threads_and_paths(dump: &str, jcmd_names: &[String]) {
    for name in ["main", "worker-0", "worker-1", "worker-2"] {
        assert!(jcmd_names.iter().any(|n| n == name), "jcmd lists no {name}: {jcmd_names:?}");
    }
    let roots = crate::support::json(&["roots", "--json", dump]);
    let named: Vec<&str> = roots["threads"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    for name in &named {
        assert!(jcmd_names.iter().any(|n| n == name), "{name} is not a thread jcmd lists: {jcmd_names:?}");
    }
    for name in ["main", "worker-0", "worker-1", "worker-2"] {
        assert!(named.contains(&name), "roots names no {name}: {named:?}");
    }

    let latch =
        crate::support::json(&["paths", "--json", dump, "--select", "class:java.util.concurrent.CountDownLatch"]);
    let label = latch["paths"][0]["root"]["label"].as_str().unwrap();
    assert!(label.starts_with("thread \"worker-"), "the latch is held by a worker thread: {label}");

    let block = crate::support::static_path_lines(dump, "Quiescent.KEEP");
    assert!(block.last().unwrap().trim_start().starts_with("static KEEP -> java.util.ArrayList"), "{block:?}");
    check_object_inspection(dump);
}

/// `object` against the program's own values: KEEP holds 18 objects, the first the head of
/// a list of 5,000 nodes whose values count down from 4,999; and against `paths`: the
/// list's referrer is the field the path names.
fn check_object_inspection(dump: &str) {
    let object = |id: &str, more: &[&str]| {
        let mut args = vec!["object", "--json", dump, id];
        args.extend(more);
        crate::support::json(&args)
    };
    let field = |v: &serde_json::Value, name: &str| {
        v["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {v}"))
            .clone()
    };
    let path = crate::support::json(&["paths", "--json", dump, "--select", "static:Quiescent.KEEP"]);
    let steps = path["paths"][0]["steps"].as_array().unwrap();
    let (holder, keep) = (&steps[steps.len() - 2], &steps[steps.len() - 1]);
    let list = object(keep["id"].as_str().unwrap(), &[]);
    assert_eq!(field(&list, "size")["value"], "18", "{list}");
    let referrers = list["referrers"]["rows"].as_array().unwrap();
    assert!(
        referrers.iter().any(|r| r["id"] == holder["id"] && r["field"] == "static KEEP" && r["strength"] == "strong"),
        "the path's holder refers to the list: {referrers:?}"
    );
    let data = field(&list, "elementData")["target"]["id"].as_str().unwrap().to_owned();
    let array = object(&data, &["--limit", "2"]);
    assert_eq!(array["array"]["elements"].as_array().unwrap().len(), 2);
    let head = array["array"]["elements"][0]["target"]["id"].as_str().unwrap().to_owned();
    let head = object(&head, &[]);
    assert_eq!(head["object"]["class"], "Quiescent$Node", "4,999 % 3 != 0");
    assert_eq!(field(&head, "value")["value"], "4999");
    let next = object(field(&head, "next")["target"]["id"].as_str().unwrap(), &[]);
    assert_eq!(field(&next, "value")["value"], "4998");
    assert_eq!(next["object"]["class"], "Quiescent$Wide", "4,998 % 3 == 0");
    // The head alone keeps the rest of the list alive: the dominator tree agrees.
    assert_eq!(next["dominator"]["id"], head["object"]["id"], "a list node is dominated by the one before it");
    let dom = head["object"]["id"].as_str().unwrap();
    let children = crate::support::json(&["dominators", "--json", dump, "--children", dom, "--top", "0"]);
    assert!(children["objects"].as_array().unwrap().iter().any(|o| o["id"] == next["object"]["id"]), "{children}");
    let referrers = next["referrers"]["rows"].as_array().unwrap();
    assert_eq!(
        (referrers.len(), &referrers[0]["id"], &referrers[0]["field"]),
        (1, &head["object"]["id"], &"next".into())
    );
}

#[test]
fn histogram_equals_jcmd_on_jdk17() {
    check_jdk(&Jdk::default_jdk(), false);
}

#[test]
fn histogram_equals_jcmd_on_jdk25() {
    if let Some(jdk) = Jdk::require25() {
        check_jdk(&jdk, true);
    }
}
