//! Rendering of the `top` models.

use std::fmt::Write;

use report::*;

impl crate::TextWith<usize> for TopView {
    fn to_text(&self, rows: usize) -> String {
        let mut o = String::new();
        let pid = self.pid.map_or(String::new(), |p| format!("pid {p}  "));
        let _ = writeln!(o, "leakscope top  {pid}{}  [{}]", self.command, self.status);
        let _ = writeln!(
            o,
            "gc {}  live ≈ {}  walks {} (longest pause {:.0} ms)  store {}",
            self.gc_count,
            human_bytes(self.live_bytes),
            self.walks,
            self.longest_pause_ms,
            self.source
        );
        let _ = writeln!(o);
        let _ = writeln!(o, "{:>12} {:>12} {:>12} {:>12}  class", "live", "objects", "alloc/s", "allocated");
        for c in self.classes.iter().take(rows) {
            let _ = writeln!(
                o,
                "{:>12} {:>12} {:>12} {:>12}  {}",
                human_bytes(c.live_bytes),
                thousands(c.live_instances),
                human_bytes(c.allocated_bytes_per_s),
                human_bytes(c.allocated_bytes),
                c.name
            );
        }
        let _ = writeln!(o);
        if self.candidates.is_empty() {
            let _ = writeln!(o, "{}", crate::no_candidate(self.not_enough_data.as_deref()));
        }
        for c in &self.candidates {
            let held = c.held_by.as_ref().map(|h| format!(", held by {h}")).unwrap_or_default();
            let _ = writeln!(o, "GROWING {}  rank {:.0}, +{}{held}", c.class, c.rank, human_bytes(c.growth_bytes));
        }
        o
    }
}
