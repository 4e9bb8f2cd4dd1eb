//! Text, HTML and Graphviz for people, from the result models of the `report` crate: one
//! trait per kind of output, implemented for each model that has that output. Only the
//! binary depends on this crate; the engines and the JVM agent never link it.

mod expect;
mod group;
mod growth;
mod histogram;
mod html;
mod info;
mod object;
mod paths;
mod retention;
mod roots;
mod share;
mod stale;
mod suspects;
mod top;

pub use growth::signed_bytes;
pub use histogram::HistogramText;

/// An allocation site: the application's frame (else the innermost) and its volumes.
fn site(s: &report::AllocationSite) -> String {
    let at = s.application_frame.or((!s.frames.is_empty()).then_some(0)).and_then(|i| s.frames.get(i));
    format!(
        "{} ({} live, {} allocated)",
        at.map_or("(no frame)", |f| f.as_str()),
        report::human_bytes(s.live_bytes),
        report::human_bytes(s.allocated_bytes)
    )
}

/// The frames of an allocation site inside the JDK and frameworks, below the application's
/// frame (innermost first), or why there is no application frame; `None` when the
/// application allocates directly.
fn site_stack(s: &report::AllocationSite) -> Option<String> {
    match s.application_frame {
        Some(0) => None,
        Some(i) => Some(format!("through {}", s.frames[..i].join(" <- "))),
        None if s.frames.len() > 1 => Some(format!(
            "called from {}; no application frame in the {} frames recorded (an agent's run records more with --depth)",
            s.frames[1..].join(" <- "),
            s.frames.len()
        )),
        None => None,
    }
}

/// Writes a path from a root in its readable form ([`report::readable`]): `head` and the
/// first line at `indent`, then one line per step, each a level deeper when `staircase`.
fn path_text(o: &mut String, head: &str, root: &str, steps: &[report::PathStep], indent: &str, staircase: bool) {
    use std::fmt::Write;
    let r = report::readable(root, steps);
    let _ = writeln!(o, "{indent}{head}{}", r.from);
    for (i, s) in r.steps.iter().enumerate() {
        let deeper = "  ".repeat(if staircase { i + 1 } else { 1 });
        let _ = writeln!(o, "{indent}{deeper}{} -> {} {}", s.field.as_deref().unwrap_or_default(), s.class, s.id);
    }
}

/// What an empty candidate list means: no growth, or no verdict yet (`why` there is none).
fn no_candidate(why: Option<&str>) -> String {
    match why {
        Some(why) => format!("Not enough data yet to judge growth: {why}"),
        None => "No growing class: nothing is a leak candidate".into(),
    }
}

/// A model as text for people.
pub trait Text {
    /// The text, lines ending in newlines.
    fn to_text(&self) -> String;
}

/// A model as text for people, with an option (the rows shown, or how a histogram is laid out).
pub trait TextWith<O> {
    /// The text, lines ending in newlines.
    fn to_text(&self, options: O) -> String;
}

/// A growth report's slices as a Graphviz graph.
pub trait Dot {
    /// The `digraph`, with the slices of the first `top` candidates.
    fn to_dot(&self, top: usize) -> String;
}

/// The leak report as HTML.
pub trait Html {
    /// One self-contained HTML document, without script.
    fn to_html(&self) -> String;
    /// The page `leakscope serve` shows: the same report, with the dominator tree, a grouping
    /// tree and an object inspector browsed through the server's JSON API by `/app.js`.
    fn to_served_html(&self) -> String;
}
