//! Cork's slice (section 4.3): from a candidate class along growing points-from edges to
//! the classes that hold it, up to the data structures that contain the growth.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::series::Series;

/// Bounds that keep a slice readable on heaps with thousands of classes.
const MAX_CLASSES: usize = 48;
const MAX_EDGES: usize = 160;

/// Growing edges by referent class: `to` → `(edge index, growth bytes)`.
pub(crate) type Holders<'a> = FxHashMap<&'a str, Vec<(usize, u64)>>;

/// The growing edges of `series` by referent class, most growth first.
pub(crate) fn growing_holders<'a>(series: &'a Series, o: &crate::Options) -> Holders<'a> {
    let mut holders: Holders<'a> = FxHashMap::default();
    for (i, e) in series.edges.iter().enumerate() {
        if let Some(g) = crate::ranking::edge_grows(&e.bytes, &series.totals, o) {
            holders.entry(e.to.as_str()).or_default().push((i, g));
        }
    }
    for list in holders.values_mut() {
        list.sort_by_key(|b| std::cmp::Reverse(b.1));
    }
    holders
}

/// For each referent class, its biggest referrers in the last heap: those holding at least a
/// quarter of its biggest edge, biggest first (with their bytes in place of growth).
pub(crate) fn heaviest_holders(series: &Series) -> Holders<'_> {
    let mut holders: Holders<'_> = FxHashMap::default();
    for (i, e) in series.edges.iter().enumerate() {
        let last = e.bytes.last().copied().unwrap_or(0);
        if last > 0 {
            holders.entry(e.to.as_str()).or_default().push((i, last));
        }
    }
    for list in holders.values_mut() {
        list.sort_by_key(|b| std::cmp::Reverse(b.1));
        let top = list[0].1;
        list.retain(|b| b.1 * 4 >= top);
    }
    holders
}

/// The slice of `candidate` over the growing `holders`.
pub(crate) fn slice(series: &Series, holders: &Holders<'_>, candidate: &str) -> report::Slice {
    let mut classes = vec![candidate.to_string()];
    let mut depth = vec![0usize];
    let mut edges = Vec::new();
    let mut queue = VecDeque::from([(candidate, 0usize)]);
    while let Some((class, d)) = queue.pop_front() {
        for &(e, growth) in holders.get(class).into_iter().flatten() {
            let edge = &series.edges[e];
            if edges.len() >= MAX_EDGES {
                break;
            }
            edges.push(report::SliceEdge {
                from: edge.from.clone(),
                to: edge.to.clone(),
                bytes: edge.bytes.last().copied().unwrap_or(0),
                growth_bytes: growth,
                field: None,
            });
            if !classes.contains(&edge.from) && classes.len() < MAX_CLASSES {
                classes.push(edge.from.clone());
                depth.push(d + 1);
                queue.push_back((&edge.from, d + 1));
            }
        }
    }
    let held_from_outside = |c: &str| holders.get(c).into_iter().flatten().any(|&(e, _)| series.edges[e].from != c);
    let mut containers: Vec<String> = classes.iter().filter(|c| !held_from_outside(c)).cloned().collect();
    if containers.is_empty() {
        // A cycle of growing classes with no way out: report the farthest ones.
        let far = depth.iter().copied().max().unwrap_or(0);
        containers = classes.iter().zip(&depth).filter(|(_, &d)| d == far).map(|(c, _)| c.clone()).collect();
    }
    report::Slice { classes, edges, containers, structure: None, not_known: None }
}
