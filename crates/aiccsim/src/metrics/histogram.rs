//! A fixed-memory histogram of durations, for per-packet samples too many to keep (one RTT per
//! ACK, one queuing delay per data packet).
//!
//! Log-linear buckets: each power of two is split into 64 equal steps, so a percentile is right
//! to within 1/64 (1.6%) of its value; the mean and the maximum are exact. Recording is a few
//! integer operations and allocates nothing after construction.

use super::TimeDistribution;
use crate::time::SimTime;

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets for values up to 2^64 ps: 64 exponents x 64 steps.
const BUCKETS: usize = (64 * SUB) as usize;

#[derive(Clone)]
pub struct DurationHistogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

impl Default for DurationHistogram {
    fn default() -> Self {
        DurationHistogram { counts: vec![0; BUCKETS], n: 0, sum: 0, max: 0 }
    }
}

/// Bucket of value `v`: values below 64 have one bucket each; above, the top 7 significant
/// bits select it.
fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let step = (v >> shift) - SUB; // 0..SUB
    ((shift as u64 + 1) * SUB + step) as usize
}

/// The middle of bucket `b`'s range.
fn middle(b: usize) -> f64 {
    let b = b as u64;
    if b < SUB {
        return b as f64;
    }
    let shift = b / SUB - 1;
    let step = b % SUB;
    let low = (SUB + step) << shift;
    low as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
}

impl DurationHistogram {
    /// Records one sample, in picoseconds.
    #[inline]
    pub fn record(&mut self, ps: u64) {
        self.counts[bucket(ps)] += 1;
        self.n += 1;
        self.sum += ps as u128;
        self.max = self.max.max(ps);
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Nearest-rank percentile `p` in [0, 100], picoseconds (bucket middle, capped at the max).
    fn percentile(&self, p: f64) -> f64 {
        let rank = ((p / 100.0 * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return middle(b).min(self.max as f64);
            }
        }
        self.max as f64
    }

    /// The distribution (percentiles rounded to the picosecond).
    pub fn distribution(&self) -> TimeDistribution {
        if self.n == 0 {
            return TimeDistribution::default();
        }
        let ps = |v: f64| SimTime(v.round() as u64);
        TimeDistribution {
            count: self.n as usize,
            mean: SimTime(((self.sum + self.n as u128 / 2) / self.n as u128) as u64),
            p50: ps(self.percentile(50.0)),
            p90: ps(self.percentile(90.0)),
            p99: ps(self.percentile(99.0)),
            max: SimTime(self.max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut last = 0;
        for v in (0..100_000u64).chain([u32::MAX as u64, u64::MAX / 3, u64::MAX]) {
            let b = bucket(v);
            assert!(b >= last && b < BUCKETS, "value {v}");
            last = b;
            let m = middle(b);
            assert!((m - v as f64).abs() <= v as f64 / 64.0 + 0.5, "value {v} middle {m}");
        }
    }

    #[test]
    fn percentiles_within_one_step_mean_and_max_exact() {
        let mut h = DurationHistogram::default();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let d = h.distribution();
        assert_eq!(d.count, 10_000);
        assert_eq!(d.max, SimTime(10_000_000));
        assert_eq!(d.mean, SimTime(5_000_500));
        for (got, want) in [(d.p50, 5000.0), (d.p90, 9000.0), (d.p99, 9900.0)] {
            let got = got.as_ns_f64();
            assert!((got - want).abs() <= want / 64.0, "{got} vs {want}");
        }
    }
}
