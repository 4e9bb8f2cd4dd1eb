//! Rendering of the `stale` models.

use std::fmt::Write;

use report::*;

impl crate::Text for StaleReport {
    fn to_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "{}: watching {}", self.source, self.rules.join(", "));
        if self.paths.is_empty() {
            let _ = writeln!(o, "No watched object{}.", if self.older_than_ms > 0 { " that old" } else { " yet" });
        } else {
            let _ = writeln!(
                o,
                "{:>8}  {:>12} {:>12} {:>12}  path / last used at",
                "objects", "longest", "median", "recent"
            );
        }
        for p in &self.paths {
            let a = p.last_access;
            let _ = writeln!(
                o,
                "{:>8}  {:>12} {:>12} {:>12}  {}",
                thousands(p.count),
                human_ms(a.longest_ms),
                human_ms(a.median_ms),
                human_ms(a.most_recent_ms),
                p.path.join(" > ")
            );
            let _ = writeln!(
                o,
                "{:>50}  last used at {}",
                "",
                p.location.as_deref().unwrap_or("(not used since it was watched)")
            );
        }
        if self.unmatched > 0 {
            let _ = writeln!(o, "{} watched objects are on no path the rules match.", thousands(self.unmatched));
        }
        for n in &self.notes {
            let _ = writeln!(o, "note: {n}");
        }
        o
    }
}
