//! DCTCP: Alizadeh et al., "Data Center TCP", SIGCOMM 2010, run on RoCE as the HPCC study runs
//! it (Li et al., SIGCOMM 2019; `HandleAckDctcp` in the ns-3 `rdma-hw.cc`).
//!
//! - The switch marks CE when its egress queue exceeds K (a step: `kmin = kmax = K`, `pmax = 1`
//!   in the scenario's `[switch.ecn]`); the receiver echoes CE on each ACK (paper §3.1).
//! - Once per window of data (the ACKs up to the `snd_nxt` of the previous update), the sender
//!   updates alpha = (1-g)·alpha + g·F, F the fraction of marked ACKs in that window (eq. 1).
//! - On the first marked ACK outside congestion-window-reduced (CWR) state, the sender cuts by
//!   alpha/2 (eq. 2) and stays in CWR until everything sent before the cut is acknowledged: one
//!   cut per window.
//! - Outside CWR, each window's worth of ACKs adds one additive step (congestion avoidance:
//!   one MTU per RTT).
//!
//! As in the HPCC study, the flow starts at line rate, the state is a rate that paces packets,
//! and the window follows the rate (W = R·T, T the flow's base RTT), so "window cut by alpha/2"
//! and "rate cut by alpha/2" are the same act.
//!
//! Steady signal (fast-forward): the rate, in bits/s: the state itself; the window is the rate
//! times a fixed RTT, so it drifts exactly as the rate does.

use super::{AckInfo, Algorithm, Cc, CcContext, Check, CongestionControl, FlowFacts};
use crate::time::{Bandwidth, SimTime};
use serde::{Deserialize, Serialize};

/// DCTCP parameters. Defaults: the HPCC study's (`run.py`), which follow the DCTCP paper.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpConfig {
    /// EWMA gain of alpha (paper §3.3: g = 1/16).
    pub g: f64,
    /// Rate added once per window outside CWR (`DCTCP_RATE_AI` = 615 Mb/s: one 1000-byte
    /// packet per 13 us round trip).
    pub additive_increase: Bandwidth,
    /// Floor of the rate (`MIN_RATE` = 1000 Mb/s).
    pub min_rate: Bandwidth,
    /// Alpha before any feedback (1: the first mark halves the rate, as in the ns-3 model).
    pub initial_alpha: f64,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            additive_increase: Bandwidth(615_000_000),
            min_rate: Bandwidth(1_000_000_000),
            initial_alpha: 1.0,
        }
    }
}

impl Algorithm for DctcpConfig {
    fn reacts_to_ecn(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn describe(&self) -> &'static str {
        "DCTCP: ACKs echo ECN marks; once per window the rate/window is cut by alpha/2, alpha the EWMA of the marked fraction (set switch.ecn to a step at K)"
    }

    fn validate(&self) -> Check {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(("cc.g".into(), format!("the alpha gain must be in (0, 1], got {}", self.g)));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(("cc.initial_alpha".into(), format!("must be in [0, 1], got {}", self.initial_alpha)));
        }
        Ok(())
    }

    fn min_rate(&self) -> Option<Bandwidth> {
        Some(self.min_rate)
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Dctcp(Dctcp::new(self, facts))
    }
}


pub struct Dctcp {
    cfg: DctcpConfig,
    line_rate: f64,
    base_rtt_s: f64,
    mtu: u64,
    rate: f64,
    alpha: f64,
    /// The window being observed ends when this byte is acknowledged (`None` before the first ACK).
    window_end: Option<u64>,
    /// Marked ACKs in the window being observed, and the packets it holds.
    marked: u64,
    window_packets: u64,
    /// Congestion window reduced: no further cut until `cwr_end` is acknowledged.
    cwr_end: Option<u64>,
}

impl Dctcp {
    pub fn new(cfg: &DctcpConfig, facts: &FlowFacts) -> Self {
        let line = facts.line_rate.as_f64();
        Dctcp {
            cfg: cfg.clone(),
            line_rate: line,
            base_rtt_s: facts.base_rtt.as_secs_f64(),
            mtu: facts.mtu,
            rate: line,
            alpha: cfg.initial_alpha,
            window_end: None,
            marked: 0,
            window_packets: 1,
            cwr_end: None,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, ack: &AckInfo<'_>, _cx: &mut CcContext) {
        if ack.ecn_echo {
            // The echo covers every packet this ACK acknowledges (several with ACK coalescing).
            self.marked += ack.newly_acked.div_ceil(self.mtu).max(1);
        }
        let mut new_window = false;
        match self.window_end {
            None => {
                self.window_end = Some(ack.snd_nxt);
                self.window_packets = ack.snd_nxt / self.mtu + 1;
                new_window = true;
            }
            Some(end) if ack.ack_seq > end => {
                // Eq. 1: the fraction of marked packets over the last window.
                let frac = (self.marked as f64 / self.window_packets as f64).min(1.0);
                self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g * frac;
                self.window_end = Some(ack.snd_nxt);
                self.marked = 0;
                self.window_packets = (ack.snd_nxt - ack.ack_seq.min(ack.snd_nxt)) / self.mtu + 1;
                new_window = true;
            }
            Some(_) => {}
        }
        if self.cwr_end.is_some_and(|end| ack.ack_seq > end) {
            self.cwr_end = None;
        }
        if ack.ecn_echo && self.cwr_end.is_none() {
            // Eq. 2, once per window.
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.cfg.min_rate.as_f64());
            self.cwr_end = Some(ack.snd_nxt);
        }
        if self.cwr_end.is_none() && new_window {
            self.rate = (self.rate + self.cfg.additive_increase.as_f64()).min(self.line_rate);
        }
    }

    /// Alpha, the running share of marked packets that sizes each cut.
    fn metrics(&self, report: &mut dyn FnMut(&str, f64)) {
        report("alpha", self.alpha);
    }

    fn rate(&self) -> f64 {
        self.rate
    }

    fn window(&self) -> Option<u64> {
        Some(window_for_rate(self.rate, self.base_rtt_s))
    }

    /// The rate (the window is the rate over the base RTT: the same drift).
    fn steady_signal(&self) -> Option<f64> {
        Some(self.rate)
    }

    /// DCTCP holds no time (`window_end` and `cwr_end` are sequence numbers): nothing to move.
    fn shift_clock(&mut self, _by: SimTime) {}
}

/// The window that sustains `rate` over a round trip of `rtt_s` seconds (bytes, at least 1).
pub(crate) fn window_for_rate(rate: f64, rtt_s: f64) -> u64 {
    ((rate * rtt_s / 8.0) as u64).max(1)
}
