//! Rendering of one object looked into (`leakscope object`).

use std::fmt::Write;

use report::*;

/// `java.util.HashMap 0x… (retains 1.2 KiB)`, and a string's text when it was asked for.
fn target(t: &ObjectRef) -> String {
    let text = t.value.as_ref().map(|v| format!(" {v:?}")).unwrap_or_default();
    format!("{} {}{text} (retains {})", t.class, t.id, human_bytes(t.retained_bytes))
}

impl crate::Text for ObjectView {
    fn to_text(&self) -> String {
        let mut o = String::new();
        let s = &self.sizes;
        let _ = writeln!(
            o,
            "{}: {} shallow, {} retained, {} deep{}",
            self.object.label(),
            human_bytes(s.shallow_bytes),
            human_bytes(s.retained_bytes),
            human_bytes(s.transitive_bytes),
            if self.live { "" } else { "; no strong path from a GC root reaches it" }
        );
        if let Some(v) = &self.value {
            let _ = writeln!(o, "value: {v:?}");
        }
        for r in &self.roots {
            let _ = writeln!(o, "a GC root: {r}");
        }
        match &self.dominator {
            Some(d) => {
                let _ = writeln!(o, "kept alive by {} alone (it retains {})", d.label(), human_bytes(d.retained_bytes));
            }
            None if self.live => {
                let _ = writeln!(o, "kept alive by more than one GC root path (no single dominator)");
            }
            None => {}
        }
        if self.object.children > 0 {
            let n = count(self.object.children, "object");
            let _ = writeln!(o, "dominates {n} (leakscope dominators DUMP --children {})", self.object.id);
        }

        if !self.fields.is_empty() {
            let statics = self.fields.iter().all(|f| f.is_static);
            let _ = writeln!(o, "\n{}", if statics { "static fields" } else { "fields" });
            let width = self.fields.iter().map(|f| f.name.len()).max().unwrap_or(0).min(32);
            for f in &self.fields {
                let what = match (&f.value, &f.target) {
                    (Some(v), _) => v.clone(),
                    (None, Some(t)) => target(t),
                    (None, None) => "null".into(),
                };
                let _ = writeln!(o, "  {:<width$}  {:<7}  {what}", f.name, f.ty);
            }
        }

        if let Some(a) = &self.array {
            let _ = writeln!(o, "\n{} elements of {}", thousands(a.length), a.element_type);
            for e in &a.elements {
                let what = match (&e.value, &e.target) {
                    (Some(v), _) => v.clone(),
                    (None, Some(t)) => target(t),
                    (None, None) => "null".into(),
                };
                let _ = writeln!(o, "  [{}]  {what}", e.index);
            }
            if a.values_hidden {
                let _ = writeln!(o, "  (values are shown with --show-values)");
            }
            let shown = a.offset + a.elements.len() as u64;
            if !a.values_hidden && shown < a.length {
                let _ = writeln!(o, "  … {} more (--elements-from {shown})", thousands(a.length - shown));
            }
        }

        let r = &self.referrers;
        let _ = writeln!(o, "\nreferenced by {} ({} strong)", count(r.total, "object"), thousands(r.strong));
        let width = r.rows.iter().map(|x| x.field.len()).max().unwrap_or(0).min(32);
        for x in &r.rows {
            let _ = writeln!(o, "  {:<7}  {:<width$}  of {}", x.strength, x.field, target(&x.from));
        }
        let shown = r.offset + r.rows.len() as u64;
        if shown < r.total {
            let _ = writeln!(o, "  … {} more (--referrers-from {shown})", thousands(r.total - shown));
        }

        if let Some(p) = self.paths.paths.first() {
            let _ = writeln!(o, "\nshortest path from a GC root");
            crate::path_text(&mut o, "via ", &p.root.plain(), &p.steps, "  ", true);
        }
        o
    }
}
