//! Rendering of the `histogram` models.

use std::fmt::Write;

use report::*;

/// How to render a histogram as text.
#[derive(Debug, Clone, Default)]
pub struct HistogramText {
    /// Header of the name column (`class`, `package`, `class and subclasses`).
    pub name_column: String,
    /// Rows shown; the rest are summarised in one line.
    pub top: Option<usize>,
}

impl crate::Text for HeapEntry {
    fn to_text(&self) -> String {
        format!("{} {} objects ({})", self.name, thousands(self.instances), human_bytes(self.shallow_bytes))
    }
}

impl crate::TextWith<&HistogramText> for Histogram {
    fn to_text(&self, opts: &HistogramText) -> String {
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
    use crate::TextWith;

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
