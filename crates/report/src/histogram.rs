//! The histogram report: `{"classes":[{"name","instances","shallow_bytes"}], "total_instances", "total_shallow_bytes"}`.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::text::{human_bytes, thousands};

/// One row: a class, package or hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramRow {
    /// Class name (Java source form), package, or root class of a hierarchy.
    pub name: String,
    /// Number of instances.
    pub instances: u64,
    /// Their shallow bytes as the JVM counts them.
    pub shallow_bytes: u64,
}

/// A heap histogram, biggest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    /// The rows.
    pub classes: Vec<HistogramRow>,
    /// Instances over all rows (before any `--top` cut).
    pub total_instances: u64,
    /// Bytes over all rows (before any `--top` cut).
    pub total_shallow_bytes: u64,
    /// Android: the heap counted (`app`, `zygote`, `image`, or `all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap: Option<String>,
    /// Android: every heap of the dump, with its totals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heaps: Vec<HeapEntry>,
}

/// One Android heap (app, zygote, image) and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeapEntry {
    /// The heap's name as the dump gives it.
    pub name: String,
    /// Objects in it.
    pub instances: u64,
    /// Their shallow bytes.
    pub shallow_bytes: u64,
}

impl HeapEntry {
    /// `app 1,444 objects (98.1 KiB)`.
    pub fn to_text(&self) -> String {
        format!("{} {} objects ({})", self.name, thousands(self.instances), human_bytes(self.shallow_bytes))
    }
}

/// How to render a histogram as text.
#[derive(Debug, Clone, Default)]
pub struct HistogramText {
    /// Header of the name column (`class`, `package`, `class and subclasses`).
    pub name_column: String,
    /// Rows shown; the rest are summarised in one line.
    pub top: Option<usize>,
}

impl Histogram {
    /// Keeps the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.classes.truncate(n);
    }

    /// A table for people.
    pub fn to_text(&self, opts: &HistogramText) -> String {
        let shown = opts.top.unwrap_or(self.classes.len()).min(self.classes.len());
        let rows = &self.classes[..shown];
        let iw = rows
            .iter()
            .map(|r| thousands(r.instances).len())
            .max()
            .unwrap_or(0)
            .max(thousands(self.total_instances).len())
            .max(9);
        let bw = rows
            .iter()
            .map(|r| thousands(r.shallow_bytes).len())
            .max()
            .unwrap_or(0)
            .max(thousands(self.total_shallow_bytes).len())
            .max(5);
        let name = if opts.name_column.is_empty() { "class" } else { &opts.name_column };
        let mut out = String::new();
        let _ = writeln!(out, "{:>5}  {:>iw$}  {:>bw$}  {:>6}  {name}", "#", "instances", "bytes", "%");
        for (i, r) in rows.iter().enumerate() {
            let pct = percent(r.shallow_bytes, self.total_shallow_bytes);
            let _ = writeln!(
                out,
                "{:>5}  {:>iw$}  {:>bw$}  {pct:>5.1}%  {}",
                i + 1,
                thousands(r.instances),
                thousands(r.shallow_bytes),
                r.name
            );
        }
        let _ = writeln!(
            out,
            "{:>5}  {:>iw$}  {:>bw$}  {:>6}  ({})",
            "total",
            thousands(self.total_instances),
            thousands(self.total_shallow_bytes),
            "100.0%",
            human_bytes(self.total_shallow_bytes)
        );
        if shown < self.classes.len() {
            let _ =
                writeln!(out, "{} more rows not shown; use --top N, or --top 0 for all.", self.classes.len() - shown);
        }
        out
    }
}

fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_the_documented_shape() {
        let h = Histogram {
            classes: vec![HistogramRow { name: "int[]".into(), instances: 3, shallow_bytes: 72 }],
            total_instances: 3,
            total_shallow_bytes: 72,
            ..Default::default()
        };
        let v: serde_json::Value = serde_json::to_value(&h).unwrap();
        assert_eq!(v["classes"][0]["name"], "int[]");
        assert_eq!(v["classes"][0]["shallow_bytes"], 72);
        assert_eq!(v["total_instances"], 3);
        let text = h.to_text(&HistogramText::default());
        assert!(text.contains("100.0%") && text.contains("int[]"), "{text}");
    }
}
