//! Rendering of the `suspects` models.

use std::fmt::Write;

use report::*;

impl crate::Text for SuspectsReport {
    fn to_text(&self) -> String {
        crate::TextWith::to_text(self, report::WEAK_NOTE)
    }
}

/// The text ending with `weak_note`, which says what does not retain in the runtime the
/// report is of ([`report::V8_WEAK_NOTE`] for a V8 snapshot).
impl crate::TextWith<&str> for SuspectsReport {
    fn to_text(&self, weak_note: &str) -> String {
        let mut o = String::new();
        if self.suspects.is_empty() {
            let _ = writeln!(
                o,
                "No leak suspect: nothing retains {:.0}% or more of the {} live heap.",
                self.threshold * 100.0,
                human_bytes(self.live_bytes)
            );
        }
        for (i, s) in self.suspects.iter().enumerate() {
            let _ = writeln!(o, "Suspect {}: {}", i + 1, s.title);
            let _ = writeln!(
                o,
                "  retains {} ({:.1}% of the {} live heap)",
                human_bytes(s.retained_bytes),
                s.share * 100.0,
                human_bytes(self.live_bytes)
            );
            if !s.path.is_empty() {
                crate::path_text(&mut o, "held by ", &s.root, &s.path, "  ", false);
            }
            if s.chain.len() > 1 {
                let _ = writeln!(o, "  down the dominator tree to where the memory accumulates:");
                for step in &s.chain[1..] {
                    let _ = writeln!(
                        o,
                        "    {}{} {}",
                        step.field.as_ref().map(|f| format!("{f} -> ")).unwrap_or_default(),
                        step.class,
                        step.id
                    );
                }
            }
            if let Some(a) = &s.accumulation_point {
                let _ = writeln!(o, "  accumulation point: {} {}", a.class, a.id);
                if let Some(d) = &s.data_structure {
                    let _ = writeln!(o, "  data structure: {d}");
                }
                let _ = writeln!(o, "  accumulated objects by class:");
                for c in &s.contents {
                    let _ =
                        writeln!(o, "    {:>10} x {} ({})", thousands(c.count), c.class, human_bytes(c.shallow_bytes));
                }
            }
            let _ = writeln!(o);
        }
        let _ = writeln!(o, "{weak_note}");
        o
    }
}
