//! Builds `leakscope-api.jar` (the Java side of `LeakScope.expectDead`) from
//! `java/io/leakscope/LeakScope.java` with the JDK found through JAVA_HOME or PATH, and adds
//! the JUnit 5 extension (`java/io/leakscope/junit`, `@LeakTest`) when JUnit 5's API is found
//! (`LEAKSCOPE_JUNIT_CLASSPATH`, or Debian's junit5 package in /usr/share/java). Without a JDK
//! the jar is empty and the agent and `leakscope api-jar` say so.

use std::path::{Path, PathBuf};
use std::process::Command;

fn tool(name: &str) -> PathBuf {
    match std::env::var_os("JAVA_HOME") {
        Some(home) if Path::new(&home).join("bin").join(name).exists() => Path::new(&home).join("bin").join(name),
        _ => PathBuf::from(name),
    }
}

/// JUnit 5's API jars to compile the extension against, when they are all there.
fn junit_classpath() -> Option<String> {
    if let Ok(cp) = std::env::var("LEAKSCOPE_JUNIT_CLASSPATH") {
        return Some(cp);
    }
    let jars = ["junit-jupiter-api", "junit-platform-commons", "opentest4j", "apiguardian-api"]
        .map(|j| format!("/usr/share/java/{j}.jar"));
    jars.iter().all(|j| Path::new(j).exists()).then(|| jars.join(":"))
}

fn javac(release: &str, classpath: &str, out: &Path, sources: &[PathBuf]) -> bool {
    Command::new(tool("javac"))
        .args(["--release", release, "-Xlint:-options", "-nowarn", "-cp", classpath, "-d"])
        .arg(out)
        .args(sources)
        .status()
        .is_ok_and(|s| s.success())
}

fn main() {
    let src = Path::new("java/io/leakscope/LeakScope.java");
    let junit = ["java/io/leakscope/junit/LeakTest.java", "java/io/leakscope/junit/LeakCheck.java"].map(PathBuf::from);
    println!("cargo:rerun-if-changed={}", src.display());
    for j in &junit {
        println!("cargo:rerun-if-changed={}", j.display());
    }
    println!("cargo:rerun-if-env-changed=JAVA_HOME");
    println!("cargo:rerun-if-env-changed=LEAKSCOPE_JUNIT_CLASSPATH");
    // The folder, not its jars: a jar's own time is its package's build time, older than any
    // build here, so a junit5 installed after the first build did not rebuild the jar. The
    // folder's time is when a package last added or removed a jar there (cargo scans a
    // folder's files too).
    println!("cargo:rerun-if-changed=/usr/share/java");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let classes = out.join("api-classes");
    let jar = out.join("leakscope-api.jar");
    let boot = out.join("leakscope-boot.jar");
    let _ = std::fs::remove_dir_all(&classes);
    let built = std::fs::create_dir_all(&classes).is_ok()
        && javac("8", "", &classes, &[src.to_owned()])
        && match junit_classpath() {
            Some(cp) => {
                let cp = format!("{cp}:{}", classes.display());
                if javac("11", &cp, &classes, &junit) {
                    // `leakscope api-jar` refuses a jar without it, unless told otherwise.
                    println!("cargo:rustc-env=LEAKSCOPE_API_HAS_LEAK_TEST=1");
                } else {
                    println!("cargo:warning=the JUnit 5 extension did not compile: leakscope-api.jar has no @LeakTest");
                }
                true
            }
            None => {
                println!("cargo:warning=JUnit 5's API not found (junit5 package, or LEAKSCOPE_JUNIT_CLASSPATH): leakscope-api.jar has no @LeakTest");
                true
            }
        }
        && Command::new(tool("jar"))
            .arg("cf")
            .arg(&jar)
            .arg("-C")
            .arg(&classes)
            .arg(".")
            .status()
            .is_ok_and(|s| s.success())
        // The agent's bootstrap jar: LeakScope alone, since the boot loader cannot see JUnit.
        && Command::new(tool("jar"))
            .arg("cf")
            .arg(&boot)
            .args(["io/leakscope/LeakScope.class", "io/leakscope/LeakScope$Expected.class"].iter().flat_map(|c| {
                [std::ffi::OsString::from("-C"), classes.clone().into_os_string(), std::ffi::OsString::from(c)]
            }))
            .status()
            .is_ok_and(|s| s.success());
    if !built {
        println!("cargo:warning=no JDK (javac, jar) found: leakscope-api.jar is not built, LeakScope.expectDead is unavailable");
        std::fs::write(&jar, b"").expect("write an empty jar placeholder");
        std::fs::write(&boot, b"").expect("write an empty jar placeholder");
    }
}
