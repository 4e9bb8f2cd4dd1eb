//! Rendering of the `paths` models.

use std::fmt::Write;

use report::*;

impl crate::Text for PathsReport {
    fn to_text(&self) -> String {
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
        let _ = writeln!(o, "\nPaths do not go through weak, soft, phantom or final referents.");
        o
    }
}
