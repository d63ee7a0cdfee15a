//! TIMELY: Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter",
//! SIGCOMM 2015, as the HPCC study's ns-3 model runs it (`UpdateRateTimely` in `rdma-hw.cc`).
//!
//! Rate-based, driven by RTT samples (the ACK echoes the data packet's NIC transmit timestamp).
//! Once per completion event, as in the paper (§4.1, §5: the NIC reports one per 64 KB segment):
//! here, once per `segment` bytes acknowledged. With `per_window`, once per window of data
//! instead, as the HPCC study's ns-3 model does (at the first ACK past the `snd_nxt` of the
//! previous update). With the newest RTT sample (Algorithm 1):
//! - `rtt_diff` = EWMA of the change in RTT since the previous update, weight `alpha` on the new
//!   change; `gradient` = `rtt_diff / min_rtt`;
//! - RTT < T_low: additive increase by delta;
//! - RTT > T_high: multiplicative decrease, rate *= 1 - beta·(1 - T_high/RTT);
//! - otherwise, gradient <= 0: additive increase, by N·delta (N = 5, hyperactive increase, HAI)
//!   once `hai_threshold` increases in a row have happened, else by delta;
//! - gradient > 0: rate *= 1 - beta·gradient.
//!
//! As in the ns-3 model, HAI also counts the increases below T_low, and every decrease resets it.
//!
//! Steady signal (fast-forward): the rate, in bits/s (TIMELY has no window).

use super::{AckInfo, Algorithm, Cc, CcContext, Check, CongestionControl, FlowFacts};
use crate::time::ByteSize;
use crate::time::{Bandwidth, SimTime};
use serde::{Deserialize, Serialize};

/// TIMELY parameters. Defaults: the TIMELY paper's (§5, as used by the HPCC study's ns-3 model).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyConfig {
    /// Below this RTT, always increase (T_low = 50 us).
    pub t_low: SimTime,
    /// Above this RTT, always decrease (T_high = 500 us).
    pub t_high: SimTime,
    /// Normalises the RTT gradient (minRTT = 20 us).
    pub min_rtt: SimTime,
    /// EWMA weight of the newest RTT difference (alpha = 0.875).
    pub alpha: f64,
    /// Multiplicative decrease factor (beta = 0.8).
    pub beta: f64,
    /// Additive increase step delta. Absent: 10 Mb/s per 10 Gb/s of NIC speed (the paper's
    /// 10 Mb/s at 10 Gb/s, scaled with the link as the HPCC study does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additive_increase: Option<Bandwidth>,
    /// Multiplier of delta in hyperactive increase (N = 5).
    pub hai_factor: f64,
    /// Consecutive increases before hyperactive increase starts (5).
    pub hai_threshold: u32,
    /// Floor of the rate (the HPCC study's `MIN_RATE` = 1000 Mb/s).
    pub min_rate: Bandwidth,
    /// Bytes acknowledged per completion event, one rate update each (64 KB, §5).
    pub segment: ByteSize,
    /// Update once per window of data instead, as the HPCC study's ns-3 model (false).
    pub per_window: bool,
}

impl Default for TimelyConfig {
    fn default() -> Self {
        TimelyConfig {
            t_low: SimTime::from_us(50),
            t_high: SimTime::from_us(500),
            min_rtt: SimTime::from_us(20),
            alpha: 0.875,
            beta: 0.8,
            additive_increase: None,
            hai_factor: 5.0,
            hai_threshold: 5,
            min_rate: Bandwidth(1_000_000_000),
            segment: ByteSize(64_000),
            per_window: false,
        }
    }
}

/// The named parameter sets of `preset = "..."`: the TIMELY paper's (the defaults, one update
/// per 64 KB completion event, §5) and the HPCC study's ns-3 model's, which updates once per
/// window of data (`rdma-hw.cc`, the same values otherwise).
const PRESETS: &[&str] = &["timely_paper", "hpcc_study"];

impl TimelyConfig {
    pub fn preset(name: &str) -> Option<TimelyConfig> {
        match name {
            "timely_paper" => Some(TimelyConfig::default()),
            "hpcc_study" => Some(TimelyConfig { per_window: true, ..TimelyConfig::default() }),
            _ => None,
        }
    }
}

impl Algorithm for TimelyConfig {
    fn name(&self) -> &'static str {
        "timely"
    }

    fn describe(&self) -> &'static str {
        "TIMELY: RTT-gradient rate control; additive increase below T_low, multiplicative decrease above T_high, gradient-driven between"
    }

    fn optional_parameters(&self) -> &'static [(&'static str, &'static str)] {
        &[("additive_increase", "10 Mb/s per 10 Gb/s of NIC speed")]
    }

    fn presets(&self) -> &'static [&'static str] {
        PRESETS
    }

    fn preset_table(&self, name: &str) -> Option<toml::Table> {
        let cfg = TimelyConfig::preset(name)?;
        Some(toml::Table::try_from(cfg).expect("a config serialises to a table"))
    }

    fn validate(&self) -> Check {
        let key = |k: &str| format!("cc.{k}");
        if self.t_high <= self.t_low {
            return Err((key("t_high"), format!("must be above t_low ({})", self.t_low)));
        }
        if self.min_rtt.0 == 0 {
            return Err((key("min_rtt"), "must be positive, e.g. \"20us\"".into()));
        }
        if self.segment.0 == 0 {
            return Err((key("segment"), "must be positive, e.g. \"64KB\"".into()));
        }
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err((key("alpha"), format!("must be in (0, 1], got {}", self.alpha)));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err((key("beta"), format!("must be in (0, 1], got {}", self.beta)));
        }
        if self.hai_factor.is_nan() || self.hai_factor < 1.0 {
            return Err((key("hai_factor"), format!("must be at least 1, got {}", self.hai_factor)));
        }
        Ok(())
    }

    fn min_rate(&self) -> Option<Bandwidth> {
        Some(self.min_rate)
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Timely(Timely::new(self, facts))
    }
}


pub struct Timely {
    cfg: TimelyConfig,
    line_rate: f64,
    delta: f64,
    rate: f64,
    /// Updates happen when an ACK passes this byte (`None` before the first ACK).
    next_update: Option<u64>,
    prev_rtt: f64,
    rtt_diff: f64,
    /// Consecutive increases (HAI after `hai_threshold`).
    increases: u32,
}

impl Timely {
    pub fn new(cfg: &TimelyConfig, facts: &FlowFacts) -> Self {
        let line = facts.line_rate.as_f64();
        Timely {
            cfg: cfg.clone(),
            line_rate: line,
            delta: cfg.additive_increase.map(|b| b.as_f64()).unwrap_or(line / 1000.0),
            rate: line,
            next_update: None,
            prev_rtt: 0.0,
            rtt_diff: 0.0,
            increases: 0,
        }
    }

    /// The current RTT-gradient estimate (normalised by min_rtt).
    pub fn gradient(&self) -> f64 {
        self.rtt_diff / self.cfg.min_rtt.as_secs_f64()
    }

    /// Algorithm 1 for one RTT sample (seconds).
    fn update(&mut self, rtt: f64) {
        let c = &self.cfg;
        let diff = rtt - self.prev_rtt;
        self.rtt_diff = (1.0 - c.alpha) * self.rtt_diff + c.alpha * diff;
        let gradient = self.gradient();
        let t_low = c.t_low.as_secs_f64();
        let t_high = c.t_high.as_secs_f64();
        let factor = if rtt < t_low {
            None
        } else if rtt > t_high {
            Some(1.0 - c.beta * (1.0 - t_high / rtt))
        } else if gradient <= 0.0 {
            None
        } else {
            Some((1.0 - c.beta * gradient).max(0.0))
        };
        match factor {
            None => {
                let step = if self.increases >= c.hai_threshold { c.hai_factor * self.delta } else { self.delta };
                self.rate = (self.rate + step).min(self.line_rate);
                self.increases += 1;
            }
            Some(f) => {
                self.rate = (self.rate * f).max(c.min_rate.as_f64());
                self.increases = 0;
            }
        }
    }
}

impl CongestionControl for Timely {
    fn on_ack(&mut self, ack: &AckInfo<'_>, _cx: &mut CcContext) {
        let due = match self.next_update {
            None => true,
            Some(at) => ack.ack_seq > at,
        };
        if !due {
            return;
        }
        let rtt = ack.rtt.as_secs_f64();
        if self.next_update.is_some() {
            self.update(rtt);
        }
        self.prev_rtt = rtt;
        // Saturating: `segment` may be as large as a u64 (an update only once, then never).
        let segment_end = ack.ack_seq.saturating_add(self.cfg.segment.0 - 1);
        self.next_update = Some(if self.cfg.per_window { ack.snd_nxt } else { segment_end });
    }

    fn rate(&self) -> f64 {
        self.rate
    }

    fn steady_signal(&self) -> Option<f64> {
        Some(self.rate)
    }

    /// TIMELY holds no time (`next_update` is a sequence number, `prev_rtt` a duration):
    /// nothing to move.
    fn shift_clock(&mut self, _by: SimTime) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::facts;

    #[test]
    fn presets_are_the_papers_cadence_and_the_hpcc_studys() {
        assert_eq!(TimelyConfig::preset("timely_paper"), Some(TimelyConfig::default()));
        let study = TimelyConfig::preset("hpcc_study").unwrap();
        assert!(study.per_window && study.validate().is_ok());
        assert_eq!(TimelyConfig { per_window: false, ..study }, TimelyConfig::default());
        assert!(TimelyConfig::preset("fastest").is_none());
        for name in PRESETS {
            assert!(TimelyConfig::default().preset_table(name).is_some(), "{name}");
        }
    }

    /// Feeds one ACK that closes the current window (so TIMELY updates) with RTT `rtt_us`.
    fn window_ack(t: &mut Timely, seq: &mut u64, rtt_us: u64) {
        *seq += 100_000;
        let ack = AckInfo {
            ack_seq: *seq,
            newly_acked: 1000,
            ecn_echo: false,
            rtt: SimTime::from_us(rtt_us),
            in_flight: 50_000,
            snd_nxt: *seq + 50_000,
            int: &[],
            pint: 0,
            feedback: [0; 2],
        };
        t.on_ack(&ack, &mut CcContext::new(SimTime::ZERO));
    }

    #[test]
    fn timely_cuts_on_a_rising_rtt_and_recovers_with_hyperactive_increase() {
        let cfg = TimelyConfig::default();
        let mut t = Timely::new(&cfg, &facts());
        let line = 100e9;
        let mut seq = 0;
        window_ack(&mut t, &mut seq, 60);
        window_ack(&mut t, &mut seq, 60);
        assert_eq!(t.rate(), line, "a flat RTT between the thresholds does not cut");
        // A step from 60 to 80 us: gradient 0.875 x 20 / 20 = 0.875, cut to 1 - 0.8 x 0.875.
        window_ack(&mut t, &mut seq, 80);
        assert!((t.rate() / line - (1.0 - 0.8 * 0.875)).abs() < 1e-9, "rate {}", t.rate());
        // Holding at 80 us, the gradient's EWMA fades and the rate all but stops falling; a
        // falling RTT (negative gradient) brings increases back.
        let mut rates = vec![t.rate()];
        for _ in 0..4 {
            window_ack(&mut t, &mut seq, 80);
            rates.push(t.rate());
        }
        assert!(rates[4] / rates[3] > 0.999, "the gradient has faded: {rates:?}");
        window_ack(&mut t, &mut seq, 70);
        assert!(t.rate() > rates[4]);
        // Below T_low: additive increase by delta = 100 Mb/s (10 Mb/s per 10 Gb/s); after five
        // increases in a row, hyperactive steps of 5 delta.
        let mut prev = t.rate();
        let mut steps = Vec::new();
        for _ in 0..12 {
            window_ack(&mut t, &mut seq, 10);
            steps.push(((t.rate() - prev) / 1e6).round());
            prev = t.rate();
        }
        assert_eq!(steps[0], 100.0, "{steps:?}");
        assert!(steps[8..].iter().all(|&s| s == 500.0), "{steps:?}");
        // Above T_high the cut is 1 - beta (1 - T_high / RTT): at 1 ms, 0.6.
        let before = t.rate();
        window_ack(&mut t, &mut seq, 1000);
        assert!((t.rate() / before - 0.6).abs() < 1e-9);
    }

    #[test]
    fn acks_inside_a_window_do_not_update() {
        let mut t = Timely::new(&TimelyConfig::default(), &facts());
        let mut seq = 0;
        window_ack(&mut t, &mut seq, 60);
        // The same window: RTT jumps but no update until an ACK passes the window's end.
        let ack = AckInfo {
            ack_seq: seq + 10_000,
            newly_acked: 1000,
            ecn_echo: false,
            rtt: SimTime::from_us(400),
            in_flight: 0,
            snd_nxt: seq + 60_000,
            int: &[],
            pint: 0,
            feedback: [0; 2],
        };
        t.on_ack(&ack, &mut CcContext::new(SimTime::ZERO));
        assert_eq!(t.rate(), 100e9);
    }
}
