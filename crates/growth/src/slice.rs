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
    report::Slice { classes, edges, containers }
}
