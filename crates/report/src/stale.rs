//! The `stale` report (the two-phase thesis, Table 5.1): per reference path to watched
//! objects, how many there are and how long ago they were last used, oldest first.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::text::{human_ms, thousands};

/// Ages of the last uses of the objects on one path, in milliseconds before the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastAccessAges {
    /// The object unused the longest.
    pub longest_ms: u64,
    /// The median object.
    pub median_ms: u64,
    /// The object used most recently.
    pub most_recent_ms: u64,
}

/// Watched objects held along one reference path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StalePath {
    /// Classes from the root to the watched class: `root KIND` or `class C` (a static field of
    /// C) first, `…` first while the walks have not followed the whole path yet.
    pub path: Vec<String>,
    /// Objects on this path.
    pub count: u64,
    /// How long ago they were last used.
    pub last_access: LastAccessAges,
    /// Where the object unused the longest was last used (`Class.method(File.java:line)`,
    /// the caller of the watched method); null when it was not used since it was watched.
    pub location: Option<String>,
}

/// The `stale` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaleReport {
    /// The run store.
    pub source: String,
    /// The reference rules watched.
    pub rules: Vec<String>,
    /// Ages are taken before this moment, ms since the epoch (the end of the run, or now).
    pub at_ms: u64,
    /// Only objects unused for at least this long are counted (`--older-than`).
    pub older_than_ms: u64,
    /// Paths, the one unused the longest first.
    pub paths: Vec<StalePath>,
    /// Watched objects still alive but on no path that a rule matches.
    pub unmatched: u64,
    /// Caveats.
    pub notes: Vec<String>,
}

impl StaleReport {
    /// The report as a table, oldest first.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "{}: watching {}", self.source, self.rules.join(", "));
        if self.paths.is_empty() {
            let _ = writeln!(o, "No watched object{}.", if self.older_than_ms > 0 { " that old" } else { " yet" });
        } else {
            let _ = writeln!(
                o,
                "{:>8}  {:>12} {:>12} {:>12}  path / last used at",
                "objects", "longest", "median", "recent"
            );
        }
        for p in &self.paths {
            let a = p.last_access;
            let _ = writeln!(
                o,
                "{:>8}  {:>12} {:>12} {:>12}  {}",
                thousands(p.count),
                human_ms(a.longest_ms),
                human_ms(a.median_ms),
                human_ms(a.most_recent_ms),
                p.path.join(" > ")
            );
            let _ = writeln!(
                o,
                "{:>50}  last used at {}",
                "",
                p.location.as_deref().unwrap_or("(not used since it was watched)")
            );
        }
        if self.unmatched > 0 {
            let _ = writeln!(o, "{} watched objects are on no path the rules match.", thousands(self.unmatched));
        }
        for n in &self.notes {
            let _ = writeln!(o, "note: {n}");
        }
        o
    }
}
