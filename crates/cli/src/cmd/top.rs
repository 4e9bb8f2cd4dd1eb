//! `leakscope top`: the live allocation view of a JVM running the agent (Modula-3's Shownew).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;

use crate::exit::Exit;

/// Watch a JVM that runs the leakscope agent: estimated live and allocated bytes per class,
/// and the classes that keep growing, refreshed until the JVM ends.
///
/// TARGET is a process id (the agent must be loaded: `leakscope run` or `leakscope attach`)
/// or a run store. The numbers are estimates from sampled allocations: a class allocated
/// rarely and kept may show nothing until one of its objects is sampled.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope top 12345
  leakscope top run.db --once
  # one refresh as JSON
  leakscope top 12345 --json")]
pub struct TopArgs {
    /// Process id of a JVM with the agent, or a run store (RUN.db).
    pub target: String,
    /// Classes shown (0 means all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Time between refreshes (2s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "2s")]
    pub every: String,
    /// Print one refresh and exit.
    #[arg(long)]
    pub once: bool,
    /// Print one refresh as JSON and exit: {"source","pid","gc_count","live_bytes","classes":[{"name","live_bytes","live_instances","allocated_bytes","allocated_bytes_per_s"}],"candidates":[{"class","rank","growth_bytes","held_by"}],…}.
    #[arg(long)]
    pub json: bool,
}

/// The run store of TARGET.
pub(crate) fn store_of(target: &str) -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(target);
    if path.is_file() {
        return Ok(path);
    }
    let Ok(pid) = target.parse::<u32>() else {
        bail!("{target} is neither a process id nor a run store");
    };
    let running = crate::cmd::run::is_running(pid);
    match std::fs::read_to_string(runstore::pointer_file(pid)) {
        Ok(store) if !running || crate::cmd::run::has_agent(pid) => Ok(PathBuf::from(store.trim())),
        _ if running => {
            bail!("JVM {pid} does not run the leakscope agent: load it with `leakscope attach {pid}`")
        }
        _ => bail!("no process {pid}, and no run store of it (see `leakscope jvms`)"),
    }
}

/// One refresh from the run store at `path`.
pub fn view(path: &std::path::Path) -> anyhow::Result<report::TopView> {
    let run = crate::heap_series::read_run(path, crate::cmd::growth::RUN_SAMPLES)?;
    let growth = crate::cmd::growth::run_report(&run, &growth::Options::default(), &[]);
    let last = run.samples.last();
    let (prev_alloc, dt) = match (run.samples.len(), run.allocated.len()) {
        (n, m) if n >= 2 && m == n => {
            let dt = run.samples[n - 1].time_ms.unwrap_or(0).saturating_sub(run.samples[n - 2].time_ms.unwrap_or(0));
            (Some(&run.allocated[n - 2]), dt)
        }
        _ => (None, 0),
    };
    let mut classes: Vec<report::TopClass> = last
        .map(|s| {
            s.classes
                .iter()
                .map(|c| {
                    let allocated = run.allocated.last().and_then(|a| a.get(&c.name)).copied().unwrap_or(0);
                    let before = prev_alloc.and_then(|a| a.get(&c.name)).copied().unwrap_or(allocated);
                    let per_s = (allocated.saturating_sub(before) * 1000).checked_div(dt).unwrap_or(0);
                    report::TopClass {
                        name: c.name.clone(),
                        live_bytes: c.bytes,
                        live_instances: c.instances,
                        allocated_bytes: allocated,
                        allocated_bytes_per_s: per_s,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    classes.sort_by(|a, b| b.live_bytes.cmp(&a.live_bytes).then(b.allocated_bytes.cmp(&a.allocated_bytes)));
    let candidates = growth
        .candidates
        .iter()
        .filter(|c| c.same_structure_as.is_none())
        .map(|c| report::TopCandidate {
            class: c.class.clone(),
            rank: c.rank,
            growth_bytes: c.growth_bytes,
            held_by: c
                .slice
                .edges
                .iter()
                .rev()
                .find(|e| e.growth_bytes == 0)
                .map(|e| e.from.clone())
                .or_else(|| (!c.slice.containers.is_empty()).then(|| c.slice.containers.join(", "))),
        })
        .collect();
    Ok(report::TopView {
        source: path.display().to_string(),
        pid: run.meta.get("pid").and_then(|p| p.parse().ok()),
        command: run.meta.get("command").cloned().unwrap_or_default(),
        gc_count: last.and_then(|s| s.gc_count).unwrap_or(0),
        time_ms: last.and_then(|s| s.time_ms).unwrap_or(0),
        live_bytes: last.map_or(0, |s| s.total_bytes),
        walks: run.walks.len(),
        longest_pause_ms: run.pauses_ms.iter().copied().fold(0.0, f64::max),
        status: run.meta.get("status").cloned().unwrap_or_else(|| "running".into()),
        classes,
        candidates,
    })
}

/// Runs the command.
pub fn run(args: &TopArgs) -> anyhow::Result<Exit> {
    let path = store_of(&args.target)?;
    let every = runstore::options::parse_duration(&args.every)
        .filter(|d| !d.is_zero())
        .with_context(|| format!("--every {:?} is not a duration such as 2s", args.every))?;
    let tty = std::io::stdout().is_terminal();
    loop {
        let v = view(&path)?;
        if args.json {
            outln!("{}", serde_json::to_string(&v)?)?;
            return Ok(Exit::Success);
        }
        let mut out = std::io::stdout().lock();
        if tty && !args.once {
            write!(out, "\x1b[H\x1b[2J")?;
        }
        write!(out, "{}", v.to_text(crate::dump_args::top_n(args.top)))?;
        out.flush()?;
        if args.once || v.status != "running" {
            return Ok(Exit::Success);
        }
        std::thread::sleep(every.max(Duration::from_millis(100)));
    }
}
