//! Rendering of the `paths` models.

use std::fmt::Write;

use report::*;

impl crate::Text for PathsReport {
    fn to_text(&self) -> String {
        crate::TextWith::to_text(self, PATHS_WEAK_NOTE)
    }
}

/// The text ending with `weak_note`, which says what paths do not go through in the runtime
/// the report is of ([`report::V8_PATHS_WEAK_NOTE`] for a V8 snapshot).
impl crate::TextWith<&str> for PathsReport {
    fn to_text(&self, weak_note: &str) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "Shortest paths from GC roots to {} ({}):",
            report::count(self.selected, "object"),
            self.selector
        );
        for p in &self.paths {
            let head = format!("\n{} via ", report::count(p.count, "object"));
            crate::path_text(&mut o, &head, &p.root.plain(), &p.steps, "", true);
        }
        if self.unreachable > 0 {
            let _ =
                writeln!(o, "\n{} selected objects have no strong path from a GC root.", thousands(self.unreachable));
        }
        if self.more_shapes {
            let _ = writeln!(o, "\nMore path shapes exist; raise --max to see them.");
        }
        let _ = writeln!(o, "\n{weak_note}");
        o
    }
}
