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
    let error = Error::of(&run, interval);
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
                        live_error_bytes: error.of_class(&c.name, c.bytes),
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
        live_error_bytes: error.of_total(live.map_or(0, |s| s.total_bytes)),
        biased_sampler: error.biased.then(|| BIASED_SAMPLER_NOTE.to_string()),
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

/// How far HotSpot's heap sampler before JDK 25 can be off over the change since the last
/// walk: its share of that change that the stated error adds (JDK-8356372: a thread that
/// allocates outside its TLAB has the objects about its refills sampled too often, others too
/// rarely). Measured on a Tomcat shop on JDK 17 with request threads whose TLABs shrank below
/// a 48 KiB page: the sampled growth was 1.5 to 2.2 times the JVM's histogram's (1.0 with
/// `-XX:-ResizeTLAB -XX:TLABSize=512k`, and on JDK 25); 0.6 of it covers 2.5 times.
const BIASED_SAMPLER_SHARE: f64 = 0.6;

/// What `top` says of a JVM whose sampler is biased.
const BIASED_SAMPLER_NOTE: &str = "this JVM's heap sampler (HotSpot before JDK 25, JDK-8356372) favours the objects a \
     thread allocates about its TLAB refills: ± includes 60 % of the change since the last heap walk";

/// The 95 % error of a live estimate: the samples' own (Poisson) error and, on a JVM whose
/// sampler is biased, a share of the change since the last walk, which counted exactly.
struct Error<'r> {
    interval: u64,
    biased: bool,
    walked: Option<&'r growth::HeapSummary>,
}

impl<'r> Error<'r> {
    fn of(run: &'r runstore::Run, interval: u64) -> Error<'r> {
        let biased = run.meta.get("jvm").is_some_and(|v| biased_sampler(v));
        Error { interval, biased, walked: run.walks.last() }
    }

    fn of_class(&self, name: &str, bytes: u64) -> u64 {
        let walked = self.walked.and_then(|w| w.classes.iter().find(|c| c.name == name)).map_or(0, |c| c.bytes);
        self.with_bias(bytes, walked)
    }

    fn of_total(&self, bytes: u64) -> u64 {
        self.with_bias(bytes, self.walked.map_or(0, |w| w.total_bytes))
    }

    fn with_bias(&self, bytes: u64, walked: u64) -> u64 {
        let sampling = growth::sampling_error(bytes, self.interval);
        if !self.biased {
            return sampling;
        }
        sampling + (BIASED_SAMPLER_SHARE * bytes.abs_diff(walked) as f64).round() as u64
    }
}

/// Whether the JVM whose `java.vm.version` this is samples allocations with HotSpot's sampler
/// before its fix in JDK 25 (JDK 11 to 24; another VM's version does not start with its
/// feature release, so it is not taken for one).
fn biased_sampler(vm_version: &str) -> bool {
    let feature = vm_version.split(|c: char| !c.is_ascii_digit()).next().and_then(|f| f.parse::<u32>().ok());
    feature.is_some_and(|f| (11..25).contains(&f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hotspot_before_25_has_the_biased_sampler() {
        assert!(biased_sampler("17.0.15+6-Debian-1deb12u1"));
        assert!(biased_sampler("21.0.5+11-LTS"));
        assert!(!biased_sampler("25.0.1+8-LTS"));
        assert!(!biased_sampler("openj9-0.46.0"));
        assert!(!biased_sampler(""));
    }
}
