//! The JVMs of this machine, as far as leakscope needs them: whether a process runs, is a
//! HotSpot JVM the agent supports, has the agent loaded, where its run store is, and its jcmd.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Whether process `pid` runs.
pub fn is_running(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Checks that `pid` is a HotSpot JVM the agent supports before anything is sent to it: the
/// attach mechanism starts by signalling the target (SIGQUIT), which ends most processes
/// that are not JVMs.
pub fn ensure_jvm(pid: u32) -> Result<()> {
    if !is_running(pid) {
        return Err(Error::Usage(format!("no process {pid} (see `leakscope jvms`)")));
    }
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).map_err(|e| {
        Error::Usage(format!("cannot read the memory map of process {pid} (is it another user's?): {e}"))
    })?;
    let Some(libjvm) = maps.lines().filter_map(|l| l.split_whitespace().nth(5)).find(|p| p.ends_with("/libjvm.so"))
    else {
        let exe =
            std::fs::read_link(format!("/proc/{pid}/exe")).map_or_else(|_| "?".into(), |e| e.display().to_string());
        return Err(Error::Usage(format!(
            "process {pid} ({exe}) is not a HotSpot JVM (it has no libjvm.so): nothing was sent to it; see `leakscope jvms`"
        )));
    };
    // JDK_HOME/lib/server/libjvm.so, and JDK_HOME/release says the version.
    let home = Path::new(libjvm).ancestors().nth(3).unwrap_or(Path::new("/"));
    let release = std::fs::read_to_string(home.join("release")).unwrap_or_default();
    if let Some(major) = java_major(&release).filter(|&m| m < MIN_JAVA) {
        return Err(Error::Usage(format!(
            "process {pid} runs Java {major} ({}); the leakscope agent needs Java {MIN_JAVA} or later",
            home.display()
        )));
    }
    Ok(())
}

/// The oldest Java whose JVMTI has what the agent uses (heap sampling came in 11).
const MIN_JAVA: u32 = 11;

/// The major version in a JDK's `release` file (`JAVA_VERSION="17.0.15"`, `"1.8.0_392"` is 8).
fn java_major(release: &str) -> Option<u32> {
    let v = release.lines().find_map(|l| l.strip_prefix("JAVA_VERSION="))?.trim_matches('"');
    let mut parts = v.split(['.', '_', '-', '+']).filter_map(|p| p.parse::<u32>().ok());
    match parts.next()? {
        1 => parts.next(),
        m => Some(m),
    }
}

/// jcmd's answer in one line: the exception's message rather than its Java stack trace.
pub fn jcmd_message(text: &str) -> String {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    let is_pid_line = |l: &str| l.strip_suffix(':').is_some_and(|p| p.parse::<u32>().is_ok());
    let exception = lines().find(|l| l.contains("Exception") || l.contains("Error:"));
    match exception {
        Some(l) => l.split_once(": ").map_or(l, |(_, message)| message).to_string(),
        None => lines().find(|l| !is_pid_line(l) && !l.starts_with("at ")).unwrap_or("no output").to_string(),
    }
}

/// Whether JVM `pid` has loaded the leakscope agent library.
pub fn has_agent(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).is_ok_and(|m| m.contains("libleakscope_agent"))
}

/// `jcmd` of the JVM's own JDK when it can be found (`/proc/PID/exe`), else from PATH.
pub fn jcmd_for(pid: u32) -> PathBuf {
    if let Ok(java) = std::fs::read_link(format!("/proc/{pid}/exe")) {
        if let Some(bin) = java.parent() {
            let jcmd = bin.join("jcmd");
            if jcmd.is_file() {
                return jcmd;
            }
        }
    }
    PathBuf::from("jcmd")
}

/// The run store `target` names: a path, or the process id of a JVM running the agent.
pub fn store_of(target: &str) -> Result<PathBuf> {
    let path = PathBuf::from(target);
    if path.is_file() {
        return Ok(path);
    }
    let Ok(pid) = target.parse::<u32>() else {
        return Err(Error::Usage(format!("{target} is neither a process id nor a run store")));
    };
    let running = is_running(pid);
    match std::fs::read_to_string(runstore::pointer_file(pid)) {
        Ok(store) if !running || has_agent(pid) => Ok(PathBuf::from(store.trim())),
        _ if running => Err(Error::Usage(format!(
            "JVM {pid} does not run the leakscope agent: load it with `leakscope attach {pid}`"
        ))),
        _ => Err(Error::Usage(format!("no process {pid}, and no run store of it (see `leakscope jvms`)"))),
    }
}

/// The JVMs with performance data files, by pid.
pub fn list() -> Vec<report::RunningJvm> {
    let mut out = Vec::new();
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let Ok(dirs) = std::fs::read_dir(std::env::temp_dir()) else { return out };
    for dir in dirs.flatten() {
        if !dir.file_name().to_string_lossy().starts_with("hsperfdata_") {
            continue;
        }
        let Ok(files) = std::fs::read_dir(dir.path()) else { continue };
        for f in files.flatten() {
            let Some(pid) = f.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            if !is_running(pid) {
                continue;
            }
            let Ok(data) = std::fs::read(f.path()) else { continue };
            let counters = perf_counters(&data);
            let get = |name: &str| counters.iter().find(|c| c.0 == name).map(|c| &c.1);
            let long = |name: &str| match get(name) {
                Some(Counter::Long(v)) => Some(*v),
                _ => None,
            };
            let command = match get("sun.rt.javaCommand") {
                Some(Counter::Text(s)) => s.clone(),
                _ => String::new(),
            };
            let uptime_ms = long("sun.rt.createVmBeginTime").map(|t| (now_ms - t).max(0) as u64);
            let used: Vec<i64> = counters
                .iter()
                .filter(|(n, _)| n.starts_with("sun.gc.generation.") && n.contains(".space.") && n.ends_with(".used"))
                .filter_map(|(_, v)| if let Counter::Long(x) = v { Some(*x) } else { None })
                .collect();
            let heap_used_bytes = (!used.is_empty()).then(|| used.iter().sum::<i64>().max(0) as u64);
            let agent_loaded = has_agent(pid);
            let agent_store = agent_loaded.then(|| std::fs::read_to_string(runstore::pointer_file(pid)).ok()).flatten();
            out.push(report::RunningJvm { pid, command, uptime_ms, heap_used_bytes, agent_store, agent_loaded });
        }
    }
    out.sort_by_key(|j| j.pid);
    out
}

/// A performance counter's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counter {
    /// A `J` counter.
    Long(i64),
    /// A `B` vector: a NUL-terminated string.
    Text(String),
}

/// Reads the counters of an hsperfdata file (format 2: a prologue, then self-describing
/// entries) with the cursor HPROF is read with; anything malformed ends the list.
pub fn perf_counters(data: &[u8]) -> Vec<(String, Counter)> {
    let mut out = Vec::new();
    if data.get(..4) != Some(&[0xca, 0xfe, 0xc0, 0xc0]) || data.len() < 32 {
        return out;
    }
    let little = data[4] == 1;
    let mut c = hprof::Cursor::new(data, 0, hprof::IdSize::Eight);
    let i32_at = |c: &mut hprof::Cursor<'_>, o: usize| -> Option<i32> {
        c.seek(o).ok()?;
        if little { c.i4_le() } else { c.i4() }.ok()
    };
    let (Some(mut at), Some(n)) = (i32_at(&mut c, 24), i32_at(&mut c, 28)) else { return out };
    for _ in 0..n.max(0) {
        let start = at.max(0) as usize;
        let (Some(len), Some(name_off), Some(vlen)) =
            (i32_at(&mut c, start), i32_at(&mut c, start + 4), i32_at(&mut c, start + 8))
        else {
            break;
        };
        let Some(kind) = c.u1().ok() else { break };
        let Some(data_off) = i32_at(&mut c, start + 16) else { break };
        if len <= 0 {
            break;
        }
        let name_start = start + name_off.max(0) as usize;
        let Some(name_end) = data.get(name_start..).and_then(|s| s.iter().position(|&b| b == 0)) else { break };
        let name = String::from_utf8_lossy(&data[name_start..name_start + name_end]).into_owned();
        let value_at = start + data_off.max(0) as usize;
        let value = match (kind, vlen) {
            (b'J', 0) => c
                .seek(value_at)
                .ok()
                .and_then(|_| if little { c.i8_le() } else { c.u8().map(|v| v as i64) }.ok())
                .map(Counter::Long),
            (b'B', n) if n > 0 => c.seek(value_at).ok().and_then(|_| c.bytes(n as usize).ok()).map(|b| {
                let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
                Counter::Text(String::from_utf8_lossy(&b[..end]).into_owned())
            }),
            _ => None,
        };
        if let Some(v) = value {
            out.push((name, v));
        }
        at = at.saturating_add(len);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_gives_no_counters() {
        assert!(perf_counters(b"").is_empty());
        assert!(perf_counters(&[0xca, 0xfe, 0xc0, 0xc0, 1, 2, 0, 1, 0xff, 0xff, 0xff, 0x7f]).is_empty());
        let mut bad = vec![0u8; 64];
        bad[..4].copy_from_slice(&[0xca, 0xfe, 0xc0, 0xc0]);
        bad[4] = 1;
        bad[24..28].copy_from_slice(&40i32.to_le_bytes());
        bad[28..32].copy_from_slice(&1000i32.to_le_bytes());
        bad[40..44].copy_from_slice(&(-5i32).to_le_bytes());
        assert!(perf_counters(&bad).is_empty());
    }

    #[test]
    fn release_files_give_major_versions() {
        assert_eq!(java_major("IMPLEMENTOR=\"Eclipse\"\nJAVA_VERSION=\"25.0.1\"\n"), Some(25));
        assert_eq!(java_major("JAVA_VERSION=\"17.0.15\""), Some(17));
        assert_eq!(java_major("JAVA_VERSION=\"1.8.0_392\""), Some(8));
        assert_eq!(java_major("OS_NAME=Linux"), None);
    }

    #[test]
    fn jcmd_stack_traces_become_one_line() {
        let trace = "12345:\ncom.sun.tools.attach.AttachNotSupportedException: Unable to open socket file /proc/12345/root/tmp/.java_pid12345: target process 12345 doesn't respond within 10500ms or HotSpot VM not loaded\n\tat jdk.attach/sun.tools.attach.VirtualMachineImpl.<init>(VirtualMachineImpl.java:100)\n";
        assert_eq!(
            jcmd_message(trace),
            "Unable to open socket file /proc/12345/root/tmp/.java_pid12345: target process 12345 doesn't respond within 10500ms or HotSpot VM not loaded"
        );
        assert_eq!(jcmd_message("12345:\nCommand executed successfully\n"), "Command executed successfully");
    }
}
