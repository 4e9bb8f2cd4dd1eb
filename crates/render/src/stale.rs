//! Rendering of the `stale` models.

use std::fmt::Write;

use report::*;

impl crate::Text for StaleReport {
    fn to_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "{}: watching {}", self.source, self.rules.join(", "));
        if self.paths.is_empty() {
            let what = if self.older_than_ms > 0 { " that old" } else { "" };
            let _ = writeln!(o, "No watched object{what} on a path the rules match yet.");
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
                steps(p)
            );
            let _ = writeln!(
                o,
                "{:>50}  last used at {}",
                "",
                p.location.as_deref().unwrap_or("(not used since it was watched)")
            );
        }
        if self.unmatched > 0 {
            let _ = writeln!(o, "{} watched objects are on paths the rules do not match.", thousands(self.unmatched));
        }
        if self.not_followed > 0 {
            let _ = writeln!(
                o,
                "{} watched objects are on paths no heap walk has followed to a root yet (`growth` on the run store says why walks were skipped).",
                thousands(self.not_followed)
            );
        }
        for n in &self.notes {
            let _ = writeln!(o, "note: {n}");
        }
        o
    }
}

/// A stale path as a person names it: each holder with its field (`Registry.SESSIONS >
/// java.util.HashMap.table > java.util.HashMap$Node[] > java.util.HashMap$Node.value >
/// Session`), a static field without the `class` of its holder's name.
fn steps(p: &StalePath) -> String {
    let step = |(i, class): (usize, &String)| match p.fields.get(i).map(String::as_str) {
        None | Some("" | "[]") => class.clone(),
        Some(field) => format!("{}.{field}", class.strip_prefix("class ").unwrap_or(class)),
    };
    p.path.iter().enumerate().map(step).collect::<Vec<_>>().join(" > ")
}
