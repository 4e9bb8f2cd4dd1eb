//! Growth on services built on real frameworks from Debian's packages (Tomcat 10, Jetty 9),
//! on JDK 17 and JDK 25: `tests/java/LeakyApps.java` plants a leak in a known field, dumps
//! the live heap after each of eight phases, and the first finding must name that field.
//!
//! Oracles: the planted field (the program's source), the JVM's own reachability as
//! leakscope's dominator tree sees it (`info --json`'s reachable bytes equal the live total
//! the growth summary counts), and retained sizes from the dominator tree.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{debian_classpath, leakscope, on_jdk17_and_jdk25, BoundedOutput, Jdk};

/// Debian's jars the services need.
fn classpath() -> Option<String> {
    debian_classpath(&["tomcat10-", "jetty9-server", "jetty9-util", "jetty9-http", "jetty9-io", "servlet-api"])
}

/// Runs LeakyApps SCENARIO for eight phases on `jdk`; the dumps, oldest first.
fn series(jdk: &Jdk, cp: &str, scenario: &str, dir: &Path) -> Vec<PathBuf> {
    let java = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java");
    let webapp = dir.join("webapp");
    if !dir.join("LeakyApps.class").exists() {
        let javac = |src: &Path, out: &Path| {
            let ok = jdk.tool("javac").args(["--release", "17", "-nowarn", "-cp", cp, "-d"]).arg(out).arg(src).status();
            assert!(ok.unwrap().success(), "javac {}", src.display());
        };
        javac(&java.join("LeakyApps.java"), dir);
        // The webapp's classes only in its own WEB-INF/classes: each deployment defines them anew.
        javac(&java.join("webapp/LeakyWebapp.java"), &webapp.join("WEB-INF/classes"));
    }
    let out = jdk
        .tool("java")
        .args(["-Xmx256m", "-cp", &format!("{cp}:{}", dir.display())])
        .arg(format!("-Dleakyapps.webapp={}", webapp.display()))
        .args(["LeakyApps", scenario, "8"])
        .arg(dir)
        .bounded_output();
    assert!(out.status.success(), "{scenario}: {}", String::from_utf8_lossy(&out.stderr));
    (1..=8).map(|p| dir.join(format!("{scenario}-{p:02}.hprof"))).collect()
}

/// Sets when a dump says it was taken: its header's timestamp (ms since the epoch, a
/// big-endian u8 after `JAVA PROFILE 1.0.x\0` and the identifier size).
fn set_taken_at(dump: &Path, ms: u64) {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(dump).unwrap();
    let mut magic = [0u8; 19];
    f.read_exact(&mut magic).unwrap();
    assert!(magic.starts_with(b"JAVA PROFILE 1.0.") && magic[18] == 0, "{}", dump.display());
    f.seek(SeekFrom::Start(23)).unwrap();
    f.write_all(&ms.to_be_bytes()).unwrap();
}

fn growth(dumps: &[PathBuf]) -> Value {
    let mut args = vec!["growth", "--quiet", "--json"];
    args.extend(dumps.iter().map(|p| p.to_str().unwrap()));
    let out = leakscope(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Under findings, the class ranking leads with what piles up, never a collection's
    // internals (issue 35: `ConcurrentHashMap$Node[]` first on series whose finding was right).
    // Where all that grows is an array (a redeployed webapp's byte[] templates), it leads.
    let classes: Vec<&str> =
        report["candidates"].as_array().unwrap().iter().map(|c| c["class"].as_str().unwrap()).collect();
    let findings = report["findings"].as_array().is_some_and(|f| !f.is_empty());
    if findings && classes.iter().any(|c| !growth::names::is_collection_part(c)) {
        assert!(!growth::names::is_collection_part(classes[0]), "{} leads the ranking: {classes:?}", classes[0]);
    }
    report
}

fn members(f: &Value) -> Vec<&str> {
    f["members"].as_array().unwrap().iter().map(|m| m["class"].as_str().unwrap()).collect()
}

/// The first finding that `class` grows in.
fn finding_of<'a>(report: &'a Value, class: &str) -> &'a Value {
    let findings = report["findings"].as_array().unwrap();
    findings.iter().find(|f| members(f).contains(&class)).unwrap_or_else(|| {
        let all: Vec<&str> = findings.iter().map(|f| f["structure"].as_str().unwrap()).collect();
        panic!("{class} grows in no finding: {all:?}")
    })
}

/// Checks a planted leak: `class` grows first in `structure`, whose holders are reached
/// through `field` and retain at least half of the class's growth.
fn assert_planted(report: &Value, class: &str, structure: &str, field: &str) {
    let f = finding_of(report, class);
    assert_eq!(f["structure"], structure, "{class}");
    let holders = f["holders"].as_array().unwrap();
    assert!(!holders.is_empty(), "{structure} has no holder");
    for h in holders {
        let fields: Vec<&str> = h["path"].as_array().unwrap().iter().filter_map(|s| s["field"].as_str()).collect();
        assert_eq!(fields.last(), Some(&field), "holder of {structure} not reached through {field}: {fields:?}");
    }
    let candidate = report["candidates"].as_array().unwrap().iter().find(|c| c["class"] == class).unwrap();
    let retained: u64 = holders.iter().map(|h| h["retained_bytes"].as_u64().unwrap()).sum();
    let grew = candidate["growth_bytes"].as_u64().unwrap();
    assert!(retained * 2 >= grew, "holders of {structure} retain {retained} B of {class}'s growth of {grew} B");
    let shares: f64 = holders.iter().map(|h| h["share"].as_f64().unwrap()).sum();
    assert!(shares > 0.99, "the holders hold all of {class} in it: {shares}");
}

/// The growth summary counts what the dominator tree says is live: nothing unreachable.
fn assert_live_only(report: &Value, last: &Path) {
    let out = leakscope(&["info", "--quiet", "--json", last.to_str().unwrap()]);
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let snapshots = report["snapshots"].as_array().unwrap();
    assert_eq!(snapshots.last().unwrap()["total_bytes"], info["reachable_bytes"], "{}", last.display());
    let reported: Vec<&str> =
        report["candidates"].as_array().unwrap().iter().map(|c| c["class"].as_str().unwrap()).collect();
    assert!(!reported.contains(&"int[]"), "heap fillers reported: {reported:?}");
}

fn tomcat_sessions_and_an_audit_map(jdk: &Jdk) {
    let Some(cp) = classpath() else { return };
    let dir = tempfile::tempdir().unwrap();
    let dumps = series(jdk, &cp, "tomcat-sessions", dir.path());
    let report = growth(&dumps);
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings[0]["structure"], "org.apache.catalina.session.StandardManager.sessions", "{:#}", findings[0]);
    assert_eq!(members(&findings[0])[0], "org.apache.catalina.session.StandardSession");
    assert_planted(
        &report,
        "org.apache.catalina.session.StandardSession",
        "org.apache.catalina.session.StandardManager.sessions",
        "sessions",
    );
    assert_planted(&report, "LeakyApps$Cart", "org.apache.catalina.session.StandardManager.sessions", "sessions");
    assert_planted(&report, "LeakyApps$AuditEntry", "LeakyApps$Audit.LOG", "static LOG");
    // The sessions' own attribute maps are ConcurrentHashMaps too: they pile up in the
    // sessions, not in the audit map, and no finding is headed by a collection's internals.
    assert_eq!(finding_of(&report, "java.util.concurrent.ConcurrentHashMap")["structure"], findings[0]["structure"]);
    for f in findings {
        let head = members(f)[0];
        assert!(
            !head.contains("java.util.concurrent.ConcurrentHashMap$") && !head.ends_with("KeySetView"),
            "{head} heads {}",
            f["structure"]
        );
    }
    assert_live_only(&report, dumps.last().unwrap());
    crate::growth::assert_last_three(&dumps, Some("org.apache.catalina.session.StandardManager.sessions"));
    assert_workbench_on_tomcat(dumps.last().unwrap().to_str().unwrap());
    assert_sql_on_tomcat(&dumps);
    crate::mcp::assert_mcp_on_tomcat(&dumps);
    crate::share::assert_redaction_keeps_the_analysis(jdk, &dumps);
}

/// SQL on Tomcat's heaps: the last one's answers equal the other commands', and the series
/// counts the sessions the growth report found growing, heap by heap, as `histogram` does.
fn assert_sql_on_tomcat(dumps: &[PathBuf]) {
    let last = dumps.last().unwrap().to_str().unwrap();
    crate::sql::assert_agrees_with_histogram_and_info(last);
    crate::sql::assert_agrees_with_dominators(last);
    let all: Vec<&str> = dumps.iter().map(|p| p.to_str().unwrap()).collect();
    let session = "org.apache.catalina.session.StandardSession";
    let query = format!("SELECT heap, instances FROM classes WHERE name = '{session}' ORDER BY heap");
    let counts: Vec<u64> = crate::sql::rows(&all, &query, &[]).iter().map(|r| r[1].as_u64().unwrap()).collect();
    assert_eq!(counts.len(), dumps.len());
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "sessions per heap: {counts:?}");
    for (i, dump) in [(0, all[0]), (all.len() - 1, last)] {
        let h = crate::support::json(&["histogram", "--quiet", "--json", "--top", "0", dump]);
        let row = h["classes"].as_array().unwrap().iter().find(|r| r["name"] == session).unwrap();
        assert_eq!(counts[i], row["instances"].as_u64().unwrap(), "heap {}", i + 1);
    }
}

/// What a MAT user reads first on a Tomcat dump: thread names as Tomcat gives them, and a
/// static field of an application class named by its class and loader, not the loader's
/// bookkeeping.
fn assert_workbench_on_tomcat(dump: &str) {
    let roots = crate::support::json(&["roots", "--json", dump]);
    let names: Vec<&str> = roots["threads"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.iter().any(|n| n.starts_with("http-nio-") && n.contains("-exec-")), "Tomcat's workers: {names:?}");
    assert!(names.contains(&"main"), "{names:?}");
    let block = crate::support::static_path_lines(dump, "LeakyApps$Audit.LOG");
    assert!(
        block[0].starts_with("1 object via class LeakyApps$Audit ") && block[0].contains(", defined by "),
        "{block:?}"
    );
    let json = crate::support::json(&["paths", "--json", dump, "--select", "static:LeakyApps$Audit.LOG"]);
    let steps = json["paths"][0]["steps"].as_array().unwrap();
    let folded: Vec<&str> =
        steps.iter().filter(|s| s["folded"] == true).map(|s| s["field"].as_str().unwrap()).collect();
    assert_eq!(folded, ["classes", "elementData"], "the full steps stay in the JSON: {steps:?}");

    // One session looked into: Tomcat's defaults (30 minutes of inactivity, valid), and the
    // same holders as its path from a GC root.
    let json = crate::support::json(&[
        "paths",
        "--json",
        dump,
        "--select",
        "class:org.apache.catalina.session.StandardSession",
    ]);
    let steps = json["paths"][0]["steps"].as_array().unwrap();
    let (node, session) = (&steps[steps.len() - 2], &steps[steps.len() - 1]);
    let manager = steps.iter().find(|s| s["field"] == "manager").unwrap();
    let view = crate::support::json(&["object", "--json", dump, session["id"].as_str().unwrap()]);
    let field = |name: &str| view["fields"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap().clone();
    assert_eq!(
        (field("maxInactiveInterval")["value"].clone(), field("isValid")["value"].clone()),
        ("1800".into(), "true".into())
    );
    assert_eq!(field("manager")["target"]["id"], manager["id"], "{view}");
    let referrers = view["referrers"]["rows"].as_array().unwrap();
    assert!(referrers.iter().any(|r| r["id"] == node["id"] && r["field"] == "val"), "{referrers:?}");
    assert_eq!(view["dominator"]["id"], node["id"], "its map node alone keeps it");
}

fn jetty_per_request_cache(jdk: &Jdk) {
    let Some(cp) = classpath() else { return };
    let dir = tempfile::tempdir().unwrap();
    let dumps = series(jdk, &cp, "jetty-cache", dir.path());
    let report = growth(&dumps);
    let first = &report["findings"][0];
    assert_eq!(first["structure"], "LeakyApps$ResponseCache.ENTRIES", "{first:#}");
    assert_eq!(members(first)[0], "LeakyApps$CachedResponse");
    assert_planted(&report, "LeakyApps$CachedResponse", "LeakyApps$ResponseCache.ENTRIES", "static ENTRIES");
    assert_live_only(&report, dumps.last().unwrap());
    crate::growth::assert_last_three(&dumps, Some("LeakyApps$ResponseCache.ENTRIES"));
    let bounded_dumps = series(jdk, &cp, "jetty-bounded", dir.path());
    let bounded = growth(&bounded_dumps);
    assert_eq!(bounded["candidates"], serde_json::json!([]), "a bounded cache is not a leak");
    assert_eq!(bounded["findings"], serde_json::json!([]));
    crate::growth::assert_last_three(&bounded_dumps, None);
}

fn tomcat_redeploys_a_webapp_whose_old_copies_stay(jdk: &Jdk) {
    let Some(cp) = classpath() else { return };
    let dir = tempfile::tempdir().unwrap();
    let dumps = series(jdk, &cp, "tomcat-redeploy", dir.path());
    let report = growth(&dumps);
    let leak = &report["loader_leaks"][0];
    assert_eq!(leak["loader"], "org.apache.catalina.loader.ParallelWebappClassLoader", "{report:#}");
    assert_eq!(leak["classes"][0], "LeakyWebapp");
    // One deployment before each of the nine phases (the warm-up included), none collected.
    let copies: Vec<u64> = leak["copies"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect();
    assert_eq!(copies, (2..=9).collect::<Vec<u64>>());
    // Every copy is held by the shutdown hook it registered, the live one's too (Tomcat holds
    // the live one as well, but only from the main thread's frame, and paths start from
    // lasting roots first); eight of them are stale.
    let held = &leak["held_by"][0];
    assert_eq!(held["count"], 9);
    let fields: Vec<&str> = held["steps"].as_array().unwrap().iter().filter_map(|s| s["field"].as_str()).collect();
    assert!(fields.contains(&"static hooks") && fields.last() == Some(&"contextClassLoader"), "{fields:?}");
    assert_eq!(leak["stale"], 8);
    // Each copy keeps its 192 KiB of statics: together at least the byte[] growth.
    let grew = report["candidates"].as_array().unwrap().iter().find(|c| c["class"] == "byte[]").unwrap()
        ["growth_bytes"]
        .as_u64()
        .unwrap();
    assert!(leak["retained_bytes"].as_u64().unwrap() >= grew, "{leak:#}");
    // The growing statics are a finding whose holders the hooks keep, explained by the leak.
    let first = &report["findings"][0];
    assert_eq!(first["structure"], "LeakyWebapp.TEMPLATES");
    for h in first["holders"].as_array().unwrap() {
        let fields: Vec<&str> = h["path"].as_array().unwrap().iter().filter_map(|s| s["field"].as_str()).collect();
        assert!(fields.contains(&"static hooks"), "{fields:?}");
    }
    let out = leakscope(
        &[&["growth", "--quiet"][..], &dumps.iter().map(|p| p.to_str().unwrap()).collect::<Vec<_>>()].concat(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Class-loader leak: 9 copies") && text.contains("leaked copies above"), "{text}");
    assert_live_only(&report, dumps.last().unwrap());
}

on_jdk17_and_jdk25!(tomcat_redeploys_a_webapp_whose_old_copies_stay);
on_jdk17_and_jdk25!(tomcat_sessions_and_an_audit_map);
on_jdk17_and_jdk25!(jetty_per_request_cache);

#[test]
fn three_dumps_taken_at_uneven_times_and_a_gate_that_cannot_judge() {
    let (jdk, Some(cp)) = (Jdk::default_jdk(), classpath()) else { return };
    let dir = tempfile::tempdir().unwrap();
    let dumps = series(&jdk, &cp, "tomcat-sessions", dir.path());
    // The first, second and last dumps: the second interval is seven phases, the first one.
    // Judged per heap, the sessions' steps look like noise; per unit of time, a steady leak.
    // The times are written into the dumps' headers, a minute a phase, as a schedule would
    // take them: under the full suite a loaded machine made its phases last unevenly (the
    // first, with Tomcat's start, longest), and the pace per unit of time measured the
    // machine, not the leak.
    let uneven = [dumps[0].clone(), dumps[1].clone(), dumps[dumps.len() - 1].clone()];
    for (dump, minutes) in uneven.iter().zip([0, 1, 7]) {
        set_taken_at(dump, 1_795_000_000_000 + minutes * 60_000);
    }
    let report = growth(&uneven);
    let notes = report["notes"].to_string();
    assert!(notes.contains("uneven times"), "{notes}");
    assert_eq!(
        report["findings"][0]["structure"], "org.apache.catalina.session.StandardManager.sessions",
        "{report:#}"
    );
    // Two heaps cannot show growth over two intervals: the gate refuses, it does not pass.
    let mut args = vec!["growth", "--quiet", "--fail-on-growth"];
    args.extend(dumps[..2].iter().map(|p| p.to_str().unwrap()));
    let out = leakscope(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("needs at least 3 heaps"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
