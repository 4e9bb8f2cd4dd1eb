//! The committed demo dump against the jcmd histogram taken right before it (no JVM needed).

use std::path::Path;

use crate::jvm::{parse_jcmd, parse_leakscope};
use crate::support::{json, leakscope, BoundedOutput};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(name).to_string_lossy().into_owned()
}

/// Classes the Cleaner may free between jcmd's full GC and the dump's (HPROF-NOTES.md).
const TIMING_WINDOW: [&str; 2] =
    ["jdk.internal.ref.CleanerImpl$PhantomCleanableRef", "java.lang.invoke.MethodHandleNatives$CallSiteContext"];

#[test]
fn demo_dump_equals_jcmd_class_by_class() {
    let out = leakscope(&["histogram", "--json", &fixture("demo-jdk17.hprof")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ours = parse_leakscope(&out.stdout);
    let jcmd = parse_jcmd(&std::fs::read_to_string(fixture("demo-jdk17.jcmd.txt")).unwrap());
    assert!(jcmd.len() > 200, "the oracle parsed");
    let info = leakscope(&["info", "--json", &fixture("demo-jdk17.hprof")]);
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    let unreachable = info["unreachable_objects"].as_u64().unwrap();
    for (name, want) in &jcmd {
        let got = ours.get(name).copied().unwrap_or_default();
        match name.as_str() {
            "java.lang.Class" => assert_eq!(got.0, want.0, "mirror count"),
            n if TIMING_WINDOW.contains(&n) => assert!(got.0 <= want.0 && got.1 <= want.1, "{n}: {got:?} vs {want:?}"),
            // Heap fillers (retired TLABs) are unreachable int[]s, in the dump but not in jcmd.
            "int[]" => assert!(got.0 >= want.0 && got.0 - want.0 <= unreachable, "int[]: {got:?} vs {want:?}"),
            _ => assert_eq!(&got, want, "{name}"),
        }
    }
    assert!(ours.keys().all(|k| jcmd.contains_key(k)), "classes jcmd does not know");
    assert_eq!(ours["SessionLeak$Session"], (3000, 3000 * 32));
}

#[test]
fn demo_info_reports_reachability() {
    let out = leakscope(&["info", "--json", &fixture("demo-jdk17.hprof")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} missing"));
    assert_eq!(n("reachable_objects") + n("unreachable_objects"), n("objects"));
    assert_eq!(n("reachable_bytes") + n("unreachable_bytes"), n("shallow_bytes"));
    // The leak is reachable: 3,000 sessions held by a static registry.
    assert!(n("reachable_objects") > 3000 * 5);
    assert!(n("unreachable_objects") < 1000);
    assert_eq!(v["format"], "JAVA PROFILE 1.0.2");
    assert!(v["roots"].as_array().unwrap().iter().any(|r| r["kind"] == "system class"));
    assert!(n("snapshot_bytes") < n("objects") * 40, "compact snapshot");
}

#[test]
fn help_teaches() {
    let out = leakscope(&["histogram", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("jcmd") && text.contains("--by") && text.contains("Examples"), "{text}");
    let out = leakscope(&["--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("histogram") && text.contains("info") && text.contains("0 success"), "{text}");
}

#[test]
fn demo_leak_holder_agrees_across_commands() {
    let dump = fixture("demo-jdk17.hprof");
    // The top of the dominator tree is the leaking program's class, whose static holds the registry.
    let top = json(&["dominators", "--json", "--top", "3", &dump]);
    let first = &top["objects"][0];
    assert_eq!(first["represents"], "SessionLeak");
    assert!(first["share"].as_f64().unwrap() > 0.5, "{first}");
    let below = json(&["dominators", "--json", "--children", first["id"].as_str().unwrap(), &dump]);
    let registry = &below["objects"][0];
    assert_eq!(registry["class"], "SessionLeak$SessionRegistry");
    let held = registry["retained_bytes"].as_u64().unwrap();
    // 3,000 sessions of 32 bytes, each with its HashMap, cart and 64-byte token at least.
    assert!(held > 3000 * (32 + 48 + 80), "{held}");

    let r = json(&[
        "retained",
        "--json",
        "--select",
        "static:SessionLeak.REGISTRY",
        "--select",
        "class:SessionLeak$Session",
        &dump,
    ]);
    assert_eq!(r["groups"][0]["retained_bytes"].as_u64().unwrap(), held);
    assert_eq!(r["groups"][1]["objects"], 3000);
    assert_eq!(r["union"]["retained_bytes"].as_u64().unwrap(), held, "the sessions are inside the registry");

    let roots = json(&["roots", "--json", "--top", "5", &dump]);
    let row = roots["statics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["field"] == "SessionLeak.REGISTRY")
        .expect("registry row");
    assert_eq!(row["retained_bytes"].as_u64().unwrap(), held);
    assert!(roots["kinds"].as_array().unwrap().iter().any(|k| k["kind"] == "system class"));
    assert!(roots["threads"].as_array().unwrap().iter().any(|t| t["frames"].as_array().unwrap().iter().any(|f| f
        ["method"]
        .as_str()
        .unwrap()
        .starts_with("SessionLeak.main(SessionLeak.java:"))));
}

#[test]
fn demo_paths_merge_into_one_shape() {
    let dump = fixture("demo-jdk17.hprof");
    let p = json(&["paths", "--json", "--select", "class:SessionLeak$Session", &dump]);
    assert_eq!(p["selected"], 3000);
    let first = &p["paths"][0];
    assert_eq!(first["count"], 3000, "linked buckets (next, next, ...) are one shape: {first}");
    let fields: Vec<&str> = first["steps"].as_array().unwrap().iter().filter_map(|s| s["field"].as_str()).collect();
    assert!(fields.starts_with(&["static appClass", "static REGISTRY", "sessions", "table"]), "{fields:?}");
    assert_eq!(first["steps"].as_array().unwrap().last().unwrap()["class"], "SessionLeak$Session");
    assert_eq!(first["root"]["kind"], "system class");
}

#[test]
fn selector_errors_are_clear() {
    let dump = fixture("demo-jdk17.hprof");
    // A short name that names one class is taken (as rule: takes it); one that names none
    // gets suggestions.
    let out = leakscope(&["retained", "--select", "class:Session", &dump]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = leakscope(&["retained", "--select", "class:Sesion", &dump]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no class Sesion"), "{err}");
    let out = leakscope(&["retained", "--select", "class:session", &dump]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no class session") && err.contains("did you mean") && err.contains("SessionLeak$Session"),
        "{err}"
    );
    let out = leakscope(&["paths", "--select", "bogus", &dump]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a selector"));
    let out = leakscope(&["dominators", "--children", "0x1", &dump]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no object at address 0x1"));
}

#[test]
fn demo_group_tree_agrees_with_retained() {
    let dump = fixture("demo-jdk17.hprof");
    let g = json(&["group", "--json", "--by", "package,class", "--top", "0", &dump]);
    assert_eq!(g["by"], serde_json::json!(["package", "class"]));
    let tree = &g["tree"];
    let children = |n: &serde_json::Value| n["children"].as_array().unwrap().clone();
    let count: u64 = children(tree).iter().map(|c| c["count"].as_u64().unwrap()).sum();
    assert_eq!(count, tree["count"].as_u64().unwrap(), "packages partition all objects");
    let default_pkg = children(tree).into_iter().find(|c| c["key"] == "<no package>").unwrap();
    let session = children(&default_pkg).into_iter().find(|c| c["key"] == "SessionLeak$Session").unwrap();
    assert_eq!((session["count"].as_u64(), session["shallow_bytes"].as_u64()), (Some(3000), Some(96_000)));
    let r = json(&["retained", "--json", "--select", "class:SessionLeak$Session", &dump]);
    assert_eq!(session["retained_bytes"], r["groups"][0]["retained_bytes"]);
    assert_eq!(session["deep_bytes"], r["groups"][0]["transitive_bytes"]);
    // A parent's deep size is the union of its children's closures, not their sum.
    let sum: u64 = children(&default_pkg).iter().map(|c| c["deep_bytes"].as_u64().unwrap()).sum();
    assert!(default_pkg["deep_bytes"].as_u64().unwrap() <= sum);

    let rooted = json(&["group", "--json", "--by", "directly-rooted", &dump]);
    let keys: Vec<String> = children(&rooted["tree"]).iter().map(|c| c["key"].as_str().unwrap().to_owned()).collect();
    assert!(
        keys.contains(&"Root: static field".to_owned()) && keys.contains(&"Root: system class".to_owned()),
        "{keys:?}"
    );
    let indirect = json(&["group", "--json", "--by", "indirectly-rooted,class", &dump]);
    assert!(children(&indirect["tree"]).iter().any(|c| c["key"] == "Root: static field"));
    let out = leakscope(&["group", "--by", "colour", &dump]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown classifier"));
}

#[test]
fn demo_suspect_names_the_leaking_map() {
    let dump = fixture("demo-jdk17.hprof");
    let r = json(&["suspects", "--json", &dump]);
    let first = &r["suspects"][0];
    assert!(first["share"].as_f64().unwrap() > 0.5);
    assert!(first["data_structure"].as_str().unwrap().contains("SessionLeak$SessionRegistry.sessions"), "{first}");
    assert_eq!(first["accumulation_point"]["class"], "java.util.HashMap$Node[]");
    let sessions =
        first["contents"].as_array().unwrap().iter().find(|c| c["class"] == "SessionLeak$Session").expect("sessions");
    assert_eq!(sessions["count"], 3000);
    let text = String::from_utf8(leakscope(&["suspects", &dump]).stdout).unwrap();
    assert!(
        text.contains("data structure: java.util.HashMap") && text.contains("3,000 x SessionLeak$Session"),
        "{text}"
    );
}

#[test]
fn evenly_spread_heap_has_no_suspect() {
    let heap = |distinct: bool| {
        let mut h = testkit::HeapBuilder::new();
        let shared = h.class("Holder", None, &[("data", testkit::Ty::Object)]);
        for i in 0..20 {
            let class =
                if distinct { h.class(&format!("Holder{i}"), None, &[("data", testkit::Ty::Object)]) } else { shared };
            let o = h.instance(class);
            let a = h.primitive_array(testkit::Ty::Byte, 1000);
            h.set(o, "data", a);
            h.root(hprof::RootKind::JniGlobal, o);
        }
        crate::support::temp_dump(&h.build())
    };
    let (_d, p) = heap(true);
    let r = json(&["suspects", "--json", p.to_str().unwrap()]);
    assert_eq!(r["suspects"], serde_json::json!([]), "twenty unrelated 5% holders: nothing stands out");
    // Twenty holders of one class together hold everything: one class suspect.
    let (_d, p) = heap(false);
    let r = json(&["suspects", "--json", p.to_str().unwrap()]);
    assert_eq!(r["suspects"][0]["title"], "20 instances of Holder");
    assert_eq!(r["suspects"][0]["instances"], 20);
    assert!(r["suspects"][0]["share"].as_f64().unwrap() > 0.99);
}

#[test]
fn flat_dominators_list_nested_holders() {
    let dump = fixture("demo-jdk17.hprof");
    let flat = json(&["dominators", "--json", "--flat", "--top", "4", &dump]);
    let classes: Vec<&str> = flat["objects"].as_array().unwrap().iter().map(|o| o["class"].as_str().unwrap()).collect();
    assert_eq!(classes[1..], ["SessionLeak$SessionRegistry", "java.util.HashMap", "java.util.HashMap$Node[]"]);
    let sizes: Vec<u64> =
        flat["objects"].as_array().unwrap().iter().map(|o| o["retained_bytes"].as_u64().unwrap()).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
    assert!(flat["more"].as_u64().unwrap() > 40_000, "every other live object");
    assert_eq!(flat["flat"], true);
}

#[test]
fn an_index_out_of_core_gives_the_answers_of_one_in_memory() {
    // --memory-limit below the estimate (64 MiB and a little for so small a dump) and above
    // the least out of core (48 MiB and a little) puts every big array in temporary files (in
    // a directory of the test's own, which must be empty again afterwards), and says so.
    let demo = fixture("demo-jdk17.hprof");
    let tmp = tempfile::tempdir().unwrap();
    let out_of_core = ["--memory-limit", "50M", "--tmp-dir", tmp.path().to_str().unwrap()];
    for args in [
        vec!["dominators", "--json", "--top", "0"],
        vec!["dominators", "--json", "--flat", "--top", "50"],
        vec!["suspects", "--json"],
        vec!["roots", "--json"],
    ] {
        let base: Vec<&str> = args.iter().copied().chain([demo.as_str()]).collect();
        let in_memory = leakscope(&base);
        let limited = leakscope(&[base.as_slice(), &out_of_core].concat());
        assert!(limited.status.success(), "{args:?}: {}", String::from_utf8_lossy(&limited.stderr));
        assert_eq!(String::from_utf8_lossy(&limited.stdout), String::from_utf8_lossy(&in_memory.stdout), "{args:?}");
        let said = String::from_utf8_lossy(&limited.stderr);
        assert!(said.contains("--memory-limit 50 MiB: out of core"), "{args:?}: {said}");
        assert!(!String::from_utf8_lossy(&in_memory.stderr).contains("out of core"));
    }
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "temporary files are unlinked");
    // A directory where no file can be made is a clear error, not a quiet fall back to memory.
    let missing = tmp.path().join("missing");
    let out = leakscope(&["dominators", &demo, "--memory-limit", "50M", "--tmp-dir", missing.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot keep the index out of core: no temporary file in") && err.trim().lines().count() == 1,
        "{err}"
    );
}

#[test]
fn a_limit_below_the_least_an_index_needs_is_refused_at_once_with_the_least() {
    // Out of core the index still needs the program and what its phases read at random: under
    // less, the build would thrash for minutes or be killed by the kernel. The least it names
    // is one that works.
    let demo = fixture("demo-jdk17.hprof");
    let out = leakscope(&["dominators", &demo, "--memory-limit", "10M"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let least = err
        .split("needs at least ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(" MiB\n"))
        .unwrap_or_else(|| panic!("no least in: {err}"));
    assert!(least.parse::<u64>().unwrap() > 10, "{err}");
    let tmp = tempfile::tempdir().unwrap();
    let at_least = leakscope(&[
        "dominators",
        &demo,
        "--memory-limit",
        &format!("{least}M"),
        "--tmp-dir",
        tmp.path().to_str().unwrap(),
    ]);
    assert!(at_least.status.success(), "{}", String::from_utf8_lossy(&at_least.stderr));
    assert_eq!(at_least.stdout, leakscope(&["dominators", &demo]).stdout);
}

#[test]
fn a_temporary_file_that_cannot_be_written_is_an_error_not_a_panic() {
    // A full disk under --tmp-dir, as a file size limit of 64 KiB makes it (SIGXFSZ ignored,
    // so that writes past it fail with EFBIG as they would with ENOSPC).
    let demo = fixture("demo-jdk17.hprof");
    let tmp = tempfile::tempdir().unwrap();
    let script = "trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\"";
    let out = std::process::Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_leakscope"), "dominators", &demo, "--memory-limit", "50M"])
        .args(["--tmp-dir", tmp.path().to_str().unwrap()])
        .bounded_output();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(last.starts_with("error: cannot write a temporary file: File too large"), "{err}");
    assert!(last.contains("--tmp-dir") && !err.contains("panicked"), "{err}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "temporary files are unlinked");
}

/// The README's V8 demo: the page's detached rows, found with the variable that keeps them, as
/// the README shows them (the page renders its list 10 times, 100 rows each: 9 renders are out
/// of the document).
#[test]
fn the_v8_demo_finds_the_detached_rows_and_the_cache_that_keeps_them() {
    let snap = fixture("demo-page.heapsnapshot.gz");
    let report = json(&["suspects", "--json", &snap]);
    let first = &report["suspects"][0];
    assert_eq!(first["instances"], 900, "{first:#}");
    assert_eq!(first["data_structure"], "rowCache (closure variable)", "{first:#}");
    let out = leakscope(&["suspects", &snap]);
    let text = String::from_utf8_lossy(&out.stdout);
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let shown = text.lines().next().unwrap();
    assert!(readme.contains(shown), "the README does not show {shown}");
}
