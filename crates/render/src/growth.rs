//! Rendering of the `growth` models.

use std::fmt::Write;

use report::*;

impl crate::TextWith<usize> for GrowthReport {
    fn to_text(&self, top: usize) -> String {
        let mut o = String::new();
        let totals: Vec<String> = self.snapshots.iter().map(|s| human_bytes(s.total_bytes)).collect();
        let span = self.time_span().map(|s| format!(" {s}")).unwrap_or_default();
        let noun = self.snapshot_noun();
        let _ = writeln!(o, "{}{span}, live bytes: {}", count(self.snapshots.len() as u64, noun), totals.join(" → "));
        let _ = writeln!(o, "{}\n", ranking_line(&self.ranking));
        for why in &self.incomplete {
            let _ = writeln!(o, "INCOMPLETE INPUT: {why}");
        }
        if !self.other_processes.is_empty() {
            let _ = writeln!(
                o,
                "ANOTHER PROCESS: {} left out, from another JVM process than the last heap (see the notes)",
                self.other_processes.join(", ")
            );
        }
        if !self.incomplete.is_empty() || !self.other_processes.is_empty() {
            let _ = writeln!(o);
        }
        if self.candidates.is_empty() {
            let verdict = crate::no_candidate(self.not_enough_data.as_deref());
            if self.incomplete.is_empty() {
                let _ = writeln!(o, "{verdict}.");
            } else {
                let _ = writeln!(o, "{verdict} in what could be read; a leak may be in what could not.");
            }
        }
        for l in &self.loader_leaks {
            loader_leak_text(&mut o, l);
        }
        if self.findings.is_empty() {
            let last_ms = self.snapshots.last().and_then(|s| s.time_ms);
            for (i, c) in self.candidates.iter().take(top).enumerate() {
                candidate_text(&mut o, i + 1, c, last_ms);
            }
        } else {
            for (i, f) in self.findings.iter().take(top).enumerate() {
                let element = f.members.first().map(|m| m.class.as_str());
                let sites = self.candidates.iter().find(|c| Some(c.class.as_str()) == element);
                finding_text(&mut o, i + 1, f, sites.map_or(&[], |c| &c.allocation_sites), !self.explained.is_empty());
                if let Some(l) = self.leaked_loader_of(f) {
                    let _ = writeln!(
                        o,
                        "   (its class is one of the {} leaked copies above, loaded by {})\n",
                        thousands(l.copies.last().copied().unwrap_or(0)),
                        l.loader
                    );
                }
            }
            if self.findings.len() > top {
                let rest: Vec<&str> = self.findings[top..].iter().map(|f| f.structure.as_str()).collect();
                let _ = writeln!(o, "{} more growing structures: {}\n", rest.len(), rest.join(", "));
            }
            let by = if self.ranking.is_steady() { "steady growth" } else { "Cork's ranking" };
            let _ = writeln!(o, "Growing classes ({by}), and where they grow:");
            for c in self.candidates.iter().take(top) {
                let at: Vec<String> = self
                    .findings
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.members.iter().any(|m| m.class == c.class))
                    .map(|(i, _)| format!("#{}", i + 1))
                    .collect();
                let place =
                    if at.is_empty() { "in no single structure".to_string() } else { format!("in {}", at.join(", ")) };
                let _ = writeln!(o, "  {}  rank {:.0}, grew {}, {place}", c.class, c.rank, human_bytes(c.growth_bytes));
            }
            let _ = writeln!(o);
        }
        if self.candidates.len() > top {
            let rest: Vec<&str> = self.candidates[top..].iter().map(|c| c.class.as_str()).collect();
            let _ = writeln!(o, "{} more candidates: {}\n", rest.len(), rest.join(", "));
        }
        for e in &self.explained {
            let vols: Vec<String> = e.volumes.iter().map(|&v| human_bytes(v)).collect();
            let _ = writeln!(o, "explain {}: {} (rank {:.0}, {} phases)", e.class, e.verdict, e.rank, e.phases);
            let _ = writeln!(o, "  volumes: {}", vols.join(" → "));
        }
        for n in &self.notes {
            let _ = writeln!(o, "note: {n}");
        }
        if let Some(x) = self.expected_dead.as_ref().filter(|x| x.expectations > 0) {
            let _ = write!(o, "\n{}", crate::Text::to_text(x));
        }
        o
    }
}

impl crate::Dot for GrowthReport {
    fn to_dot(&self, top: usize) -> String {
        let mut o = String::from("digraph growth {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\"];\n");
        let mut nodes: Vec<&str> = Vec::new();
        let mut edges: Vec<(&str, &str, u64)> = Vec::new();
        for c in self.candidates.iter().take(top) {
            for class in &c.slice.classes {
                if !nodes.contains(&class.as_str()) {
                    nodes.push(class);
                }
            }
            for e in &c.slice.edges {
                if !edges.iter().any(|(f, t, _)| *f == e.from && *t == e.to) {
                    edges.push((&e.from, &e.to, e.growth_bytes));
                }
            }
        }
        for n in &nodes {
            let candidate = self.candidates.iter().take(top).any(|c| c.class == *n);
            let style = if candidate { ", style=filled, fillcolor=\"#f4b6a6\"" } else { "" };
            let _ = writeln!(o, "  {} [label={}{style}];", dot_string(n), dot_string(n));
        }
        for (from, to, growth) in edges {
            let label = dot_string(&format!("+{}", human_bytes(growth)));
            let _ = writeln!(o, "  {} -> {} [label={label}];", dot_string(from), dot_string(to));
        }
        o.push_str("}\n");
        o
    }
}

/// A Graphviz quoted string: class names come from the heap, so quotes and backslashes are escaped.
fn dot_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' | '\\' => {
                out.push('\\');
                out.push(ch);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(ch),
        }
    }
    out.push('"');
    out
}

fn series_text(v: &[u64], f: impl Fn(u64) -> String) -> String {
    v.iter().map(|&x| f(x)).collect::<Vec<_>>().join(" → ")
}

/// A path as text; `from_root` when its first step is a root's object (its via is the root's kind).
fn path_text(path: &[PathPart], from_root: bool) -> String {
    let steps: Vec<String> = path
        .iter()
        .enumerate()
        .map(|(i, p)| match (i, p.via.is_empty()) {
            (0, false) if from_root => format!("{} ({})", p.class, p.via),
            (_, true) => p.class.clone(),
            _ => format!("{} → {}", p.via, p.class),
        })
        .collect();
    steps.join(" · ")
}

fn holder_text(o: &mut String, h: &Holder, indent: &str) {
    if !h.path.is_empty() {
        let root = h.root.as_ref().map(PathRoot::plain).unwrap_or_default();
        crate::path_text(o, "from ", &root, &h.path, indent, false);
    }
}

fn loader_leak_text(o: &mut String, l: &LoaderLeak) {
    let now = l.copies.last().copied().unwrap_or(0);
    let _ = writeln!(
        o,
        "Class-loader leak: {now} copies of the application of {} ({} classes: {}{}) are alive, loaded by {}",
        l.classes.first().map_or("?", String::as_str),
        l.class_count,
        l.classes.iter().take(4).cloned().collect::<Vec<_>>().join(", "),
        if l.classes.len() > 4 { ", …" } else { "" },
        l.loader
    );
    let _ = writeln!(o, "   copies per heap: {}", series_text(&l.copies, thousands));
    if let Some(b) = l.retained_bytes {
        let _ = writeln!(o, "   the {} stale copies retain {} together", thousands(l.stale), human_bytes(b));
    }
    for p in &l.held_by {
        let head = format!("{} of them kept alive by ", thousands(p.count));
        crate::path_text(o, &head, &p.root.plain(), &p.steps, "   ", false);
    }
    let _ = writeln!(o);
}

/// How the series was judged, in a line: the ranking's knobs, or a short series' steady growth.
pub(crate) fn ranking_line(r: &RankingInfo) -> String {
    if r.is_steady() {
        format!(
            "judged by steady growth (too few heaps for the ranking): at every step, no step under half another, at least {} growth",
            human_bytes(r.min_growth_bytes)
        )
    } else {
        format!(
            "ranking: {} (decay {:.0}%, threshold {}, at least {} growth phases, at least {} growth)",
            r.method,
            r.decay * 100.0,
            r.threshold,
            r.min_phases,
            human_bytes(r.min_growth_bytes)
        )
    }
}

/// A structure's bytes in the first heap that has it: where its growth starts, in the text
/// and the page alike (the page said "0 B →" of a structure the first heap did not have).
pub(crate) fn first_present(volumes: &[u64]) -> u64 {
    volumes.iter().copied().find(|&v| v > 0).unwrap_or(0)
}

/// A finding, with the allocation sites of its first member (`sites`: those its candidate
/// has, when the heaps recorded any).
fn finding_text(o: &mut String, n: usize, f: &Finding, sites: &[AllocationSite], explain: bool) {
    let first = first_present(&f.volumes);
    let last = f.volumes.last().copied().unwrap_or(0);
    let holding = f.element.as_ref().map(|e| format!(", holding {e}")).unwrap_or_default();
    let _ = writeln!(
        o,
        "#{n} {}{} grew {} ({} → {}){holding}",
        f.structure,
        finding_beside(f),
        human_bytes(f.growth_bytes),
        human_bytes(first),
        human_bytes(last)
    );
    let _ = writeln!(o, "   path: {}", path_text(&f.path, true));
    let _ = writeln!(o, "   what piles up in it:");
    for m in f.members.iter().take(8) {
        let _ = writeln!(
            o,
            "     {:>12}  {:>10} now  {}",
            format!("+{}", human_bytes(m.growth_bytes)),
            thousands(m.instances.last().copied().unwrap_or(0)),
            m.class
        );
    }
    if f.members.len() > 8 {
        let _ = writeln!(o, "     … and {} more classes", f.members.len() - 8);
    }
    if let Some(m) = f.members.first() {
        let _ = writeln!(o, "   where {} grows below it (instances per heap):", m.class);
        for g in &f.growing_paths {
            let place =
                if g.path.is_empty() { "(the structure itself)".to_string() } else { path_text(&g.path, false) };
            let _ = writeln!(o, "     {place}: {}", series_text(&g.instances, thousands));
        }
    }
    for s in sites.iter().take(2) {
        let class = f.members.first().map_or("", |m| m.class.as_str());
        let _ = writeln!(o, "   {class} allocated at {}", crate::site(s));
        if let Some(stack) = crate::site_stack(s) {
            let _ = writeln!(o, "      {stack}");
        }
    }
    for h in &f.holders {
        let _ = writeln!(
            o,
            "   holder {} {} retains {}, holds {:.0}% of them ({})",
            h.holder.class,
            h.holder.id,
            human_bytes(h.holder.retained_bytes),
            h.share * 100.0,
            thousands(h.instances)
        );
        holder_text(o, &h.holder, "     ");
    }
    if explain {
        for w in &f.why {
            let _ = writeln!(o, "   why: {w}");
        }
    }
    let _ = writeln!(o);
}

/// What stands beside a finding's name: what users of its library call it, and the library's
/// own place when the name is the application's field that owns it; else the structure's
/// class.
pub(crate) fn finding_beside(f: &Finding) -> String {
    match (&f.known_as, &f.library) {
        (Some(k), Some(l)) => format!(" ({k}: {l})"),
        (Some(k), None) => format!(" ({k})"),
        (None, Some(l)) => format!(" ({l})"),
        (None, None) => format!(" ({})", f.class),
    }
}

fn candidate_text(o: &mut String, n: usize, c: &Candidate, last_ms: Option<u64>) {
    let first = c.volumes.iter().copied().find(|&v| v > 0).unwrap_or(0);
    let last = c.volumes.last().copied().unwrap_or(0);
    let inst = c.instances.last().copied().unwrap_or(0);
    let _ = writeln!(
        o,
        "#{n} {}  rank {:.0}, {} phases, grew {} ({} → {}, {} instances now)",
        c.class,
        c.rank,
        c.phases,
        human_bytes(c.growth_bytes),
        human_bytes(first),
        human_bytes(last),
        thousands(inst)
    );
    let vols: Vec<String> = c.volumes.iter().map(|&v| human_bytes(v)).collect();
    let _ = writeln!(o, "   volumes: {}", vols.join(" → "));
    if let Some(same) = &c.same_structure_as {
        let _ = writeln!(o, "   grows in the same data structure as {same}\n");
        return;
    }
    if c.slice.edges.iter().any(|e| e.from != e.to) {
        if c.slice.structure.is_some() || c.slice.edges.iter().any(|e| e.growth_bytes > 0) {
            let _ = writeln!(o, "   held by (growing references, referent bytes now):");
        } else {
            let _ = writeln!(o, "   held in the last heap walk by (not yet seen growing; referent bytes then):");
        }
        slice_tree(o, &c.slice, &c.class);
    } else if !c.slice.edges.is_empty() {
        let _ = writeln!(o, "   held by other {} objects only: a linked list or tree of them grows", c.class);
    }
    if let (Some(why), None) = (&c.slice.not_known, &c.slice.structure) {
        let _ = writeln!(o, "   held by: not known yet ({why})");
    }
    match &c.slice.structure {
        Some(s) => structure_text(o, s, last_ms),
        None if !c.slice.containers.is_empty() => {
            let _ = writeln!(o, "   contained in: {}", c.slice.containers.join(", "));
        }
        None => {}
    }
    for h in &c.holders {
        let _ = writeln!(o, "   holder {} {} retains {}", h.class, h.id, human_bytes(h.retained_bytes));
        holder_text(o, h, "     ");
    }
    for s in &c.allocation_sites {
        let _ = writeln!(o, "   allocated at {}", crate::site(s));
        if let Some(stack) = crate::site_stack(s) {
            let _ = writeln!(o, "      {stack}");
        }
    }
    let _ = writeln!(o);
}

/// The slice as an indented tree from the candidate up to its containers; each class once.
/// With a growing structure, its chain is left to [`structure_text`].
fn slice_tree(o: &mut String, slice: &Slice, root: &str) {
    let shown = |e: &&SliceEdge| e.from != e.to && (slice.structure.is_none() || e.growth_bytes > 0);
    let into =
        |class: &str| -> Vec<&SliceEdge> { slice.edges.iter().filter(|e| e.to == class).filter(shown).collect() };
    // Edges that did not grow in a slice with no growing edge: the last walk's referrers.
    let growing = slice.structure.is_some() || slice.edges.iter().any(|e| e.growth_bytes > 0);
    let mut seen = vec![root.to_string()];
    // Depth first, each class's holders in the slice's order.
    let mut stack: Vec<(&SliceEdge, usize)> = into(root).into_iter().rev().map(|e| (e, 0)).collect();
    let mut lines = 0;
    while let Some((e, depth)) = stack.pop() {
        if lines >= 24 {
            let _ = writeln!(o, "     …");
            return;
        }
        let again = seen.contains(&e.from);
        let growth = match e.growth_bytes {
            0 if growing => " (holds the container)".to_string(),
            0 => String::new(),
            g => format!(" (+{})", human_bytes(g)),
        };
        let field = e.field.as_ref().filter(|f| f.as_str() != "[]").map(|f| format!(".{f}")).unwrap_or_default();
        let _ = writeln!(
            o,
            "     {}← {}{field}  {}{growth}{}",
            "  ".repeat(depth),
            e.from,
            human_bytes(e.bytes),
            if again { " (above)" } else { "" }
        );
        lines += 1;
        if !again {
            seen.push(e.from.clone());
            stack.extend(into(&e.from).into_iter().rev().map(|h| (h, depth + 1)));
        }
    }
}

/// When `t` was, said against the last snapshot's time `last_ms` (else in UTC).
pub(crate) fn when(t: u64, last_ms: Option<u64>) -> String {
    match last_ms {
        Some(last) if last >= t => format!("{} before the last snapshot", human_ms(last - t)),
        Some(last) => format!("{} after the last snapshot", human_ms(t - last)),
        None => utc(t),
    }
}

/// The growing structure an agent's run read between walks, and the path that holds it.
fn structure_text(o: &mut String, s: &HeldStructure, last_ms: Option<u64>) {
    let ago = |t: u64| when(t, last_ms);
    let of = match &s.element {
        Some(e) => format!(" of {} × {e} (when walked)", thousands(s.elements)),
        None => String::new(),
    };
    let verb = if s.seen_holding { "grows in" } else { "grows while, and likely in," };
    let _ = writeln!(
        o,
        "   {verb} {}: a {}{of} whose {} grew {} → {} (last read {})",
        s.name,
        s.class,
        if s.array_field.is_empty() { "array".to_string() } else { format!("{} ({})", s.array_field, s.array) },
        human_bytes(s.first_bytes),
        human_bytes(s.last_bytes),
        ago(s.last_ms)
    );
    if !s.path.is_empty() {
        let _ = writeln!(o, "     held by {} (the path a heap walk saw {})", s.path.join(" ← "), ago(s.walked_ms));
    }
}

impl crate::TextWith<usize> for DiffReport {
    fn to_text(&self, top: usize) -> String {
        let mut o = String::new();
        let d = self.new.total_bytes as i64 - self.old.total_bytes as i64;
        let _ = writeln!(
            o,
            "{} → {}: {} → {} ({})\n",
            self.old.source,
            self.new.source,
            human_bytes(self.old.total_bytes),
            human_bytes(self.new.total_bytes),
            signed_bytes(d)
        );
        for n in &self.notes {
            let _ = writeln!(o, "NOTE: {n}\n");
        }
        let _ = writeln!(o, "{:>12} {:>12} {:>12}  class", "Δ bytes", "Δ instances", "bytes now");
        for c in self.classes.iter().take(top) {
            let _ = writeln!(
                o,
                "{:>12} {:>12} {:>12}  {}",
                signed_bytes(c.delta_bytes),
                signed_count(c.delta_instances),
                human_bytes(c.new_bytes),
                c.class
            );
        }
        let _ = writeln!(o, "\n{:>12} {:>12}  referrer → referent", "Δ bytes", "bytes now");
        for e in self.edges.iter().take(top) {
            let _ = writeln!(
                o,
                "{:>12} {:>12}  {} → {}",
                signed_bytes(e.delta_bytes),
                human_bytes(e.new_bytes),
                e.from,
                e.to
            );
        }
        o
    }
}

/// `-1536` → `-1.5 KiB`.
pub fn signed_bytes(d: i64) -> String {
    let sign = if d < 0 { "-" } else { "+" };
    format!("{sign}{}", human_bytes(d.unsigned_abs()))
}

fn signed_count(d: i64) -> String {
    let sign = if d < 0 { "-" } else { "+" };
    format!("{sign}{}", thousands(d.unsigned_abs()))
}
