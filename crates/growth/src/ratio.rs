//! Cork's Ratio Ranking Technique (Jump and McKinley, Figure 5), one volume at a time.
//!
//! The rank is kept in percentage points: `Q − 1` is "the percentage change in the volume"
//! (section 4.2.2), and with that unit the paper's threshold of 100 is crossed after about
//! six growing collections, as its results report. Why: `docs/decisions/0006-growth-ranking.md`.

use serde::{Deserialize, Serialize};

/// The knobs of Figure 5; the defaults are the paper's (Table III: f = 15 %, R = 100).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RatioParams {
    /// Decay factor `f`: a volume above `max × (1 − f)` still counts as potential growth.
    pub decay: f64,
    /// Rank threshold `R`: candidates have `rank > R`.
    pub threshold: f64,
    /// `MAX_LEAK_PHASES`: candidates have grown for at least this many phases (the paper: 2).
    pub min_phases: u32,
}

impl Default for RatioParams {
    fn default() -> Self {
        RatioParams { decay: 0.15, threshold: 100.0, min_phases: 2 }
    }
}

/// The state Figure 5 keeps per class node or reference edge.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RatioRank {
    /// Accumulated rank, in percentage points.
    pub rank: f64,
    /// Consecutive phases of potential growth (`leakPhases`).
    pub phases: u32,
    max: f64,
    last: f64,
}

impl RatioRank {
    /// Folds in the volume of the next collection; returns whether it is now a candidate
    /// (Figure 5, lines 18–22).
    pub fn observe(&mut self, volume: u64, p: &RatioParams) -> bool {
        let this = volume as f64;
        if this <= 0.0 {
            // Gone: nothing of it is live, so no growth phase continues.
            self.reset(0.0);
        } else if self.last <= 0.0 {
            // First appearance (or back after vanishing): Figure 5 would divide by zero; the
            // paper never reports a class the first time it appears, so it only starts here.
            self.reset(this);
        } else if this > self.max * (1.0 - p.decay) {
            self.phases += 1;
            self.max = self.max.max(this);
            let q = if this > self.last { this / self.last - 1.0 } else { -(self.last / this - 1.0) };
            self.rank += f64::from(self.phases) * q * 100.0;
        } else {
            self.reset(this);
        }
        self.last = this;
        self.is_candidate(p)
    }

    /// Whether the last observation made it a candidate.
    pub fn is_candidate(&self, p: &RatioParams) -> bool {
        self.phases >= p.min_phases && self.rank > p.threshold
    }

    /// Figure 5's `reset()`: a non-growth phase ends the streak and its rank, and the
    /// high-water mark restarts from the current volume.
    fn reset(&mut self, this: f64) {
        self.rank = 0.0;
        self.phases = 0;
        self.max = this;
    }
}

/// Figure 5 over a whole series: the final state.
pub fn ratio_rank(volumes: &[u64], p: &RatioParams) -> RatioRank {
    let mut r = RatioRank::default();
    for &v in volumes {
        r.observe(v, p);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_appearance_is_never_ranked() {
        let p = RatioParams::default();
        let mut r = RatioRank::default();
        assert!(!r.observe(0, &p));
        assert!(!r.observe(10, &p), "appears");
        assert_eq!((r.rank, r.phases), (0.0, 0));
        assert!(!r.observe(1000, &p), "one phase is not enough, whatever the ratio");
        assert_eq!(r.phases, 1);
        assert!(r.rank > 100.0);
        assert!(r.observe(1100, &p), "two phases and rank > R");
    }

    #[test]
    fn figure_5_arithmetic() {
        let p = RatioParams::default();
        // 100 → 120 (+20 % × 1 phase) → 110 (−(120/110 − 1) × 2 phases) → 165 (+50 % × 3).
        let r = ratio_rank(&[100, 120, 110, 165], &p);
        let expect = 20.0 - 2.0 * (120.0 / 110.0 - 1.0) * 100.0 + 3.0 * 50.0;
        assert!((r.rank - expect).abs() < 1e-9, "{} vs {expect}", r.rank);
        assert_eq!(r.phases, 3);
    }

    #[test]
    fn a_drop_beyond_the_decay_factor_resets() {
        let p = RatioParams::default();
        let r = ratio_rank(&[100, 200, 400, 300], &p);
        assert_eq!((r.phases, r.rank), (0, 0.0), "400 → 300 is below 400 × 0.85");
        let r = ratio_rank(&[100, 200, 400, 350], &p);
        assert_eq!(r.phases, 3, "400 → 350 is within the decay factor");
    }

    #[test]
    fn the_papers_order_system_reports_persons_not_companies() {
        // Figure 4: Person orders stay in the map (absolute growth), Company orders come and go.
        let p = RatioParams::default();
        let person: Vec<u64> = (1..=8).map(|i| 32 * i).collect();
        let company = [128, 64, 192, 64, 128, 64, 192, 128];
        assert!(ratio_rank(&person, &p).is_candidate(&p));
        assert!(!ratio_rank(&company, &p).is_candidate(&p));
    }
}
