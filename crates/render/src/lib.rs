//! Text, HTML and Graphviz for people, from the result models of the `report` crate: one
//! trait per kind of output, implemented for each model that has that output. Only the
//! binary depends on this crate; the engines and the JVM agent never link it.

mod expect;
mod group;
mod growth;
mod histogram;
mod html;
mod info;
mod paths;
mod retention;
mod roots;
mod stale;
mod suspects;
mod top;

pub use growth::signed_bytes;
pub use histogram::HistogramText;

/// An allocation site on one line: its frames, innermost first, and its volumes.
fn site(s: &report::AllocationSite) -> String {
    format!(
        "{} ({} live, {} allocated)",
        s.frames.join(" <- "),
        report::human_bytes(s.live_bytes),
        report::human_bytes(s.allocated_bytes)
    )
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
