//! Rendering of the `group` models.

use std::fmt::Write;

use report::*;

impl crate::Text for GroupReport {
    fn to_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "Objects grouped by {}:", self.by.join(", then "));
        let _ = writeln!(o, "{:>12}  {:>14}  {:>14}  {:>14}  group", "count", "shallow", "deep", "retained");
        render(&self.tree, 0, &mut o);
        let _ = writeln!(
            o,
            "Deep = reachable from the group; retained = freed if the group became unreachable. {}",
            report::WEAK_NOTE
        );
        o
    }
}

fn render(n: &GroupNode, depth: usize, o: &mut String) {
    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), thousands);
    let _ = writeln!(
        o,
        "{:>12}  {:>14}  {:>14}  {:>14}  {}{}",
        thousands(n.count),
        thousands(n.shallow_bytes),
        opt(n.deep_bytes),
        opt(n.retained_bytes),
        "  ".repeat(depth),
        n.key
    );
    for c in &n.children {
        render(c, depth + 1, o);
    }
    if n.more_children > 0 {
        let _ = writeln!(o, "{:>62}  {}... {} more", "", "  ".repeat(depth + 1), thousands(n.more_children));
    }
}
