//! `leakscope jvms`: the running JVMs of this user, read from their hsperfdata files.

use clap::Args;

use crate::exit::Exit;

/// List the running JVMs this user can see: process id, main class or jar, uptime, heap in
/// use, and whether the leakscope agent is loaded (with its run store).
///
/// Read from the JVMs' performance counters (`/tmp/hsperfdata_USER/PID`), as `jps` and
/// `jstat` do, without attaching to them. JVMs started with `-XX:-UsePerfData` do not appear.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope jvms
  leakscope jvms --json | jq '.jvms[] | select(.heap_used_bytes > 1e9)'")]
pub struct JvmsArgs {
    /// Print one JSON document: {"jvms":[{"pid","command","uptime_ms","heap_used_bytes","agent_store"}]}.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: &JvmsArgs) -> anyhow::Result<Exit> {
    let jvms = app::jvm::list();
    if args.json {
        return crate::dump_args::emit(true, &report::JvmList { jvms }, None, |_| String::new());
    }
    if jvms.is_empty() {
        outln!("no running JVM found (JVMs with -XX:-UsePerfData or of other users do not appear)")?;
        return Ok(Exit::Success);
    }
    outln!("{:>8}  {:>10}  {:>10}  {:<40}  agent", "pid", "uptime", "heap used", "command")?;
    for j in &jvms {
        let uptime = j.uptime_ms.map_or("?".into(), |ms| duration(ms / 1000));
        let heap = j.heap_used_bytes.map_or("?".into(), report::human_bytes);
        let mut command = j.command.clone();
        if command.chars().count() > 40 {
            command = command.chars().take(39).collect::<String>() + "…";
        }
        let agent = match (&j.agent_store, j.agent_loaded) {
            (Some(s), _) => s.clone(),
            (None, true) => "loaded".into(),
            (None, false) => "-".into(),
        };
        outln!("{:>8}  {uptime:>10}  {heap:>10}  {command:<40}  {agent}", j.pid)?;
    }
    Ok(Exit::Success)
}

fn duration(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s if s < 86400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        s => format!("{}d{:02}h", s / 86400, s % 86400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(42), "42s");
        assert_eq!(duration(3 * 3600 + 5 * 60), "3h05m");
        assert_eq!(duration(2 * 86400 + 3600), "2d01h");
    }
}
