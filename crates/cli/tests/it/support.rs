//! Running the binary, and Java programs, from tests.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `leakscope` with `args`.
pub fn leakscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leakscope")).args(args).bounded_output()
}

/// How long one program a test runs may take: 10 minutes, or `LEAKSCOPE_TEST_DEADLINE`
/// seconds. The slowest takes about a minute on a busy two-core machine.
pub fn deadline() -> Duration {
    let secs = std::env::var("LEAKSCOPE_TEST_DEADLINE").ok().and_then(|s| s.parse().ok()).unwrap_or(600);
    Duration::from_secs(secs)
}

/// `Command::output` within [`deadline`]: a program that hangs fails its test, named, with
/// what it printed and the stacks of its threads, instead of stalling CI until CI's own limit.
pub trait BoundedOutput {
    /// Runs the command to its end with stdin closed and stdout and stderr captured.
    fn bounded_output(&mut self) -> Output;
}

impl BoundedOutput for Command {
    fn bounded_output(&mut self) -> Output {
        let what = format!("{self:?}");
        // Its own process group, so that a hang is killed with every process it started.
        let child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        wait_bounded(child, &what)
    }
}

/// `Child::wait_with_output` within [`deadline`], for a child started with piped output in
/// its own process group (see [`BoundedOutput`]).
pub fn wait_bounded(child: Child, what: &str) -> Output {
    wait_within(child, what, deadline())
}

fn wait_within(mut child: Child, what: &str, limit: Duration) -> Output {
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let stacks = stacks_of_group(child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
            let _ = child.kill();
            let _ = child.wait();
            let out = stdout.join().unwrap_or_default();
            let err = stderr.join().unwrap_or_default();
            panic!(
                "{what} did not finish in {} s and was killed.\nstdout:\n{}\nstderr:\n{}\n{stacks}",
                limit.as_secs(),
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output { status, stdout: stdout.join().unwrap_or_default(), stderr: stderr.join().unwrap_or_default() }
}

/// Reads `pipe` line by line until `wanted` finds what it looks for in a line, waiting at most
/// [`deadline`] (then the test fails, naming `what`); `None` when the pipe closes first. The
/// rest is read and dropped on a thread, so the writer never blocks on a full pipe.
pub fn await_line<T: Send + 'static>(
    pipe: impl Read + Send + 'static,
    what: &str,
    wanted: impl Fn(&str) -> Option<T> + Send + 'static,
) -> Option<T> {
    let (found, seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(pipe).lines().map_while(Result::ok);
        let _ = found.send(lines.by_ref().find_map(|l| wanted(&l)));
        lines.for_each(drop);
    });
    match seen.recv_timeout(deadline()) {
        Ok(result) => result,
        Err(_) => panic!("{what}: not seen in {} s", deadline().as_secs()),
    }
}

/// The live processes in process group `group` (not zombies, which only wait to be reaped).
fn group_members(group: u32) -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else { return Vec::new() };
    procs
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // Fields after the command's closing parenthesis: state, ppid, pgrp.
            let fields: Vec<&str> =
                stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
            fields.len() > 2 && fields[0] != "Z" && fields[2].parse() == Ok(group)
        })
        .collect()
}

/// The thread stacks of every process in process group `group`: `jcmd Thread.print` for a
/// JVM (from the JDK it runs), gdb's backtraces for anything else when gdb is installed.
fn stacks_of_group(group: u32) -> String {
    let mut text = String::new();
    for pid in group_members(group) {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        let bounded = |cmd: &mut Command| {
            let out = Command::new("timeout").arg("30").arg(cmd.get_program()).args(cmd.get_args()).output();
            out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_else(|e| e.to_string())
        };
        let stacks = if exe.file_name().is_some_and(|n| n == "java") {
            bounded(Command::new(exe.with_file_name("jcmd")).args([&pid.to_string(), "Thread.print"]))
        } else {
            bounded(Command::new("gdb").args(["-p", &pid.to_string(), "-batch", "-ex", "thread apply all bt"]))
        };
        text.push_str(&format!("--- process {pid} ({}):\n{stacks}\n", exe.display()));
    }
    text
}

/// Builds the agent library next to the `leakscope` binary, where `run` and `attach` look for
/// it: `cargo test` builds a cdylib only for its own package's tests, not for a dependent's.
/// The bundled demo dump (`tests/fixtures/demo-jdk17.hprof`: `examples/java/SessionLeak.java` on JDK 17).
pub const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/demo-jdk17.hprof");

/// Runs `leakscope ARGS...`, which must succeed, and parses its stdout as one JSON document.
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = leakscope(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

pub fn build_agent() {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let exe = Path::new(env!("CARGO_BIN_EXE_leakscope"));
        let profile_dir = exe.parent().unwrap();
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-q", "-p", "leakscope-agent"]);
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cargo build -p leakscope-agent");
        assert!(status.success(), "cannot build the agent library");
        assert!(profile_dir.join("libleakscope_agent.so").is_file());
    });
}

/// Writes `bytes` to a temporary file and returns its path (kept alive by the returned dir).
pub fn temp_dump(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("heap.hprof");
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

/// Whether the tests run in CI (`CI=true`), where a test that cannot run what it is named for
/// must fail rather than pass.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Says that `what` is missing: under CI the test fails, elsewhere it says so on stderr and
/// the caller returns.
pub fn missing(what: &str) {
    assert!(!in_ci(), "{what} is missing, and CI=true: scripts/test installs it");
    // Straight to the process's stderr: the test harness captures `eprintln!` and shows it only
    // for a failing test, so a skipped test would read as a plain `ok`.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("SKIPPED (not CI): {what} is missing; scripts/test installs it\n").as_bytes(),
    );
}

/// The class path of Debian's jars in /usr/share/java whose names start with one of
/// `prefixes` (versionless links only, such as `tomcat10-catalina.jar`), or `None` with a
/// [`missing`] message when one prefix matches nothing.
pub fn debian_classpath(prefixes: &[&str]) -> Option<String> {
    let dir = Path::new("/usr/share/java");
    let names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    // Versioned files (tomcat10-catalina-10.1.60.jar) are the same jars as the links.
    let versioned = |n: &str| {
        n.trim_end_matches(".jar")
            .rsplit('-')
            .next()
            .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()) && v.contains('.'))
    };
    let mut jars = Vec::new();
    for p in prefixes {
        let found: Vec<&String> =
            names.iter().filter(|n| n.starts_with(p) && n.ends_with(".jar") && !versioned(n)).collect();
        if found.is_empty() {
            missing(&format!("/usr/share/java/{p}*.jar (Debian's packages)"));
            return None;
        }
        jars.extend(found.into_iter().map(|n| dir.join(n).display().to_string()));
    }
    jars.sort();
    jars.dedup();
    Some(jars.join(":"))
}

/// A JDK: where its `java`, `javac` and `jcmd` are.
#[derive(Debug, Clone)]
pub struct Jdk {
    pub bin: PathBuf,
}

impl Jdk {
    /// The JDK on PATH (JDK 17 on this project's machines), or JAVA_HOME's.
    pub fn default_jdk() -> Jdk {
        if let Ok(home) = std::env::var("JAVA_HOME") {
            let bin = Path::new(&home).join("bin");
            if bin.join("jcmd").exists() {
                return Jdk::used(bin);
            }
        }
        let out = Command::new("sh").args(["-c", "readlink -f \"$(command -v javac)\""]).output().expect("sh");
        let javac = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        assert!(javac.exists(), "javac not found: the JVM tests need a JDK (see .ci/run)");
        Jdk::used(javac.parent().unwrap().to_owned())
    }

    /// The JDK in `bin`, noted in `$LEAKSCOPE_JDK_LOG` (when set) as used by the running test,
    /// so that `scripts/test` can say how many tests ran on each JDK.
    fn used(bin: PathBuf) -> Jdk {
        if let Ok(log) = std::env::var("LEAKSCOPE_JDK_LOG") {
            let release = std::fs::read_to_string(bin.join("../release")).unwrap_or_default();
            let version = release
                .lines()
                .find_map(|l| l.strip_prefix("JAVA_VERSION="))
                .map_or("unknown".to_owned(), |v| v.trim_matches('"').to_owned());
            let test = std::thread::current().name().unwrap_or("?").to_owned();
            if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
                use std::io::Write;
                // One short write per line: appends from parallel tests do not interleave.
                let _ = f.write_all(format!("{version}\t{test}\n").as_bytes());
            }
        }
        Jdk { bin }
    }

    /// JDK 25, which CI must have (see [`missing`]).
    pub fn require25() -> Option<Jdk> {
        let jdk = Self::jdk25();
        if jdk.is_none() {
            missing("JDK 25 (/usr/lib/jvm/temurin-25-jdk-amd64)");
        }
        jdk
    }

    /// JDK 25 at its usual place, if installed.
    pub fn jdk25() -> Option<Jdk> {
        let bin = PathBuf::from("/usr/lib/jvm/temurin-25-jdk-amd64/bin");
        bin.join("jcmd").exists().then(|| Jdk::used(bin))
    }

    /// The JDK's feature release (17, 25), from its `release` file.
    pub fn feature(&self) -> u32 {
        let release = std::fs::read_to_string(self.bin.join("../release")).unwrap_or_default();
        let version = release.lines().find_map(|l| l.strip_prefix("JAVA_VERSION=")).unwrap_or_default();
        version.trim_matches('"').split('.').next().and_then(|f| f.parse().ok()).expect("JAVA_VERSION in release")
    }

    pub fn tool(&self, name: &str) -> Command {
        Command::new(self.bin.join(name))
    }

    /// Compiles `tests/java/NAME.java` into `dir` (with --release 17 so both JDKs run it).
    pub fn compile(&self, name: &str, dir: &Path) {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java").join(format!("{name}.java"));
        let status = self.tool("javac").args(["--release", "17", "-d"]).arg(dir).arg(&src).status().expect("javac");
        assert!(status.success(), "javac failed on {}", src.display());
    }

    /// Builds the agent and compiles `tests/java/NAME.java` into a new temporary directory:
    /// what a test of the agent on that program needs first.
    pub fn compiled_with_agent(&self, name: &str) -> tempfile::TempDir {
        build_agent();
        let dir = tempfile::tempdir().unwrap();
        self.compile(name, dir.path());
        dir
    }

    /// Starts `main` from `dir` and waits for it to print READY.
    pub fn start(&self, dir: &Path, main: &str, jvm_args: &[&str]) -> Jvm {
        self.start_with_args(dir, main, jvm_args, &[])
    }

    /// Starts `main ARGS...` from `dir` and waits for it to print READY.
    pub fn start_with_args(&self, dir: &Path, main: &str, jvm_args: &[&str], args: &[&str]) -> Jvm {
        let mut child = self
            .tool("java")
            .args(jvm_args)
            .arg("-cp")
            .arg(dir)
            .arg(main)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("java");
        let stdout = child.stdout.take().unwrap();
        if await_line(stdout, &format!("{main}'s READY"), |l| (l.trim() == "READY").then_some(())).is_none() {
            let _ = child.kill();
            panic!("{main} exited before READY");
        }
        Jvm { jdk: self.clone(), child }
    }
}

/// A running Java program, killed on drop.
pub struct Jvm {
    jdk: Jdk,
    child: Child,
}

impl Jvm {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `timeout` for it to exit; its status, or None if it still runs.
    pub fn wait(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// Kills it with SIGKILL, as `kill -9` does.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Runs `jcmd PID ARGS...` and returns its stdout.
    pub fn jcmd(&self, args: &[&str]) -> String {
        let out = self.jdk.tool("jcmd").arg(self.child.id().to_string()).args(args).bounded_output();
        assert!(out.status.success(), "jcmd {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What headless Chromium saw of a page.
pub struct Browser {
    /// The page's DOM after loading, serialized.
    pub dom: String,
    /// Console messages and load failures Chromium logged for the page.
    pub console: Vec<String>,
}

/// Opens `page` in headless Chromium (Debian's `chromium`; `scripts/test` installs it), saves
/// a screenshot as `target/tmp/artifacts/NAME.png`, and returns the DOM and console messages.
pub fn chromium(page: &Path, name: &str) -> Browser {
    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let run = |extra: &[String]| {
        Command::new("chromium")
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
            .args(["--enable-logging=stderr", "--v=0", "--window-size=1280,2000"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(&url)
            .bounded_output()
    };
    let png = artifacts.join(format!("{name}.png"));
    let shot = run(&[format!("--screenshot={}", png.display())]);
    assert!(shot.status.success(), "chromium screenshot: {}", String::from_utf8_lossy(&shot.stderr));
    assert!(std::fs::metadata(&png).map(|m| m.len() > 10_000).unwrap_or(false), "no screenshot in {}", png.display());
    let out = run(&["--dump-dom".to_string()]);
    assert!(out.status.success(), "chromium --dump-dom: {}", String::from_utf8_lossy(&out.stderr));
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .chain(String::from_utf8_lossy(&shot.stderr).lines())
        .filter(|l| l.contains("CONSOLE") || l.contains("Refused to") || l.contains("net::ERR"))
        .map(str::to_owned)
        .collect();
    Browser { dom: String::from_utf8_lossy(&out.stdout).into_owned(), console }
}

/// The text lines of the shortest path to the object static field `field` (`Class.name`)
/// holds, its first line included; fails when they are more than three.
pub fn static_path_lines(dump: &str, field: &str) -> Vec<String> {
    let out = leakscope(&["paths", dump, "--select", &format!("static:{field}")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let block: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("1 object via"))
        .take_while(|l| !l.is_empty())
        .map(Into::into)
        .collect();
    assert!((2..=3).contains(&block.len()), "a static field's path in at most three lines:\n{text}");
    block
}

#[test]
fn a_program_that_hangs_fails_its_test_named_and_is_killed_with_what_it_started() {
    let child = Command::new("sh")
        .args(["-c", "echo started; sleep 120; echo never"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = child.id();
    let hung = std::panic::catch_unwind(|| wait_within(child, "the sleeper", Duration::from_secs(1)));
    let message = *hung.expect_err("a hang fails").downcast::<String>().unwrap();
    assert!(message.starts_with("the sleeper did not finish in 1 s"), "{message}");
    assert!(message.contains("stdout:\nstarted\n"), "{message}");
    assert!(message.contains("/bin/sleep") || message.contains("/usr/bin/sleep"), "its processes listed: {message}");
    // A killed process takes a moment to go, on a busy machine.
    let gone = Instant::now();
    while !group_members(group).is_empty() && gone.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(group_members(group), Vec::<u32>::new(), "the sleep that sh started is killed too");
}

/// Two tests of `$check` (a function of a `&Jdk`), in a module of its name: `on_jdk17` and
/// `on_jdk25`, the second skipped as [`Jdk::require25`] allows when JDK 25 is missing.
macro_rules! on_jdk17_and_jdk25 {
    ($check:ident) => {
        mod $check {
            #[test]
            fn on_jdk17() {
                super::$check(&$crate::support::Jdk::default_jdk());
            }

            #[test]
            fn on_jdk25() {
                if let Some(jdk) = $crate::support::Jdk::require25() {
                    super::$check(&jdk);
                }
            }
        }
    };
}
pub(crate) use on_jdk17_and_jdk25;
