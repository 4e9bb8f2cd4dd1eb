//! Builds `leakscope-api.jar` (the Java side of `LeakScope.expectDead`) from
//! `java/io/leakscope/LeakScope.java` with the JDK found through JAVA_HOME or PATH. Without a
//! JDK the jar is empty and the agent and `leakscope api-jar` say so.

use std::path::{Path, PathBuf};
use std::process::Command;

fn tool(name: &str) -> PathBuf {
    match std::env::var_os("JAVA_HOME") {
        Some(home) if Path::new(&home).join("bin").join(name).exists() => Path::new(&home).join("bin").join(name),
        _ => PathBuf::from(name),
    }
}

fn main() {
    let src = Path::new("java/io/leakscope/LeakScope.java");
    println!("cargo:rerun-if-changed={}", src.display());
    println!("cargo:rerun-if-env-changed=JAVA_HOME");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let classes = out.join("api-classes");
    let jar = out.join("leakscope-api.jar");
    let _ = std::fs::remove_dir_all(&classes);
    let built = std::fs::create_dir_all(&classes).is_ok()
        && Command::new(tool("javac"))
            .args(["--release", "8", "-Xlint:-options", "-d"])
            .arg(&classes)
            .arg(src)
            .status()
            .is_ok_and(|s| s.success())
        && Command::new(tool("jar"))
            .arg("cf")
            .arg(&jar)
            .arg("-C")
            .arg(&classes)
            .arg(".")
            .status()
            .is_ok_and(|s| s.success());
    if !built {
        println!("cargo:warning=no JDK (javac, jar) found: leakscope-api.jar is not built, LeakScope.expectDead is unavailable");
        std::fs::write(&jar, b"").expect("write an empty jar placeholder");
    }
}
