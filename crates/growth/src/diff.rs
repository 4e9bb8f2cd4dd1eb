//! Two heaps compared class by class and edge by edge.

use crate::series::Series;
use crate::summary::HeapSummary;

/// Per-class and per-edge deltas from `old` to `new`, biggest changes first.
pub fn diff(old: &HeapSummary, new: &HeapSummary) -> report::DiffReport {
    let series = Series::new(&[old.clone(), new.clone()]);
    let mut classes: Vec<report::ClassDelta> = series
        .classes
        .iter()
        .map(|c| report::ClassDelta {
            class: c.name.clone(),
            old_instances: c.instances[0],
            new_instances: c.instances[1],
            old_bytes: c.bytes[0],
            new_bytes: c.bytes[1],
            delta_bytes: c.bytes[1] as i64 - c.bytes[0] as i64,
            delta_instances: c.instances[1] as i64 - c.instances[0] as i64,
        })
        .filter(|d| d.delta_bytes != 0 || d.delta_instances != 0)
        .collect();
    classes.sort_by(|a, b| b.delta_bytes.abs().cmp(&a.delta_bytes.abs()).then(a.class.cmp(&b.class)));
    let mut edges: Vec<report::EdgeDelta> = series
        .edges
        .iter()
        .map(|e| report::EdgeDelta {
            from: e.from.clone(),
            to: e.to.clone(),
            old_bytes: e.bytes[0],
            new_bytes: e.bytes[1],
            delta_bytes: e.bytes[1] as i64 - e.bytes[0] as i64,
        })
        .filter(|d| d.delta_bytes != 0)
        .collect();
    edges.sort_by(|a, b| b.delta_bytes.abs().cmp(&a.delta_bytes.abs()).then(a.from.cmp(&b.from)));
    let notes = match (&old.process, &new.process) {
        (Some(a), Some(b)) if crate::same_process(a, b) == Some(false) => {
            let mains = match (&a.main_class, &b.main_class) {
                (Some(x), Some(y)) if x != y => format!(" (main classes {x} and {y})"),
                _ => String::new(),
            };
            vec![format!(
                "the two heaps come from two JVM processes{mains}: another program or a restart, so the difference is not one process's growth"
            )]
        }
        _ => Vec::new(),
    };
    report::DiffReport { old: snapshot_row(old), new: snapshot_row(new), classes, edges, notes }
}

/// How a report names one heap.
pub(crate) fn snapshot_row(h: &HeapSummary) -> report::SnapshotRow {
    report::SnapshotRow {
        source: h.source.clone(),
        total_bytes: h.total_bytes,
        total_instances: h.total_instances,
        time_ms: h.time_ms,
    }
}
