//! A robust trend of a volume series (Theil–Sen), for the ranking's noise tests.

/// A robust trend of a series: the Theil–Sen slope (the median of all pairwise slopes, blind to
/// a few wild points), and the noise, estimated from successive differences (their median
/// absolute deviation, scaled to a standard deviation of one point), which a trend does not
/// inflate and a short series does not overfit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Trend {
    /// Growth per step (per mean interval, for [`Trend::fit_at`]).
    pub(crate) slope: f64,
    /// The noise of one point.
    pub(crate) noise: f64,
    /// Steps fitted.
    pub(crate) steps: usize,
}

/// Longer series are fitted on their most recent points (the fit is quadratic in the length).
const MAX_FIT: usize = 160;

impl Trend {
    pub(crate) fn fit(v: &[u64]) -> Trend {
        let v = &v[v.len().saturating_sub(MAX_FIT)..];
        let n = v.len();
        let mut slopes = Vec::with_capacity(n * n.saturating_sub(1) / 2);
        for i in 0..n {
            for j in i + 1..n {
                slopes.push((v[j] as f64 - v[i] as f64) / (j - i) as f64);
            }
        }
        let slope = median(&mut slopes);
        let mut diffs: Vec<f64> = v.windows(2).map(|w| w[1] as f64 - w[0] as f64).collect();
        let mid = median(&mut diffs);
        let mut dev: Vec<f64> = diffs.iter().map(|d| (d - mid).abs()).collect();
        // MAD × 1.4826 estimates a standard deviation; a difference of two points has √2 of one.
        let noise = median(&mut dev) * 1.4826 / std::f64::consts::SQRT_2;
        Trend { slope, noise, steps: n.saturating_sub(1) }
    }

    /// The trend of points at positions `x` (increasing): the median pairwise slope over
    /// time, and the noise of one point from the differences left once the trend is taken out
    /// of them (each interval's own length times the slope).
    pub(crate) fn fit_at(v: &[u64], x: &[f64]) -> Trend {
        let from = v.len().saturating_sub(MAX_FIT);
        let (v, x) = (&v[from..], &x[from..]);
        let n = v.len();
        let mut slopes = Vec::with_capacity(n * n.saturating_sub(1) / 2);
        for i in 0..n {
            for j in i + 1..n {
                slopes.push((v[j] as f64 - v[i] as f64) / (x[j] - x[i]));
            }
        }
        let slope = median(&mut slopes);
        let mut left: Vec<f64> = (1..n).map(|i| v[i] as f64 - v[i - 1] as f64 - slope * (x[i] - x[i - 1])).collect();
        let mid = median(&mut left);
        let mut dev: Vec<f64> = left.iter().map(|d| (d - mid).abs()).collect();
        let noise = median(&mut dev) * 1.4826 / std::f64::consts::SQRT_2;
        let span = x.last().copied().unwrap_or(0.0) - x.first().copied().unwrap_or(0.0);
        // `steps` carries the span, so that growth() is slope × span.
        Trend { slope: slope * span / (n.max(2) - 1) as f64, noise, steps: n.saturating_sub(1) }
    }

    /// Growth the trend predicts over the fitted span.
    pub(crate) fn growth(&self) -> f64 {
        self.slope * self.steps as f64
    }
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theil_sen_ignores_outliers() {
        let t = Trend::fit(&[10, 20, 30, 400, 50, 60, 70]);
        assert_eq!((t.slope, t.steps), (10.0, 6));
        assert_eq!(Trend::fit(&[10, 20, 30, 40]).noise, 0.0, "a straight line has no noise");
        let flat = Trend::fit(&[5, 9, 5, 9, 5, 9]);
        assert_eq!(flat.slope, 0.0);
    }
}
