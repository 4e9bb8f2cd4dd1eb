//! Rendering of the `paths` models.

use std::fmt::Write;

use report::*;

impl crate::Text for PathsReport {
    fn to_text(&self) -> String {
        let mut o = String::new();
        let _ =
            writeln!(o, "Shortest paths from GC roots to {} objects ({}):", thousands(self.selected), self.selector);
        for p in &self.paths {
            let _ = writeln!(
                o,
                "\n{} object{} via {}{}",
                thousands(p.count),
                if p.count == 1 { "" } else { "s" },
                p.root.kind,
                sep(&p.root.detail)
            );
            for (i, s) in p.steps.iter().enumerate() {
                let indent = "  ".repeat(i + 1);
                match &s.field {
                    None => {
                        let _ = writeln!(o, "{indent}{} {}", s.class, s.id);
                    }
                    Some(f) => {
                        let _ = writeln!(o, "{indent}{f} -> {} {}", s.class, s.id);
                    }
                }
            }
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

fn sep(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}
