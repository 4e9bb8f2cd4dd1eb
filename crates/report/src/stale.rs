//! The `stale` report (the two-phase thesis, Table 5.1): per reference path to watched
//! objects, how many there are and how long ago they were last used, oldest first.

use serde::{Deserialize, Serialize};

/// Ages of the last uses of the objects on one path, in milliseconds before the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LastAccessAges {
    /// The object unused the longest.
    pub longest_ms: u64,
    /// The median object.
    pub median_ms: u64,
    /// The object used most recently.
    pub most_recent_ms: u64,
}

/// Watched objects held along one reference path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StalePath {
    /// Classes from the root to the watched class: `root KIND` or `class C` (a static field of
    /// C) first, `…` first while the walks have not followed the whole path yet.
    pub path: Vec<String>,
    /// Per entry of `path`, its field that holds the next entry (`[]` for an array's element;
    /// `a|b` when its objects are held through different fields; empty where not known, and
    /// for the watched class at the end).
    #[serde(default)]
    pub fields: Vec<String>,
    /// Objects on this path.
    pub count: u64,
    /// How long ago they were last used.
    pub last_access: LastAccessAges,
    /// Where the object unused the longest was last used (`Class.method(File.java:line)`,
    /// the caller of the watched method); null when it was not used since it was watched.
    pub location: Option<String>,
}

/// The `stale` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Watched objects still alive whose path to a root a heap walk followed, and no rule
    /// matches.
    pub unmatched: u64,
    /// Watched objects still alive whose path no heap walk has followed to a root yet (each
    /// walk learns a holder more, when walks fit the pause bound): they may match a rule once
    /// it has.
    #[serde(default)]
    pub not_followed: u64,
    /// Caveats.
    pub notes: Vec<String>,
}
