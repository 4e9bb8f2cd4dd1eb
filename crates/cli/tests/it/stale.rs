//! Staleness watching end to end: `leakscope run --watch` on a program whose logged-out
//! sessions stay in a registry unused while active sessions are used all the time, then
//! `leakscope stale RUN.db`.

use std::path::Path;

use serde_json::Value;

use crate::support::{leakscope, on_jdk17_and_jdk25, Jdk};

/// `Stale.main(Stale.java:N)` for the line marked `// MARK`.
fn site(mark: &str) -> String {
    let src = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/Stale.java")).unwrap();
    let line = src.lines().position(|l| l.contains(&format!("// {mark}"))).expect("marked line") + 1;
    format!("Stale.main(Stale.java:{line})")
}

/// Agent options for a short run: walks often enough to learn paths of five holders.
const SHORT_RUN: [&str; 6] = ["--budget", "20", "--period", "300ms", "--walk-every", "1s"];

fn record(jdk: &Jdk, dir: &Path, rule: &str, seconds: &str) -> std::path::PathBuf {
    let db = dir.join("stale.db");
    let java = jdk.bin.join("java");
    let mut args = vec!["run", "--out", db.to_str().unwrap(), "--watch", rule];
    args.extend(SHORT_RUN);
    args.extend(["--", java.to_str().unwrap(), "-Xmx128m", "-cp", dir.to_str().unwrap(), "Stale", seconds]);
    let out = leakscope(&args);
    assert!(out.status.success(), "Stale: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("done"));
    db
}

fn stale(db: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["stale", db.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = leakscope(&args);
    assert!(out.status.success(), "stale: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn path_text(p: &Value) -> Vec<&str> {
    p["path"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect()
}

fn a_session_left_in_the_registry_is_the_stalest_and_an_active_one_is_recent(jdk: &Jdk) {
    let dir = jdk.compiled_with_agent("Stale");
    let db = record(jdk, dir.path(), "rule:Session", "20");
    let report = stale(&db, &[]);
    let paths = report["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 2, "one path per holder: {report}");
    // Oldest first: the logged-out sessions, last used where they were created.
    let leaked = &paths[0];
    assert_eq!(path_text(leaked).first(), Some(&"class Stale$SessionRegistry"), "{leaked}");
    assert_eq!(path_text(leaked).last(), Some(&"Stale$Session"));
    assert!(path_text(leaked).contains(&"java.util.HashMap"), "{leaked}");
    // Named by the fields a person reads in the source (Stale.java): the registry's static
    // `ALL`, the map's `table`, the node's `value`; the list's `CURRENT` and `elementData`.
    let fields = |p: &Value| -> Vec<String> {
        let f = p["fields"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string());
        p["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .zip(f)
            .map(|(c, f)| format!("{c}.{f}"))
            .collect()
    };
    assert_eq!(
        fields(leaked),
        [
            "class Stale$SessionRegistry.ALL",
            "java.util.HashMap.table",
            "java.util.HashMap$Node[].[]",
            "java.util.HashMap$Node.value",
            "Stale$Session."
        ],
        "{leaked}"
    );
    assert_eq!(leaked["count"], 50);
    assert_eq!(leaked["location"], site("LAST-USE-LEAKED").as_str());
    assert!(leaked["last_access"]["most_recent_ms"].as_u64().unwrap() >= 8_000, "{leaked}");
    // The active sessions: used a moment before the end, in the loop.
    let hot = &paths[1];
    assert_eq!(path_text(hot).first(), Some(&"class Stale$ActiveUsers"), "{hot}");
    assert_eq!(hot["count"], 20);
    assert_eq!(
        fields(hot),
        [
            "class Stale$ActiveUsers.CURRENT",
            "java.util.ArrayList.elementData",
            "java.lang.Object[].[]",
            "Stale$Session."
        ],
        "{hot}"
    );
    assert_eq!(hot["location"], site("HOT-USE").as_str());
    assert!(hot["last_access"]["longest_ms"].as_u64().unwrap() < 2_000, "{hot}");
    // --older-than keeps only the stale path; the text names it and the line.
    let old = stale(&db, &["--older-than", "5s"]);
    assert_eq!(old["paths"].as_array().unwrap().len(), 1);
    let out = leakscope(&["stale", db.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&site("LAST-USE-LEAKED"))
            && text.contains("Stale$SessionRegistry.ALL > java.util.HashMap.table > java.util.HashMap$Node[] > java.util.HashMap$Node.value > Stale$Session"),
        "{text}"
    );
}

on_jdk17_and_jdk25!(a_session_left_in_the_registry_is_the_stalest_and_an_active_one_is_recent);

#[test]
fn attached_late_the_watched_class_is_retransformed() {
    let jdk = Jdk::default_jdk();
    let dir = jdk.compiled_with_agent("Stale");
    let mut jvm = jdk.start_with_args(dir.path(), "Stale", &["-Xmx128m"], &["12"]);
    let pid = jvm.pid().to_string();
    let db = dir.path().join("attached.db");
    let mut args = vec!["attach", &pid, "--out", db.to_str().unwrap()];
    args.extend(["--watch", "rule:SessionRegistry>Session", "--watch", "rule:ActiveUsers>Session"]);
    args.extend(SHORT_RUN);
    let out = leakscope(&args);
    assert!(out.status.success(), "attach: {}", String::from_utf8_lossy(&out.stderr));
    // Rules are set when the agent loads: another attach cannot change them.
    let again = leakscope(&["attach", &pid, "--watch", "rule:Order"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("cannot change"));
    assert!(jvm.wait(std::time::Duration::from_secs(60)).expect("Stale did not end").success());
    let report = stale(&db, &[]);
    let paths = report["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 2, "{report}");
    // Used only before the agent came: aged from when they were first watched, no location.
    assert_eq!(path_text(&paths[0]).first(), Some(&"class Stale$SessionRegistry"), "{report}");
    assert!(paths[0]["location"].is_null(), "{report}");
    assert!(report["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("not used since")));
    // Used after the class was retransformed: recent, in the loop.
    assert_eq!(path_text(&paths[1]).first(), Some(&"class Stale$ActiveUsers"), "{report}");
    assert_eq!(paths[1]["location"], site("HOT-USE").as_str());
    assert!(paths[1]["last_access"]["longest_ms"].as_u64().unwrap() < 2_000, "{report}");
}
