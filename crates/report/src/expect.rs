//! The `check` report: objects the program declared dead (`LeakScope.expectDead`) that are
//! still reachable, with what keeps them alive (Modula-3's RTHeapDebug).

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::paths::PathEntry;
use crate::text::{human_bytes, human_ms, thousands};

/// An object declared dead that is still reachable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedDead {
    /// Its class.
    pub class: String,
    /// Where `LeakScope.expectDead` was called (`Class.method(File.java:line)`).
    pub site: String,
    /// How long before the check it was declared dead, in milliseconds.
    pub declared_ms_ago: u64,
    /// Its address in the heap dump (absent for an agent's walk).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub id: Option<String>,
    /// Bytes it alone keeps alive (from a heap dump).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub retained_bytes: Option<u64>,
    /// Its shortest path from a GC root (from a heap dump).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<PathEntry>,
    /// What referenced it at the agent's last walk: classes, `class C` for static fields,
    /// `root KIND`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub held_by: Vec<String>,
}

/// What became of the objects declared dead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectationsReport {
    /// The heap dump or run store checked.
    pub source: String,
    /// Objects declared dead that the check knows of.
    pub expectations: u64,
    /// Of those, collected (or no longer reachable).
    pub collected: u64,
    /// Of those, not checked yet (declared after the agent's last walk).
    pub unchecked: u64,
    /// The ones still reachable, most retained bytes first (oldest first from a run).
    pub reachable: Vec<ExpectedDead>,
}

impl ExpectationsReport {
    /// The report as text: one block per reachable object.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        if self.expectations == 0 {
            let _ = writeln!(
                o,
                "{}: no object was declared dead (LeakScope.expectDead needs the leakscope agent in the JVM).",
                self.source
            );
            return o;
        }
        let _ = writeln!(
            o,
            "{}: {} declared dead, {} collected, {} still reachable{}.",
            self.source,
            thousands(self.expectations),
            thousands(self.collected),
            thousands(self.reachable.len() as u64),
            if self.unchecked > 0 { format!(", {} not checked yet", thousands(self.unchecked)) } else { String::new() }
        );
        for x in &self.reachable {
            let _ = write!(o, "\n{}", x.class);
            if let Some(id) = &x.id {
                let _ = write!(o, " {id}");
            }
            if let Some(r) = x.retained_bytes {
                let _ = write!(o, " retains {}", human_bytes(r));
            }
            let _ = writeln!(o, "\n  declared dead {} ago at {}", human_ms(x.declared_ms_ago), x.site);
            if let Some(p) = &x.path {
                let _ = writeln!(o, "  kept alive from {} {}", p.root.kind, p.root.detail);
                for (i, s) in p.steps.iter().enumerate() {
                    let field = s.field.as_deref().map(|f| format!("{f} → ")).unwrap_or_default();
                    let _ = writeln!(o, "  {}{field}{} {}", "  ".repeat(i + 1), s.class, s.id);
                }
            }
            if !x.held_by.is_empty() {
                let _ = writeln!(o, "  referenced by {} (at the last heap walk)", x.held_by.join(", "));
            }
        }
        o
    }
}
