//! The leakscope JVMTI agent: Cork online on stock HotSpot.
//!
//! Loaded with `-agentpath:libleakscope_agent.so=OPTIONS` or attached late with
//! `jcmd PID JVMTI.agent_load` (what `leakscope attach` does). Two signals go into one run
//! store (the `runstore` crate):
//!
//! - **cheap and continuous**: sampled allocations (`SampledObjectAlloc`) tagged and tracked
//!   to their death (`ObjectFree`) estimate the live bytes per class and allocation site; the
//!   worker records them after garbage collections and ranks them with the `growth` engine;
//! - **costly and budgeted**: class points-from walks (`FollowReferences`), the exact
//!   `HeapSummary` of a dump, taken only within the overhead and pause budgets, first early
//!   and then while a class is a candidate, so that the slice shows what holds it.
//!
//! The VM's threads only record: every callback is behind `catch_unwind`, and any internal
//! error disables the agent while the JVM keeps running. All other work is on one daemon
//! thread, the worker.

mod calibration;
mod classes;
mod containers;
#[allow(unsafe_code)] // the VM's entry points
mod entry;
#[allow(unsafe_code)] // the Java API's native methods
pub mod expect;
mod expectations;
#[allow(unsafe_code)] // fork, signals and /proc: heap walks on a forked copy
mod fork;
#[allow(unsafe_code)] // HotSpot's own mutexes, taken around a fork
mod fork_locks;
pub mod instrument;
mod jars;
#[allow(unsafe_code)] // the JVMTI and JNI bindings
mod jvmti;
mod lifecycle;
mod metrics;
mod names;
mod plan;
mod sampler;
mod state;
mod time;
#[allow(unsafe_code)] // the heap walk's callbacks
mod walk;
mod watch;
mod worker;

pub use jars::{API_HAS_LEAK_TEST, API_JAR};
pub use names::source_name;
