//! Rendering of the `expect` models.

use std::fmt::Write;

use report::*;

impl crate::Text for ExpectationsReport {
    fn to_text(&self) -> String {
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
