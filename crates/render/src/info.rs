//! Rendering of the `info` models.

use std::fmt::Write;

use report::*;

impl crate::Text for DumpInfo {
    fn to_text(&self) -> String {
        let mut o = String::new();
        let per = |b: u64| if self.objects == 0 { 0.0 } else { b as f64 / self.objects as f64 };
        let _ = writeln!(o, "file        {}", self.file);
        for d in &self.dumps {
            let _ = writeln!(
                o,
                "dump {:<6} at offset {}, begun at {} ms: {} objects, {} (--dump {})",
                d.index,
                thousands(d.offset),
                d.timestamp_ms,
                thousands(d.objects),
                human_bytes(d.shallow_bytes),
                d.index
            );
        }
        let _ = writeln!(o, "format      {}, {}-byte ids, layout: {}", self.format, self.id_size, self.layout);
        let (groups, reached_from, unreached) = if self.is_v8() {
            ("constructors", "V8's root", "garbage V8 had not collected yet")
        } else {
            ("classes", "GC roots and loaded classes", "garbage, heap fillers, or held only inside the VM")
        };
        let _ = writeln!(
            o,
            "objects     {} in {} {groups}, {} ({} bytes)",
            thousands(self.objects),
            thousands(self.classes),
            human_bytes(self.shallow_bytes),
            thousands(self.shallow_bytes)
        );
        if !self.heaps.is_empty() {
            let heaps: Vec<String> = self.heaps.iter().map(|h| h.to_text()).collect();
            let _ = writeln!(o, "heaps       {}", heaps.join(", "));
        }
        let _ = writeln!(o, "references  {} ({:.2} per object)", thousands(self.references), per(self.references));
        let _ = writeln!(
            o,
            "reachable   {} objects, {} from {reached_from}",
            thousands(self.reachable_objects),
            human_bytes(self.reachable_bytes)
        );
        let _ = writeln!(
            o,
            "unreachable {} objects, {} ({unreached})",
            thousands(self.unreachable_objects),
            human_bytes(self.unreachable_bytes)
        );
        let roots: Vec<String> = self.roots.iter().map(|r| format!("{} {}", thousands(r.count), r.kind)).collect();
        let _ =
            writeln!(o, "roots       {}", if roots.is_empty() { "none read".to_string() } else { roots.join(", ") });
        if let Some(cut) = &self.cut {
            let _ = writeln!(o, "cut         {cut}");
        }
        if !self.is_v8() {
            let _ = writeln!(o, "threads     {}", self.threads);
        }
        if let Some(d) = self.detached_dom_nodes {
            let _ = writeln!(
                o,
                "detached    {} DOM nodes the root still reaches (leakscope suspects groups them)",
                thousands(d)
            );
        }
        if let Some(sites) = self.allocation_sites {
            let _ = writeln!(
                o,
                "allocations {}",
                if sites {
                    "tracked: growth says where objects were allocated"
                } else {
                    "not tracked (node --track-heap-objects, or DevTools' allocation instrumentation, records them)"
                }
            );
        }
        let _ = writeln!(
            o,
            "snapshot    {} in memory, {:.1} bytes per object",
            human_bytes(self.snapshot_bytes),
            per(self.snapshot_bytes)
        );
        o
    }
}
