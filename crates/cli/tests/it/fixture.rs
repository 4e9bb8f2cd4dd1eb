//! The committed demo dump against the jcmd histogram taken right before it (no JVM needed).

use std::path::Path;

use crate::jvm::{parse_jcmd, parse_leakscope};
use crate::support::leakscope;

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
