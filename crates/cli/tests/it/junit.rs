//! Leak tests in the user's own test suite: `@LeakTest` (the JUnit 5 extension in
//! `leakscope-api.jar`) on the Maven-layout sample project `tests/java/junit-sample`, run by
//! the JUnit Platform's console launcher from Debian's junit5 package, as a build would run it.
//!
//! Oracles: the sample's source (one test's checkout leaves its cart subscribed to
//! `PriceService.listeners`, the other unsubscribes it) and JUnit's own verdicts.

use std::path::Path;

use crate::support::{debian_classpath, leakscope, BoundedOutput, Jdk};

#[test]
fn a_leaking_scenario_fails_with_its_holder_path_and_a_steady_one_passes() {
    let Some(console) = debian_classpath(&["junit-platform-console-standalone"]) else { return };
    let dir = tempfile::tempdir().unwrap();
    let api = dir.path().join("leakscope-api.jar");
    let out = leakscope(&["api-jar", "-o", api.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let jdk = Jdk::default_jdk();
    let listing = jdk.tool("jar").arg("tf").arg(&api).bounded_output();
    if !String::from_utf8_lossy(&listing.stdout).contains("io/leakscope/junit/LeakTest.class") {
        crate::support::missing("@LeakTest in leakscope-api.jar (built when JUnit 5's API, Debian's junit5, is found)");
        return;
    }
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
    // The dumps are gone once judged.
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("leakscope-junit-"))
        .filter(|e| e.path().read_dir().is_ok_and(|mut d| d.next().is_some()))
        .collect();
    assert!(left.is_empty(), "dumps left behind: {left:?}");
}
