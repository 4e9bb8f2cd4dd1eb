//! Rendering of the `roots` models.

use std::fmt::Write;

use report::*;

impl crate::Text for RootsReport {
    fn to_text(&self) -> String {
        let mut o = String::new();
        let b = |x: &RootBytes| format!("{:>14}  {:>14}", thousands(x.reachable_bytes), thousands(x.retained_bytes));
        let _ = writeln!(o, "Live heap {} ({} bytes).\n", human_bytes(self.live_bytes), thousands(self.live_bytes));
        let _ = writeln!(o, "{:>14}  {:>14}  {:>8}  root kind", "reachable", "retained", "roots");
        for k in &self.kinds {
            let _ = writeln!(o, "{}  {:>8}  {}", b(&k.bytes), thousands(k.roots), k.kind);
        }
        let _ = writeln!(o, "\n{:>14}  {:>14}  static field -> object", "reachable", "retained");
        for s in &self.statics {
            let _ = writeln!(o, "{}  {} -> {} {}", b(&s.bytes), s.field, s.class, s.id);
        }
        if self.more_statics > 0 {
            let _ = writeln!(o, "{} more static fields (--top N, --top 0 for all).", thousands(self.more_statics));
        }
        let _ = writeln!(o, "\n{:>14}  {:>14}  thread / frame", "reachable", "retained");
        for t in &self.threads {
            let _ = writeln!(
                o,
                "{}  {}{}",
                b(&t.bytes),
                t.label,
                t.id.as_ref().map(|i| format!(" {i}")).unwrap_or_default()
            );
            for f in &t.frames {
                let n =
                    if f.objects == 1 { "1 object".to_owned() } else { format!("{} objects", thousands(f.objects)) };
                let _ = writeln!(o, "{}    {:>2}: {} ({n})", b(&f.bytes), f.depth, f.method);
            }
        }
        let _ = writeln!(o, "\nRetained = freed if the root let go of what it holds. {}", report::WEAK_NOTE);
        o
    }
}
