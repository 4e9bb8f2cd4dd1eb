//! The leak report as one self-contained HTML file: no script, no network, no external
//! resource, so it opens offline and can be attached to a bug. Charts are inline SVG, trees
//! are `<details>` elements. Every string that came from a heap (class, field and file names,
//! and values when asked for) is attacker-controlled text in a hostile dump: the page is
//! built with `maud`, which escapes every interpolation unless it is marked pre-escaped (only
//! the constant style sheets and a few `&nbsp;`s are), and [`scrub`] replaces control
//! characters in the finished page.

use maud::{display, html, Markup, PreEscaped, DOCTYPE};

use report::*;

mod charts;
use charts::{line_chart, short_source, slice_diagram, Axis};

/// Replaces control characters other than newline and tab, which would make the XML of an
/// inline SVG invalid; the page's own markup holds none, so this touches only heap text.
fn scrub(page: String) -> String {
    if !page.chars().any(is_bad_control) {
        return page;
    }
    page.chars().map(|c| if is_bad_control(c) { '\u{fffd}' } else { c }).collect()
}

fn is_bad_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\n' | '\t')
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
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
details{margin-left:16px}details>summary{cursor:pointer;margin-left:-16px}.tree{font-size:13px}
.muted{color:#6b7385}.note{color:#6b7385;font-size:13px}svg{max-width:100%;height:auto}div.scroll{overflow-x:auto}div.scroll svg.slice{max-width:none}
.path li{list-style:none}.path{padding-left:8px}.cand{border-left:4px solid #b3261e;padding-left:12px;margin:12px 0}
nav a{color:#c9cfdb;margin-right:14px;font-size:13px}
";

impl crate::Html for LeakReport {
    fn to_html(&self) -> String {
        page(self, false)
    }

    fn to_served_html(&self) -> String {
        page(self, true)
    }
}

/// "s" unless there is exactly one.
fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn page(r: &LeakReport, served: bool) -> String {
    let title = match (&r.growth, &r.heap) {
        (Some(g), _) => format!("leakscope report: {}", count(g.snapshots.len() as u64, g.snapshot_noun())),
        (None, Some(v)) => format!("leakscope report: {}", v.source),
        (None, None) => "leakscope report".to_string(),
    };
    let csp = format!(
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:{}",
        if served { "; script-src 'self'; connect-src 'self'" } else { "" }
    );
    let browse = served && r.heap.is_some();
    let compare = served && r.growth.as_ref().is_some_and(|g| g.snapshots.len() >= 2);
    let sections = [
        ("growth", "Growth", r.growth.is_some()),
        ("compare", "Compare", compare),
        ("classes", "Biggest classes", !r.class_curves.is_empty()),
        ("suspects", "Suspects", r.heap.is_some()),
        ("dominators", "Dominator tree", r.heap.is_some()),
        ("grouping", "Grouping", browse),
        ("roots", "Roots", r.heap.is_some()),
        ("histogram", "Histogram", r.heap.is_some()),
    ];
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                meta http-equiv="Content-Security-Policy" content=(csp);
                title { (title) }
                style { (PreEscaped(STYLE)) @if served { (PreEscaped(SERVED_STYLE)) } }
                @if served { script src="/app.js" defer {} }
            }
            body {
                header {
                    h1 { (title) }
                    p { (r.inputs.join(", ")) }
                    nav {
                        @for (anchor, label, shown) in sections {
                            @if shown { a href={ "#" (anchor) } { (label) } }
                        }
                    }
                    @if browse {
                        form id="search" role="search" {
                            input id="q" type="search" placeholder="Find a class, or an object by 0x id"
                                aria-label="Search" autocomplete="off";
                            button type="submit" { "Search" }
                        }
                    }
                }
                main {
                    @if !r.incomplete.is_empty() {
                        section id="incomplete" {
                            p.verdict.leak {
                                "Incomplete input: " (r.incomplete.len()) " of the heaps " @if r.incomplete.len() == 1 { "was" } @else { "were" }
                                " not read whole, and what was not read may hold a leak: no verdict below is one of \"no leak\"."
                            }
                            ul { @for i in &r.incomplete { li.mono { (i) } } }
                        }
                    }
                    @if browse {
                        section id="inspect" hidden {
                            h2 { "Inspector" }
                            p id="status" class="note" {}
                            div id="results" {}
                            div id="detail" {}
                        }
                    }
                    @if let Some(g) = &r.growth { (growth_section(g)) }
                    @if let (Some(g), true) = (&r.growth, compare) { (compare_section(g)) }
                    @if !r.class_curves.is_empty() {
                        section id="classes" {
                            h2 { "Biggest classes over the series" }
                            (line_chart(
                                &r.class_curves.iter().map(|c| (c.class.as_str(), c.volumes.as_slice())).collect::<Vec<_>>(),
                                &r.growth.as_ref().map(Axis::of).unwrap_or_default(),
                                860,
                                300,
                            ))
                        }
                    }
                    @if let Some(v) = &r.heap { (heap_sections(v, r.show_values, served)) }
                    @if !r.notes.is_empty() {
                        section {
                            h2 { "Notes" }
                            ul { @for n in &r.notes { li.note { (n) } } }
                        }
                    }
                    p.note {
                        "Written by leakscope " (env!("CARGO_PKG_VERSION")) ". "
                        @if r.show_values {
                            "String contents are shown (--show-values): this page may hold secrets."
                        } @else {
                            "No string or array contents are included; pass --show-values to include strings."
                        }
                    }
                }
            }
        }
    };
    scrub(markup.into_string())
}

fn growth_section(g: &GrowthReport) -> Markup {
    let labels = Axis::of(g);
    let noun = g.snapshot_noun();
    let leaders: Vec<&Candidate> = g.candidates.iter().filter(|c| c.same_structure_as.is_none()).collect();
    let heaps = g.snapshots.len();
    let r = &g.ranking;
    let totals: Vec<u64> = g.snapshots.iter().map(|s| s.total_bytes).collect();
    html! {
        section id="growth" {
            h2 { "Growth" }
            @if let Some(f) = g.findings.first() {
                p.verdict.leak {
                    (g.findings.len()) " growing data structure" (plural(g.findings.len())) " found over " (heaps)
                    " " (noun) (plural(heaps)) ". Most likely: " span.mono { (f.structure) }
                    (crate::growth::finding_beside(f)) " grew " (human_bytes(f.growth_bytes))
                    @if let Some(e) = &f.element { ", holding " span.mono { (e) } }
                    "."
                }
            } @else if let (Some(why), true) = (&g.not_enough_data, leaders.is_empty()) {
                p.verdict { "Not enough data yet to judge growth: " (why) "." }
            } @else if leaders.is_empty() && !g.incomplete.is_empty() {
                p.verdict.leak {
                    "No growing data structure found in what was read, but " (g.incomplete.len()) " of the " (heaps) " "
                    (noun) (plural(heaps)) " could not be read whole: this is no verdict of no leak."
                }
            } @else if leaders.is_empty() {
                p.verdict.ok { "No growing data structure found over " (heaps) " " (noun) (plural(heaps)) "." }
            } @else {
                p.verdict.leak {
                    (leaders.len()) " growing data structure" (plural(leaders.len())) " found over " (heaps)
                    " " (noun) (plural(heaps)) ". Most likely: " span.mono { (leaders[0].class) }
                }
            }
            p.note { (crate::growth::ranking_line(r)) "." }
            h3 { "Heap occupancy" }
            (line_chart(&[("all objects", &totals)], &labels, 860, 220))
            @if let Some(c) = &labels.caption { p.note.axis { (c) } }
            @for l in &g.loader_leaks { (loader_leak(l, &labels)) }
            @for (i, f) in g.findings.iter().enumerate() {
                (finding(i + 1, f, &labels))
                @if let Some(l) = g.leaked_loader_of(f) {
                    p.note {
                        "Its class is one of the " (thousands(l.copies.last().copied().unwrap_or(0)))
                        " leaked copies loaded by " span.mono { (l.loader) } ", above."
                    }
                }
            }
            @if !g.findings.is_empty() && !g.candidates.is_empty() {
                h3 { "Growing classes (Cork's ranking)" }
            }
            @for c in &g.candidates { (candidate(c, &labels)) }
            @for n in &g.notes { p.note { (n) } }
            @if let Some(x) = g.expected_dead.as_ref().filter(|x| x.expectations > 0) { (expected_dead(x)) }
        }
    }
}

/// The comparison view of `leakscope serve`: a baseline and a current heap picked from the
/// series; `/app.js` fetches `/api/compare` and fills `#comparison`.
fn compare_section(g: &GrowthReport) -> Markup {
    let axis = Axis::of(g);
    let last = g.snapshots.len() - 1;
    let option = |i: usize, selected: bool| {
        let label = match (&axis.caption, axis.labels.get(i), axis.names.get(i)) {
            (Some(_), Some(t), Some(n)) => format!("{n} ({t})"),
            (_, _, Some(n)) => n.clone(),
            _ => i.to_string(),
        };
        html! { option value=(i) selected[selected] { (label) } }
    };
    html! {
        section id="compare" {
            h2 { "Compare two " (g.snapshot_noun()) "s" }
            form id="compare-form" {
                label { "baseline " select id="baseline" { @for i in 0..last { (option(i, i == 0)) } } }
                " "
                label { "current " select id="current" { @for i in 1..=last { (option(i, i == last)) } } }
                " "
                button type="submit" { "Compare" }
            }
            div id="comparison" {}
        }
    }
}

/// A class-loader leak: copies of one application per heap, what holds them, what they retain.
fn loader_leak(l: &LoaderLeak, labels: &Axis) -> Markup {
    html! {
        div.cand.finding {
            h3 {
                "Class-loader leak: " (thousands(l.copies.last().copied().unwrap_or(0))) " copies of "
                span.mono { (l.classes.first().map_or("?", String::as_str)) }
            }
            p {
                (thousands(l.class_count)) " classes per copy, loaded by " span.mono { (l.loader) }
                @if let Some(b) = l.retained_bytes {
                    "; the " (thousands(l.stale)) " stale copies retain " (human_bytes(b)) " together"
                }
            }
            (line_chart(&[("copies", &l.copies)], labels, 560, 160))
            @for p in &l.held_by {
                h4 { (thousands(p.count)) " of them kept alive by" }
                (path_list(&p.root.plain(), &p.steps))
            }
        }
    }
}

/// A growing structure: its path, what piles up in it, where below it, and its holders.
fn finding(n: usize, f: &Finding, labels: &Axis) -> Markup {
    let series: Vec<(&str, &[u64])> =
        f.members.iter().take(4).map(|m| (m.class.as_str(), m.volumes.as_slice())).collect();
    html! {
        div.cand.finding {
            h3 { "#" (n) " " span.mono { (f.structure) } " " span.muted.mono { (crate::growth::finding_beside(f)) } }
            p {
                "grew " (human_bytes(f.growth_bytes)) " (" (human_bytes(crate::growth::first_present(&f.volumes)))
                " → " (human_bytes(f.volumes.last().copied().unwrap_or(0))) ")"
                @if let Some(e) = &f.element { ", holding " span.mono { (e) } }
            }
            p.mono.path {
                @for (i, p) in f.path.iter().enumerate() {
                    @if i > 0 { " → " }
                    (p.via) " " span.mono { (p.class) }
                }
            }
            (line_chart(&series, labels, 560, 180))
            table {
                tr { th { "what piles up" } th.n { "grew" } th.n { "instances now" } }
                @for m in &f.members {
                    tr {
                        td.mono data-class=(m.class) { (m.class) }
                        td.n { (human_bytes(m.growth_bytes)) }
                        td.n { (thousands(m.instances.last().copied().unwrap_or(0))) }
                    }
                }
            }
            @if let Some(m) = f.members.first() {
                h4 { "Where " span.mono { (m.class) } " grows below it" }
                table {
                    tr { th { "path" } @for l in &labels.labels { th.n { (l) } } }
                    @for g in &f.growing_paths {
                        tr {
                            td.mono {
                                @for (i, p) in g.path.iter().enumerate() {
                                    @if i > 0 { " → " }
                                    (p.via) " " (p.class)
                                }
                            }
                            @for v in &g.instances { td.n { (thousands(*v)) } }
                        }
                    }
                }
            }
            @for s in &f.holders {
                h4 {
                    "Holder " span.mono { (s.holder.class) " " (display(s.holder.id)) } " retains "
                    (human_bytes(s.holder.retained_bytes)) ", holds " (format!("{:.0}", s.share * 100.0)) "% of them"
                }
                (path_list(&s.holder.root.as_ref().map(PathRoot::plain).unwrap_or_default(), &s.holder.path))
            }
        }
    }
}

fn candidate(c: &Candidate, labels: &Axis) -> Markup {
    let first = c.volumes.first().copied().unwrap_or(0);
    let last = c.volumes.last().copied().unwrap_or(0);
    html! {
        div.cand {
            h3.mono data-class=(c.class) { (c.class) }
            p {
                "rank " (format!("{:.0}", c.rank)) ", " (c.phases) " growth phases, grew " (human_bytes(c.growth_bytes))
                " (" (human_bytes(first)) " → " (human_bytes(last)) ", "
                (thousands(c.instances.last().copied().unwrap_or(0))) " instances now)"
            }
            @if let Some(other) = &c.same_structure_as {
                p.muted { "Grows in the same data structure as " span.mono { (other) } "." }
            } @else {
                (line_chart(&[(c.class.as_str(), &c.volumes)], labels, 560, 180))
                @if !c.slice.edges.is_empty() {
                    h3 { "Slice: what holds it" }
                    div.scroll { (slice_diagram(&c.slice)) }
                }
                @if !c.slice.containers.is_empty() {
                    p {
                        "Contained in: "
                        @for (i, s) in c.slice.containers.iter().enumerate() {
                            @if i > 0 { ", " }
                            span.mono { (s) }
                        }
                    }
                }
                @for holder in &c.holders {
                    h3 {
                        "Holder " span.mono { (holder.class) " " (display(holder.id)) } " retains "
                        (human_bytes(holder.retained_bytes))
                    }
                    (path_list(&holder.root.as_ref().map(PathRoot::plain).unwrap_or_default(), &holder.path))
                }
                @if !c.allocation_sites.is_empty() {
                    h3 { "Allocated at" }
                    ul { @for s in &c.allocation_sites { li.mono { (crate::site(s)) @if let Some(stack) = crate::site_stack(s) { br; small { (stack) } } } } }
                }
            }
        }
    }
}

/// Objects declared dead with `LeakScope.expectDead` that are still reachable.
fn expected_dead(x: &ExpectationsReport) -> Markup {
    html! {
        h3 id="expected-dead" { "Declared dead, still reachable" }
        p {
            (thousands(x.expectations)) " declared dead, " (thousands(x.collected)) " collected, "
            b { (thousands(x.reachable.len() as u64)) } " still reachable"
            @if x.unchecked > 0 { ", " (thousands(x.unchecked)) " not checked yet" }
            "."
        }
        @if !x.groups.is_empty() {
            table {
                tr {
                    th.n { "objects" } th { "class" } th { "declared dead at" } th.n { "oldest" } th.n { "newest" }
                    th { "referenced by" }
                }
                @for g in &x.groups {
                    tr {
                        td.n { (thousands(g.count)) }
                        td.mono data-class=(g.class) { (g.class) }
                        td.mono {
                            (g.site)
                            @for other in &g.other_sites { br; (other) }
                            @if g.sites > 1 + g.other_sites.len() as u64 {
                                br; "(" (g.sites - 1 - g.other_sites.len() as u64) " more)"
                            }
                        }
                        td.n { (human_ms(g.oldest_ms_ago)) }
                        td.n { (human_ms(g.newest_ms_ago)) }
                        td.mono { (g.held_by.join(", ")) }
                    }
                }
            }
            p.note { "Paths and retained sizes: " span.mono { "leakscope check PID" } "." }
        }
    }
}

/// A path in its readable form ([`report::readable`]), from `root` (in plain words).
fn path_list(root: &str, path: &[PathStep]) -> Markup {
    if path.is_empty() {
        return html! {};
    }
    let r = report::readable(root, path);
    html! {
        ul.path.mono {
            li { (r.from) }
            @for (i, s) in r.steps.iter().enumerate() {
                li {
                    (PreEscaped("&nbsp;&nbsp;".repeat(i + 1)))
                    (s.field.as_deref().unwrap_or_default()) " → "
                    span data-class=(s.class) { (s.class) } " " span.muted data-id=(display(s.id)) { (display(s.id)) }
                }
            }
        }
    }
}

fn heap_sections(v: &HeapView, show_values: bool, served: bool) -> Markup {
    html! {
        section id="suspects" {
            h2 { "Leak suspects in " (short_source(&v.source)) }
            p.muted { (human_bytes(v.live_bytes)) " live (reachable from GC roots)." }
            @if let Some(why) = &v.suspects_refused {
                p.verdict.leak { (why) }
            } @else if v.suspects.suspects.is_empty() {
                p {
                    "No object or class retains " (format!("{:.0}", v.suspects.threshold * 100.0))
                    "% or more of the live heap."
                }
            }
            @for s in &v.suspects.suspects {
                div.cand {
                    h3 { (s.title) }
                    p { "retains " (human_bytes(s.retained_bytes)) " (" (format!("{:.1}", s.share * 100.0)) "% of live)" }
                    (path_list(&s.root, &s.path))
                    @if let Some(ds) = &s.data_structure { p { "Accumulates in " span.mono { (ds) } } }
                    @if !s.contents.is_empty() {
                        table {
                            tr { th { "class" } th.n { "objects" } th.n { "shallow" } }
                            @for a in &s.contents { (class_row(&a.class, a.count, a.shallow_bytes)) }
                        }
                    }
                }
            }
        }
        section id="dominators" {
            h2 { "Dominator tree" }
            p.muted { "Each object with what it alone keeps alive (retained), biggest first. Click to expand." }
            @if served {
                div id="domtree" class="tree" {}
            } @else {
                div.tree { @for n in &v.dominator_tree { (dom_node(n, show_values, true)) } }
            }
        }
        @if served {
            section id="grouping" {
                h2 { "Grouping" }
                p.muted {
                    "All objects grouped by classifiers in order (AntTracks' classification tree): class, package, \
                     loader, hierarchy, directly-rooted, indirectly-rooted. Deep is what a group reaches, retained \
                     what freeing the whole group would give back."
                }
                form id="groupby" {
                    label { "Group by " input id="by" value="package,class" size="40" aria-label="Classifiers"; }
                    " "
                    button type="submit" { "Group" }
                }
                div id="grouptree" class="tree" {}
            }
        }
        (roots_section(&v.roots))
        section id="histogram" {
            h2 { "Histogram" }
            table {
                tr { th { "class" } th.n { "instances" } th.n { "shallow" } }
                @for r in &v.histogram.classes { (class_row(&r.name, r.instances, r.shallow_bytes)) }
                tr {
                    th { "total" }
                    th.n { (thousands(v.histogram.total_instances)) }
                    th.n { (human_bytes(v.histogram.total_shallow_bytes)) }
                }
            }
        }
    }
}

/// A table row: a class, how many objects, their shallow bytes.
fn class_row(class: &str, objects: u64, bytes: u64) -> Markup {
    html! {
        tr { td.mono data-class=(class) { (class) } td.n { (thousands(objects)) } td.n { (human_bytes(bytes)) } }
    }
}

fn dom_node(n: &DomNode, show_values: bool, open: bool) -> Markup {
    let o = &n.object;
    let name = o.represents.as_ref().map_or_else(|| o.class.clone(), |c| format!("class {c}"));
    let label = html! {
        span.mono { (name) } " " span.muted { (display(o.id)) }
        @if let (Some(v), true) = (&n.value, show_values) { " " span.muted { "\"" (v) "\"" } }
        " — retains " b { (human_bytes(o.retained_bytes)) } " (" (format!("{:.1}", o.share * 100.0)) "%), shallow "
        (human_bytes(o.shallow_bytes))
    };
    html! {
        @if n.nodes.is_empty() {
            div {
                (label)
                @if o.children > 0 { " " span.muted { "(" (thousands(o.children)) " dominated)" } }
            }
        } @else {
            details open[open] {
                summary { (label) }
                @for c in &n.nodes { (dom_node(c, show_values, false)) }
                @if n.more > 0 { div.muted { "… " (thousands(n.more)) " more" } }
            }
        }
    }
}

fn roots_section(r: &RootsReport) -> Markup {
    html! {
        section id="roots" {
            h2 { "Reachability per root" }
            h3 { "By root kind" }
            table {
                tr { th { "kind" } th.n { "roots" } th.n { "reachable" } th.n { "retained" } }
                @for k in &r.kinds {
                    tr {
                        td { (k.kind) }
                        td.n { (thousands(k.roots)) }
                        td.n { (human_bytes(k.bytes.reachable_bytes)) }
                        td.n { (human_bytes(k.bytes.retained_bytes)) }
                    }
                }
            }
            @if !r.statics.is_empty() {
                h3 { "Static fields" }
                table {
                    tr { th { "field" } th { "holds" } th.n { "reachable" } th.n { "retained" } }
                    @for s in &r.statics {
                        tr {
                            td.mono { (s.field) }
                            td.mono { (s.class) " " span.muted { (display(s.id)) } }
                            td.n { (human_bytes(s.bytes.reachable_bytes)) }
                            td.n { (human_bytes(s.bytes.retained_bytes)) }
                        }
                    }
                }
                @if r.more_statics > 0 { p.muted { "… " (thousands(r.more_statics)) " more static fields" } }
            }
            @if !r.threads.is_empty() {
                h3 { "Threads" }
                @for t in &r.threads {
                    details {
                        summary {
                            (t.label) " " span.muted { @if let Some(id) = t.id { (display(id)) } }
                            " — reachable " (human_bytes(t.bytes.reachable_bytes)) ", retained "
                            (human_bytes(t.bytes.retained_bytes))
                        }
                        table {
                            @for f in &t.frames {
                                tr {
                                    td.n { (f.depth) }
                                    td.mono { (f.method) }
                                    td.n { (thousands(f.objects)) " objects" }
                                    td.n { (human_bytes(f.bytes.retained_bytes)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
