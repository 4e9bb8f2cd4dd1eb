//! `leakscope run` and `leakscope attach`: a JVM with the leakscope agent, recording to a
//! run store.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;

use crate::dump_args::{parse_duration, parse_percent};
use crate::exit::Exit;

/// What the agent does, shared by `run` and `attach`. Unset options take the agent's
/// defaults (`runstore::options::Options::defaults`), shown here in the help.
#[derive(Debug, Clone, Args)]
pub struct AgentArgs {
    /// Mean bytes allocated between two sampled allocations (JVMTI heap sampling interval) [default: 256K].
    #[arg(long, value_name = "SIZE", value_parser = runstore::options::parse_bytes)]
    pub interval: Option<u64>,
    /// Share of wall time heap walks may take, in percent; walks give the slice, what holds a growing class [default: 1].
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub budget: Option<f64>,
    /// Skip a walk predicted to stop the JVM longer than this (500ms, 2s); samples still rank classes [default: 1s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub max_pause: Option<Duration>,
    /// Shortest time between two recorded snapshots of the sampled live volumes [default: 1s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub period: Option<Duration>,
    /// Longest time between two heap walks while nothing grows, the budget permitting [default: 15s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub walk_every: Option<Duration>,
    /// Frames recorded per sample, the allocation site: deep enough to reach past a server's frames to the application's [default: 16].
    #[arg(long, value_name = "N")]
    pub depth: Option<u32>,
    /// No heap walks at all: sampled live volumes only (no slices, no pauses).
    #[arg(long)]
    pub no_walks: bool,
    /// Watch the objects a reference rule selects (rule:A>B>C: objects of class C held along a
    /// path through A, then B) and record when and where each was last used; read it with
    /// `leakscope stale RUN.db`. Class C's methods are instrumented (repeatable).
    #[arg(long, value_name = "RULE")]
    pub watch: Vec<String>,
    /// Serve the agent's figures as Prometheus/OpenMetrics text at http://ADDR/metrics: a port
    /// (on 127.0.0.1) or an address and port (0.0.0.0:9464 for a scraper on another host).
    #[arg(long, value_name = "PORT|ADDR:PORT", value_parser = parse_listen)]
    pub metrics_port: Option<SocketAddr>,
    /// Push the agent's figures to an OpenTelemetry collector over OTLP/HTTP (plain HTTP, such
    /// as http://localhost:4318; /v1/metrics is added).
    #[arg(long, value_name = "URL", value_parser = runstore::options::parse_otlp)]
    pub otlp: Option<String>,
    /// Time between two OTLP exports [default: 60s].
    #[arg(long, value_name = "DURATION", requires = "otlp", value_parser = parse_duration)]
    pub otlp_every: Option<Duration>,
    /// When a growing class is confirmed, take one live heap dump beside the run store
    /// (RUN-capture-1.hprof), so that `leakscope growth RUN.db` names its holders exactly,
    /// with retained sizes and paths. Writing it stops the JVM (about a second per GB live).
    #[arg(long)]
    pub capture_on_leak: bool,
    /// Shortest time between two captured dumps [default: 1h].
    #[arg(long, value_name = "DURATION", requires = "capture_on_leak", value_parser = parse_duration)]
    pub capture_every: Option<Duration>,
    /// Capture no dump while the live heap is bigger than this (the dump is about as big) [default: 1G].
    #[arg(long, value_name = "SIZE", requires = "capture_on_leak", value_parser = runstore::options::parse_bytes)]
    pub capture_max_heap: Option<u64>,
    /// Never walk a forked copy of the JVM: a whole heap walk that would not fit --max-pause
    /// is then skipped, or tried now and then and stopped at it, and walks filtered by class
    /// take its place. By default (without --watch) such a walk runs on a forked copy (Linux,
    /// not on ZGC): the JVM stops only for the fork, and the copy costs memory while the walk
    /// runs (pages either side writes are copied; refused when the cgroup has less than twice
    /// the heap left).
    #[arg(long)]
    pub no_fork_walks: bool,
    /// Walk a forked copy even with --watch (the default without it): the watched objects'
    /// paths are then learned only by the walks that fit --max-pause.
    #[arg(long, conflicts_with = "no_fork_walks")]
    pub fork_walks: bool,
    /// Kill a forked walk's copy after this long [default: 2m].
    #[arg(long, value_name = "DURATION", conflicts_with = "no_fork_walks", value_parser = parse_duration)]
    pub fork_timeout: Option<Duration>,
    /// Kill a forked walk's copy once its own memory passes this (512M, 2G) [default: half of
    /// what the JVM's cgroup, else the machine, has left at the fork; never more].
    #[arg(long, value_name = "SIZE", conflicts_with = "no_fork_walks", value_parser = runstore::options::parse_bytes)]
    pub fork_max_copy: Option<u64>,
    /// Test only: panic inside a JVM callback (alloc, gc, walk) to show the JVM survives it.
    #[arg(long, hide = true, value_name = "CALLBACK")]
    pub test_panic: Option<String>,
    /// Test only: a forked walk's copy stops in its walk, to show it is killed at the timeout.
    #[arg(long, hide = true, conflicts_with = "no_fork_walks")]
    pub test_fork_hang: bool,
    /// Test only: a thread takes HotSpot's chunk pool lock as each fork is made, and a forked
    /// walk's copy that finds it held stops, to show the fork takes it first.
    #[arg(long, hide = true, conflicts_with = "no_fork_walks")]
    pub test_hold_fork_lock: bool,
}

impl AgentArgs {
    /// The agent's option string (`key:value,...`; jcmd would take `key=value` for itself).
    pub fn option_string(&self, out: &Path) -> anyhow::Result<String> {
        let out = out.display().to_string();
        if out.contains(',') {
            bail!("the run store path {out:?} contains a comma, which separates agent options: choose another path");
        }
        let mut items = vec![format!("out:{out}")];
        // Values already parsed by clap, written back in the agent's own units (bytes, seconds).
        let seconds = |d: &Option<Duration>| d.map(|d| format!("{}s", d.as_secs_f64()));
        let given = [
            ("interval", self.interval.map(|b| b.to_string())),
            ("budget", self.budget.map(|p| p.to_string())),
            ("max_pause", seconds(&self.max_pause)),
            ("period", seconds(&self.period)),
            ("walk_every", seconds(&self.walk_every)),
            ("depth", self.depth.map(|d| d.to_string())),
            ("metrics", self.metrics_port.map(|a| a.to_string())),
            ("otlp", self.otlp.clone()),
            ("otlp_every", seconds(&self.otlp_every)),
            ("capture_every", seconds(&self.capture_every)),
            ("capture_max_heap", self.capture_max_heap.map(|b| b.to_string())),
            ("test_panic", self.test_panic.clone()),
            ("fork_timeout", seconds(&self.fork_timeout)),
            ("fork_max_copy", self.fork_max_copy.map(|b| b.to_string())),
        ];
        for (key, value) in given {
            if let Some(v) = value {
                if v.contains(',') {
                    bail!("--{} {v:?}: a value cannot contain a comma", key.replace('_', "-"));
                }
                items.push(format!("{key}:{v}"));
            }
        }
        if self.no_walks {
            items.push("walks:off".into());
        }
        if self.capture_on_leak {
            items.push("capture_on_leak:on".into());
        }
        if self.no_fork_walks {
            items.push("fork_walks:off".into());
        }
        if self.fork_walks {
            items.push("fork_walks:on".into());
        }
        if self.test_fork_hang {
            items.push("test_fork_hang:on".into());
        }
        if self.test_hold_fork_lock {
            items.push("test_hold_fork_lock:on".into());
        }
        if !self.watch.is_empty() {
            if self.no_walks {
                bail!("--watch needs heap walks (they find the watched objects and what holds them): drop --no-walks");
            }
            for w in &self.watch {
                if runstore::options::parse_rule(w).is_none() {
                    bail!("--watch {w:?} is not a reference rule such as rule:SessionRegistry>Session");
                }
            }
            items.push(format!("watch:{}", self.watch.join(";")));
        }
        let s = items.join(",");
        // Let the agent's parser judge the values now, before a JVM starts with them.
        runstore::options::Options::parse(&s, 0).map_err(|e| anyhow::anyhow!(in_flags(&e)))?;
        Ok(s)
    }
}

/// A port (on 127.0.0.1) or an address and port.
fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    runstore::options::parse_listen(s).ok_or_else(|| format!("`{s}` is not a port or an address such as 0.0.0.0:9464"))
}

/// The agent's refusal said with this command's flags (`max_pause` → `--max-pause`).
fn in_flags(e: &runstore::options::OptionError) -> String {
    match e {
        runstore::options::OptionError::Bad { key, why } => {
            let flag = match key.as_str() {
                "metrics" => "metrics-port".to_string(),
                key => key.replace('_', "-"),
            };
            format!("--{flag}: {why}")
        }
        other => other.to_string(),
    }
}

/// Start a Java program with the leakscope agent and record its run to a run store.
///
/// The agent samples allocations (about one per `--interval` bytes), follows each sample to
/// its death, and records the estimated live bytes per class and allocation site after
/// garbage collections; within `--budget` and `--max-pause` it also walks the heap to record
/// which classes hold which (the slice). Read the store while the program runs or after it
/// ends, with `leakscope growth RUN.db` or `leakscope top RUN.db`. The exit code is the
/// program's own.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope run --out run.db -- java -Xmx2g -jar service.jar
  leakscope run --out run.db --budget 0.5 --max-pause 200ms \\
      -- java -cp app.jar Main
  # for the fleet's monitoring: a Prometheus scrape and OTLP to a collector
  leakscope run --out run.db --metrics-port 9464 \\
      --otlp http://localhost:4318 -- java -jar service.jar
  # every JVM the script starts, one store each
  leakscope run --out 'run-%p.db' -- ./gradlew test
  # a heap dump once a leak is confirmed: growth names its holders in it
  leakscope run --out run.db --capture-on-leak -- java -jar service.jar
  leakscope growth run.db")]
pub struct RunArgs {
    /// The run store to write (`%p` stands for the JVM's process id).
    #[arg(long, short, value_name = "RUN.db")]
    pub out: PathBuf,
    #[command(flatten)]
    pub agent: AgentArgs,
    /// The program: `java ARGS...`, or any command whose JVMs should carry the agent (through JAVA_TOOL_OPTIONS).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Load the leakscope agent into a running JVM (`jcmd PID JVMTI.agent_load`).
///
/// The agent records to the run store given with `--out` (default: leakscope-PID.db in the
/// temporary directory) until the JVM exits; `leakscope top PID` and `leakscope growth
/// RUN.db` read it meanwhile. Attaching twice keeps the first agent. The JVM must be run by
/// the same user.
///
/// What it costs (benches/attach-pause.sh, Debian's Tomcat 10): loading the agent stops the
/// JVM for under a millisecond on JDK 17 and JDK 25; with --watch, rewriting the watched
/// classes stops it once more, for 21-26 ms. The agent's heap walks then stop it for up to
/// --max-pause each (110-180 ms on that Tomcat), within --budget.
///
/// JDK 21 and later print "WARNING: A JVM TI agent has been loaded dynamically" on the JVM's
/// stderr, and a future JDK will refuse such agents: start the JVM with
/// -XX:+EnableDynamicAgentLoading to allow them without the warning, or start it with
/// `leakscope run` instead.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope jvms
  leakscope attach 12345 --out /var/tmp/service.db
  leakscope top 12345")]
pub struct AttachArgs {
    /// Process id of the JVM (see `leakscope jvms`).
    pub pid: u32,
    /// The run store to write.
    #[arg(long, short, value_name = "RUN.db")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// The agent library: `LEAKSCOPE_AGENT`, or `libleakscope_agent.so` next to this binary.
pub fn agent_library() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("LEAKSCOPE_AGENT") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!("LEAKSCOPE_AGENT={} is not a file", p.display());
        }
        return Ok(p);
    }
    let exe = std::env::current_exe().context("cannot find the leakscope binary")?;
    let dir = exe.parent().context("the leakscope binary has no directory")?;
    // Test binaries live in target/*/deps, the library one level up.
    for d in [dir, dir.parent().unwrap_or(dir)] {
        let p = d.join("libleakscope_agent.so");
        if p.is_file() {
            return Ok(p);
        }
    }
    bail!(
        "cannot find libleakscope_agent.so next to {}: build it with `cargo build --release` (it is built with the workspace) or set LEAKSCOPE_AGENT",
        exe.display()
    )
}

fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    Ok(std::env::current_dir().context("cannot read the current directory")?.join(p))
}

/// Runs `leakscope run`.
pub fn run(args: &RunArgs) -> anyhow::Result<Exit> {
    let lib = agent_library()?;
    let out = absolute(&args.out)?;
    let agentpath = format!("-agentpath:{}={}", lib.display(), args.agent.option_string(&out)?);
    let program = &args.command[0];
    let is_java = Path::new(program).file_name().is_some_and(|n| n == "java");
    let mut cmd = Command::new(program);
    if is_java {
        cmd.arg(&agentpath).args(&args.command[1..]);
    } else {
        let mut opts = std::env::var("JAVA_TOOL_OPTIONS").unwrap_or_default();
        if !opts.is_empty() {
            opts.push(' ');
        }
        opts.push_str(&agentpath);
        cmd.args(&args.command[1..]).env("JAVA_TOOL_OPTIONS", opts);
    }
    let mut child = cmd.spawn().with_context(|| format!("cannot start {program}"))?;
    // `kill` (or a service manager) stops leakscope, not the JVM: pass the signal on, so the
    // JVM shuts down too instead of running on, re-parented to init.
    let forwarding = Forward::start(child.id())?;
    let status = child.wait().with_context(|| format!("cannot wait for {program}"))?;
    forwarding.stop();
    if out.is_file() {
        eprintln!("leakscope: run store {}; read it with `leakscope growth {}`", out.display(), out.display());
    } else if out.display().to_string().contains("%p") {
        eprintln!("leakscope: run stores at {} (%p is each JVM's process id)", out.display());
    } else if is_java {
        eprintln!("leakscope: the program left no run store at {} (did the agent start?)", out.display());
    }
    let code = status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        128 + status.signal().unwrap_or(0)
    });
    if code != 0 {
        std::process::exit(code);
    }
    Ok(Exit::Success)
}

/// Passes SIGTERM, SIGINT and SIGHUP received by leakscope on to a child process.
struct Forward {
    handle: signal_hook::iterator::Handle,
    thread: std::thread::JoinHandle<()>,
}

impl Forward {
    fn start(child: u32) -> anyhow::Result<Forward> {
        use rustix::process::{kill_process, Pid, Signal};
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals =
            signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]).context("cannot handle signals")?;
        let handle = signals.handle();
        let pid = i32::try_from(child).ok().and_then(Pid::from_raw).context("the child has no valid process id")?;
        let thread = std::thread::spawn(move || {
            for sig in signals.forever() {
                let sig = match sig {
                    SIGTERM => Signal::TERM,
                    SIGINT => Signal::INT,
                    _ => Signal::HUP,
                };
                // The child may have just exited: nothing to do then.
                let _ = kill_process(pid, sig);
            }
        });
        Ok(Forward { handle, thread })
    }

    fn stop(self) {
        self.handle.close();
        let _ = self.thread.join();
    }
}

/// Runs `leakscope attach`.
pub fn attach(args: &AttachArgs) -> anyhow::Result<Exit> {
    let lib = agent_library()?;
    app::jvm::ensure_jvm(args.pid)?;
    let out = match &args.out {
        Some(o) => absolute(o)?,
        None => runstore::options::Options::defaults(args.pid).out,
    };
    let opts = args.agent.option_string(&out)?;
    let pointer = runstore::pointer_file(args.pid);
    if app::jvm::has_agent(args.pid) {
        let store = std::fs::read_to_string(&pointer).unwrap_or_else(|_| "an unknown run store".into());
        if !args.agent.watch.is_empty() {
            bail!(
                "{} already runs the leakscope agent (recording to {store}); its options, --watch included, were set when it was loaded and cannot change",
                args.pid
            );
        }
        // Another store asked for: the agent would go on writing the one it has, and the user
        // would read an empty or an old file.
        if args.out.is_some() && std::fs::canonicalize(&out).ok() != std::fs::canonicalize(store.trim()).ok() {
            bail!(
                "{} already runs the leakscope agent, recording to {store}; it cannot record to {} instead: read {store}",
                args.pid,
                out.display()
            );
        }
        outln!("{} already has the leakscope agent, recording to {store}", args.pid)?;
        return Ok(Exit::Success);
    }
    // A pointer left by an earlier JVM with the same pid would be mistaken for this one's.
    let _ = std::fs::remove_file(&pointer);
    let jcmd = app::jvm::jcmd_for(args.pid);
    let output = Command::new(&jcmd)
        .arg(args.pid.to_string())
        .arg("JVMTI.agent_load")
        .arg(&lib)
        .arg(&opts)
        .output()
        .with_context(|| format!("cannot run {} (is a JDK installed?)", jcmd.display()))?;
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if !output.status.success() || text.contains("Exception") || text.contains("error") {
        bail!("jcmd could not load the agent into {}: {}", args.pid, app::jvm::jcmd_message(&text));
    }
    // The agent's pointer file says where it records once it has started.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if let Ok(store) = std::fs::read_to_string(&pointer) {
            outln!("attached to {}: recording to {store}", args.pid)?;
            outln!("watch it with `leakscope top {}`; rank it with `leakscope growth {store}`", args.pid)?;
            return Ok(Exit::Success);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    bail!("the agent loaded into {} but has not started recording (see the JVM's stderr)", args.pid)
}
