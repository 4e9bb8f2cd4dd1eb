//! `leakscope jvms`: the running JVMs of this user.

use serde::{Deserialize, Serialize};

/// The running JVMs this user can see (`leakscope jvms --json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct JvmList {
    /// Each JVM, by process id.
    pub jvms: Vec<RunningJvm>,
}

/// One running JVM.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct RunningJvm {
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
