//! The agent on services that run for minutes at default settings, as in production:
//! Debian's Tomcat 10 leaking HTTP sessions and Tomcat answering steady traffic, and services
//! of our own (`tests/java/Services.java`), recorded by `leakscope run` and by `leakscope
//! attach`, on JDK 17 and JDK 25. Two services run at once, and each one's verdict
//! (`growth RUN.db --json`, `top RUN.db --once --json`) is read every 10 s while it runs.
//!
//! The session registry's run also serves the agent's metrics and pushes them over OTLP, to
//! parsers the Prometheus and OpenTelemetry projects wrote (`tests/python/`), watches its
//! sessions from birth (`--watch`), and captures a heap dump once the leak is confirmed
//! (`--capture-on-leak`).
//!
//! Oracles: the leak planted in the program's source (the class and the field that holds it),
//! and, for the steady services, that nothing in them grows; for `top`, the heap walks' exact
//! live bytes (JVMTI `FollowReferences` reaches every live object).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod harness;
mod metrics;

use crate::support::{leakscope, Jdk};
use harness::*;
use metrics::*;

/// The leak is named by the second minute: the slice (what holds the growing class) of the
/// first candidate names one of `leak`, the class each leaked entry is or the class whose field
/// holds them in the source, at the last reading while the service runs (stopping Tomcat
/// expires its sessions: after that, they shrink). Before that, every headline is a class the
/// leak makes grow (`grows`), never one that does not grow: nothing else in these services
/// grows.
fn assert_named(s: &Service, leak: &[&str], grows: &[&str]) {
    let log = log(s);
    for (t, g, _) in &s.verdicts {
        if let Some(first) = g["candidates"].as_array().unwrap().first() {
            let class = first["class"].as_str().unwrap();
            assert!(
                grows.contains(&class),
                "{}: at {t} s the headline is {class}, which the leak does not grow: {log:?}",
                s.scenario
            );
        }
    }
    // The first candidate: its slice names the leak's holder (issue 17 had to allow the first
    // three, when the carts' `byte[]` headed with a slice through the session ids only).
    let named = |g: &Value| {
        g["candidates"].as_array().unwrap().iter().take(1).any(|c| leak.iter().any(|class| slice_names(c, class)))
    };
    let (t, last, _) = s.verdicts.iter().rfind(|v| v.0 < SECONDS).expect("no verdict while it ran");
    if !named(last) && walks_did_not_fit(s) {
        // The agent said no walk fitted the pause bound while the leak grew (a loaded machine
        // at default settings: 1.2–5.4 s predicted against 1 s): then the holder may be
        // unknown, and must be said so, never named from a walk before the growth.
        let slice = &last["candidates"][0]["slice"];
        assert!(
            slice["not_known"].is_string() && slice["edges"].as_array().unwrap().is_empty(),
            "{}: at {t} s, with no walk since the leak grew, the first candidate's slice claims a holder: {slice:#}; readings: {log:#?}",
            s.scenario
        );
        eprintln!("NOTE {}: the holder was not known at {t} s, and said so: {log:?}", s.scenario);
        return;
    }
    assert!(
        named(last),
        "{}: at {t} s the first candidate's slice names none of {leak:?}: {}; readings: {log:#?}",
        s.scenario,
        last["candidates"][0]["slice"]
    );
    assert!(
        s.verdicts.iter().any(|(t, g, _)| *t <= 125 && named(g)),
        "{}: {leak:?} not named by 2 min: {log:?}",
        s.scenario
    );
}

/// Whether the agent's own events say a heap walk did not fit the pause bound (skipped, or
/// stopped at its deadline) or its budget (put off): what allows a reading without a walk
/// behind it.
fn walks_did_not_fit(s: &Service) -> bool {
    walk_events(s).iter().any(|e| {
        e.starts_with("heap walk skipped")
            || e.contains("stopped at its deadline")
            || e.starts_with("heap walk put off")
    })
}

/// No candidate at any moment (but one that no walk could check, said as such), and `top`'s
/// live estimate counts no garbage: each walk-checked
/// reading after the warm-up is at most what the newest walk reached (exact: JVMTI
/// `FollowReferences` from the roots) plus three standard errors of the reading (1.5 × its
/// stated 95 % error). The estimate covers
/// only objects allocated since the agent started, so it may sit well below the walk; a
/// between-collections reading (issue 17: 129.6 MiB against a 5.9 MiB heap) exceeds it.
/// Started with the JVM, the estimate also holds still: each reading is within its error plus
/// the median reading's error of that median. Attached, it rises towards the walk as the
/// objects allocated before the attach are replaced, so that is not asked of it.
fn assert_steady(s: &Service) {
    let log = log(s);
    for (t, g, _) in &s.verdicts {
        let candidates = g["candidates"].as_array().unwrap();
        // Samples count objects until a collection frees them: only walks can refute what
        // they count of the dead. A candidate of a steady service is allowed only where the
        // agent said no walk fitted (a loaded machine: the first walk's 7.8 µs an object
        // predicted every later one over the 1 s bound), the report says its snapshots may
        // count dead objects, and no holder is named for it.
        let unrefuted = walks_did_not_fit(s)
            && g["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("count dead objects"))
            && candidates.iter().all(|c| c["slice"]["structure"].is_null());
        assert!(candidates.is_empty() || unrefuted, "{}: at {t} s: {log:?}; notes {}", s.scenario, g["notes"]);
        if !candidates.is_empty() {
            eprintln!("NOTE {}: at {t} s a candidate no walk could check: {:?}", s.scenario, classes(g));
        }
    }
    let u = |v: &Value, key: &str| v[key].as_u64().unwrap_or_else(|| panic!("top has no {key}: {v}"));
    // (seconds, live estimate, its error, the newest walk's bytes)
    let readings: Vec<(u64, u64, u64, u64)> = s
        .verdicts
        .iter()
        .filter(|(t, _, top)| *t >= 30 && top["live_source"].as_str().unwrap().contains("walk-checked"))
        .map(|(t, _, top)| (*t, u(top, "live_bytes"), u(top, "live_error_bytes"), u(top, "walked_bytes")))
        .collect();
    if readings.len() < 3 && walks_did_not_fit(s) {
        // No walk fitted the pause bound (the agent says why): nothing exact to hold `top`'s
        // estimate to. Its readings then say they are sampled, as the filter above read them.
        eprintln!(
            "NOTE {}: {} walk-checked readings of top: the walks did not fit ({:?})",
            s.scenario,
            readings.len(),
            walk_events(s)
        );
        return;
    }
    assert!(
        readings.len() >= 3,
        "{}: {} walk-checked readings of top; the agent's walks: {:?}",
        s.scenario,
        readings.len(),
        walk_events(s)
    );
    for (t, live, err, walked) in &readings {
        // Three standard errors: readings are many, and the walk leaves out what only
        // references' referents hold, which the collector may still keep.
        assert!(
            *live <= walked + err * 3 / 2,
            "{}: at {t} s top says {live} ± {err} B live, more than the walk's {walked} B and 3 standard errors: {readings:?}",
            s.scenario
        );
    }
    if s.by == By::Attach {
        return;
    }
    let mut sorted = readings.clone();
    sorted.sort_by_key(|r| r.1);
    let (_, median, median_err, _) = sorted[sorted.len() / 2];
    for (t, live, err, _) in &readings {
        assert!(
            live.abs_diff(median) <= err + median_err,
            "{}: at {t} s top says {live} ± {err} B live; the median reading is {median} ± {median_err} B: {readings:?}",
            s.scenario
        );
    }
}

fn tomcat(jdk: Jdk, leak_by: By, steady_by: By) {
    let _alone = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let cp = compiled(&jdk, dir.path());
    let mut leak = start(&jdk, &cp, dir.path(), "tomcat-sessions", leak_by);
    leak.jcmd = Some((jdk.clone(), vec![50, 85, 115]));
    let mut services = [leak, start(&jdk, &cp, dir.path(), "tomcat-steady", steady_by)];
    watch(&mut services);
    assert_steady(&services[1]);
    assert_estimates_hold(&services[0]);
    // Each request's session: its attributes' map, the cart in it, the cart's bytes, its id.
    let grows = [
        "org.apache.catalina.session.StandardSession",
        "org.apache.catalina.session.StandardSessionFacade",
        "Services$Cart",
        "byte[]",
        "java.lang.String",
        "java.util.concurrent.ConcurrentHashMap",
        "java.util.concurrent.ConcurrentHashMap$Node",
        "java.util.concurrent.ConcurrentHashMap$Node[]",
        "java.beans.PropertyChangeSupport",
    ];
    let leak = ["org.apache.catalina.session.StandardSession", "org.apache.catalina.session.StandardManager"];
    assert_named(&services[0], &leak, &grows);
}

#[test]
fn tomcat_sessions_by_run_and_steady_traffic_by_attach_on_jdk17() {
    tomcat(Jdk::default_jdk(), By::Run, By::Attach);
}

#[test]
fn tomcat_sessions_by_attach_and_steady_traffic_by_run_on_jdk25() {
    let Some(jdk) = Jdk::require25() else { return };
    tomcat(jdk, By::Attach, By::Run);
}

/// The listener leak of issue 34 on Debian's Tomcat 10 and JDK 25: the shop's session
/// listener registers each cart's `CartPriceListener` with the application's `PriceService`
/// (a `CopyOnWriteArrayList`) and never removes it; beside it the same shop removes its
/// listeners and holds a catalog about as big as the leak gets. `--max-pause 250ms` makes the
/// walks stop fitting after the first seconds, as on a heap of gigabytes (`benches/online-scale.sh`
/// runs that size): from then on the holder is the one the early walks named, and the
/// structure's growth is read between walks.
///
/// Oracles: the field planted in the source (`PriceService.listeners`, the class it holds),
/// the JVM's own histogram (`jcmd GC.class_histogram`), the rule's classes on the stale path,
/// and the pause bound.
#[test]
fn tomcat_shop_listener_leak_named_by_its_holder_at_every_reading_on_jdk25() {
    let Some(jdk) = Jdk::require25() else { return };
    let _alone = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let cp = compiled(&jdk, dir.path());
    let port = free_port();
    let pause = ["--max-pause".to_string(), "250ms".into()];
    let leak_flags = [
        &pause[..],
        &["--metrics-port".into(), port.to_string(), "--watch".into(), "rule:PriceService>ShopCart".into()],
    ]
    .concat();
    let mut leak = start_opts(
        &jdk,
        &cp,
        dir.path(),
        "tomcat-shop",
        By::Run,
        &leak_flags,
        &["-Xmx1g", "-Dservices.items=20"],
        Some(300),
    );
    leak.jcmd = Some((jdk.clone(), vec![50, 85, 115]));
    let steady = start_opts(
        &jdk,
        &cp,
        dir.path(),
        "tomcat-shop-steady",
        By::Attach,
        &pause,
        &["-Xmx1g", "-Dservices.items=20", "-Dservices.catalog=600000"],
        Some(300),
    );
    let mut services = [leak, steady];
    watch(&mut services);
    let holder = "Services$PriceService.listeners";
    for (t, g, _) in &services[1].verdicts {
        assert!(g["candidates"].as_array().unwrap().is_empty(), "steady shop at {t} s: {:?}", classes(g));
    }
    let learned = assert_holder_at_every_reading(&services[0], holder, "Services$CartPriceListener");
    assert_estimates_hold(&services[0]);
    assert_stale_through(
        &services[0],
        &["Services$PriceService", "java.util.concurrent.CopyOnWriteArrayList", "Services$ShopCart"],
        learned,
    );
    for s in &services {
        assert_within_max_pause(s, 250.0);
    }
}

/// A candidate by 125 s; from the first reading that names `holder` on (before the end of the
/// load), every reading of `growth RUN.db`, `top` and the metrics names that structure for its
/// first candidate (and `top` and the metrics for every candidate they show), and the
/// structure's element is `element`; before it, no reading names another holder. Returns
/// whether `holder` was learned (see [`assert_holder_not_said`] for when it need not be).
fn assert_holder_at_every_reading(s: &Service, holder: &str, element: &str) -> bool {
    let first = s.verdicts.iter().position(|(_, g, _)| !g["candidates"].as_array().unwrap().is_empty());
    let first = first.unwrap_or_else(|| panic!("{}: no candidate at all: {:?}", s.scenario, log(s)));
    assert!(s.verdicts[first].0 <= 125, "{}: first candidate at {} s", s.scenario, s.verdicts[first].0);
    // A candidate can lead before the walk that learns its holder's path has run (seen twice
    // on JDK 25, at 68 and 76 s): such a reading names no structure yet, or the container by
    // its class, holding the right element; it never names another holder.
    let named = s.verdicts.iter().position(|(_, g, _)| g["candidates"][0]["slice"]["structure"]["name"] == holder);
    let Some(named) = named else {
        assert_holder_not_said(s, holder, element);
        return false;
    };
    assert!(s.verdicts[named].0 < SECONDS, "{}: {holder} first named at {} s", s.scenario, s.verdicts[named].0);
    for (t, g, _) in &s.verdicts[first..named] {
        assert_no_other_structure(s, *t, g, element, &format!("before {holder} was named"));
    }
    for (k, (t, g, top)) in s.verdicts.iter().enumerate().skip(named).filter(|(_, v)| v.0 < SECONDS) {
        let lead = &g["candidates"][0];
        let structure = &lead["slice"]["structure"];
        assert_eq!(
            structure["name"],
            holder,
            "{}: at {t} s growth's first candidate {}: {structure:#}; its notes: {:#}; the readings: {:#?}",
            s.scenario,
            lead["class"],
            g["notes"],
            log(s)
        );
        assert_eq!(structure["element"], element, "{}: at {t} s: {structure:#}", s.scenario);
        let held: Vec<&str> =
            top["candidates"].as_array().unwrap().iter().filter_map(|c| c["held_by"].as_str()).collect();
        assert!(
            !held.is_empty() && held.iter().all(|h| *h == holder),
            "{}: at {t} s top: {:?}",
            s.scenario,
            top["candidates"]
        );
        let scrape = &s.scrape_at[k];
        if scrape.is_empty() {
            continue;
        }
        let samples = parse_openmetrics(scrape);
        let holders: Vec<&str> = samples
            .iter()
            .filter(|r| r["name"] == "leakscope_growth_holder" && r["value"] == 1.0)
            .map(|r| r["labels"]["holder"].as_str().unwrap())
            .collect();
        // The metrics are the agent's figures as of its last tick; the store may have the walk
        // that named the holder a moment before they do: at that first reading they may name
        // none yet (CI, a loaded machine), never another.
        assert!(
            (!holders.is_empty() || k == named) && holders.iter().all(|h| *h == holder),
            "{}: at {t} s the metrics' holders are {holders:?} (growth first named {holder} at {} s)",
            s.scenario,
            s.verdicts[named].0
        );
    }
    true
}

/// `top`'s live estimate is within its stated 95 % error of the JVM's own count at the same
/// moment, but for the objects the JVM made before the agent's sampling began (its boot: a
/// few MiB that jcmd counts and no sample can, until a walk has counted them). On JDK 17 the
/// error is wider, and says why: HotSpot's sampler before JDK 25 is biased (JDK-8356372).
fn assert_estimates_hold(s: &Service) {
    const BOOT: u64 = 16 << 20;
    assert!(s.histograms.len() >= 2, "{}: {} readings beside jcmd", s.scenario, s.histograms.len());
    for (t, top, jvm) in &s.histograms {
        let (live, err) = (top["live_bytes"].as_u64().unwrap(), top["live_error_bytes"].as_u64().unwrap());
        assert!(
            live.abs_diff(*jvm) <= err + BOOT,
            "{}: at {t} s top says {} ± {} ({}), jcmd {}",
            s.scenario,
            live >> 20,
            err >> 20,
            top["live_source"],
            jvm >> 20
        );
        let biased = s.jcmd.as_ref().is_some_and(|(jdk, _)| jdk.feature() < 25);
        assert_eq!(top["biased_sampler"].is_string(), biased, "{}: at {t} s: {top:#}", s.scenario);
    }
}

/// `leakscope stale` reports the watched objects by a path that runs through `through`, in
/// that order: the rule's holder and the structure between it and the watched class.
fn assert_stale_through(s: &Service, through: &[&str], learned: bool) {
    let out = leakscope(&["stale", s.db.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "stale: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths = report["paths"].as_array().unwrap();
    let along = |p: &Value| {
        let classes: Vec<&str> = p["path"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let mut at = 0;
        through.iter().all(|want| match classes[at..].iter().position(|c| c == want) {
            Some(i) => {
                at += i + 1;
                true
            }
            None => false,
        })
    };
    // Every path reported runs through the structure: the watched class is held nowhere else.
    for p in paths {
        assert!(along(p), "a stale path not through {through:?}: {report:#}");
    }
    // A population, not a stray object. How many the walks have linked through the holder by
    // the reading depends on the machine's load, since each walk learns one holder more and
    // walks stop at the pause bound (62 and several hundred here, 2 once on CI; none where the
    // holder was never learned): the watched objects, linked or not yet (`not_followed`), are
    // counted from their creation.
    // Where the holder was never learned, no walk may have reached a watched object either
    // (they are recorded as a walk reaches them; under the full suite none was): the paths
    // said, if any, run through the structure, as above, and no count is asked.
    if !learned {
        return;
    }
    let linked: u64 = paths.iter().map(|p| p["count"].as_u64().unwrap()).sum();
    assert!(linked >= 1, "no stale path through {through:?}: {report:#}");
    let watched = linked + report["unmatched"].as_u64().unwrap() + report["not_followed"].as_u64().unwrap();
    assert!(watched >= 20, "{watched} objects watched: {report:#}");
}

/// Growth's first candidate at the reading `g` (at `t` s) names no structure yet, or one
/// holding `element`: never another holder; `when` says which readings these are.
fn assert_no_other_structure(s: &Service, t: u64, g: &Value, element: &str, when: &str) {
    let structure = &g["candidates"][0]["slice"]["structure"];
    assert!(
        structure.is_null() || structure["element"] == element,
        "{}: at {t} s, {when}, growth's first candidate {}: {structure:#}",
        s.scenario,
        g["candidates"][0]["class"]
    );
}

/// When the walks never learned `holder`: that is only allowed where the agent's own events
/// say the walks that learn it could not run within the pause bound, and then no reading may
/// name another holder. On a loaded machine (CI, or two busy loops beside the test) JDK 25's
/// walks ran at 2.4–7.9 µs an object against 1.3 µs alone: every whole walk stopped at its
/// deadline or was skipped, and the walk filtered to the holder's class, which learns it when
/// the machine is idle, never fitted. The walk filtered to that class is the agent's evidence:
/// once it completed, the holder must have been named.
fn assert_holder_not_said(s: &Service, holder: &str, element: &str) {
    let events = walk_events(s);
    let holder_class = holder.rsplit_once('.').map_or(holder, |h| h.0);
    let learned = format!("heap walk filtered to {holder_class}:");
    assert!(
        events.iter().any(|e| e.contains("stopped at its deadline")) && !events.iter().any(|e| e.starts_with(&learned)),
        "{}: {holder} never named, though no walk stopped at its deadline or one filtered to {holder_class} completed: {:?}; the agent's walks: {events:#?}",
        s.scenario,
        log(s)
    );
    for (t, g, top) in &s.verdicts {
        assert_no_other_structure(s, *t, g, element, &format!("{holder} not learned"));
        for c in top["candidates"].as_array().unwrap() {
            assert!(
                c["held_by"].is_null() || c["held_by"] == holder,
                "{}: at {t} s, {holder} not learned, top names a holder: {c}",
                s.scenario
            );
        }
    }
    eprintln!(
        "NOTE {}: {holder} was not learned: the walks that learn it did not fit the pause bound on this machine, and no reading named another holder (the agent's walks: {events:?})",
        s.scenario
    );
}

/// No walk stopped the JVM longer than `max_pause_ms`, stopped walks included; or, when one
/// did, the agent had stopped it at its deadline (its own record says so) and the JVM took the
/// rest to resume. On a loaded machine that rest is the machine's: under the full suite a walk
/// paused JDK 25 for 514 ms against the 250 ms bound, and 140 s later, alone, the same test
/// kept every pause within it. A pause over the bound with no walk stopped
/// at its deadline, or over four times the bound, still fails.
fn assert_within_max_pause(s: &Service, max_pause_ms: f64) {
    let run = runstore::read(&s.db, 0).unwrap();
    let longest: f64 = run.meta.get("longest_pause_ms").map_or(0.0, |l| l.parse().unwrap());
    if longest <= max_pause_ms {
        return;
    }
    let stopped = run.events.iter().any(|e| e.contains("stopped at its deadline"));
    assert!(
        stopped && longest <= 4.0 * max_pause_ms,
        "{}: a walk stopped the JVM {longest} ms, over max_pause {max_pause_ms} ms, {}",
        s.scenario,
        if stopped { "past four times the bound" } else { "and the agent did not stop it at its deadline" }
    );
}

#[test]
fn our_session_registry_leak_and_a_full_cache_by_run() {
    let jdk = Jdk::default_jdk();
    let _alone = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let cp = compiled(&jdk, dir.path());
    let parser = Command::new("python3").args(["-c", "import prometheus_client"]).status();
    let Some(otlp) = OtlpReceiver::start(dir.path()).filter(|_| parser.is_ok_and(|s| s.success())) else {
        crate::support::missing(
            "Python's opentelemetry-proto (an OTLP receiver) and prometheus_client (an OpenMetrics parser)",
        );
        return;
    };
    let port = free_port();
    let Some(prometheus) = Prometheus::start(dir.path(), port) else {
        crate::support::missing("Debian's prometheus (a real server scraping the agent)");
        return;
    };
    let flags = [
        "--metrics-port".to_string(),
        port.to_string(),
        "--otlp".into(),
        format!("http://127.0.0.1:{}", otlp.port),
        "--otlp-every".into(),
        "5s".into(),
        "--watch".into(),
        "rule:UserSession".into(),
        "--capture-on-leak".into(),
    ];
    let mut services = [
        start_with(&jdk, &cp, dir.path(), "registry", By::Run, &flags),
        start(&jdk, &cp, dir.path(), "steady", By::Run),
    ];
    watch(&mut services);
    assert_steady(&services[1]);
    let grows = [
        "Services$UserSession",
        "byte[]",
        "java.lang.String",
        "java.util.HashMap",
        "java.util.HashMap$Node",
        "java.util.HashMap$Node[]",
        "java.util.concurrent.ConcurrentHashMap$Node",
        "java.util.concurrent.ConcurrentHashMap$Node[]",
    ];
    assert_named(&services[0], &["Services$UserSession", "class Services$Registry"], &grows);
    let (t, last, _) = services[0].verdicts.iter().rfind(|v| v.0 < SECONDS).unwrap();
    assert_eq!(
        last["candidates"][0]["slice"]["structure"]["name"], "Services$Registry.SESSIONS",
        "at {t} s the registry's field is not the first candidate's structure: {:#}",
        last["candidates"][0]["slice"]
    );
    assert_metrics(&services[0], &otlp, &grows);
    assert_alert(&services[0], &prometheus, &grows);
    assert_stale_from_birth(&services[0]);
    assert_captured(&services[0]);
}

/// The sessions, never used after their constructor, are stale by their whole path from the
/// registry's static map, each aged from its creation (the constructor's hook tagged it then),
/// and located where the service creates them (the line of `new UserSession` in the source).
fn assert_stale_from_birth(s: &Service) {
    let out = leakscope(&["stale", s.db.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "stale: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let src = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/Services.java")).unwrap();
    let line = src.lines().position(|l| l.contains("new UserSession(user)")).unwrap() + 1;
    let created = format!("Services$Registry.request(Services.java:{line})");
    let whole = [
        "class Services$Registry",
        "java.util.concurrent.ConcurrentHashMap",
        "java.util.concurrent.ConcurrentHashMap$Node[]",
        "java.util.concurrent.ConcurrentHashMap$Node",
        "Services$UserSession",
    ];
    let paths = report["paths"].as_array().unwrap();
    let leaked = paths
        .iter()
        .find(|p| p["path"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).eq(whole))
        .unwrap_or_else(|| panic!("no stale path {whole:?}: {report:#}"));
    assert_eq!(leaked["location"], created.as_str(), "{leaked}");
    // 300 sessions a second for two minutes, the oldest made at the start.
    assert!(leaked["count"].as_u64().unwrap() >= 1_000, "{leaked}");
    assert!(leaked["last_access"]["longest_ms"].as_u64().unwrap() >= 90_000, "{leaked}");
}

/// With `--capture-on-leak`, the agent took one live dump beside the run store once the leak
/// was confirmed, and `growth RUN.db` (and `report RUN.db`) name the sessions' holder in it
/// exactly: the registry's map, at its static field, retaining at least the sessions' own
/// bytes as the dump's histogram counts them.
fn assert_captured(s: &Service) {
    let dump = s.db.with_file_name("registry-capture-1.hprof");
    assert!(dump.exists(), "no capture beside the run store: {:?}", std::fs::read_dir(s.db.parent().unwrap()));
    let histogram = read_json(&["histogram", dump.to_str().unwrap(), "--json"]).expect("histogram of the capture");
    let sessions = histogram["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Services$UserSession")
        .unwrap_or_else(|| panic!("no session in the capture"));
    assert!(sessions["instances"].as_u64().unwrap() >= 1_000, "{sessions}");
    let growth = read_json(&["growth", s.db.to_str().unwrap(), "--json"]).expect("growth");
    let notes = growth["notes"].to_string();
    assert!(notes.contains("registry-capture-1.hprof"), "the report does not say it used the capture: {notes}");
    // Whichever classes of the sessions head the ranking (the sessions, their ids, the map's
    // nodes), they pile up in the registry's map.
    let holders: Vec<&Value> =
        growth["candidates"].as_array().unwrap().iter().flat_map(|c| c["holders"].as_array().unwrap()).collect();
    let map = holders
        .iter()
        .find(|h| h["class"] == "java.util.concurrent.ConcurrentHashMap")
        .unwrap_or_else(|| panic!("the sessions' holder is not the map: {holders:#?}; notes {notes}"));
    assert!(map.to_string().contains("SESSIONS"), "the map's path does not reach Registry.SESSIONS: {map:#}");
    let retained = map["retained_bytes"].as_u64().unwrap();
    let shallow = sessions["shallow_bytes"].as_u64().unwrap();
    assert!(retained >= shallow, "the map retains {retained} B, less than its sessions' own {shallow} B");
    // The HTML report of the run shows the same holders.
    let html = s.db.with_file_name("registry.html");
    let out = leakscope(&["report", s.db.to_str().unwrap(), "-o", html.to_str().unwrap()]);
    assert!(out.status.success(), "report: {}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("registry-capture-1.hprof") && page.contains("SESSIONS"), "the report shows no capture");
}

/// `top` on a terminal: it draws on the alternate screen, redraws, and `q` quits at once,
/// leaving the last view on the normal screen. The terminal is a pseudo-terminal that
/// util-linux's `script` gives it; the store is one a running agent would have written.
#[test]
fn top_on_a_terminal_quits_on_q() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("run.db");
    let mut store = runstore::Store::create(&db, &[("pid", "1".into()), ("command", "Shop".into())]).unwrap();
    for i in 0..3u64 {
        let session = runstore::SampledClass {
            name: "Session".into(),
            instances: 1000 * (i + 1),
            bytes: 64_000 * (i + 1),
            allocated_bytes: 128_000 * (i + 1),
        };
        store.write_sample(1_000 + 10_000 * i, i, runstore::Checked::Collection, &[session], &[]).unwrap();
    }
    drop(store);
    let Ok(mut child) = Command::new("script")
        .args(["-qec", &format!("{} top {} --every 1s", env!("CARGO_BIN_EXE_leakscope"), db.display()), "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        crate::support::missing("util-linux's script (a pseudo-terminal for top)");
        return;
    };
    std::thread::sleep(Duration::from_millis(2500));
    child.stdin.as_mut().unwrap().write_all(b"q").unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "top did not quit on q");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(screen.contains("\x1b[?1049h") && screen.contains("\x1b[?1049l"), "no alternate screen: {screen:?}");
    let after = screen.rsplit("\x1b[?1049l").next().unwrap();
    assert!(after.contains("leakscope top") && after.contains("Session"), "the last view is not left: {after:?}");
}

/// The leak's series reach monitoring both ways: scraped while the service runs (parsed as
/// OpenMetrics by the Prometheus project's parser) and pushed (decoded as OTLP by the
/// OpenTelemetry project's definitions). Oracles: the leak planted in the source (a static map
/// of `Services$Registry`, and the classes it makes grow), and each format's own rules.
fn assert_metrics(s: &Service, otlp: &OtlpReceiver, grows: &[&str]) {
    let scrape = s.scrapes.last().unwrap_or_else(|| panic!("{}: no scrape of {:?}", s.scenario, s.metrics));
    let samples = parse_openmetrics(scrape);
    let value = |name: &str| samples.iter().find(|r| r["name"] == name).map(|r| r["value"].as_f64().unwrap());
    assert_eq!(value("leakscope_agent_up"), Some(1.0), "{scrape}");
    assert_eq!(value("leakscope_growth_judged"), Some(1.0), "{scrape}");
    assert!(value("leakscope_walks_total").unwrap_or(0.0) >= 1.0, "{scrape}");
    for r in samples.iter().filter(|r| r["unit"] != "") {
        let unit = r["unit"].as_str().unwrap();
        assert!(r["family"].as_str().unwrap().ends_with(&format!("_{unit}")), "{r}");
    }
    let candidates: Vec<&str> = samples
        .iter()
        .filter(|r| r["name"] == "leakscope_growth_candidate" && r["value"] == 1.0)
        .map(|r| r["labels"]["class"].as_str().unwrap())
        .collect();
    assert!(!candidates.is_empty() && candidates.iter().all(|c| grows.contains(c)), "{candidates:?}\n{scrape}");
    let held = |holder: &str| holder.contains("Services$Registry");
    assert!(
        samples.iter().any(|r| r["name"] == "leakscope_growth_holder"
            && held(r["labels"]["holder"].as_str().unwrap())
            && candidates.contains(&r["labels"]["class"].as_str().unwrap())),
        "no candidate held by Services$Registry:\n{scrape}"
    );

    let points = otlp.points();
    assert!(!points.is_empty(), "the OTLP receiver got nothing");
    assert!(points.iter().all(|p| p["path"] == "/v1/metrics" && p["resource"]["service.name"] == "leakscope-agent"));
    let named = |name: &'static str| points.iter().filter(move |p| p["name"] == name);
    assert!(named("leakscope.class.live").all(|p| p["unit"] == "By"));
    assert!(
        named("leakscope.growth.candidate")
            .any(|p| p["value"] == 1 && grows.contains(&p["attributes"]["class"].as_str().unwrap())),
        "no candidate pushed"
    );
    assert!(
        named("leakscope.growth.holder").any(|p| held(p["attributes"]["holder"].as_str().unwrap())),
        "no holder pushed"
    );
    // The last export, at the JVM's exit, says the agent ended.
    assert_eq!(named("leakscope.agent.up").next_back().map(|p| p["value"].clone()), Some(Value::from(0)));
}

/// The guide's alert rule, evaluated by a real Prometheus server on what it scraped, is
/// pending (its `for` has not passed yet) for a class the leak grows on the leaking pod, at
/// the time of the last scrape while the service ran.
fn assert_alert(s: &Service, prometheus: &Prometheus, grows: &[&str]) {
    let alerts = prometheus.query("ALERTS{alertname=\"JvmMemoryLeak\"}", s.scraped_at);
    let up = prometheus.query("leakscope_agent_up", s.scraped_at);
    assert!(
        alerts
            .iter()
            .any(|a| a["metric"]["pod"] == "registry" && grows.contains(&a["metric"]["class"].as_str().unwrap_or(""))),
        "no JvmMemoryLeak alert for a growing class: {alerts:?}; leakscope_agent_up: {up:?}"
    );
}
