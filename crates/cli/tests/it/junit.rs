//! Leak tests in the user's own test suite: `@LeakTest` (the JUnit 5 extension in
//! `leakscope-api.jar`) on the Maven-layout sample project `tests/java/junit-sample`, run by
//! the JUnit Platform's console launcher from Debian's junit5 package, as a build would run it.
//!
//! Oracles: the sample's source (one test's checkout leaves its cart subscribed to
//! `PriceService.listeners`, one keeps a small entry a run in `Audit.ENTRIES`, the other
//! unsubscribes its cart) and JUnit's own verdicts.

use std::path::Path;

use crate::support::{debian_classpath, leakscope, BoundedOutput, Jdk};

#[test]
fn a_leaking_scenario_fails_with_its_holder_path_and_a_steady_one_passes() {
    let Some(console) = debian_classpath(&["junit-platform-console-standalone"]) else { return };
    let dir = tempfile::tempdir().unwrap();
    let api = dir.path().join("leakscope-api.jar");
    let out = leakscope(&["api-jar", "-o", api.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && err.contains("without JUnit 5's API") {
        crate::support::missing("@LeakTest in leakscope-api.jar (built when JUnit 5's API, Debian's junit5, is found)");
        return;
    }
    assert!(out.status.success(), "{err}");
    let jdk = Jdk::default_jdk();
    let listing = jdk.tool("jar").arg("tf").arg(&api).bounded_output();
    assert!(
        String::from_utf8_lossy(&listing.stdout).contains("io/leakscope/junit/LeakTest.class"),
        "api-jar wrote a jar without @LeakTest and said nothing"
    );
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/junit-sample/src");
    let sources: Vec<String> = ["main/java/com/shop", "test/java/com/shop"]
        .iter()
        .flat_map(|d| std::fs::read_dir(sample.join(d)).unwrap())
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    let classes = dir.path().join("classes");
    let cp = format!("{}:{console}", api.display());
    let javac =
        jdk.tool("javac").args(["--release", "17", "-nowarn", "-cp", &cp, "-d"]).arg(&classes).args(&sources).status();
    assert!(javac.unwrap().success(), "javac {sources:?}");
    let run = jdk
        .tool("java")
        .arg(format!("-Dleakscope.bin={}", env!("CARGO_BIN_EXE_leakscope")))
        .args(["-jar", &console, "--disable-banner", "--disable-ansi-colors", "--details=tree", "--class-path"])
        .arg(format!("{}:{}", classes.display(), api.display()))
        .args(["--select-class", "com.shop.ShopLeakTest"])
        .bounded_output();
    let text = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(run.status.code(), Some(1), "one test fails:\n{text}\n{}", String::from_utf8_lossy(&run.stderr));
    let line = |test: &str| text.lines().find(|l| l.contains(test)).unwrap_or_else(|| panic!("{test}:\n{text}"));
    assert!(line("checkoutAndCloseLetsTheCartGo()").contains('✔'), "{text}");
    let failed = line("checkoutForgetsTheCart()");
    assert!(failed.contains('✘') && failed.contains("leaks: over 6 rounds of 100 runs"), "{text}");
    // The failure names the list the carts pile up in, what it holds, and the path to it.
    assert!(text.contains("#1 com.shop.PriceService.listeners ") && text.contains("holding com.shop.Cart"), "{text}");
    assert!(text.contains("leaky → com.shop.Shop · prices → com.shop.PriceService · listeners →"), "{text}");
    assert!(text.contains("[         1 tests successful      ]"), "{text}");
    // A small leak, one String[3] (32 bytes) a run, fails too, judged per run of its rounds:
    // 600 entries are 19 KiB, under any share of the test JVM's heap.
    let small = line("checkoutIsAuditedForever()");
    assert!(small.contains('✘') && small.contains("leaks: over 6 rounds of 100 runs"), "{text}");
    assert!(text.contains("#1 com.shop.Audit.ENTRIES "), "the list that holds them: {text}");
    assert!(text.contains("[         2 tests failed          ]"), "{text}");
    // The dumps are gone once judged.
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("leakscope-junit-"))
        .filter(|e| e.path().read_dir().is_ok_and(|mut d| d.next().is_some()))
        .collect();
    assert!(left.is_empty(), "dumps left behind: {left:?}");
}
