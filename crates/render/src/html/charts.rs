//! The report's SVG: line charts of a series and the slice diagram of a growing structure,
//! drawn by hand with `maud` (escaped like the rest of the page).

use maud::{html, Markup};
use report::*;

/// The horizontal axis of the series' charts: each heap's time since the first when the
/// series has times (dump headers', or the run's clock), else its file name or `gc N`.
#[derive(Default)]
pub(super) struct Axis {
    /// One label per heap.
    pub(super) labels: Vec<String>,
    /// What each point is (its file or GC), for tooltips.
    pub(super) names: Vec<String>,
    /// What the labels count from.
    pub(super) caption: Option<String>,
}

impl Axis {
    pub(super) fn of(g: &GrowthReport) -> Axis {
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

/// A line chart of byte series over the heaps: one polyline per series, a byte axis, and
/// the heaps' labels below (their times when known).
pub(super) fn line_chart(series: &[(&str, &[u64])], axis: &Axis, width: u32, height: u32) -> Markup {
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

pub(super) fn slice_diagram(slice: &Slice) -> Markup {
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

/// Series colours, distinguishable and readable on white.
const COLORS: [&str; 8] = ["#b3261e", "#1f5fbf", "#1e7b34", "#8a4fbf", "#c77700", "#00838f", "#5d4037", "#c2185b"];

/// A number with one decimal, for SVG coordinates.
fn n1(v: f64) -> String {
    format!("{v:.1}")
}

/// A dump path's file name; a run's `gc N`, without what follows in parentheses.
pub(super) fn short_source(s: &str) -> String {
    let name = s.rsplit('/').next().unwrap_or(s);
    name.split(" (").next().unwrap_or(name).to_string()
}
