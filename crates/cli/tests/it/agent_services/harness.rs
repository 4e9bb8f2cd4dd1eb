//! Services under load with the agent, started by `run` or `attach`, and their verdicts read
//! every 10 s while they run.

use crate::support::{build_agent, debian_classpath, leakscope, Jdk};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// Seconds of load each service gets: the "answer within two minutes".
pub(super) const SECONDS: u64 = 125;

/// Held by each test of services under load while it runs: two such tests at once put four
/// JVMs, their load and their agents on a machine of two cores, where the walks' planned
/// pauses no longer fit and the readings stop being the agent's to answer for (CI and local
/// runs saw a steady service with fewer than three walk-checked readings, and a holder not
/// yet learned at the last reading). The other tests still run beside them.
pub(super) fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERVICES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERVICES.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How the agent gets into the JVM.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum By {
    Run,
    Attach,
}

/// A service under load with the agent, and what was read of its run store so far.
pub(super) struct Service {
    pub(super) scenario: &'static str,
    pub(super) by: By,
    pub(super) child: Child,
    pub(super) db: PathBuf,
    pub(super) started: Instant,
    /// Seconds since the load began, the growth report and the top view then.
    pub(super) verdicts: Vec<(u64, Value, Value)>,
    /// The agent's metrics endpoint, when it serves one, and what it served, every 10 s, with
    /// the Unix time of the newest scrape.
    pub(super) metrics: Option<String>,
    pub(super) scrapes: Vec<String>,
    pub(super) scraped_at: f64,
    /// The JDK whose jcmd reads the JVM's own class histogram beside `top`, at these seconds
    /// of the run (each forces a full collection).
    pub(super) jcmd: Option<(Jdk, Vec<u64>)>,
    /// Seconds, `top` just before, and jcmd's total live bytes then.
    pub(super) histograms: Vec<(u64, Value, u64)>,
    /// Each reading's scrape, by the verdict it goes with (empty when none was taken).
    pub(super) scrape_at: Vec<String>,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn compiled(jdk: &Jdk, dir: &Path) -> String {
    build_agent();
    let cp =
        debian_classpath(&["tomcat10-", "servlet-api", "jetty9-server", "jetty9-util", "jetty9-http", "jetty9-io"])
            .expect("Debian's Tomcat 10 and Jetty 9 (libtomcat10-java, libjetty9-java)");
    let java = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/Services.java");
    let ok = jdk.tool("javac").args(["--release", "17", "-nowarn", "-cp", &cp, "-d"]).arg(dir).arg(&java).status();
    assert!(ok.unwrap().success(), "javac Services.java");
    format!("{cp}:{}", dir.display())
}

/// Waits for the program's READY line on `out`.
pub(super) fn ready(child: &mut Child, scenario: &str) {
    let stdout = child.stdout.take().unwrap();
    let what = format!("Services {scenario}'s READY");
    if crate::support::await_line(stdout, &what, |l| (l.trim() == "READY").then_some(())).is_none() {
        panic!("Services {scenario} exited before READY");
    }
}

/// Starts `Services SCENARIO` on `jdk` with the agent at its default settings.
pub(super) fn start(jdk: &Jdk, cp: &str, dir: &Path, scenario: &'static str, by: By) -> Service {
    start_with(jdk, cp, dir, scenario, by, &[])
}

/// The same, with more agent options (`leakscope run` flags).
pub(super) fn start_with(jdk: &Jdk, cp: &str, dir: &Path, scenario: &'static str, by: By, flags: &[String]) -> Service {
    start_opts(jdk, cp, dir, scenario, by, flags, &["-Xmx1g"], None)
}

/// The same, with the JVM's options and a request rate (the program's default otherwise);
/// `flags` go to `leakscope run` or `leakscope attach`.
#[allow(clippy::too_many_arguments)]
pub(super) fn start_opts(
    jdk: &Jdk,
    cp: &str,
    dir: &Path,
    scenario: &'static str,
    by: By,
    flags: &[String],
    jvm: &[&str],
    rate: Option<u32>,
) -> Service {
    let db = dir.join(format!("{scenario}.db"));
    let java = jdk.bin.join("java");
    let seconds = SECONDS.to_string();
    let rate = rate.map(|r| r.to_string());
    let mut program: Vec<&str> = jvm.to_vec();
    program.extend(["-cp", cp, "Services", scenario, &seconds]);
    program.extend(rate.as_deref());
    let mut child = match by {
        By::Run => {
            let exe = env!("CARGO_BIN_EXE_leakscope");
            let mut c = Command::new(exe);
            c.args(["run", "--out", db.to_str().unwrap()])
                .args(flags)
                .args(["--", java.to_str().unwrap()])
                .args(&program);
            c.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("leakscope run")
        }
        By::Attach => Command::new(&java)
            .arg("-Dservices.wait=true")
            .args(&program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("java"),
    };
    ready(&mut child, scenario);
    if by == By::Attach {
        let pid = child.id().to_string();
        let mut args = vec!["attach", &pid, "--out", db.to_str().unwrap()];
        args.extend(flags.iter().map(String::as_str));
        let out = leakscope(&args);
        assert!(out.status.success(), "attach: {}", String::from_utf8_lossy(&out.stderr));
        let mut stdin: ChildStdin = child.stdin.take().unwrap();
        writeln!(stdin, "go").unwrap();
    }
    let metrics =
        flags.iter().position(|f| f == "--metrics-port").map(|i| format!("http://127.0.0.1:{}/metrics", flags[i + 1]));
    Service {
        scenario,
        by,
        child,
        db,
        started: Instant::now(),
        verdicts: Vec::new(),
        metrics,
        scrapes: Vec::new(),
        scraped_at: 0.0,
        jcmd: None,
        histograms: Vec::new(),
        scrape_at: Vec::new(),
    }
}

pub(super) fn read_json(args: &[&str]) -> Option<Value> {
    let out = leakscope(args);
    out.status.success().then(|| serde_json::from_slice(&out.stdout).expect("JSON"))
}

/// Reads every service's verdict every 10 s until all have ended, then once more.
pub(super) fn watch(services: &mut [Service]) {
    let deadline = Instant::now() + Duration::from_secs(SECONDS + 120);
    loop {
        std::thread::sleep(Duration::from_secs(10));
        let mut running = 0;
        for s in services.iter_mut() {
            let ended = s.child.try_wait().unwrap().is_some();
            running += usize::from(!ended);
            let db = s.db.to_str().unwrap();
            let mut scraped = String::new();
            if let Some(url) = s.metrics.as_deref().filter(|_| !ended) {
                // The JVM may begin to exit between try_wait and the scrape; the agent still
                // serves then, saying it ended (CI saw that). Only scrapes of a running agent count.
                let scrape = ureq::get(url).call().ok().and_then(|r| r.into_string().ok());
                if let Some(text) = scrape.filter(|t| t.contains("\nleakscope_agent_up 1\n")) {
                    scraped = text.clone();
                    s.scrapes.push(text);
                    s.scraped_at =
                        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
                }
            }
            if let (Some(g), Some(t)) =
                (read_json(&["growth", db, "--json"]), read_json(&["top", db, "--once", "--json"]))
            {
                let secs = s.started.elapsed().as_secs();
                let due = s
                    .jcmd
                    .as_ref()
                    .is_some_and(|(_, at)| at.iter().any(|&a| secs >= a && !s.histograms.iter().any(|h| h.0 >= a)));
                if due && !ended {
                    if let Some(total) = s.jcmd.as_ref().and_then(|(jdk, _)| jcmd_total(jdk, &t)) {
                        s.histograms.push((secs, t.clone(), total));
                    }
                }
                s.verdicts.push((secs, g, t));
                s.scrape_at.push(scraped);
            }
        }
        if running == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "the services did not end");
    }
}

/// The JVM's own live bytes (`jcmd PID GC.class_histogram`, after a full collection) of the
/// JVM whose live view `top` is.
pub(super) fn jcmd_total(jdk: &Jdk, top: &Value) -> Option<u64> {
    let pid = top["pid"].as_u64()?.to_string();
    let out = jdk.tool("jcmd").args([&pid, "GC.class_histogram"]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let total = text.lines().find(|l| l.starts_with("Total"))?;
    total.split_whitespace().nth(2)?.parse().ok()
}

pub(super) fn classes(report: &Value) -> Vec<&str> {
    report["candidates"].as_array().unwrap().iter().map(|c| c["class"].as_str().unwrap()).collect()
}

/// Whether `class` is named in candidate `c`'s slice (what holds it) or as its own class.
pub(super) fn slice_names(c: &Value, class: &str) -> bool {
    c["class"] == class
        || c["slice"]["edges"].as_array().unwrap().iter().any(|e| e["from"] == class || e["to"] == class)
        || c["slice"]["classes"].as_array().unwrap().iter().any(|n| n == class)
}

/// What the verdicts said, one line per reading, for failure messages: the candidates'
/// classes and the first one's slice classes (whether its holder was known then); then the
/// agent's events about its walks, which say why a holder could not be known.
pub(super) fn log(s: &Service) -> Vec<String> {
    let slice = |g: &Value| -> Vec<String> {
        let classes = g["candidates"][0]["slice"]["classes"].as_array().cloned().unwrap_or_default();
        classes.iter().filter_map(|c| c.as_str().map(str::to_string)).collect()
    };
    let readings = s.verdicts.iter().map(|(t, g, _)| format!("{t} s: {:?} held by {:?}", classes(g), slice(g)));
    readings.chain(walk_events(s).into_iter().map(|e| format!("agent: {e}"))).collect()
}

/// The run's events about heap walks, for failure messages: what the agent decided and why.
pub(super) fn walk_events(s: &Service) -> Vec<String> {
    let run = runstore::read(&s.db, 0).unwrap();
    run.events.into_iter().filter(|e| e.contains("walk")).collect()
}
