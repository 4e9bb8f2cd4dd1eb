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
            "gc {}  live ≈ {} ± {} at {}  walks {} (longest pause {:.0} ms)",
            self.gc_count,
            human_bytes(self.live_bytes),
            human_bytes(self.live_error_bytes),
            self.live_source,
            self.walks,
            self.longest_pause_ms,
        );
        if let Some(walked) = self.walked_bytes {
            let _ =
                writeln!(o, "last heap walk: {} reachable, exact (with the JVM's own objects)", human_bytes(walked));
        }
        if let Some(blocked) = &self.walk_blocked {
            let _ = writeln!(o, "no heap walk fits now: {blocked}");
        }
        if let Some(note) = &self.biased_sampler {
            let _ = writeln!(o, "wider ±: {note}");
        }
        let _ = writeln!(
            o,
            "store {}  (the last heap walk's exact count plus the sampled change since; ± is the 95 % error)",
            self.source
        );
        let _ = writeln!(o);
        let _ = writeln!(o, "{:>11} {:>10} {:>9} {:>11} {:>11}  class", "live", "±", "objects", "alloc/s", "allocated");
        for c in self.classes.iter().take(rows) {
            let _ = writeln!(
                o,
                "{:>11} {:>10} {:>9} {:>11} {:>11}  {}",
                human_bytes(c.live_bytes),
                human_bytes(c.live_error_bytes),
                about(c.live_instances),
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
            let held = match &c.held_by {
                Some(h) => match c.held_by_walked_ms {
                    Some(t) => format!(
                        ", held by {h} (the path a heap walk saw {})",
                        crate::growth::when(t, Some(self.time_ms))
                    ),
                    None => format!(", held by {h}"),
                },
                None => ", holder not known yet (no heap walk has followed its objects to what holds them)".into(),
            };
            let _ = writeln!(o, "GROWING {}  rank {:.0}, +{}{held}", c.class, c.rank, human_bytes(c.growth_bytes));
        }
        o
    }
}

/// An estimated count to two significant digits, marked as an estimate: `~5,500`, `~12`.
fn about(n: u64) -> String {
    let digits = n.checked_ilog10().unwrap_or(0);
    let unit = 10u64.pow(digits.saturating_sub(1));
    format!("~{}", thousands((n + unit / 2) / unit * unit))
}

#[cfg(test)]
mod tests {
    #[test]
    fn estimated_counts_keep_two_digits() {
        assert_eq!(super::about(5_462), "~5,500");
        assert_eq!(super::about(12), "~12");
        assert_eq!(super::about(7), "~7");
        assert_eq!(super::about(0), "~0");
        assert_eq!(super::about(999_999), "~1,000,000");
    }
}
