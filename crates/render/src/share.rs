//! Rendering of the `redact` and `secrets` models.

use std::fmt::Write;

use report::*;

impl crate::Text for RedactReport {
    fn to_text(&self) -> String {
        let mut o = String::new();
        let how = if self.mode == "zero" { "zeroed" } else { "masked (equal values stay equal)" };
        let _ = writeln!(o, "wrote {}{} from {}", self.output, if self.gzip { " (gzip)" } else { "" }, self.input);
        if self.v8 {
            let _ = writeln!(
                o,
                "{how}: the text of {} strings, {} of it",
                thousands(self.arrays),
                human_bytes(self.array_bytes)
            );
            let _ =
                writeln!(o, "left readable: the names of constructors, properties, variables, functions and scripts");
            let _ = writeln!(o, "nodes, ids, sizes and references unchanged ({} bytes written)", thousands(self.bytes));
            return o;
        }
        let _ = writeln!(
            o,
            "{}: {} arrays, {} of contents; {} fields; {} string hash codes reset",
            how,
            thousands(self.arrays),
            human_bytes(self.array_bytes),
            thousands(self.fields),
            thousands(self.string_hashes)
        );
        let _ = writeln!(o, "left readable: {} arrays (thread names, --keep)", thousands(self.kept_arrays));
        if self.pseudonyms > 0 {
            let map = self
                .names_map
                .as_deref()
                .map_or_else(|| "no mapping written".to_owned(), |m| format!("mapping in {m}"));
            let _ = writeln!(o, "names: {} identifiers replaced by pseudonyms ({map})", thousands(self.pseudonyms));
        }
        let _ = writeln!(
            o,
            "left out: {} symbols nothing references (the literals of loaded code)",
            thousands(self.symbols_dropped)
        );
        let _ =
            writeln!(o, "objects, ids, classes, sizes and references unchanged ({} bytes read)", thousands(self.bytes));
        o
    }
}

impl crate::Text for SecretsReport {
    fn to_text(&self) -> String {
        let mut o = String::new();
        if self.findings.is_empty() {
            let _ = writeln!(
                o,
                "no credentials at {} confidence or above in {} strings and arrays",
                self.min_confidence,
                thousands(self.texts_searched)
            );
        } else {
            let kinds: Vec<String> = self.by_kind.iter().map(|k| format!("{} {}", k.count, k.kind)).collect();
            let _ = writeln!(
                o,
                "{} credentials at {} confidence or above in {} strings and arrays: {}",
                self.findings.len(),
                self.min_confidence,
                thousands(self.texts_searched),
                kinds.join(", ")
            );
        }
        for f in &self.findings {
            let _ =
                writeln!(o, "\n{} ({} confidence) in {} {} ({})", f.kind, f.confidence, f.class, f.object, f.encoding);
            let _ = writeln!(o, "  {}", f.excerpt);
            match (&f.owner, &f.path) {
                (Some(owner), _) => {
                    let _ = writeln!(o, "  held by {} {} ({})", owner.class, owner.id, owner.field);
                }
                (None, Some(_)) => {
                    let _ = writeln!(o, "  a GC root itself");
                }
                (None, None) => {
                    let _ = writeln!(o, "  unreachable: garbage the JVM had not collected yet");
                }
            }
            if let Some(p) = &f.path {
                crate::path_text(&mut o, "", &p.root.plain(), &p.steps, "  ", false);
            }
        }
        if self.below_min_confidence > 0 {
            let _ = writeln!(
                o,
                "\n{} more below {} confidence (--min-confidence low lists them)",
                thousands(self.below_min_confidence),
                self.min_confidence
            );
        }
        o
    }
}
