//! `leakscope check`: are the objects the program declared dead really gone?

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context};
use clap::Args;

use render::TextWith;

use crate::dump_args::{self, DumpArgs};
use crate::exit::Exit;
use crate::progress::Bar;

/// Check the objects a program declared dead with `LeakScope.expectDead(o)` (from
/// `leakscope api-jar`): the ones still reachable are printed one line per path shape, with
/// how many, when they were declared dead, the bytes they retain together and what holds
/// them (`--all` adds each object with its own path). Exits with 1 when one is reachable.
///
/// TARGET is a process id (the JVM runs the leakscope agent; a heap dump of its live objects
/// is taken with jcmd, which collects garbage first), a heap dump of such a JVM, or its run
/// store (what the agent's last heap walk saw: what referenced each object, without paths or
/// retained sizes). Without the agent, `expectDead` does nothing and there is nothing to check.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  # the API to compile against; in Java: LeakScope.expectDead(session);
  leakscope api-jar -o lib/leakscope-api.jar
  leakscope run -- java -cp app.jar:lib/leakscope-api.jar App
  # dump the running JVM and check it
  leakscope check 12345
  leakscope check app.hprof --json
  # as of the agent's last heap walk
  leakscope check /tmp/leakscope-12345.db")]
pub struct CheckArgs {
    /// A process id, a heap dump (.hprof), or an agent run store (RUN.db).
    pub target: String,
    /// Keep the heap dump taken of a process at FILE.
    #[arg(long, value_name = "FILE")]
    pub keep_dump: Option<PathBuf>,
    /// List every object still reachable with its own path, after the groups.
    #[arg(long)]
    pub all: bool,
    /// Print one JSON document: {"source","expectations","collected","unchecked","groups":[{"class","count","site","sites","oldest_ms_ago","newest_ms_ago","retained_bytes","path","held_by"}],"reachable":[{"class","site","declared_ms_ago","id","retained_bytes","path":{"root","steps","count"},"held_by"}]}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dump_args: DumpArgs,
}

/// Runs the command.
pub fn run(args: &CheckArgs) -> anyhow::Result<Exit> {
    let path = PathBuf::from(&args.target);
    let bar = Bar::new(args.dump_args.quiet);
    let report = if path.exists() {
        app::expectations::of_file(&path, &args.dump_args.settings(), &bar)?
    } else if let Ok(pid) = args.target.parse::<u32>() {
        of_process(pid, args, &bar)?
    } else {
        bail!("{} is neither a process id, a heap dump nor a run store", args.target);
    };
    dump_args::emit(args.json, &report, bar.read_warnings(), |r| r.to_text(args.all))?;
    Ok(if report.reachable.is_empty() { Exit::Success } else { Exit::CheckFailed })
}

fn of_process(pid: u32, args: &CheckArgs, bar: &Bar) -> anyhow::Result<report::ExpectationsReport> {
    app::jvm::ensure_jvm(pid)?;
    let dump = match &args.keep_dump {
        Some(p) => std::path::absolute(p).with_context(|| format!("cannot use {}", p.display()))?,
        None => std::env::temp_dir().join(format!("leakscope-check-{pid}-{}.hprof", std::process::id())),
    };
    let _ = std::fs::remove_file(&dump);
    let jcmd = app::jvm::jcmd_for(pid);
    if !args.dump_args.quiet {
        eprintln!("dumping the live objects of {pid} to {} ...", dump.display());
    }
    let out = Command::new(&jcmd)
        .arg(pid.to_string())
        .arg("GC.heap_dump")
        .arg(&dump)
        .output()
        .with_context(|| format!("cannot run {} (is a JDK installed?)", jcmd.display()))?;
    if !dump.exists() {
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        bail!("jcmd could not dump {pid}: {}", app::jvm::jcmd_message(&text));
    }
    let result = app::expectations::of_dump(&dump, &args.dump_args.settings(), bar).map_err(anyhow::Error::from);
    if args.keep_dump.is_none() {
        let _ = std::fs::remove_file(&dump);
    }
    let mut report = result?;
    report.source = format!("process {pid}");
    Ok(report)
}
