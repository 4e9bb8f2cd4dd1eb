//! `leakscope jvms`: the running JVMs of this user, read from their hsperfdata files.

use clap::Args;
use serde::Serialize;

use crate::exit::Exit;

/// List the running JVMs this user can see: process id, main class or jar, uptime, heap in
/// use, and whether the leakscope agent is loaded (with its run store).
///
/// Read from the JVMs' performance counters (`/tmp/hsperfdata_USER/PID`), as `jps` and
/// `jstat` do, without attaching to them. JVMs started with `-XX:-UsePerfData` do not appear.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope jvms
  leakscope jvms --json | jq '.[] | select(.heap_used_bytes > 1e9)'")]
pub struct JvmsArgs {
    /// Print one JSON array: [{"pid","command","uptime_ms","heap_used_bytes","agent_store"}].
    #[arg(long)]
    pub json: bool,
}

/// One running JVM.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Jvm {
    /// Process id.
    pub pid: u32,
    /// Main class or jar and arguments (`sun.rt.javaCommand`).
    pub command: String,
    /// Time since the JVM started.
    pub uptime_ms: Option<u64>,
    /// Bytes in use in the Java heap's spaces.
    pub heap_used_bytes: Option<u64>,
    /// The run store of the leakscope agent in it, if loaded.
    pub agent_store: Option<String>,
    /// Whether the agent library is loaded (a store may not be known yet).
    #[serde(skip)]
    pub agent_loaded: bool,
}

/// Runs the command.
pub fn run(args: &JvmsArgs) -> anyhow::Result<Exit> {
    let jvms = list();
    if args.json {
        outln!("{}", serde_json::to_string(&jvms)?)?;
        return Ok(Exit::Success);
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

/// The JVMs with performance data files, by pid.
pub fn list() -> Vec<Jvm> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(std::env::temp_dir()) else { return out };
    for dir in dirs.flatten() {
        if !dir.file_name().to_string_lossy().starts_with("hsperfdata_") {
            continue;
        }
        let Ok(files) = std::fs::read_dir(dir.path()) else { continue };
        for f in files.flatten() {
            let Some(pid) = f.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            if !app::jvm::is_running(pid) {
                continue;
            }
            let Ok(data) = std::fs::read(f.path()) else { continue };
            let counters = parse(&data);
            let get = |name: &str| counters.iter().find(|c| c.0 == name).map(|c| &c.1);
            let long = |name: &str| match get(name) {
                Some(Value::Long(v)) => Some(*v),
                _ => None,
            };
            let command = match get("sun.rt.javaCommand") {
                Some(Value::Text(s)) => s.clone(),
                _ => String::new(),
            };
            let now_ms =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
            let uptime_ms = long("sun.rt.createVmBeginTime").map(|t| (now_ms - t).max(0) as u64);
            let used: Vec<i64> = counters
                .iter()
                .filter(|(n, _)| n.starts_with("sun.gc.generation.") && n.contains(".space.") && n.ends_with(".used"))
                .filter_map(|(_, v)| if let Value::Long(x) = v { Some(*x) } else { None })
                .collect();
            let heap_used_bytes = (!used.is_empty()).then(|| used.iter().sum::<i64>().max(0) as u64);
            let agent_loaded = app::jvm::has_agent(pid);
            let agent_store = agent_loaded.then(|| std::fs::read_to_string(runstore::pointer_file(pid)).ok()).flatten();
            out.push(Jvm { pid, command, uptime_ms, heap_used_bytes, agent_store, agent_loaded });
        }
    }
    out.sort_by_key(|j| j.pid);
    out
}

/// A performance counter's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A `J` counter.
    Long(i64),
    /// A `B` vector: a NUL-terminated string.
    Text(String),
}

/// Reads the counters of an hsperfdata file (format 2: a prologue, then self-describing
/// entries); anything malformed ends the list rather than failing.
pub fn parse(data: &[u8]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if data.len() < 32 || data[..4] != [0xca, 0xfe, 0xc0, 0xc0] {
        return out;
    }
    let little = data[4] == 1;
    let i32_at = |o: usize| -> Option<i32> {
        let b: [u8; 4] = data.get(o..o + 4)?.try_into().ok()?;
        Some(if little { i32::from_le_bytes(b) } else { i32::from_be_bytes(b) })
    };
    let i64_at = |o: usize| -> Option<i64> {
        let b: [u8; 8] = data.get(o..o + 8)?.try_into().ok()?;
        Some(if little { i64::from_le_bytes(b) } else { i64::from_be_bytes(b) })
    };
    let (Some(mut at), Some(n)) = (i32_at(24), i32_at(28)) else { return out };
    for _ in 0..n.max(0) {
        let start = at as usize;
        let (Some(len), Some(name_off), Some(vlen), Some(&kind), Some(data_off)) =
            (i32_at(start), i32_at(start + 4), i32_at(start + 8), data.get(start + 12), i32_at(start + 16))
        else {
            break;
        };
        if len <= 0 {
            break;
        }
        let name_start = start + name_off.max(0) as usize;
        let Some(name_end) = data.get(name_start..).and_then(|s| s.iter().position(|&b| b == 0)) else { break };
        let name = String::from_utf8_lossy(&data[name_start..name_start + name_end]).into_owned();
        let value_at = start + data_off.max(0) as usize;
        let value = match (kind, vlen) {
            (b'J', 0) => i64_at(value_at).map(Value::Long),
            (b'B', n) if n > 0 => data.get(value_at..value_at + n as usize).map(|b| {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                Value::Text(String::from_utf8_lossy(&b[..end]).into_owned())
            }),
            _ => None,
        };
        if let Some(v) = value {
            out.push((name, v));
        }
        at += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_gives_no_counters() {
        assert!(parse(b"").is_empty());
        assert!(parse(&[0xca, 0xfe, 0xc0, 0xc0, 1, 2, 0, 1, 0xff, 0xff, 0xff, 0x7f]).is_empty());
        let mut bad = vec![0u8; 64];
        bad[..4].copy_from_slice(&[0xca, 0xfe, 0xc0, 0xc0]);
        bad[4] = 1;
        bad[24..28].copy_from_slice(&40i32.to_le_bytes());
        bad[28..32].copy_from_slice(&1000i32.to_le_bytes());
        bad[40..44].copy_from_slice(&(-5i32).to_le_bytes());
        assert!(parse(&bad).is_empty());
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(42), "42s");
        assert_eq!(duration(3 * 3600 + 5 * 60), "3h05m");
        assert_eq!(duration(2 * 86400 + 3600), "2d01h");
    }
}
