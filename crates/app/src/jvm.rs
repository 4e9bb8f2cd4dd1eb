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

#[cfg(test)]
mod tests {
    use super::*;

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
