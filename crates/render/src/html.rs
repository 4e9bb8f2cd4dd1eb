//! The leak report as one self-contained HTML file: no script, no network, no external
//! resource, so it opens offline and can be attached to a bug. Charts are inline SVG, trees
//! are `<details>` elements. Every string that came from a heap (class, field and file names,
//! and values when asked for) is attacker-controlled text in a hostile dump: the page is
//! built with `maud`, which escapes every interpolation unless it is marked pre-escaped (only
//! the constant style sheets and a few `&nbsp;`s are), and [`scrub`] replaces control
//! characters in the finished page.

use maud::{display, html, Markup, PreEscaped, DOCTYPE};

use report::*;

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

/// A number with one decimal, for SVG coordinates.
fn n1(v: f64) -> String {
    format!("{v:.1}")
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
            } @else if leaders.is_empty() {
                p.verdict.ok { "No growing data structure found over " (heaps) " " (noun) (plural(heaps)) "." }
            } @else {
                p.verdict.leak {
                    (leaders.len()) " growing data structure" (plural(leaders.len())) " found over " (heaps)
                    " " (noun) (plural(heaps)) ". Most likely: " span.mono { (leaders[0].class) }
                }
            }
            p.note {
                "Ranking: " (r.method) " (decay " (format!("{:.0}", r.decay * 100.0)) "%, threshold " (r.threshold)
                ", at least " (r.min_phases) " phases, growth at least " (human_bytes(r.min_growth_bytes)) ")."
            }
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

/// The horizontal axis of the series' charts: each heap's time since the first when the
/// series has times (dump headers', or the run's clock), else its file name or `gc N`.
#[derive(Default)]
struct Axis {
    /// One label per heap.
    labels: Vec<String>,
    /// What each point is (its file or GC), for tooltips.
    names: Vec<String>,
    /// What the labels count from.
    caption: Option<String>,
}

impl Axis {
    fn of(g: &GrowthReport) -> Axis {
        let names: Vec<String> = g.snapshots.iter().map(|s| short_source(&s.source)).collect();
        match (g.time_labels(), g.time_span()) {
            (Some(labels), Some(span)) => Axis {
                labels,
                names,
                caption: Some(format!("Time axis: since the first {}, {span}.", g.snapshot_noun())),
            },
            _ => Axis { labels: names.clone(), names, caption: None },
        }
    }
}

/// A dump path's file name; a run's `gc N`, without what follows in parentheses.
fn short_source(s: &str) -> String {
    let name = s.rsplit('/').next().unwrap_or(s);
    name.split(" (").next().unwrap_or(name).to_string()
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
                "grew " (human_bytes(f.growth_bytes)) " (" (human_bytes(f.volumes.first().copied().unwrap_or(0)))
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
            @if v.suspects.suspects.is_empty() {
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

/// A line chart of byte series over the heaps: one polyline per series, a byte axis, and
/// the heaps' labels below (their times when known).
fn line_chart(series: &[(&str, &[u64])], axis: &Axis, width: u32, height: u32) -> Markup {
    let labels = &axis.labels;
    let n = series.iter().map(|s| s.1.len()).max().unwrap_or(0);
    let max = series.iter().flat_map(|s| s.1.iter().copied()).max().unwrap_or(0).max(1);
    let (left, right, top, bottom) = (78.0, 60.0, 12.0, 34.0 + 16.0 * series.len().min(8) as f64);
    let (w, ht) = (f64::from(width), f64::from(height) + 16.0 * series.len().min(8) as f64);
    let plot_w = w - left - right;
    let plot_h = ht - top - bottom;
    let x = |i: usize| left + if n > 1 { plot_w * i as f64 / (n - 1) as f64 } else { plot_w / 2.0 };
    let y = |v: u64| top + plot_h * (1.0 - v as f64 / max as f64);
    // About 100 pixels per label.
    let step = n.div_ceil(((plot_w / 100.0) as usize).max(2)).max(1);
    let shown = |i: usize| i + 1 == n || (i.is_multiple_of(step) && n - 1 - i >= step.div_ceil(2));
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox={ "0 0 " (w) " " (ht) } width=(w) height=(ht) role="img"
            font-size="11" font-family="system-ui,sans-serif" {
            @for k in 0..=4u64 {
                @let v = max / 4 * k;
                line x1=(left) x2=(w - right) y1=(n1(y(v))) y2=(n1(y(v))) stroke="#eceef2" {}
                text x=(left - 6.0) y=(n1(y(v) + 4.0)) text-anchor="end" fill="#6b7385" { (human_bytes(v)) }
            }
            @for (i, l) in labels.iter().enumerate().take(n) {
                @if shown(i) {
                    text x=(n1(x(i))) y=(n1(top + plot_h + 16.0)) text-anchor="middle" fill="#6b7385" { (truncate(l, 16)) }
                }
            }
            @for (k, (name, values)) in series.iter().enumerate() {
                @let color = COLORS[k % COLORS.len()];
                @let points: Vec<String> = values.iter().enumerate().map(|(i, &v)| format!("{},{}", n1(x(i)), n1(y(v)))).collect();
                polyline fill="none" stroke=(color) stroke-width="2" points=(points.join(" ")) { title { (name) } }
                @for (i, &v) in values.iter().enumerate() {
                    circle cx=(n1(x(i))) cy=(n1(y(v))) r="3" fill=(color) {
                        title {
                            (name) ": " (human_bytes(v))
                            @if let Some(at) = axis.names.get(i) { " in " (at) }
                            @if let Some(t) = axis.labels.get(i).filter(|_| axis.caption.is_some()) { " (" (t) ")" }
                        }
                    }
                }
                @if k < 8 {
                    @let ly = top + plot_h + 34.0 + 16.0 * k as f64;
                    rect x=(left) y=(n1(ly - 4.0)) width="12" height="4" fill=(color) {}
                    text x=(left + 18.0) y=(n1(ly + 1.0)) fill="#1d2330" {
                        (truncate(name, 90)) " — " (human_bytes(values.last().copied().unwrap_or(0)))
                    }
                }
            }
        }
    }
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
/// Edge `k`'s place among the edges that share its end `end` (its source or target), and
/// how many share it.
fn slot<'e>(edges: &'e [SliceEdge], k: usize, end: impl Fn(&'e SliceEdge) -> &'e String) -> (usize, usize) {
    let mine = end(&edges[k]);
    let before = edges[..k].iter().filter(|e| end(e) == mine).count();
    (before, edges.iter().filter(|e| end(e) == mine).count())
}

/// Characters of a class name a slice box shows in full.
const NAME_CHARS: usize = 72;

fn slice_diagram(slice: &Slice) -> Markup {
    let Some(candidate) = slice.classes.first() else {
        return html! {};
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
    // Each column as wide as its longest name (11 px monospace: about 6.7 px a character), so
    // that names are not cut; the gaps leave room for the edges' labels.
    let (gap_x, gap_y, char_w) = (96.0, 18.0, 6.7);
    let mut col_w = vec![120.0f64; columns];
    for (i, &c) in col.iter().enumerate() {
        col_w[c] = col_w[c].max(16.0 + char_w * names[i].chars().count().min(NAME_CHARS) as f64);
    }
    let mut col_x = vec![10.0; columns];
    for c in (0..columns.saturating_sub(1)).rev() {
        col_x[c] = col_x[c + 1] + col_w[c + 1] + gap_x;
    }
    let height_of = |b: u64| 30.0 + 40.0 * (b as f64 / max_bytes as f64).sqrt();
    let mut pos = vec![(0.0, 0.0, 0.0, 0.0); names.len()];
    let mut col_y = vec![10.0; columns];
    for (i, &c) in col.iter().enumerate() {
        let hgt = height_of(bytes[i]);
        pos[i] = (col_x[c], col_y[c], hgt, col_w[c]);
        col_y[c] += hgt + gap_y;
    }
    let width = col_x[0] + col_w[0] + 10.0;
    let height = col_y.iter().copied().fold(0.0, f64::max) + 10.0;
    html! {
        svg xmlns="http://www.w3.org/2000/svg" class="slice" viewBox={ "0 0 " (width) " " (height) } width=(width)
            height=(height) font-size="11" font-family="ui-monospace,Menlo,monospace" {
            defs {
                marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7"
                    orient="auto-start-reverse" {
                    path d="M0,0L10,5L0,10z" fill="#555" {}
                }
            }
            @for (k, e) in slice.edges.iter().enumerate() {
                @let (fx, fy, fh, fw) = pos[idx(&e.from)];
                @let (tx, ty, th, tw) = pos[idx(&e.to)];
                // Edges leaving (entering) one box are spread over its side, so that neither
                // their lines nor their labels sit on one another.
                @let (out_k, out_n) = slot(&slice.edges, k, |x| &x.from);
                @let (in_k, in_n) = slot(&slice.edges, k, |x| &x.to);
                @let (x1, y1) = (fx + fw, fy + fh * (out_k + 1) as f64 / (out_n + 1) as f64);
                @let (x2, y2) = if tx > fx {
                    (tx, ty + th * (in_k + 1) as f64 / (in_n + 1) as f64)
                } else {
                    (tx + tw * (in_k + 1) as f64 / (in_n + 1) as f64, ty)
                };
                @let growing = e.growth_bytes > 0;
                path d=(format!("M{x1:.1},{y1:.1} C{:.1},{y1:.1} {:.1},{y2:.1} {x2:.1},{y2:.1}", x1 + 30.0, x2 - 30.0))
                    fill="none" stroke=(if growing { "#b3261e" } else { "#8a90a0" })
                    stroke-width=(if growing { 2.5 } else { 1.5 })
                    stroke-dasharray=[(!growing).then_some("5 4")] marker-end="url(#a)" {
                    title {
                        (e.from) " → " (e.to) ": " (human_bytes(e.bytes)) " held"
                        @if growing { ", grew " (human_bytes(e.growth_bytes)) }
                    }
                }
                @if growing {
                    // At the edge's start, on a halo, so that it crosses neither a box nor another label's line.
                    text x=(n1(x1 + 6.0)) y=(n1(y1 - 3.0)) fill="#b3261e" stroke="#fff" stroke-width="3"
                        paint-order="stroke" {
                        "+" (human_bytes(e.growth_bytes))
                    }
                }
            }
            @for (i, name) in names.iter().enumerate() {
                @let (x, y, hgt, box_w) = pos[i];
                @let is_candidate = *name == candidate.as_str();
                @let fill = if is_candidate {
                    "#fde8e6"
                } else if slice.containers.iter().any(|c| c == name) {
                    "#fff4e0"
                } else {
                    "#eef2f8"
                };
                g data-class=(name) {
                    title { (name) }
                    rect x=(n1(x)) y=(n1(y)) width=(box_w) height=(n1(hgt)) rx="4" fill=(fill)
                        stroke=(if is_candidate { "#b3261e" } else { "#9aa3b5" }) {}
                    text x=(n1(x + 8.0)) y=(n1(y + 17.0)) fill="#1d2330" { (truncate(name, NAME_CHARS)) }
                    text x=(n1(x + 8.0)) y=(n1(y + 31.0)) fill="#6b7385" {
                        @if bytes[i] > 0 { (human_bytes(bytes[i])) }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_replacement_characters() {
        assert_eq!(scrub("a\u{0}b\nc\td\u{1b}".into()), "a\u{fffd}b\nc\td\u{fffd}");
    }

    #[test]
    fn charts_hold_every_point_and_escape_names() {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let axis = Axis { labels: names.clone(), names, caption: None };
        let svg = line_chart(&[("<b>", &[1, 2, 3])], &axis, 400, 200).into_string();
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains("&lt;b&gt;") && !svg.contains("<b>"));
    }
}
