//! Sharing a dump: what `redact` replaced, and the credentials `secrets` found.

use serde::{Deserialize, Serialize};

use crate::{ObjectId, PathEntry};

/// What a redaction wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RedactReport {
    /// The dump read.
    pub input: String,
    /// The redacted copy written.
    pub output: String,
    /// `mask` (equality-preserving, under a key) or `zero`.
    pub mode: String,
    /// Whether the copy is gzip-compressed.
    pub gzip: bool,
    /// Primitive arrays (the text of strings among them) whose contents were replaced.
    pub arrays: u64,
    /// Bytes of array contents replaced.
    pub array_bytes: u64,
    /// Arrays left readable: thread names, and what `--keep` classes reference.
    pub kept_arrays: u64,
    /// Strings whose cached hash code was reset (it is computed from the text).
    pub string_hashes: u64,
    /// Primitive fields replaced (`--fields`), static and instance.
    pub fields: u64,
    /// Symbols (UTF8 records) referenced by no record, left out: HotSpot writes its whole
    /// symbol table, with the string literals of every loaded class.
    pub symbols_dropped: u64,
    /// Identifiers replaced by pseudonyms (`--names`).
    pub pseudonyms: u64,
    /// The mapping from pseudonyms to names, when one was asked for (`--names-map`).
    pub names_map: Option<String>,
    /// Uncompressed bytes read (the copy is as long, less the symbols left out).
    pub bytes: u64,
    /// The input was a V8 heap snapshot: `arrays` and `array_bytes` count its strings whose
    /// text was replaced (the text of string objects; names stay).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub v8: bool,
}

/// The credentials found in a dump.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretsReport {
    /// Findings at or above `min_confidence`, surest first, then by kind.
    pub findings: Vec<SecretFinding>,
    /// The lowest confidence reported (`low`, `medium`, `high`).
    pub min_confidence: String,
    /// Findings below it, not listed.
    pub below_min_confidence: u64,
    /// Strings, `char[]` and `byte[]` whose text was searched.
    pub texts_searched: u64,
    /// Findings listed per kind.
    pub by_kind: Vec<KindCount>,
}

impl SecretsReport {
    /// The report of `findings` (those at or above `min_confidence`; `below` more under it),
    /// with their counts by kind, in the order they first appear; `searched` texts read.
    pub fn new(findings: Vec<SecretFinding>, min_confidence: &str, below: u64, searched: u64) -> SecretsReport {
        let mut by_kind: Vec<KindCount> = Vec::new();
        for f in &findings {
            match by_kind.iter_mut().find(|k| k.kind == f.kind) {
                Some(k) => k.count += 1,
                None => by_kind.push(KindCount { kind: f.kind.clone(), count: 1 }),
            }
        }
        SecretsReport {
            findings,
            min_confidence: min_confidence.to_owned(),
            below_min_confidence: below,
            texts_searched: searched,
            by_kind,
        }
    }
}

/// How many findings of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KindCount {
    /// The kind (`jwt`).
    pub kind: String,
    /// Findings of it.
    pub count: u64,
}

/// One credential in the heap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretFinding {
    /// What it is: `private-key`, `jwt`, `aws-access-key`, `github-token`, `url-password`,
    /// `basic-auth`, `bearer-token`, `card-number`, `high-entropy`, ...
    pub kind: String,
    /// `high` (a shape that passed its check), `medium` (a shape without one), `low` (only
    /// looks random).
    pub confidence: String,
    /// The object whose text holds it: a `java.lang.String`, `char[]` or `byte[]`.
    pub object: ObjectId,
    /// That object's class.
    pub class: String,
    /// How its text was read: `latin-1`, `utf-16`, `utf-8`.
    pub encoding: String,
    /// The object that holds it, and the field, when a strong path reaches it.
    pub owner: Option<SecretOwner>,
    /// The shortest path from a GC root; null for garbage the JVM had not collected yet.
    pub path: Option<PathEntry>,
    /// The match, with the secret masked beyond its first characters.
    pub excerpt: String,
}

/// The object that references a secret's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretOwner {
    /// Its address.
    pub id: ObjectId,
    /// Its class (for a class mirror: `class NAME`).
    pub class: String,
    /// The field, element (`[3]`) or static field that holds the text.
    pub field: String,
}
