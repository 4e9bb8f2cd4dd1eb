//! The live view of a JVM the agent records (`leakscope top`): per class, the estimated live
//! and allocated bytes, and the growth candidates so far.

use std::path::Path;

use crate::Result;

/// One refresh from the run store at `path`.
pub fn top_view(path: &Path) -> Result<report::TopView> {
    let run = crate::series::read_run(path)?;
    let growth = crate::series::run_report(&run, &growth::Options::default(), &[]);
    let last = run.samples.last();
    let interval = crate::series::sampling_interval(&run);
    let live = crate::series::live_snapshot(&run);
    // The rate over at least a second: a walk's snapshot follows the sample before it within
    // milliseconds, and the two allocated totals are the same (issue 17: "alloc/s 0 B").
    let time = |i: usize| run.samples[i].time_ms.unwrap_or(0);
    let (prev_alloc, dt) = match (run.samples.len(), run.allocated.len()) {
        (n, m) if n >= 2 && m == n => {
            let before = (0..n - 1).rev().find(|&i| time(n - 1).saturating_sub(time(i)) >= 1_000).unwrap_or(0);
            (Some(&run.allocated[before]), time(n - 1).saturating_sub(time(before)))
        }
        _ => (None, 0),
    };
    let mut classes: Vec<report::TopClass> = live
        .map(|s| {
            s.classes
                .iter()
                .map(|c| {
                    let allocated = run.allocated.last().and_then(|a| a.get(&c.name)).copied().unwrap_or(0);
                    let before = prev_alloc.and_then(|a| a.get(&c.name)).copied().unwrap_or(allocated);
                    let per_s = (allocated.saturating_sub(before) * 1000).checked_div(dt).unwrap_or(0);
                    report::TopClass {
                        name: c.name.clone(),
                        live_bytes: c.bytes,
                        live_error_bytes: growth::sampling_error(c.bytes, interval),
                        live_instances: c.instances,
                        allocated_bytes: allocated,
                        allocated_bytes_per_s: per_s,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    classes.sort_by(|a, b| b.live_bytes.cmp(&a.live_bytes).then(b.allocated_bytes.cmp(&a.allocated_bytes)));
    let candidates = growth::headline_candidates(&growth);
    Ok(report::TopView {
        source: path.display().to_string(),
        pid: run.meta.get("pid").and_then(|p| p.parse().ok()),
        command: run.meta.get("command").cloned().unwrap_or_default(),
        gc_count: last.and_then(|s| s.gc_count).unwrap_or(0),
        time_ms: last.and_then(|s| s.time_ms).unwrap_or(0),
        live_bytes: live.map_or(0, |s| s.total_bytes),
        live_error_bytes: growth::sampling_error(live.map_or(0, |s| s.total_bytes), interval),
        live_source: live.map(|s| s.source.clone()).unwrap_or_default(),
        live_time_ms: live.and_then(|s| s.time_ms).unwrap_or(0),
        walks: run.walks.len(),
        walked_bytes: run.walks.last().map(|w| w.total_bytes),
        walked_time_ms: run.walks.last().and_then(|w| w.time_ms),
        longest_pause_ms: run.pauses_ms.iter().copied().fold(0.0, f64::max),
        status: run.meta.get("status").cloned().unwrap_or_else(|| "running".into()),
        classes,
        candidates,
        not_enough_data: growth.not_enough_data,
        walk_blocked: crate::series::walk_blocked(&run).map(String::from),
    })
}
