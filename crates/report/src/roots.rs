//! The `roots` report: what each GC root keeps reachable and retains (Modula-3's ReportReachable).

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::text::{human_bytes, thousands};

/// Reachable and retained bytes of one root or group of roots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootBytes {
    /// Bytes strongly reachable from it.
    pub reachable_bytes: u64,
    /// Bytes freed if it let go.
    pub retained_bytes: u64,
}

/// All roots of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootKindRow {
    /// Root kind.
    pub kind: String,
    /// Roots of that kind.
    pub roots: u64,
    /// Their bytes.
    #[serde(flatten)]
    pub bytes: RootBytes,
}

/// One static reference field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaticRow {
    /// `com.acme.Cache.BY_ID`.
    pub field: String,
    /// Class of the object it holds.
    pub class: String,
    /// That object's id.
    pub id: String,
    /// Its bytes.
    #[serde(flatten)]
    pub bytes: RootBytes,
}

/// One frame of a thread, with the objects its locals hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameRow {
    /// Depth, 0 = innermost.
    pub depth: u32,
    /// `Class.method(File.java:12)`.
    pub method: String,
    /// Objects its locals hold.
    pub objects: u64,
    /// Their bytes.
    #[serde(flatten)]
    pub bytes: RootBytes,
}

/// One thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadRow {
    /// HPROF thread serial.
    pub serial: u32,
    /// The `java.lang.Thread` object's id, when known.
    pub id: Option<String>,
    /// Everything its stack holds (locals, JNI locals, the thread object).
    #[serde(flatten)]
    pub bytes: RootBytes,
    /// Frames that hold objects, innermost first.
    pub frames: Vec<FrameRow>,
}

/// The `roots` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootsReport {
    /// Bytes of all strongly live objects.
    pub live_bytes: u64,
    /// Per root kind.
    pub kinds: Vec<RootKindRow>,
    /// Static fields, biggest retained first.
    pub statics: Vec<StaticRow>,
    /// Static fields left out by `--top`.
    pub more_statics: u64,
    /// Threads, biggest retained first.
    pub threads: Vec<ThreadRow>,
}

impl RootsReport {
    /// Three tables for people.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let b = |x: &RootBytes| format!("{:>14}  {:>14}", thousands(x.reachable_bytes), thousands(x.retained_bytes));
        let _ = writeln!(o, "Live heap {} ({} bytes).\n", human_bytes(self.live_bytes), thousands(self.live_bytes));
        let _ = writeln!(o, "{:>14}  {:>14}  {:>8}  root kind", "reachable", "retained", "roots");
        for k in &self.kinds {
            let _ = writeln!(o, "{}  {:>8}  {}", b(&k.bytes), thousands(k.roots), k.kind);
        }
        let _ = writeln!(o, "\n{:>14}  {:>14}  static field -> object", "reachable", "retained");
        for s in &self.statics {
            let _ = writeln!(o, "{}  {} -> {} {}", b(&s.bytes), s.field, s.class, s.id);
        }
        if self.more_statics > 0 {
            let _ = writeln!(o, "{} more static fields (--top N, --top 0 for all).", thousands(self.more_statics));
        }
        let _ = writeln!(o, "\n{:>14}  {:>14}  thread / frame", "reachable", "retained");
        for t in &self.threads {
            let _ = writeln!(
                o,
                "{}  thread {}{}",
                b(&t.bytes),
                t.serial,
                t.id.as_ref().map(|i| format!(" {i}")).unwrap_or_default()
            );
            for f in &t.frames {
                let n =
                    if f.objects == 1 { "1 object".to_owned() } else { format!("{} objects", thousands(f.objects)) };
                let _ = writeln!(o, "{}    {:>2}: {} ({n})", b(&f.bytes), f.depth, f.method);
            }
        }
        let _ = writeln!(o, "\nRetained = freed if the root let go of what it holds. {}", crate::WEAK_NOTE);
        o
    }
}
