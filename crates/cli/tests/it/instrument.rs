//! The hook rewrite of `agent::instrument` on class files javac wrote, run by the JVM with its
//! verifier: same output, and the hook sees every instance method call and every constructor
//! that returns.

use std::path::Path;

use agent::instrument::{add_entry_hooks, LEAKSCOPE_HOOK};

use crate::support::{BoundedOutput, Jdk};

/// A hook that counts its calls and checks that it receives `this`.
const HOOK_SOURCE: &str = "package io.leakscope;
public final class LeakScope {
    public static int calls;
    public static void touched(Object self) {
        if (self == null) throw new AssertionError(\"no this\");
        calls++;
    }
    public static void created(Object self) {
        touched(self);
    }
}
";

/// Instance method and constructor calls `Hooked.main` makes (counted in its comments): 24
/// method calls, the constructors of Account and Person, and 7 of Built's.
const CALLS: &str = "touched 33";

fn run(jdk: &Jdk, dir: &Path) -> String {
    let out = jdk.tool("java").args(["-Xshare:off", "-cp"]).arg(dir).arg("Hooked").bounded_output();
    assert!(out.status.success(), "java: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn check(jdk: &Jdk, release: &str) {
    let dir = tempfile::tempdir().unwrap();
    let hook_src = dir.path().join("LeakScope.java");
    std::fs::write(&hook_src, HOOK_SOURCE).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/Hooked.java");
    let status =
        jdk.tool("javac").args(["--release", release, "-g", "-d"]).arg(dir.path()).arg(&src).arg(&hook_src).status();
    assert!(status.expect("javac").success(), "javac --release {release}");
    let plain = run(jdk, dir.path());
    assert!(plain.ends_with("touched 0\n"), "{plain}");

    let mut hooked_methods = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "class") {
            let bytes = std::fs::read(&path).unwrap();
            let hook = LEAKSCOPE_HOOK;
            if let Some((rewritten, n)) = add_entry_hooks(&bytes, hook).expect("a class javac wrote") {
                std::fs::write(&path, rewritten).unwrap();
                hooked_methods += n;
            }
        }
    }
    // Account: 12 instance methods and the lambda capturing `this`; Named: the default method;
    // the constructors of Hooked, Account and Person, and 3 of Built's 4 (not the one with a
    // switch). LeakScope, in its package's directory, is not rewritten.
    assert_eq!(hooked_methods, 20, "methods hooked (release {release})");
    let hooked = run(jdk, dir.path());
    let body = |s: &str| s.lines().filter(|l| !l.starts_with("touched")).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&hooked), body(&plain), "the program's own output changed (release {release})");
    assert_eq!(hooked.lines().last(), Some(CALLS), "release {release}");
}

#[test]
fn hooked_classes_verify_run_unchanged_and_count_every_instance_call() {
    let jdk = Jdk::default_jdk();
    check(&jdk, "8");
    check(&jdk, "17");
    if let Some(jdk25) = Jdk::require25() {
        check(&jdk25, "25");
    }
}
