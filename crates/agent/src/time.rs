//! The agent's wall clock: when things happened, in milliseconds since the Unix epoch, as the
//! run store records them.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
