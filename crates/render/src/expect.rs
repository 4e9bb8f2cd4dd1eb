//! Rendering of the `expect` models.

use std::fmt::Write;

use report::*;

impl crate::Text for ExpectationsReport {
    /// One line per path shape.
    fn to_text(&self) -> String {
        crate::TextWith::to_text(self, false)
    }
}

impl crate::TextWith<bool> for ExpectationsReport {
    /// One line per path shape, then with `all` every object with its whole path.
    fn to_text(&self, all: bool) -> String {
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
        if !self.groups.is_empty() {
            let _ = writeln!(
                o,
                "\n{:>8}  {:>10}  {:<17}  class, where declared dead, what holds them",
                "objects", "retained", "declared ago"
            );
        }
        for g in &self.groups {
            let (oldest, newest) = (human_ms(g.oldest_ms_ago), human_ms(g.newest_ms_ago));
            let ages = if oldest == newest { oldest } else { format!("{oldest} … {newest}") };
            let more = g.sites.saturating_sub(1 + g.other_sites.len() as u64);
            let sites = match (g.other_sites.is_empty(), more) {
                (true, _) => String::new(),
                (false, 0) => format!(" and {}", g.other_sites.join(", ")),
                (false, n) => format!(" and {} ({n} more sites)", g.other_sites.join(", ")),
            };
            let held = match &g.path {
                Some(p) => {
                    let r = &p.readable;
                    // A class on the way is named: its static field alone would not say whose.
                    let fields: Vec<String> = r
                        .steps
                        .iter()
                        .map(|s| {
                            let f = s.field.as_deref().unwrap_or_default();
                            if s.class.starts_with("class ") {
                                format!("{f} ({})", s.class)
                            } else {
                                f.to_owned()
                            }
                        })
                        .collect();
                    format!("via {}{}{}", r.from, if fields.is_empty() { "" } else { " → " }, fields.join(" → "))
                }
                None if !g.held_by.is_empty() => {
                    format!("referenced by {} at the last heap walk", g.held_by.join(", "))
                }
                None => String::new(),
            };
            let _ = writeln!(
                o,
                "{:>8}  {:>10}  {:<17}  {} at {}{sites}, {held}",
                thousands(g.count),
                g.retained_bytes.map(human_bytes).unwrap_or_default(),
                ages,
                g.class,
                g.site
            );
        }
        if !all {
            if !self.reachable.is_empty() {
                let _ = writeln!(o, "\nEvery object with its own path: --all.");
            }
            return o;
        }
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
                crate::path_text(&mut o, "kept alive by ", &p.root.plain(), &p.steps, "  ", true);
            }
            if !x.held_by.is_empty() {
                let _ = writeln!(o, "  referenced by {} (at the last heap walk)", x.held_by.join(", "));
            }
        }
        o
    }
}
