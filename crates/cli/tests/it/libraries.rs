//! Findings named as a person says them, on leaks through real libraries' own structures
//! (the JDK's MBean server, Log4j 2, Guava's cache and EventBus, Caffeine, from Debian's
//! packages): `tests/java/LeakyLibraries.java` leaks through each, dumping the live heap after
//! each of five phases, and `growth`'s first finding, and the first suspect of the last dump,
//! must carry the name decision 0019 gives.
//!
//! Oracles: the program's source (which field of which class the application or the library
//! keeps the clients in), and the JDK's and the libraries' own field names, read from their
//! classes with `javap` (so a library's new version that renames its field fails here first).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{debian_classpath, leakscope, BoundedOutput, Jdk};

const PHASES: usize = 5;

/// Runs LeakyLibraries SCENARIO on JDK 17; the dumps, oldest first.
fn series(cp: &str, scenario: &str, dir: &Path) -> Vec<PathBuf> {
    let jdk = Jdk::default_jdk();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/LeakyLibraries.java");
    let ok = jdk.tool("javac").args(["--release", "17", "-nowarn", "-cp", cp, "-d"]).arg(dir).arg(&src).status();
    assert!(ok.unwrap().success(), "javac {}", src.display());
    let out = jdk
        .tool("java")
        .args(["-Xmx256m", "-Dlog4j2.level=ERROR", "-cp", &format!("{cp}:{}", dir.display())])
        .args(["LeakyLibraries", scenario, &PHASES.to_string()])
        .arg(dir)
        .bounded_output();
    assert!(out.status.success(), "{scenario}: {}", String::from_utf8_lossy(&out.stderr));
    (1..=PHASES).map(|p| dir.join(format!("{scenario}-{p:02}.hprof"))).collect()
}

/// `growth --json` and its text over `dumps`.
fn growth(dumps: &[PathBuf]) -> (Value, String) {
    let mut args = vec!["growth", "--quiet"];
    args.extend(dumps.iter().map(|p| p.to_str().unwrap()));
    let text = leakscope(&args);
    assert!(text.status.success(), "{}", String::from_utf8_lossy(&text.stderr));
    args.push("--json");
    let json = leakscope(&args);
    (serde_json::from_slice(&json.stdout).unwrap(), String::from_utf8_lossy(&text.stdout).into())
}

/// Whether `class` (in a jar of `cp`, or the JDK's) declares `field`, as `javap -p` lists it.
fn declares(cp: &str, class: &str, field: &str) -> bool {
    let out = Jdk::default_jdk().tool("javap").args(["-p", "-cp", cp, class]).bounded_output();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().any(|l| l.trim_end_matches(';').rsplit(' ').next() == Some(field))
}

/// What a library scenario's first finding must say: its name, the library's place beside it
/// (when the application owns it), what users call it, and the element it holds.
struct Expect<'a> {
    scenario: &'a str,
    structure: &'a str,
    library: Option<&'a str>,
    known_as: &'a str,
    element: &'a str,
}

fn check(cp: &str, e: &Expect<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let dumps = series(cp, e.scenario, dir.path());
    // The oracle's places are real fields of the classes named.
    let with_program = format!("{cp}:{}", dir.path().display());
    for place in [Some(e.structure), e.library].into_iter().flatten() {
        let (class, field) = place.rsplit_once('.').unwrap();
        assert!(declares(&with_program, class, field), "{class} declares no field {field}: the oracle is out of date");
    }
    let (report, text) = growth(&dumps);
    crate::growth::assert_last_three(&dumps, Some(e.structure));
    let f = &report["findings"][0];
    assert_eq!(f["structure"], e.structure, "{}: {f:#}", e.scenario);
    assert_eq!(f["library"].as_str(), e.library, "{}", e.scenario);
    assert_eq!(f["known_as"], e.known_as, "{}", e.scenario);
    assert_eq!(f["element"], e.element, "{}", e.scenario);
    // The path below the name is kept whole: it reaches the structure through the named field.
    let path = f["path"].as_array().unwrap();
    let named_field = e.library.unwrap_or(e.structure).rsplit_once('.').unwrap().1;
    assert!(path.iter().any(|p| p["via"] == named_field), "{}: {path:?}", e.scenario);
    // The text says the same, and the class ranking below leads with no collection's internals.
    let head = text.lines().find(|l| l.starts_with("#1 ")).unwrap_or_else(|| panic!("{text}"));
    assert!(head.starts_with(&format!("#1 {} (", e.structure)) && head.contains(e.known_as), "{head}");
    let ranking =
        text.lines().skip_while(|l| !l.starts_with("Growing classes")).nth(1).unwrap_or_else(|| panic!("{text}"));
    let first_class = ranking.split_whitespace().next().unwrap();
    assert!(!growth::names::is_collection_part(first_class), "{}: {ranking}\n{text}", e.scenario);
    // One dump alone: the first suspect's headline names the same structure, not the object
    // the dominator tree stopped at (issue 35: "one ApplicationContext held by context").
    let suspects = crate::support::json(&["suspects", "--quiet", "--json", dumps.last().unwrap().to_str().unwrap()]);
    let title = suspects["suspects"][0]["title"].as_str().unwrap();
    assert!(title.starts_with(e.structure), "{}: {title}", e.scenario);
}

fn classpath() -> Option<String> {
    debian_classpath(&["guava", "log4j-api", "log4j-core", "caffeine"])
}

#[test]
fn the_mbean_servers_repository_is_named_by_its_own_field() {
    let Some(cp) = classpath() else { return };
    check(
        &cp,
        &Expect {
            scenario: "jmx",
            structure: "com.sun.jmx.mbeanserver.Repository.domainTb",
            library: None,
            known_as: "the MBean server's registered MBeans",
            element: "LeakyLibraries$ClientStats",
        },
    );
}

#[test]
fn log4j_loggers_are_named_by_its_registry() {
    let Some(cp) = classpath() else { return };
    check(
        &cp,
        &Expect {
            scenario: "log4j",
            structure: "org.apache.logging.log4j.spi.LoggerRegistry.map",
            library: None,
            known_as: "Log4j's loggers",
            element: "org.apache.logging.log4j.core.Logger",
        },
    );
}

#[test]
fn a_guava_cache_is_named_by_the_application_field_that_owns_it() {
    let Some(cp) = classpath() else { return };
    check(
        &cp,
        &Expect {
            scenario: "guava-cache",
            structure: "LeakyLibraries$Prices.cache",
            library: Some("com.google.common.cache.LocalCache.segments"),
            known_as: "a Guava cache",
            element: "LeakyLibraries$ClientState",
        },
    );
}

#[test]
fn an_event_bus_is_named_by_the_application_field_that_owns_it() {
    let Some(cp) = classpath() else { return };
    check(
        &cp,
        &Expect {
            scenario: "eventbus",
            structure: "LeakyLibraries$Events.bus",
            library: Some("com.google.common.eventbus.SubscriberRegistry.subscribers"),
            known_as: "a Guava EventBus's subscribers",
            element: "LeakyLibraries$ClientListener",
        },
    );
}

#[test]
fn a_caffeine_cache_is_named_by_the_application_field_that_owns_it() {
    let Some(cp) = classpath() else { return };
    check(
        &cp,
        &Expect {
            scenario: "caffeine",
            structure: "LeakyLibraries$Sessions.store",
            library: Some("com.github.benmanes.caffeine.cache.UnboundedLocalCache.data"),
            known_as: "a Caffeine cache",
            element: "LeakyLibraries$ClientState",
        },
    );
}
