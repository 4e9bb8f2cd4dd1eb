//! Judging one volume series: Cork's ratio ranking (on kept volumes by default), Cork's
//! ratio ranking as published, or its slope ranking.
//!
//! The *kept volume* at heap `i` is the smallest volume from `i` to the last heap: bytes that
//! were still there every time after. A leak only adds to it; a working set that comes and
//! goes (jitter) does not, and a cache that fills and then stays full stops adding to it.
//! Cork's weaknesses that this answers, with the tests that show them, are in
//! `docs/decisions/0006-growth-ranking.md`.

use serde::{Deserialize, Serialize};

use crate::ratio::{ratio_rank, RatioParams};
use crate::trend::Trend;

/// Which ranking to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Figure 5 on kept volumes, plus the noise and plateau tests (leakscope's default).
    #[default]
    Ratio,
    /// Figure 5 on raw volumes, exactly as published.
    Cork,
    /// The Slope Ranking Technique (section 4.2.1), as published.
    Slope,
}

impl Method {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Method::Ratio => "ratio",
            Method::Cork => "cork",
            Method::Slope => "slope",
        }
    }
}

/// How series are judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Options {
    /// The ranking.
    pub method: Method,
    /// Figure 5's knobs.
    pub ratio: RatioParams,
    /// Classes that grew less than this are never candidates.
    pub min_growth_bytes: u64,
    /// `ratio`: the robust trend's growth over the series must exceed this many times the
    /// noise (from the median absolute deviation of successive differences).
    pub noise_factor: f64,
    /// `ratio`: over the last third of the series, and over the rest, the kept volume must grow
    /// at this share of its average rate at least: else it reached a plateau, or only jumped
    /// at the end.
    pub plateau_share: f64,
    /// A series with times that spans less than this many milliseconds is not judged;
    /// `None` leaves it to the kind of input (an agent's run: [`RUN_MIN_SPAN_MS`]; dumps: 0).
    pub min_span_ms: Option<u64>,
    /// For sampled snapshots (an agent's run), the mean sampling interval in bytes: a class's
    /// growth must then exceed the sampling error of its first and last volumes
    /// ([`sampling_error`]), not only the fixed minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_interval: Option<u64>,
    /// For heaps taken after equal rounds of work (a leak test's rounds): a class or structure
    /// whose kept bytes grew by at least this much at every step is a candidate whatever its
    /// rank ([`steady_growth`]); a few bytes a run of a test's body is a leak there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_heap_bytes: Option<u64>,
}

/// How long an agent's run must be observed before growth is judged: a service's warm-up
/// (pools, caches, compiled code filling) grows too. Tomcat under steady traffic had
/// `byte[]` growing over its first 20 s, and nothing after.
pub const RUN_MIN_SPAN_MS: u64 = 60_000;

impl Default for Options {
    fn default() -> Self {
        Options {
            method: Method::Ratio,
            ratio: RatioParams::default(),
            min_growth_bytes: 64 << 10,
            noise_factor: 4.0,
            plateau_share: 0.25,
            min_span_ms: None,
            sampling_interval: None,
            per_heap_bytes: None,
        }
    }
}

/// Sampling intervals a class must grow by before it can be a candidate.
pub const SAMPLES_FOR_GROWTH: u64 = 8;

/// The 95 % sampling error (two standard errors) of a live volume of `bytes` estimated from
/// allocations sampled every `interval` bytes on average: each sample of an object smaller
/// than the interval stands for about one interval and their number is Poisson, so the
/// standard error is √(bytes × interval). Objects bigger than the interval are sampled almost
/// surely, so for them this overstates the error.
pub fn sampling_error(bytes: u64, interval: u64) -> u64 {
    (2.0 * (bytes as f64 * interval as f64).sqrt()).round() as u64
}

impl Options {
    /// These options for sampled snapshots taken at mean sampling `interval` bytes: a class's
    /// sampled volume moves in steps of about one interval and a count of samples is noisy
    /// (Poisson), so growth of fewer than [`SAMPLES_FOR_GROWTH`] intervals, or within the
    /// sampling error of the volumes it is measured between, is not judged.
    pub fn for_samples(&self, interval: u64) -> Options {
        Options {
            min_growth_bytes: self.min_growth_bytes.max(SAMPLES_FOR_GROWTH * interval),
            sampling_interval: Some(interval),
            ..*self
        }
    }

    /// Why growth from volume `first` to `last` is within the sampling error, when it is: the
    /// 95 % error of a difference of two independent estimates, 2·√(interval × (first + last)).
    /// On a steady service's walk-checked samples, `byte[]` read 1.5 MiB then 3.6 MiB (a
    /// "growth" over the 2 MiB minimum) and 2.0 MiB ten seconds later.
    fn within_sampling_error(&self, first: u64, last: u64, growth: u64) -> Option<String> {
        let interval = self.sampling_interval?;
        let error = sampling_error(first + last, interval);
        (growth <= error).then(|| format!("grew {growth} B, within the sampling error of ±{error} B"))
    }
}

/// The outcome for one series.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The rank (percentage points for ratio and cork; share of heap growth for slope).
    pub rank: f64,
    /// Growth phases at the end of the series.
    pub phases: u32,
    /// Bytes it grew by over the ranked part of the series.
    pub growth_bytes: u64,
    /// `None` for a candidate, else the first test it failed.
    pub rejected: Option<String>,
}

impl Verdict {
    /// Whether it is a candidate.
    pub fn is_candidate(&self) -> bool {
        self.rejected.is_none()
    }
}

/// The smallest volume from each heap to the last.
pub fn kept(volumes: &[u64]) -> Vec<u64> {
    let mut out = volumes.to_vec();
    for i in (0..out.len().saturating_sub(1)).rev() {
        out[i] = out[i].min(out[i + 1]);
    }
    out
}

/// Judges a class's volumes; `totals` are the heaps' total bytes (slope ranking needs them).
pub fn judge(volumes: &[u64], totals: &[u64], o: &Options) -> Verdict {
    judge_at(volumes, totals, None, o)
}

/// [`judge`] for heaps taken at uneven times: `at` gives each heap's position on a time axis
/// whose mean interval is 1 (see [`positions`]), and the `ratio` trend, noise and plateau
/// tests use rates over time instead of steps.
pub fn judge_at(volumes: &[u64], totals: &[u64], at: Option<&[f64]>, o: &Options) -> Verdict {
    match o.method {
        Method::Ratio => judge_kept(volumes, totals, at, o),
        Method::Cork => judge_cork(volumes, o),
        Method::Slope => judge_slope(volumes, totals, o),
    }
}

/// Whether an edge grows, for slices: Cork's `r_e > 0`, and for `ratio` also above its noise.
pub fn edge_grows(volumes: &[u64], totals: &[u64], o: &Options) -> Option<u64> {
    let edge = Options { ratio: RatioParams { threshold: 0.0, min_phases: 1, ..o.ratio }, ..*o };
    match o.method {
        Method::Ratio => {
            let f = Kept::of(volumes, None, &edge.ratio);
            let min = (o.min_growth_bytes / 64).max(1);
            (f.rank.rank > 0.0 && f.growth >= min && f.above_noise(o)).then_some(f.growth)
        }
        Method::Cork | Method::Slope => {
            let v = judge(volumes, totals, &edge);
            (v.rank > 0.0).then_some(v.growth_bytes)
        }
    }
}

/// Each heap's position in time, in mean intervals from the first, when the heaps' times
/// are known and spaced unevenly (one interval more than twice another); `None` otherwise,
/// and steps stand for time. Dumps taken at 1, 2 and 5 hours are at 0, 0.5 and 2.
pub fn positions(times: &[Option<u64>]) -> Option<Vec<f64>> {
    let t: Vec<f64> = times.iter().map(|t| t.map(|t| t as f64)).collect::<Option<_>>()?;
    if t.len() < 3 || t.windows(2).any(|w| w[1] <= w[0]) {
        return None;
    }
    let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    let (min, max) = gaps.iter().fold((f64::MAX, 0f64), |(a, b), &g| (a.min(g), b.max(g)));
    if max <= 2.0 * min {
        return None;
    }
    let mean = (t[t.len() - 1] - t[0]) / gaps.len() as f64;
    Some(t.iter().map(|x| (x - t[0]) / mean).collect())
}

/// Where the last unbroken presence of the series starts.
pub(crate) fn span_start(volumes: &[u64]) -> usize {
    volumes.iter().rposition(|&v| v == 0).map_or(0, |z| z + 1)
}

/// What the `ratio` tests look at: the kept volumes, Figure 5 over them, where the last
/// unbroken presence starts, the kept growth since then, and the robust trend of the volumes.
struct Kept {
    k: Vec<u64>,
    rank: crate::ratio::RatioRank,
    start: usize,
    growth: u64,
    trend: Trend,
}

impl Kept {
    fn of(volumes: &[u64], at: Option<&[f64]>, p: &RatioParams) -> Kept {
        let k = kept(volumes);
        let rank = ratio_rank(&k, p);
        let start = span_start(&k).min(k.len().saturating_sub(1));
        let growth = k.last().copied().unwrap_or(0).saturating_sub(k.get(start).copied().unwrap_or(0));
        let trend = match at {
            Some(x) => Trend::fit_at(&volumes[start..], &x[start..]),
            None => Trend::fit(&volumes[start..]),
        };
        Kept { k, rank, start, growth, trend }
    }

    /// The robust trend's growth over the last `w` intervals, when they hold three points or
    /// more. For sampled volumes, the kept rise compares one noisy estimate with a minimum over
    /// many: on a full cache sampled at 64 KiB, the last of 17 estimates read 0.66 MiB over
    /// that minimum while the last third had no trend at all. (A dump's volumes are exact: its
    /// last one is no such outlier, and a trend over a few of them is the noisier judge.)
    fn recent_trend(&self, volumes: &[u64], at: Option<&[f64]>, w: usize) -> Option<f64> {
        let from = volumes.len().checked_sub(w + 1)?.max(self.start);
        (volumes.len() - from >= 3).then(|| {
            match at {
                Some(x) => Trend::fit_at(&volumes[from..], &x[from..]),
                None => Trend::fit(&volumes[from..]),
            }
            .growth()
        })
    }

    fn above_noise(&self, o: &Options) -> bool {
        self.trend.growth() > o.noise_factor * self.trend.noise
    }
}

/// Series of at most this many heaps are too short for Figure 5's rank and the noise tests:
/// with the paper's threshold, a class must grow by a third at each of two steps to pass (a
/// session registry that went 60 k → 80 k → 100 k sessions scored 83), while a working set
/// that swung from 0.5 to 1.9 MiB over three heaps scored 318. Such a series is judged by what
/// so few heaps can show instead ([`steady_growth`]); longer series as before.
pub const SHORT_SERIES: usize = 4;

/// In a short series, what a structure (or a class on its own) must keep gaining to be a
/// candidate: this share of the last heap's live bytes (and `min_growth_bytes`).
pub const SHORT_SERIES_SHARE: f64 = 0.005;

/// Under steady growth no step is smaller than this share of the biggest one, counted per
/// heap or per unit of time: a leak under steady work keeps its pace, a warm-up slows down,
/// and a working set that rose twice by chance rarely rose evenly (5 % of random triples do,
/// against 10 % at a quarter).
const STEADY_STEP_SHARE: f64 = 0.5;

/// Whether a series of `heaps` exact volumes is judged by steady growth alone.
pub fn is_short(heaps: usize, o: &Options) -> bool {
    o.method == Method::Ratio && o.sampling_interval.is_none() && o.per_heap_bytes.is_none() && heaps <= SHORT_SERIES
}

/// What a short series makes significant: [`SHORT_SERIES_SHARE`] of the last heap, and at
/// least `min_growth_bytes`.
pub(crate) fn short_floor(totals: &[u64], o: &Options) -> u64 {
    let share = (SHORT_SERIES_SHARE * totals.last().copied().unwrap_or(0) as f64) as u64;
    o.min_growth_bytes.max(share)
}

/// Whether a volume series grew at every step at a steady pace, whatever its size: in a short
/// series, the classes whose places are searched for a growing structure (the structure is
/// then judged by all it holds, [`is_short`]).
pub fn grows_steadily(volumes: &[u64], at: Option<&[f64]>, o: &Options) -> bool {
    let k = kept(volumes);
    let start = span_start(&k).min(k.len().saturating_sub(1));
    steady_growth(&k, start, at, o.ratio.min_phases, SteadyFloor { step: 1, total: 1 }).is_ok()
}

/// In a short series that named nothing: how its live heap grew steadily by what the heaps
/// make significant, when it did (the heaps' live bytes, as a sentence); then no candidate is
/// not a verdict of "no leak" yet. `None` for a longer series, or a heap that did not.
pub fn unexplained_heap_growth(totals: &[u64], at: Option<&[f64]>, o: &Options) -> Option<String> {
    if !is_short(totals.len(), o) {
        return None;
    }
    steady_growth(&kept(totals), 0, at, o.ratio.min_phases, SteadyFloor { step: 1, total: short_floor(totals, o) })
        .ok()?;
    let steps: Vec<String> = totals.iter().map(|&t| report::human_bytes(t)).collect();
    Some(format!(
        "the live heap grew at every step ({}), but no structure or class grew steadily enough over {} heaps to be named; a heap taken after the same interval again would tell a leak from a warm-up",
        steps.join(" → "),
        totals.len()
    ))
}

/// The least a steadily growing series must gain: at each step, and over the series.
#[derive(Debug, Clone, Copy)]
struct SteadyFloor {
    step: u64,
    total: u64,
}

/// Whether kept volumes `k` grew steadily from `start`: at every one of at least `min_steps`
/// steps, each by `floor.step` or more, no step under [`STEADY_STEP_SHARE`] of the biggest
/// (per heap, or per unit of time at uneven times: either pace), and by `floor.total` over
/// the series. `Err` says which test failed.
fn steady_growth(
    k: &[u64],
    start: usize,
    at: Option<&[f64]>,
    min_steps: u32,
    floor: SteadyFloor,
) -> Result<(), String> {
    let steps = k.len().saturating_sub(start + 1);
    if steps < min_steps.max(1) as usize {
        return Err(format!("present in {} heaps: it cannot grow over {} steps", steps + 1, min_steps.max(1)));
    }
    let gains: Vec<f64> = (start + 1..k.len()).map(|i| k[i] as f64 - k[i - 1] as f64).collect();
    let even = |v: &[f64]| {
        let (least, most) = v.iter().fold((f64::MAX, 0f64), |(a, b), &r| (a.min(r), b.max(r)));
        least >= STEADY_STEP_SHARE * most
    };
    let rates: Option<Vec<f64>> =
        at.map(|x| (start + 1..k.len()).map(|i| gains[i - start - 1] / (x[i] - x[i - 1])).collect());
    let listed: Vec<String> = gains.iter().map(|g| format!("{g:.0}")).collect();
    let listed = listed.join(", ");
    let total = k[k.len() - 1].saturating_sub(k[start]);
    if gains.iter().any(|&g| g < floor.step as f64) {
        Err(format!("its kept bytes did not grow by {} B at every step (steps of {listed} B)", floor.step))
    } else if !even(&gains) && !rates.as_deref().is_some_and(even) {
        Err(format!(
            "its steps ({listed} B) are uneven, one under half another, as a warm-up slows or a working set swings"
        ))
    } else if total < floor.total {
        Err(format!("grew {total} B at a steady pace, below the {} B these heaps make significant", floor.total))
    } else {
        Ok(())
    }
}

fn judge_kept(volumes: &[u64], totals: &[u64], at: Option<&[f64]>, o: &Options) -> Verdict {
    let f = Kept::of(volumes, at, &o.ratio);
    let verdict = |rejected| Verdict { rank: f.rank.rank, phases: f.rank.phases, growth_bytes: f.growth, rejected };
    // A short series is judged by steady growth alone: the rank and the tests below need more heaps.
    if is_short(volumes.len(), o) {
        let floor = SteadyFloor { step: 1, total: short_floor(totals, o) };
        return verdict(
            steady_growth(&f.k, f.start, at, o.ratio.min_phases, floor)
                .err()
                .map(|why| format!("{} heaps, judged by steady growth: {why}", volumes.len())),
        );
    }
    let (k, growth, trend) = (&f.k, f.growth, f.trend);
    let n = k.len();
    let steps = n.saturating_sub(1 + f.start);
    let w = steps.div_ceil(3).max(1);
    let recent = if steps > 0 { k[n - 1] - k[n - 1 - w] } else { 0 };
    // The share of the span the last `w` intervals cover: w / steps, or their share of time.
    let late = match at {
        Some(x) if steps > 0 => (x[n - 1] - x[n - 1 - w]) / (x[n - 1] - x[f.start]),
        _ => w as f64 / steps.max(1) as f64,
    };
    let ends = (volumes[f.start.min(n.saturating_sub(1))], volumes.last().copied().unwrap_or(0));
    let rejected = common_tests(f.rank.phases, f.rank.rank, growth, o).or_else(|| {
        if let Some(why) = o.within_sampling_error(ends.0, ends.1, growth) {
            return Some(why);
        }
        let wanted = o.plateau_share * growth as f64 * late;
        if (recent as f64) < wanted {
            Some(format!("stopped growing (kept volume grew {recent} B over the last {w} intervals)"))
        } else if let Some(rise) =
            o.sampling_interval.and_then(|_| f.recent_trend(volumes, at, w)).filter(|&r| r < wanted)
        {
            Some(format!(
                "stopped growing (the trend of the last {w} intervals is {rise:.0} B; the kept volume's rise of {recent} B is its last point's noise)"
            ))
        } else if !f.above_noise(o) {
            Some(format!(
                "within its own fluctuation (trend {:.0} B over the series ≤ {} × noise {:.0} B)",
                trend.growth(),
                o.noise_factor,
                trend.noise
            ))
        } else if ((growth - recent) as f64) < o.plateau_share * growth as f64 * (1.0 - late) {
            Some(format!("grew only lately ({recent} of {growth} B in the last {w} intervals): not yet a trend"))
        } else {
            None
        }
    });
    // A leak test's rounds: steady growth of a few bytes a run is a leak whatever the rank.
    let rejected = match (rejected, o.per_heap_bytes) {
        (Some(why), Some(step)) => {
            let floor = SteadyFloor { step: step.max(1), total: 0 };
            match steady_growth(k, f.start, at, o.ratio.min_phases, floor) {
                Ok(()) => None,
                Err(steady) => Some(format!("{why}; nor did it grow steadily: {steady}")),
            }
        }
        (rejected, _) => rejected,
    };
    verdict(rejected)
}

fn judge_cork(volumes: &[u64], o: &Options) -> Verdict {
    let r = ratio_rank(volumes, &o.ratio);
    let s = span_start(volumes).min(volumes.len().saturating_sub(1));
    let growth = volumes.last().copied().unwrap_or(0).saturating_sub(volumes.get(s).copied().unwrap_or(0));
    Verdict {
        rank: r.rank,
        phases: r.phases,
        growth_bytes: growth,
        rejected: common_tests(r.phases, r.rank, growth, o).or_else(|| {
            o.within_sampling_error(volumes.get(s).copied().unwrap_or(0), volumes.last().copied().unwrap_or(0), growth)
        }),
    }
}

fn common_tests(phases: u32, rank: f64, growth: u64, o: &Options) -> Option<String> {
    if phases < o.ratio.min_phases {
        Some(format!("{phases} growth phases (needs {})", o.ratio.min_phases))
    } else if rank <= o.ratio.threshold {
        Some(format!("rank {rank:.0} ≤ threshold {}", o.ratio.threshold))
    } else if growth < o.min_growth_bytes {
        Some(format!("grew {growth} B, below the minimum of {} B", o.min_growth_bytes))
    } else {
        None
    }
}

/// Section 4.2.1: `r_i = r_{i−1} + p_i · s_i / S_i` where the slopes share the allocation
/// axis, so `s_i / S_i` is the class's share of the heap's change; `p` counts growth phases.
fn judge_slope(volumes: &[u64], totals: &[u64], o: &Options) -> Verdict {
    let s = span_start(volumes);
    let (mut rank, mut grew, mut shrank) = (0.0, 0u32, 0u32);
    for i in s + 1..volumes.len() {
        let dv = volumes[i] as f64 - volumes[i - 1] as f64;
        let dt = totals[i] as f64 - totals[i - 1] as f64;
        if dv > 0.0 {
            grew += 1;
        } else if dv < 0.0 {
            shrank += 1;
        }
        if dt != 0.0 {
            rank += f64::from(grew) * dv / dt;
        }
    }
    let growth = volumes.last().copied().unwrap_or(0).saturating_sub(volumes.get(s).copied().unwrap_or(0));
    let rejected = if grew <= shrank {
        Some(format!("grew in {grew} intervals and shrank in {shrank}"))
    } else if rank <= 0.0 {
        Some(format!("rank {rank:.3} ≤ 0"))
    } else if growth < o.min_growth_bytes {
        Some(format!("grew {growth} B, below the minimum of {} B", o.min_growth_bytes))
    } else {
        None
    };
    Verdict { rank, phases: grew, growth_bytes: growth, rejected }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    fn opts(method: Method) -> Options {
        Options { method, ..Options::default() }
    }

    fn totals(n: usize) -> Vec<u64> {
        (0..n as u64).map(|i| 100 * MB + i * MB).collect()
    }

    #[test]
    fn sampled_growth_within_its_sampling_error_is_no_candidate() {
        let o = opts(Method::Ratio).for_samples(256 << 10);
        // A steady service's walk-checked byte[] estimates (issue 17): 1.5 → 3.6 MiB reads as
        // 2.1 MiB of growth, within the ±2.3 MiB of a difference of such estimates.
        let noisy = [1536 << 10, 2 * MB, 2662 << 10, 3 * MB, 3686 << 10];
        let v = judge(&noisy, &totals(5), &o);
        assert!(v.rejected.as_deref().is_some_and(|r| r.contains("sampling error")), "{v:?}");
        assert!(judge(&noisy, &totals(5), &opts(Method::Ratio)).rejected.is_none(), "exact volumes: a leak");
        // Four times the volume grows four times as much, and its error only twice.
        let leak: Vec<u64> = noisy.iter().map(|v| 4 * v).collect();
        assert_eq!(judge(&leak, &totals(5), &o).rejected, None);
    }

    #[test]
    fn a_sampled_full_cache_is_judged_by_its_recent_trend_not_its_last_estimate() {
        // `Live cache` under the agent at 64 KiB: byte[] estimates of walk-checked snapshots
        // (ms from the first). The cache filled in the first second; the last estimate is
        // 0.66 MiB above the minimum of those before it, as sampling noise goes.
        let v = [
            2429864, 2692552, 5582120, 5844808, 5582120, 4794056, 4531368, 5056744, 5516448, 5713464, 5844808, 6173168,
            5319432, 6041824, 5122416, 5582120, 5779136,
        ];
        let ms = [0, 19, 924, 1231, 1550, 1857, 2167, 3074, 4288, 4598, 5814, 6151, 6757, 8553, 13099, 13718, 22806];
        let at = positions(&ms.map(Some)).unwrap();
        let sampled = opts(Method::Ratio).for_samples(64 << 10);
        let verdict = judge_at(&v, &totals(v.len()), Some(&at), &sampled);
        assert!(verdict.rejected.as_deref().is_some_and(|r| r.contains("trend of the last")), "{verdict:?}");
        // A session map leaking over the same kind of run stays a candidate: the last third of
        // its estimates rises.
        let leak: Vec<u64> = (0..24u64).map(|i| 262_192 + i * 370_000 + (i % 3) * 65_536).collect();
        let even = judge(&leak, &totals(leak.len()), &sampled);
        assert_eq!(even.rejected, None);
    }

    #[test]
    fn uneven_times_judge_rates_not_steps() {
        // A session leak dumped at hours 1, 2 and 5: a steady rate, though the steps are not.
        let v = [6 * MB, 8 * MB + MB / 2, 23 * MB + 2 * MB / 5];
        let o = opts(Method::Ratio);
        let steps = judge(&v, &totals(3), &o);
        assert!(steps.rejected.as_deref().unwrap_or("").contains("uneven"), "{steps:?}");
        let at = positions(&[Some(3_600_000), Some(7_200_000), Some(18_000_000)]).unwrap();
        assert_eq!(at, vec![0.0, 0.5, 2.0]);
        assert!(judge_at(&v, &totals(3), Some(&at), &o).is_candidate());
        // Evenly spaced, unknown or unordered times leave steps alone.
        assert_eq!(positions(&[Some(1), Some(2), Some(3)]), None);
        assert_eq!(positions(&[Some(1), None, Some(9)]), None);
        assert_eq!(positions(&[Some(5), Some(2), Some(9)]), None);
    }

    #[test]
    fn kept_is_the_suffix_minimum() {
        assert_eq!(kept(&[5, 3, 4, 2, 6]), vec![2, 2, 2, 2, 6]);
        assert_eq!(kept(&[]), Vec::<u64>::new());
    }

    #[test]
    fn a_linear_leak_is_found_by_all_three() {
        let v: Vec<u64> = (0..8).map(|i| 4 * MB + i * 2 * MB).collect();
        for m in [Method::Ratio, Method::Cork, Method::Slope] {
            let verdict = judge(&v, &totals(8), &opts(m));
            assert!(verdict.is_candidate(), "{m:?}: {verdict:?}");
        }
    }

    #[test]
    fn a_filled_cache_stops_being_reported_but_cork_keeps_it() {
        let v = [2 * MB, 6 * MB, 10 * MB, 12 * MB, 12 * MB, 12 * MB, 12 * MB, 12 * MB];
        let ours = judge(&v, &totals(8), &opts(Method::Ratio));
        assert!(ours.rejected.as_deref().unwrap().starts_with("stopped growing"), "{ours:?}");
        assert!(judge(&v, &totals(8), &opts(Method::Cork)).is_candidate(), "Cork's rank never decays");
        // While it is still filling, it is reported: the plateau is not yet known.
        assert!(judge(&v[..4], &totals(4), &opts(Method::Ratio)).is_candidate());
    }

    #[test]
    fn a_slow_leak_under_heavy_jitter_is_found_where_cork_resets() {
        // 0.5 MB leaked per interval, under a working set of the same class that swings at random
        // by up to 2 MB, four times as much: 40 such series of 12 heaps.
        let found = |m: Method| {
            (1..=40u64)
                .filter(|&seed| {
                    let v: Vec<u64> = swings(12, 2 * MB, seed)
                        .iter()
                        .enumerate()
                        .map(|(i, s)| MB / 4 + i as u64 * MB / 2 + s)
                        .collect();
                    judge(&v, &totals(12), &opts(m)).is_candidate()
                })
                .count()
        };
        let (ours, cork) = (found(Method::Ratio), found(Method::Cork));
        assert!(ours >= 36, "found {ours} of 40");
        assert!(cork + 8 <= ours, "Cork's rank resets on drops beyond f: {cork} of 40, ours {ours}");
    }

    /// Uniform pseudo-random swings in `0..max` (a fixed xorshift sequence per seed).
    fn swings(n: usize, max: u64, seed: u64) -> Vec<u64> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % max
            })
            .collect()
    }

    #[test]
    fn jitter_alone_is_not_a_leak() {
        for n in [5, 8, 12, 20] {
            let false_alarms = (1..=40u64)
                .filter(|&seed| {
                    let v: Vec<u64> = swings(n, 4 * MB, seed).iter().map(|s| 10 * MB + s).collect();
                    judge(&v, &totals(v.len()), &opts(Method::Ratio)).is_candidate()
                })
                .count();
            assert!(false_alarms <= 1, "{n} heaps: {false_alarms} of 40 noise series reported");
        }
        // Alternating phases: the heap rises and falls.
        let v: Vec<u64> = (0..10).map(|i| if i % 2 == 0 { 10 * MB } else { 30 * MB }).collect();
        assert!(!judge(&v, &totals(10), &opts(Method::Ratio)).is_candidate());
    }

    #[test]
    fn first_appearance_and_small_growth_are_not_reported() {
        let o = opts(Method::Ratio);
        assert!(!judge(&[0, 0, 10 * MB], &totals(3), &o).is_candidate());
        assert!(!judge(&[0, MB, 30 * MB], &totals(3), &o).is_candidate(), "one phase after appearing");
        assert!(judge(&[0, MB, 30 * MB, 60 * MB], &totals(4), &o).is_candidate());
        let tiny: Vec<u64> = (1..8).map(|i| i * 1000).collect();
        assert!(judge(&tiny, &totals(7), &o).rejected.unwrap().contains("minimum"));
    }

    #[test]
    fn slope_ranking_is_the_classs_share_of_heap_growth() {
        let o = opts(Method::Slope);
        // The class makes all of the heap's growth: each step adds p × 1.
        let v: Vec<u64> = (0..4).map(|i| MB + i * MB).collect();
        let t: Vec<u64> = (0..4).map(|i| 10 * MB + i * MB).collect();
        let verdict = judge(&v, &t, &o);
        assert!((verdict.rank - (1.0 + 2.0 + 3.0)).abs() < 1e-9, "{verdict:?}");
    }

    proptest::proptest! {
        #[test]
        fn scaling_volumes_does_not_change_ratio_ranks(v in proptest::collection::vec(1u64..1000, 2..12), k in 1u64..50) {
            let o = Options { min_growth_bytes: 0, ..opts(Method::Ratio) };
            let a = judge(&v, &totals(v.len()), &o);
            let scaled: Vec<u64> = v.iter().map(|x| x * k).collect();
            let b = judge(&scaled, &totals(v.len()), &o);
            proptest::prop_assert!((a.rank - b.rank).abs() < 1e-6 * a.rank.abs().max(1.0));
            proptest::prop_assert_eq!(a.is_candidate(), b.is_candidate());
        }

        #[test]
        fn a_series_that_never_rises_is_never_a_candidate(mut v in proptest::collection::vec(0u64..1 << 30, 1..12)) {
            v.sort_unstable_by(|a, b| b.cmp(a));
            for m in [Method::Ratio, Method::Cork, Method::Slope] {
                proptest::prop_assert!(!judge(&v, &totals(v.len()), &opts(m)).is_candidate());
            }
        }

        #[test]
        fn kept_volume_never_exceeds_the_volume_and_never_falls(v in proptest::collection::vec(0u64..1000, 0..20)) {
            let k = kept(&v);
            proptest::prop_assert!(k.iter().zip(&v).all(|(a, b)| a <= b));
            proptest::prop_assert!(k.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
