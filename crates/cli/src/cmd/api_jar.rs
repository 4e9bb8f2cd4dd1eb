//! `leakscope api-jar`: the Java API of leakscope, for programs to compile against.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;

use crate::exit::Exit;

/// Write `leakscope-api.jar`: the class `io.leakscope.LeakScope`, with
/// `LeakScope.expectDead(Object)` to declare that an object should now be garbage (checked by
/// `leakscope check`), and the JUnit 5 annotation `io.leakscope.junit.LeakTest`, a test that
/// runs its method in rounds, dumps the heap after each and fails when `leakscope growth`
/// finds a growing structure. Put it on the program's (or the tests') class path. Without the
/// leakscope agent `expectDead` returns at once; with it, the object is followed until it is
/// collected.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope api-jar -o lib/leakscope-api.jar
  # App.java has: import io.leakscope.LeakScope;
  javac -cp lib/leakscope-api.jar App.java
  # a JUnit 5 leak test: @LeakTest (io.leakscope.junit.LeakTest) on a method
  mvn test   # with lib/leakscope-api.jar a test dependency")]
pub struct ApiJarArgs {
    /// Where to write the jar.
    #[arg(short, long, value_name = "FILE", default_value = "leakscope-api.jar")]
    pub output: PathBuf,
    /// Write the jar even when this leakscope was built without JUnit 5's API, so without
    /// `@LeakTest` (`expectDead` alone).
    #[arg(long)]
    pub without_leak_test: bool,
}

/// Runs the command.
pub fn run(args: &ApiJarArgs) -> anyhow::Result<Exit> {
    if agent::API_JAR.is_empty() {
        bail!("this leakscope was built without a JDK (javac and jar), so it has no leakscope-api.jar; rebuild it with a JDK on PATH or JAVA_HOME");
    }
    if !agent::API_HAS_LEAK_TEST && !args.without_leak_test {
        bail!("this leakscope was built without JUnit 5's API, so its leakscope-api.jar has no @LeakTest: install JUnit 5 (Debian's junit5, or set LEAKSCOPE_JUNIT_CLASSPATH to its jars) and build leakscope again, or give --without-leak-test for LeakScope.expectDead alone");
    }
    app::partial::write_whole(&args.output, agent::API_JAR)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    eprintln!("wrote {} ({} bytes)", args.output.display(), agent::API_JAR.len());
    Ok(Exit::Success)
}
