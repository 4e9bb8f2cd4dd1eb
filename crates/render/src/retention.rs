//! Rendering of the `retention` models.

use std::fmt::Write;

use report::*;

impl crate::Text for DominatorReport {
    fn to_text(&self) -> String {
        crate::TextWith::to_text(self, WEAK_NOTE)
    }
}

/// The text ending with `weak_note`, which says what does not retain in the runtime the
/// report is of ([`report::V8_WEAK_NOTE`] for a V8 snapshot).
impl crate::TextWith<&str> for DominatorReport {
    fn to_text(&self, weak_note: &str) -> String {
        let mut o = String::new();
        match &self.parent {
            None if self.flat => {
                let _ = writeln!(
                    o,
                    "Biggest retained sizes anywhere in the dominator tree (live heap {}):",
                    human_bytes(self.live_bytes)
                );
            }
            None => {
                let _ =
                    writeln!(o, "Biggest retainers below the GC roots (live heap {}):", human_bytes(self.live_bytes));
            }
            Some(p) => {
                let _ = writeln!(o, "{} retains {}; it dominates:", p.label(), human_bytes(p.retained_bytes));
            }
        }
        let _ = writeln!(o, "{:>14}  {:>10}  {:>6}  {:>9}  object", "retained", "shallow", "share", "children");
        for r in &self.objects {
            let _ = writeln!(
                o,
                "{:>14}  {:>10}  {:>5.1}%  {:>9}  {}",
                thousands(r.retained_bytes),
                thousands(r.shallow_bytes),
                r.share * 100.0,
                thousands(r.children),
                r.label()
            );
        }
        if self.more > 0 {
            let _ = writeln!(o, "{} more not shown (--top N, --top 0 for all).", thousands(self.more));
        }
        let _ = writeln!(o, "Descend with --children ID. {weak_note}");
        o
    }
}

impl crate::Text for RetainedReport {
    fn to_text(&self) -> String {
        crate::TextWith::to_text(self, WEAK_NOTE)
    }
}

/// The text ending with `weak_note` ([`report::V8_WEAK_NOTE`] for a V8 snapshot).
impl crate::TextWith<&str> for RetainedReport {
    fn to_text(&self, weak_note: &str) -> String {
        let mut o = String::new();
        let w = self.groups.iter().map(|g| g.selector.len()).max().unwrap_or(0).max(24);
        let _ = writeln!(
            o,
            "{:<w$}  {:>10}  {:>14}  {:>14}  {:>14}",
            "group", "objects", "shallow", "transitive", "retained"
        );
        let row = |o: &mut String, name: &str, t: &GroupTotals| {
            let _ = writeln!(
                o,
                "{:<w$}  {:>10}  {:>14}  {:>14}  {:>14}",
                name,
                thousands(t.objects),
                thousands(t.shallow_bytes),
                thousands(t.transitive_bytes),
                thousands(t.retained_bytes)
            );
        };
        for g in &self.groups {
            row(&mut o, &g.selector, &g.totals);
        }
        if self.groups.len() > 1 {
            row(&mut o, "all groups together", &self.union);
            let sum: u64 = self.groups.iter().map(|g| g.totals.retained_bytes).sum();
            if self.union.retained_bytes > sum {
                let _ = writeln!(
                    o,
                    "Together the groups retain {} more than the sum of their own retained sizes: shared ownership.",
                    human_bytes(self.union.retained_bytes - sum)
                );
            }
        }
        let _ = writeln!(o, "Retained = freed if every object of the group became unreachable. {weak_note}");
        o
    }
}
