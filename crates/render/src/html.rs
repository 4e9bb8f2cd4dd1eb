//! The leak report as one self-contained HTML file: no script, no network, no external
//! resource, so it opens offline and can be attached to a bug. Charts are inline SVG, trees
//! are `<details>` elements. Every string that came from a heap (class, field and file names,
//! and values when asked for) is attacker-controlled text in a hostile dump and goes through
//! [`esc`] on its way into the page.

use std::fmt::Write;

use report::*;

/// Escapes text for HTML element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Controls other than whitespace would make the XML of an inline SVG invalid.
            c if c.is_control() && !matches!(c, '\n' | '\t') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Extra style of the served page: the search box, the lazy trees and the inspector.
const SERVED_STYLE: &str = "
header form{margin-top:10px}header input{width:340px;padding:4px 6px}
[data-class],[data-id]{cursor:pointer}[data-class]:hover,[data-id]:hover{text-decoration:underline}
.row{display:flex;gap:10px;align-items:baseline;padding:1px 0}.row .grow{flex:1;min-width:0;overflow-wrap:anywhere}
.kids{margin-left:18px;border-left:1px dotted #c3c8d2;padding-left:6px}
button.tog{width:22px;border:0;background:none;cursor:pointer;font-size:12px;padding:0}
button.more{border:1px solid #c3c8d2;background:#fff;border-radius:4px;cursor:pointer;font-size:12px;margin:2px 0}
.num{font-variant-numeric:tabular-nums;white-space:nowrap;min-width:84px;text-align:right}.err{color:#b3261e}
";

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:18px 28px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#c9cfdb}main{padding:8px 28px 40px;max-width:1200px}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:18px 0;padding:14px 18px}
h2{font-size:17px;margin:0 0 10px}h3{font-size:15px;margin:14px 0 6px}
.verdict{font-size:16px;font-weight:600}.leak{color:#b3261e}.ok{color:#1e7b34}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eceef2}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
details{margin-left:16px}details>summary{cursor:pointer;margin-left:-16px}.tree{font-size:13px}
.muted{color:#6b7385}.note{color:#6b7385;font-size:13px}svg{max-width:100%;height:auto}
.path li{list-style:none}.path{padding-left:8px}.cand{border-left:4px solid #b3261e;padding-left:12px;margin:12px 0}
nav a{color:#c9cfdb;margin-right:14px;font-size:13px}
";

/// Series colours, distinguishable and readable on white.
const COLORS: [&str; 8] = ["#b3261e", "#1f5fbf", "#1e7b34", "#8a4fbf", "#c77700", "#00838f", "#5d4037", "#c2185b"];

impl crate::Html for LeakReport {
    fn to_html(&self) -> String {
        page(self, false)
    }

    fn to_served_html(&self) -> String {
        page(self, true)
    }
}

fn page(r: &LeakReport, served: bool) -> String {
    let mut h = String::new();
    let title = match (&r.growth, &r.heap) {
        (Some(g), _) => format!("leakscope report: {}", count(g.snapshots.len() as u64, "heap")),
        (None, Some(v)) => format!("leakscope report: {}", v.source),
        (None, None) => "leakscope report".to_string(),
    };
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:{}\">\
         <title>{}</title><style>{STYLE}{}</style>{}</head><body><header><h1>{}</h1><p>{}</p><nav>",
        if served { "; script-src 'self'; connect-src 'self'" } else { "" },
        esc(&title),
        if served { SERVED_STYLE } else { "" },
        if served { "<script src=\"/app.js\" defer></script>" } else { "" },
        esc(&title),
        esc(&r.inputs.join(", ")),
    );
    for (anchor, label, shown) in [
        ("growth", "Growth", r.growth.is_some()),
        ("classes", "Biggest classes", !r.class_curves.is_empty()),
        ("suspects", "Suspects", r.heap.is_some()),
        ("dominators", "Dominator tree", r.heap.is_some()),
        ("grouping", "Grouping", served && r.heap.is_some()),
        ("roots", "Roots", r.heap.is_some()),
        ("histogram", "Histogram", r.heap.is_some()),
    ] {
        if shown {
            let _ = write!(h, "<a href=\"#{anchor}\">{label}</a>");
        }
    }
    h.push_str("</nav>");
    if served && r.heap.is_some() {
        h.push_str(
            "<form id=\"search\" role=\"search\"><input id=\"q\" type=\"search\" \
             placeholder=\"Find a class, or an object by 0x id\" aria-label=\"Search\" autocomplete=\"off\">\
             <button type=\"submit\">Search</button></form>",
        );
    }
    h.push_str("</header><main>");
    if served && r.heap.is_some() {
        h.push_str(
            "<section id=\"inspect\" hidden><h2>Inspector</h2><p id=\"status\" class=\"note\"></p>\
             <div id=\"results\"></div><div id=\"detail\"></div></section>",
        );
    }
    if let Some(g) = &r.growth {
        growth_section(&mut h, g);
    }
    if !r.class_curves.is_empty() {
        let labels = r.growth.as_ref().map(snapshot_labels).unwrap_or_default();
        let series: Vec<(&str, &[u64])> =
            r.class_curves.iter().map(|c| (c.class.as_str(), c.volumes.as_slice())).collect();
        h.push_str("<section id=\"classes\"><h2>Biggest classes over the series</h2>");
        h.push_str(&line_chart(&series, &labels, 860, 300));
        h.push_str("</section>");
    }
    if let Some(v) = &r.heap {
        heap_sections(&mut h, v, r.show_values, served);
    }
    if !r.notes.is_empty() {
        h.push_str("<section><h2>Notes</h2><ul>");
        for n in &r.notes {
            let _ = write!(h, "<li class=\"note\">{}</li>", esc(n));
        }
        h.push_str("</ul></section>");
    }
    let _ = writeln!(
        h,
        "<p class=\"note\">Written by leakscope {}. {}</p></main></body></html>",
        env!("CARGO_PKG_VERSION"),
        if r.show_values {
            "String contents are shown (--show-values): this page may hold secrets."
        } else {
            "No string or array contents are included; pass --show-values to include strings."
        }
    );
    h
}

fn growth_section(h: &mut String, g: &GrowthReport) {
    let labels = snapshot_labels(g);
    h.push_str("<section id=\"growth\"><h2>Growth</h2>");
    let leaders: Vec<&Candidate> = g.candidates.iter().filter(|c| c.same_structure_as.is_none()).collect();
    if let Some(f) = g.findings.first() {
        let _ = write!(
            h,
            "<p class=\"verdict leak\">{} growing data structure{} found over {} heaps. Most likely: <span class=\"mono\">{}</span>, where <span class=\"mono\">{}</span> piles up (grew {}).</p>",
            g.findings.len(),
            if g.findings.len() == 1 { "" } else { "s" },
            g.snapshots.len(),
            esc(&f.structure),
            esc(f.members.first().map_or("", |m| m.class.as_str())),
            human_bytes(f.growth_bytes)
        );
    } else if leaders.is_empty() {
        let _ =
            write!(h, "<p class=\"verdict ok\">No growing data structure found over {} heaps.</p>", g.snapshots.len());
    } else {
        let _ = write!(
            h,
            "<p class=\"verdict leak\">{} growing data structure{} found over {} heaps. Most likely: <span class=\"mono\">{}</span></p>",
            leaders.len(),
            if leaders.len() == 1 { "" } else { "s" },
            g.snapshots.len(),
            esc(&leaders[0].class)
        );
    }
    let r = &g.ranking;
    let _ = write!(
        h,
        "<p class=\"note\">Ranking: {} (decay {:.0}%, threshold {}, at least {} phases, growth at least {}).</p>",
        esc(&r.method),
        r.decay * 100.0,
        r.threshold,
        r.min_phases,
        human_bytes(r.min_growth_bytes)
    );
    h.push_str("<h3>Heap occupancy</h3>");
    let totals: Vec<u64> = g.snapshots.iter().map(|s| s.total_bytes).collect();
    h.push_str(&line_chart(&[("all objects", &totals)], &labels, 860, 220));
    for l in &g.loader_leaks {
        loader_leak(h, l, &labels);
    }
    for (i, f) in g.findings.iter().enumerate() {
        finding(h, i + 1, f, &labels);
        if let Some(l) = g.leaked_loader_of(f) {
            let _ = write!(
                h,
                "<p class=\"note\">Its class is one of the {} leaked copies loaded by <span class=\"mono\">{}</span>, above.</p>",
                thousands(l.copies.last().copied().unwrap_or(0)),
                esc(&l.loader)
            );
        }
    }
    if !g.findings.is_empty() && !g.candidates.is_empty() {
        h.push_str("<h3>Growing classes (Cork's ranking)</h3>");
    }
    for c in &g.candidates {
        candidate(h, c, &labels);
    }
    for n in &g.notes {
        let _ = write!(h, "<p class=\"note\">{}</p>", esc(n));
    }
    if let Some(x) = g.expected_dead.as_ref().filter(|x| x.expectations > 0) {
        expected_dead(h, x);
    }
    h.push_str("</section>");
}

fn snapshot_labels(g: &GrowthReport) -> Vec<String> {
    g.snapshots.iter().map(|s| short_source(&s.source)).collect()
}

/// A dump path's file name; a run's `gc N`, without what follows in parentheses.
fn short_source(s: &str) -> String {
    let name = s.rsplit('/').next().unwrap_or(s);
    name.split(" (").next().unwrap_or(name).to_string()
}

/// A class-loader leak: copies of one application per heap, what holds them, what they retain.
fn loader_leak(h: &mut String, l: &LoaderLeak, labels: &[String]) {
    let _ = write!(
        h,
        "<div class=\"cand finding\"><h3>Class-loader leak: {} copies of <span class=\"mono\">{}</span></h3><p>{} classes per copy, loaded by <span class=\"mono\">{}</span>{}</p>",
        thousands(l.copies.last().copied().unwrap_or(0)),
        esc(l.classes.first().map_or("?", String::as_str)),
        thousands(l.class_count),
        esc(&l.loader),
        l.retained_bytes
            .map(|b| format!("; the {} stale copies retain {} together", thousands(l.stale), human_bytes(b)))
            .unwrap_or_default()
    );
    h.push_str(&line_chart(&[("copies", &l.copies)], labels, 560, 160));
    for p in &l.held_by {
        let _ = write!(h, "<h4>{} of them kept alive by</h4>", thousands(p.count));
        path_list(h, Some(&p.root), &p.steps);
    }
    h.push_str("</div>");
}

/// A growing structure: its path, what piles up in it, where below it, and its holders.
fn finding(h: &mut String, n: usize, f: &Finding, labels: &[String]) {
    let _ = write!(
        h,
        "<div class=\"cand finding\"><h3>#{n} <span class=\"mono\">{}</span> <span class=\"muted mono\">({})</span></h3><p>grew {} ({} → {})</p>",
        esc(&f.structure),
        esc(&f.class),
        human_bytes(f.growth_bytes),
        human_bytes(f.volumes.first().copied().unwrap_or(0)),
        human_bytes(f.volumes.last().copied().unwrap_or(0)),
    );
    let steps: Vec<String> =
        f.path.iter().map(|p| format!("{} <span class=\"mono\">{}</span>", esc(&p.via), esc(&p.class))).collect();
    let _ = write!(h, "<p class=\"mono path\">{}</p>", steps.join(" → "));
    let series: Vec<(&str, &[u64])> =
        f.members.iter().take(4).map(|m| (m.class.as_str(), m.volumes.as_slice())).collect();
    h.push_str(&line_chart(&series, labels, 560, 180));
    h.push_str("<table><tr><th>what piles up</th><th class=\"n\">grew</th><th class=\"n\">instances now</th></tr>");
    for m in &f.members {
        let _ = write!(
            h,
            "<tr><td class=\"mono\" data-class=\"{c}\">{c}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            human_bytes(m.growth_bytes),
            thousands(m.instances.last().copied().unwrap_or(0)),
            c = esc(&m.class)
        );
    }
    h.push_str("</table>");
    if let Some(m) = f.members.first() {
        let _ = write!(
            h,
            "<h4>Where <span class=\"mono\">{}</span> grows below it</h4><table><tr><th>path</th>",
            esc(&m.class)
        );
        for l in labels {
            let _ = write!(h, "<th class=\"n\">{}</th>", esc(l));
        }
        h.push_str("</tr>");
        for g in &f.growing_paths {
            let steps: Vec<String> = g.path.iter().map(|p| format!("{} {}", esc(&p.via), esc(&p.class))).collect();
            let _ = write!(h, "<tr><td class=\"mono\">{}</td>", steps.join(" → "));
            for v in &g.instances {
                let _ = write!(h, "<td class=\"n\">{}</td>", thousands(*v));
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    }
    for s in &f.holders {
        let _ = write!(
            h,
            "<h4>Holder <span class=\"mono\">{} {}</span> retains {}, holds {:.0}% of them</h4>",
            esc(&s.holder.class),
            esc(&s.holder.id),
            human_bytes(s.holder.retained_bytes),
            s.share * 100.0
        );
        path_list(h, s.holder.root.as_ref(), &s.holder.path);
    }
    h.push_str("</div>");
}

fn candidate(h: &mut String, c: &Candidate, labels: &[String]) {
    let first = c.volumes.first().copied().unwrap_or(0);
    let last = c.volumes.last().copied().unwrap_or(0);
    let _ = write!(
        h,
        "<div class=\"cand\"><h3 class=\"mono\" data-class=\"{cls}\">{cls}</h3><p>rank {:.0}, {} growth phases, grew {} ({} → {}, {} instances now)</p>",
        c.rank,
        c.phases,
        human_bytes(c.growth_bytes),
        human_bytes(first),
        human_bytes(last),
        thousands(c.instances.last().copied().unwrap_or(0)),
        cls = esc(&c.class),
    );
    if let Some(other) = &c.same_structure_as {
        let _ = write!(
            h,
            "<p class=\"muted\">Grows in the same data structure as <span class=\"mono\">{}</span>.</p></div>",
            esc(other)
        );
        return;
    }
    h.push_str(&line_chart(&[(c.class.as_str(), &c.volumes)], labels, 560, 180));
    if !c.slice.edges.is_empty() {
        h.push_str("<h3>Slice: what holds it</h3>");
        h.push_str(&slice_diagram(&c.slice));
    }
    if !c.slice.containers.is_empty() {
        let names: Vec<String> =
            c.slice.containers.iter().map(|s| format!("<span class=\"mono\">{}</span>", esc(s))).collect();
        let _ = write!(h, "<p>Contained in: {}</p>", names.join(", "));
    }
    for holder in &c.holders {
        let _ = write!(
            h,
            "<h3>Holder <span class=\"mono\">{} {}</span> retains {}</h3>",
            esc(&holder.class),
            esc(&holder.id),
            human_bytes(holder.retained_bytes)
        );
        path_list(h, holder.root.as_ref(), &holder.path);
    }
    if !c.allocation_sites.is_empty() {
        h.push_str("<h3>Allocated at</h3><ul>");
        for s in &c.allocation_sites {
            let _ = write!(h, "<li class=\"mono\">{}</li>", esc(s));
        }
        h.push_str("</ul>");
    }
    h.push_str("</div>");
}

/// Objects declared dead with `LeakScope.expectDead` that are still reachable.
fn expected_dead(h: &mut String, x: &ExpectationsReport) {
    let _ = write!(
        h,
        "<h3 id=\"expected-dead\">Declared dead, still reachable</h3><p>{} declared dead, {} collected, <b>{}</b> still reachable{}.</p>",
        thousands(x.expectations),
        thousands(x.collected),
        thousands(x.reachable.len() as u64),
        if x.unchecked > 0 { format!(", {} not checked yet", thousands(x.unchecked)) } else { String::new() }
    );
    if x.reachable.is_empty() {
        return;
    }
    h.push_str("<table><tr><th>class</th><th>declared dead at</th><th class=\"n\">ago</th><th>referenced by</th></tr>");
    for r in &x.reachable {
        let _ = write!(
            h,
            "<tr><td class=\"mono\" data-class=\"{0}\">{0}</td><td class=\"mono\">{1}</td><td class=\"n\">{2}</td><td class=\"mono\">{3}</td></tr>",
            esc(&r.class),
            esc(&r.site),
            human_ms(r.declared_ms_ago),
            esc(&r.held_by.join(", "))
        );
    }
    h.push_str(
        "</table><p class=\"note\">Paths and retained sizes: <span class=\"mono\">leakscope check PID</span>.</p>",
    );
}

fn path_list(h: &mut String, root: Option<&PathRoot>, path: &[PathStep]) {
    h.push_str("<ul class=\"path mono\">");
    if let Some(r) = root {
        let _ = write!(h, "<li class=\"muted\">from {} {}</li>", esc(&r.kind), esc(&r.detail));
    }
    for (i, s) in path.iter().enumerate() {
        let field = s.field.as_deref().map(|f| format!("{} → ", esc(f))).unwrap_or_default();
        let _ = write!(
            h,
            "<li>{}{field}<span data-class=\"{1}\">{1}</span> <span class=\"muted\" data-id=\"{2}\">{2}</span></li>",
            "&nbsp;&nbsp;".repeat(i),
            esc(&s.class),
            esc(&s.id)
        );
    }
    h.push_str("</ul>");
}

fn heap_sections(h: &mut String, v: &HeapView, show_values: bool, served: bool) {
    let _ = write!(
        h,
        "<section id=\"suspects\"><h2>Leak suspects in {}</h2><p class=\"muted\">{} live (reachable from GC roots).</p>",
        esc(&short_source(&v.source)),
        human_bytes(v.live_bytes)
    );
    if v.suspects.suspects.is_empty() {
        let _ = write!(
            h,
            "<p>No object or class retains {:.0}% or more of the live heap.</p>",
            v.suspects.threshold * 100.0
        );
    }
    for s in &v.suspects.suspects {
        let _ = write!(
            h,
            "<div class=\"cand\"><h3>{}</h3><p>retains {} ({:.1}% of live)</p>",
            esc(&s.title),
            human_bytes(s.retained_bytes),
            s.share * 100.0
        );
        let root = PathRoot { kind: s.root.clone(), detail: String::new() };
        path_list(h, Some(&root), &s.path);
        if let Some(ds) = &s.data_structure {
            let _ = write!(h, "<p>Accumulates in <span class=\"mono\">{}</span></p>", esc(ds));
        }
        if !s.contents.is_empty() {
            h.push_str("<table><tr><th>class</th><th class=\"n\">objects</th><th class=\"n\">shallow</th></tr>");
            for a in &s.contents {
                class_row(h, &a.class, a.count, a.shallow_bytes);
            }
            h.push_str("</table>");
        }
        h.push_str("</div>");
    }
    h.push_str(
        "</section><section id=\"dominators\"><h2>Dominator tree</h2>\
        <p class=\"muted\">Each object with what it alone keeps alive (retained), biggest first. Click to expand.</p>",
    );
    if served {
        h.push_str("<div id=\"domtree\" class=\"tree\"></div></section>");
        h.push_str(
            "<section id=\"grouping\"><h2>Grouping</h2><p class=\"muted\">All objects grouped by classifiers \
             in order (AntTracks' classification tree): class, package, loader, hierarchy, directly-rooted, \
             indirectly-rooted. Deep is what a group reaches, retained what freeing the whole group would give back.</p>\
             <form id=\"groupby\"><label>Group by <input id=\"by\" value=\"package,class\" size=\"40\" \
             aria-label=\"Classifiers\"></label> <button type=\"submit\">Group</button></form>\
             <div id=\"grouptree\" class=\"tree\"></div></section>",
        );
    } else {
        h.push_str("<div class=\"tree\">");
        for n in &v.dominator_tree {
            dom_node(h, n, show_values, true);
        }
        h.push_str("</div></section>");
    }
    roots_section(h, &v.roots);
    h.push_str("<section id=\"histogram\"><h2>Histogram</h2><table><tr><th>class</th><th class=\"n\">instances</th><th class=\"n\">shallow</th></tr>");
    for r in &v.histogram.classes {
        class_row(h, &r.name, r.instances, r.shallow_bytes);
    }
    let _ = write!(
        h,
        "<tr><th>total</th><th class=\"n\">{}</th><th class=\"n\">{}</th></tr></table></section>",
        thousands(v.histogram.total_instances),
        human_bytes(v.histogram.total_shallow_bytes)
    );
}

/// A table row: a class, how many objects, their shallow bytes.
fn class_row(h: &mut String, class: &str, objects: u64, bytes: u64) {
    let _ = write!(
        h,
        "<tr><td class=\"mono\" data-class=\"{0}\">{0}</td><td class=\"n\">{1}</td><td class=\"n\">{2}</td></tr>",
        esc(class),
        thousands(objects),
        human_bytes(bytes)
    );
}

fn dom_node(h: &mut String, n: &DomNode, show_values: bool, open: bool) {
    let o = &n.object;
    let value = match (&n.value, show_values) {
        (Some(v), true) => format!(" <span class=\"muted\">\"{}\"</span>", esc(v)),
        _ => String::new(),
    };
    let name = o.represents.as_ref().map_or_else(|| o.class.clone(), |c| format!("class {c}"));
    let label = format!(
        "<span class=\"mono\">{}</span> <span class=\"muted\">{}</span>{value} — retains <b>{}</b> ({:.1}%), shallow {}",
        esc(&name),
        esc(&o.id),
        human_bytes(o.retained_bytes),
        o.share * 100.0,
        human_bytes(o.shallow_bytes)
    );
    if n.nodes.is_empty() {
        let more = if o.children > 0 {
            format!(" <span class=\"muted\">({} dominated)</span>", thousands(o.children))
        } else {
            String::new()
        };
        let _ = write!(h, "<div>{label}{more}</div>");
        return;
    }
    let _ = write!(h, "<details{}><summary>{label}</summary>", if open { " open" } else { "" });
    for c in &n.nodes {
        dom_node(h, c, show_values, false);
    }
    if n.more > 0 {
        let _ = write!(h, "<div class=\"muted\">… {} more</div>", thousands(n.more));
    }
    h.push_str("</details>");
}

fn roots_section(h: &mut String, r: &RootsReport) {
    h.push_str("<section id=\"roots\"><h2>Reachability per root</h2><h3>By root kind</h3>\
        <table><tr><th>kind</th><th class=\"n\">roots</th><th class=\"n\">reachable</th><th class=\"n\">retained</th></tr>");
    for k in &r.kinds {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&k.kind),
            thousands(k.roots),
            human_bytes(k.bytes.reachable_bytes),
            human_bytes(k.bytes.retained_bytes)
        );
    }
    h.push_str("</table>");
    if !r.statics.is_empty() {
        h.push_str("<h3>Static fields</h3><table><tr><th>field</th><th>holds</th><th class=\"n\">reachable</th><th class=\"n\">retained</th></tr>");
        for s in &r.statics {
            let _ = write!(
                h,
                "<tr><td class=\"mono\">{}</td><td class=\"mono\">{} <span class=\"muted\">{}</span></td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&s.field),
                esc(&s.class),
                esc(&s.id),
                human_bytes(s.bytes.reachable_bytes),
                human_bytes(s.bytes.retained_bytes)
            );
        }
        h.push_str("</table>");
        if r.more_statics > 0 {
            let _ = write!(h, "<p class=\"muted\">… {} more static fields</p>", thousands(r.more_statics));
        }
    }
    if !r.threads.is_empty() {
        h.push_str("<h3>Threads</h3>");
        for t in &r.threads {
            let _ = write!(
                h,
                "<details><summary>thread {} <span class=\"muted\">{}</span> — reachable {}, retained {}</summary><table>",
                t.serial,
                esc(t.id.as_deref().unwrap_or("")),
                human_bytes(t.bytes.reachable_bytes),
                human_bytes(t.bytes.retained_bytes)
            );
            for f in &t.frames {
                let _ = write!(
                    h,
                    "<tr><td class=\"n\">{}</td><td class=\"mono\">{}</td><td class=\"n\">{} objects</td><td class=\"n\">{}</td></tr>",
                    f.depth,
                    esc(&f.method),
                    thousands(f.objects),
                    human_bytes(f.bytes.retained_bytes)
                );
            }
            h.push_str("</table></details>");
        }
    }
    h.push_str("</section>");
}

/// A line chart of byte series over the heaps: one polyline per series, a byte axis, and
/// the heaps' labels below.
fn line_chart(series: &[(&str, &[u64])], labels: &[String], width: u32, height: u32) -> String {
    let n = series.iter().map(|s| s.1.len()).max().unwrap_or(0);
    let max = series.iter().flat_map(|s| s.1.iter().copied()).max().unwrap_or(0).max(1);
    let (left, right, top, bottom) = (78.0, 60.0, 12.0, 34.0 + 16.0 * series.len().min(8) as f64);
    let (w, ht) = (f64::from(width), f64::from(height) + 16.0 * series.len().min(8) as f64);
    let plot_w = w - left - right;
    let plot_h = ht - top - bottom;
    let x = |i: usize| left + if n > 1 { plot_w * i as f64 / (n - 1) as f64 } else { plot_w / 2.0 };
    let y = |v: u64| top + plot_h * (1.0 - v as f64 / max as f64);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {ht}\" width=\"{w}\" height=\"{ht}\" role=\"img\" font-size=\"11\" font-family=\"system-ui,sans-serif\">"
    );
    for k in 0..=4 {
        let v = max / 4 * k;
        let _ = write!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eceef2\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#6b7385\">{}</text>",
            w - right,
            left - 6.0,
            y(v) + 4.0,
            esc(&human_bytes(v)),
            y = y(v)
        );
    }
    // About 100 pixels per label.
    let step = n.div_ceil(((plot_w / 100.0) as usize).max(2)).max(1);
    for (i, l) in labels.iter().enumerate().take(n) {
        let last = i + 1 == n;
        if last || (i % step == 0 && n - 1 - i >= step.div_ceil(2)) {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#6b7385\">{}</text>",
                x(i),
                top + plot_h + 16.0,
                esc(&truncate(l, 16))
            );
        }
    }
    for (k, (name, values)) in series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let points: Vec<String> = values.iter().enumerate().map(|(i, &v)| format!("{:.1},{:.1}", x(i), y(v))).collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>",
            points.join(" "),
            esc(name)
        );
        for (i, &v) in values.iter().enumerate() {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{}: {}</title></circle>",
                x(i),
                y(v),
                esc(name),
                esc(&human_bytes(v))
            );
        }
        if k < 8 {
            let ly = top + plot_h + 34.0 + 16.0 * k as f64;
            let _ = write!(
                s,
                "<rect x=\"{left}\" y=\"{:.1}\" width=\"12\" height=\"4\" fill=\"{color}\"/><text x=\"{}\" y=\"{:.1}\" fill=\"#1d2330\">{} — {}</text>",
                ly - 4.0,
                left + 18.0,
                ly + 1.0,
                esc(&truncate(name, 90)),
                esc(&human_bytes(values.last().copied().unwrap_or(0)))
            );
        }
    }
    s.push_str("</svg>");
    s
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max - 1).collect();
    format!("{head}…")
}

/// The slice as boxes and arrows: the candidate on the right, each referrer one column
/// further left, boxes as tall as the square root of the bytes over their edges; growing
/// edges red with their growth, edges that hold a container grey and dashed.
fn slice_diagram(slice: &Slice) -> String {
    let Some(candidate) = slice.classes.first() else {
        return String::new();
    };
    let mut names: Vec<&str> = slice.classes.iter().map(String::as_str).collect();
    for e in &slice.edges {
        for n in [e.from.as_str(), e.to.as_str()] {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    // Column: distance from the candidate against the references.
    let mut col = vec![usize::MAX; names.len()];
    col[0] = 0;
    let idx = |n: &str| names.iter().position(|&m| m == n).unwrap_or(0);
    for _ in 0..names.len() {
        for e in &slice.edges {
            let (f, t) = (idx(&e.from), idx(&e.to));
            if col[t] != usize::MAX && col[f] == usize::MAX {
                col[f] = col[t] + 1;
            }
        }
    }
    let deepest = col.iter().filter(|&&c| c != usize::MAX).max().copied().unwrap_or(0);
    for c in &mut col {
        if *c == usize::MAX {
            *c = deepest + 1;
        }
    }
    let columns = col.iter().max().copied().unwrap_or(0) + 1;
    let mut bytes = vec![0u64; names.len()];
    for e in &slice.edges {
        let t = idx(&e.to);
        bytes[t] = bytes[t].max(e.bytes);
    }
    let max_bytes = bytes.iter().copied().max().unwrap_or(1).max(1);
    let (box_w, gap_x, gap_y) = (230.0, 70.0, 18.0);
    let height_of = |b: u64| 30.0 + 40.0 * (b as f64 / max_bytes as f64).sqrt();
    let mut pos = vec![(0.0, 0.0, 0.0); names.len()];
    let mut col_y = vec![10.0; columns];
    for (i, &c) in col.iter().enumerate() {
        let x = 10.0 + (columns - 1 - c) as f64 * (box_w + gap_x);
        let hgt = height_of(bytes[i]);
        pos[i] = (x, col_y[c], hgt);
        col_y[c] += hgt + gap_y;
    }
    let width = 20.0 + columns as f64 * box_w + (columns - 1) as f64 * gap_x;
    let height = col_y.iter().copied().fold(0.0, f64::max) + 10.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"slice\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" font-size=\"11\" font-family=\"ui-monospace,Menlo,monospace\">\
         <defs><marker id=\"a\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#555\"/></marker></defs>"
    );
    for e in &slice.edges {
        let (f, t) = (idx(&e.from), idx(&e.to));
        let (fx, fy, fh) = pos[f];
        let (tx, ty, th) = pos[t];
        let (x1, y1) = (fx + box_w, fy + fh / 2.0);
        let (x2, y2) = if tx > fx { (tx, ty + th / 2.0) } else { (tx + box_w / 2.0, ty) };
        let growing = e.growth_bytes > 0;
        let _ = write!(
            s,
            "<path d=\"M{x1:.1},{y1:.1} C{:.1},{y1:.1} {:.1},{y2:.1} {x2:.1},{y2:.1}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{} marker-end=\"url(#a)\"><title>{} → {}: {} held{}</title></path>",
            x1 + 30.0,
            x2 - 30.0,
            if growing { "#b3261e" } else { "#8a90a0" },
            if growing { 2.5 } else { 1.5 },
            if growing { "" } else { " stroke-dasharray=\"5 4\"" },
            esc(&e.from),
            esc(&e.to),
            esc(&human_bytes(e.bytes)),
            if growing { format!(", grew {}", human_bytes(e.growth_bytes)) } else { String::new() }
        );
        if growing {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#b3261e\">+{}</text>",
                (x1 + x2) / 2.0,
                (y1 + y2) / 2.0 - 4.0,
                esc(&human_bytes(e.growth_bytes))
            );
        }
    }
    for (i, name) in names.iter().enumerate() {
        let (x, y, hgt) = pos[i];
        let is_candidate = *name == candidate.as_str();
        let is_container = slice.containers.iter().any(|c| c == name);
        let fill = if is_candidate {
            "#fde8e6"
        } else if is_container {
            "#fff4e0"
        } else {
            "#eef2f8"
        };
        let _ = write!(
            s,
            "<g data-class=\"{0}\"><title>{0}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{box_w}\" height=\"{hgt:.1}\" rx=\"4\" fill=\"{fill}\" stroke=\"{1}\"/>\
             <text x=\"{2:.1}\" y=\"{3:.1}\" fill=\"#1d2330\">{4}</text><text x=\"{2:.1}\" y=\"{5:.1}\" fill=\"#6b7385\">{6}</text></g>",
            esc(name),
            if is_candidate { "#b3261e" } else { "#9aa3b5" },
            x + 8.0,
            y + 17.0,
            esc(&truncate(name, 32)),
            y + 31.0,
            esc(&if bytes[i] > 0 { human_bytes(bytes[i]) } else { String::new() })
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_controls() {
        assert_eq!(esc("<script>alert('x')</script>&\""), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
        assert_eq!(esc("a\u{0}b"), "a\u{fffd}b");
    }

    #[test]
    fn charts_hold_every_point_and_escape_names() {
        let svg = line_chart(&[("<b>", &[1, 2, 3])], &["a".into(), "b".into(), "c".into()], 400, 200);
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains("&lt;b&gt;") && !svg.contains("<b>"));
    }
}
