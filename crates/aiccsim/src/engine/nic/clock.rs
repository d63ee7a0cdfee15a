//! Host clocks: what a NIC's timestamp reads, as opposed to the simulation's true time.
//!
//! One-way delay is measured across two hosts (PC4 §III-B: receive time on the receiver's clock
//! minus the send timestamp from the sender's clock), so it carries both clocks' errors: a fixed
//! offset per host (synchronisation error) and a fresh error per sample (timestamping and
//! synchronisation noise, PC4 §IV-E: uniform in [-e, e]). Round trips are timed on one clock and
//! see neither. Every draw comes from the run's seed.

use crate::config::{ClocksConfig, NoiseDistribution};
use crate::rng::{self, SimRng};
use crate::time::SimTime;
use rand::RngExt;

/// The hosts' clock state.
pub struct HostClocks {
    /// Offset of each host's clock from true time, picoseconds.
    offsets: Vec<i64>,
    noise_ps: f64,
    distribution: NoiseDistribution,
    noise: Vec<SimRng>,
}

impl HostClocks {
    pub fn new(cfg: &ClocksConfig, hosts: u32, seed: u64) -> Self {
        let max = cfg.offset.0 as i64;
        let mut draw = rng::stream(seed, "clock.offset", 0);
        let offsets = (0..hosts).map(|_| if max == 0 { 0 } else { draw.random_range(-max..=max) }).collect();
        let noise = if cfg.noise.0 == 0 {
            Vec::new()
        } else {
            (0..hosts).map(|h| rng::stream(seed, "clock.noise", h as u64)).collect()
        };
        HostClocks { offsets, noise_ps: cfg.noise.0 as f64, distribution: cfg.noise_distribution, noise }
    }

    /// The one-way delay host `dst` measures at true time `now` for a packet host `src` stamped
    /// at true time `sent`: the true delay, plus the two clocks' offsets, plus one sample of noise
    /// (picoseconds, may be negative).
    pub fn measured_delay(&mut self, src: u32, dst: u32, sent: SimTime, now: SimTime) -> i64 {
        // Past 2^63 ps (106 days) a time no longer fits an i64: take the difference first.
        let truth = i64::try_from(now.0.saturating_sub(sent.0)).unwrap_or(i64::MAX);
        let offsets = self.offsets[dst as usize] - self.offsets[src as usize];
        truth.saturating_add(offsets).saturating_add(self.sample_noise(dst))
    }

    /// What host `host`'s clock reads at true time `now`, picoseconds: its offset and one sample
    /// of timestamping noise added (an RTT probe's remote timestamps).
    #[cold]
    #[inline(never)]
    pub fn read(&mut self, host: u32, now: SimTime) -> i64 {
        let truth = i64::try_from(now.0).unwrap_or(i64::MAX);
        truth.saturating_add(self.offsets[host as usize]).saturating_add(self.sample_noise(host))
    }

    #[inline(always)]
    fn sample_noise(&mut self, host: u32) -> i64 {
        let Some(rng) = self.noise.get_mut(host as usize) else { return 0 };
        let x = match self.distribution {
            NoiseDistribution::Uniform => rng.random_range(-1.0..=1.0),
            NoiseDistribution::Gaussian => {
                // Box-Muller: two uniforms give one standard normal.
                let u1: f64 = 1.0 - rng.random::<f64>();
                let u2: f64 = rng.random();
                (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
            }
        };
        (x * self.noise_ps).round() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_clocks_measure_the_true_delay() {
        let mut c = HostClocks::new(&ClocksConfig::default(), 4, 1);
        assert_eq!(c.measured_delay(1, 2, SimTime::from_us(3), SimTime::from_us(10)), 7_000_000);
    }

    #[test]
    fn offsets_are_fixed_per_host_and_noise_stays_in_bounds() {
        let cfg = ClocksConfig { offset: SimTime::from_ns(100), noise: SimTime::from_ns(400), ..Default::default() };
        let mut c = HostClocks::new(&cfg, 8, 3);
        let (sent, now) = (SimTime::from_us(1), SimTime::from_us(5));
        let mut sum = 0i64;
        for _ in 0..10_000 {
            let err = c.measured_delay(1, 2, sent, now) - 4_000_000;
            assert!(err.abs() <= 200_000 + 400_000, "error {err} ps");
            sum += err;
        }
        // The mean error is the fixed offset difference (the noise averages out).
        let mean = sum as f64 / 10_000.0;
        let offset = (c.offsets[2] - c.offsets[1]) as f64;
        assert!((mean - offset).abs() < 10_000.0, "mean {mean} vs offset {offset}");
        assert_ne!(c.offsets[1], c.offsets[2]);
    }

    #[test]
    fn gaussian_noise_has_the_configured_spread() {
        let cfg = ClocksConfig {
            noise: SimTime::from_ns(100),
            noise_distribution: NoiseDistribution::Gaussian,
            ..Default::default()
        };
        let mut c = HostClocks::new(&cfg, 2, 5);
        let n = 20_000;
        let samples: Vec<f64> = (0..n).map(|_| c.measured_delay(0, 1, SimTime::ZERO, SimTime::ZERO) as f64).collect();
        let mean = samples.iter().sum::<f64>() / n as f64;
        let sd = (samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!(mean.abs() < 3_000.0 && (sd - 100_000.0).abs() < 3_000.0, "mean {mean} sd {sd}");
    }
}
