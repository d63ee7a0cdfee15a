//! Swift: Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020 (§3, Algorithm 1).
//!
//! Window-based, driven by the round-trip delay of each ACK (the ACK echoes the data packet's
//! NIC transmit time):
//! - target delay = `base_target` + `hop_scaling`·hops + flow scaling, where flow scaling is
//!   α/√cwnd + β clamped to [0, `fs_range`], with α and β chosen so that it is `fs_range` at
//!   `fs_min_cwnd` and 0 at `fs_max_cwnd` (§3.5: flows with small windows get more room, which
//!   is what makes many-flow incasts fair);
//! - delay below target: additive increase, cwnd += ai·acked/cwnd per ACK (ai·acked below one
//!   packet), i.e. `ai` packets per round trip;
//! - delay above target: multiplicative decrease, at most once per round trip,
//!   cwnd *= max(1 - β·(delay - target)/delay, 1 - max_mdf);
//! - cwnd may fall below one packet (down to `min_cwnd`): then one packet leaves every
//!   RTT/cwnd, paced (§3.4);
//! - retransmission timeout: cut by max_mdf (once per round trip); after
//!   `retx_reset_threshold` timeouts in a row, cwnd drops to `min_cwnd` ("retransmit reset").
//!   A NACK (go-back-N's fast retransmit) also cuts by max_mdf once per round trip.
//!
//! The paper gives no numeric defaults for its general case; ours are those of the open htsim
//! implementation (`sim/swift.cpp`), the paper's window floor, and the flow's line-rate window
//! as the start (every algorithm here starts at line rate).
//!
//! Steady signal (fast-forward): what limits sending: the window, in bytes, at a packet or
//! more (the NIC then paces at line rate); below one packet, the pacing rate, in bits/s.

use super::{AckInfo, Algorithm, Cc, CcContext, CcEvent, Check, CongestionControl, FlowFacts};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SwiftConfig {
    /// Target delay before hop and flow scaling (htsim: 20 us).
    pub base_target: SimTime,
    /// Target delay added per switch hop (htsim: base_target / 6.55 = 3.05 us).
    pub hop_scaling: SimTime,
    /// Largest flow-scaling term (htsim: 5 x base_target = 100 us).
    pub fs_range: SimTime,
    /// Window (packets) at which flow scaling is `fs_range` (htsim: 0.1).
    pub fs_min_cwnd: f64,
    /// Window (packets) at which flow scaling reaches 0 (htsim: 100).
    pub fs_max_cwnd: f64,
    /// Additive increase, packets per round trip (htsim: 1).
    pub ai: f64,
    /// Multiplicative decrease gain (htsim: 0.8).
    pub beta: f64,
    /// Largest cut per round trip (htsim: 0.5).
    pub max_mdf: f64,
    /// Smallest window, packets (§3.4: down to 0.001, one packet every 1000 RTTs).
    pub min_cwnd: f64,
    /// Largest window, packets (htsim: 1000).
    pub max_cwnd: f64,
    /// Consecutive timeouts before the window resets to `min_cwnd` (htsim: 5).
    pub retx_reset_threshold: u32,
}

impl Default for SwiftConfig {
    fn default() -> Self {
        SwiftConfig {
            base_target: SimTime::from_us(20),
            hop_scaling: SimTime::from_ns(3050),
            fs_range: SimTime::from_us(100),
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: 0.001,
            max_cwnd: 1000.0,
            retx_reset_threshold: 5,
        }
    }
}

impl Algorithm for SwiftConfig {
    fn name(&self) -> &'static str {
        "swift"
    }

    fn describe(&self) -> &'static str {
        "Swift: delay-based window; additive increase below a target delay scaled by hops and window, multiplicative decrease above, paced below one packet"
    }

    fn validate(&self) -> Check {
        let key = |k: &str| format!("cc.{k}");
        if !(self.min_cwnd > 0.0 && self.min_cwnd <= self.max_cwnd) {
            return Err((key("min_cwnd"), format!("must be positive and at most max_cwnd ({})", self.max_cwnd)));
        }
        if !(self.fs_min_cwnd > 0.0 && self.fs_min_cwnd < self.fs_max_cwnd) {
            return Err((key("fs_min_cwnd"), format!("must be positive and below fs_max_cwnd ({})", self.fs_max_cwnd)));
        }
        for (k, v) in [("beta", self.beta), ("max_mdf", self.max_mdf)] {
            if !(v > 0.0 && v < 1.0) {
                return Err((key(k), format!("must be in (0, 1), got {v}")));
            }
        }
        if !(self.ai > 0.0 && self.ai.is_finite()) {
            return Err((key("ai"), format!("must be positive, got {}", self.ai)));
        }
        if self.base_target.0 == 0 {
            return Err((key("base_target"), "must be positive, e.g. \"20us\"".into()));
        }
        Ok(())
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Swift(Swift::new(self, facts))
    }
}


pub struct Swift {
    cfg: SwiftConfig,
    line_rate: f64,
    mtu: f64,
    packet_bits: f64,
    /// Target delay without flow scaling (base + hops), seconds.
    fixed_target: f64,
    /// Flow-scaling curve α/√cwnd + β (seconds).
    fs_alpha: f64,
    fs_beta: f64,
    /// Window in packets.
    cwnd: f64,
    /// Smoothed RTT (seconds): paces sub-packet windows and spaces decreases.
    srtt: f64,
    last_decrease: Option<SimTime>,
    timeouts_in_a_row: u32,
}

impl Swift {
    pub fn new(cfg: &SwiftConfig, facts: &FlowFacts) -> Self {
        let line = facts.line_rate.as_f64();
        let base_rtt = facts.base_rtt.as_secs_f64();
        let fs_range = cfg.fs_range.as_secs_f64();
        let fs_alpha = fs_range / (1.0 / cfg.fs_min_cwnd.sqrt() - 1.0 / cfg.fs_max_cwnd.sqrt());
        let bdp_packets = line * base_rtt / 8.0 / facts.packet_bytes as f64;
        Swift {
            line_rate: line,
            mtu: facts.mtu as f64,
            packet_bits: facts.packet_bytes as f64 * 8.0,
            fixed_target: cfg.base_target.as_secs_f64() + cfg.hop_scaling.as_secs_f64() * facts.hops as f64,
            fs_alpha,
            fs_beta: -fs_alpha / cfg.fs_max_cwnd.sqrt(),
            cwnd: bdp_packets.clamp(cfg.min_cwnd, cfg.max_cwnd),
            srtt: base_rtt,
            last_decrease: None,
            timeouts_in_a_row: 0,
            cfg: cfg.clone(),
        }
    }

    /// Window in packets.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The target delay at the current window (seconds).
    pub fn target_delay(&self) -> f64 {
        let fs = (self.fs_alpha / self.cwnd.sqrt() + self.fs_beta).clamp(0.0, self.cfg.fs_range.as_secs_f64());
        self.fixed_target + fs
    }

    fn can_decrease(&self, now: SimTime) -> bool {
        self.last_decrease.is_none_or(|t| (now - t).as_secs_f64() >= self.srtt)
    }

    fn set_cwnd(&mut self, cwnd: f64, now: SimTime) {
        let cwnd = cwnd.clamp(self.cfg.min_cwnd, self.cfg.max_cwnd);
        if cwnd < self.cwnd {
            self.last_decrease = Some(now);
        }
        self.cwnd = cwnd;
    }
}

impl CongestionControl for Swift {
    fn on_ack(&mut self, ack: &AckInfo<'_>, cx: &mut CcContext) {
        let now = cx.now();
        let delay = ack.rtt.as_secs_f64();
        self.srtt = 0.875 * self.srtt + 0.125 * delay;
        if ack.newly_acked > 0 {
            self.timeouts_in_a_row = 0;
        }
        let target = self.target_delay();
        let acked = ack.newly_acked as f64 / self.mtu;
        if delay < target {
            let step = if self.cwnd >= 1.0 { self.cfg.ai * acked / self.cwnd } else { self.cfg.ai * acked };
            self.set_cwnd(self.cwnd + step, now);
        } else if self.can_decrease(now) {
            let cut = (1.0 - self.cfg.beta * (delay - target) / delay).max(1.0 - self.cfg.max_mdf);
            self.set_cwnd(self.cwnd * cut, now);
        }
    }

    fn on_event(&mut self, ev: CcEvent, cx: &mut CcContext) {
        let now = cx.now();
        match ev {
            CcEvent::Timeout => {
                self.timeouts_in_a_row += 1;
                if self.timeouts_in_a_row >= self.cfg.retx_reset_threshold {
                    self.set_cwnd(self.cfg.min_cwnd, now);
                } else if self.can_decrease(now) {
                    self.set_cwnd(self.cwnd * (1.0 - self.cfg.max_mdf), now);
                }
            }
            CcEvent::Nack { .. } => {
                self.timeouts_in_a_row = 0;
                if self.can_decrease(now) {
                    self.set_cwnd(self.cwnd * (1.0 - self.cfg.max_mdf), now);
                }
            }
            CcEvent::Cnp | CcEvent::RttProbe(_) | CcEvent::MessageDone(_) => {}
        }
    }

    /// Line rate with a window of a packet or more; below it, one packet per RTT/cwnd.
    fn rate(&self) -> f64 {
        if self.cwnd >= 1.0 {
            self.line_rate
        } else {
            (self.packet_bits * self.cwnd / self.srtt).min(self.line_rate)
        }
    }

    fn window(&self) -> Option<u64> {
        Some(((self.cwnd * self.mtu) as u64).max(1))
    }

    /// The window (bytes) while it is a packet or more; below, the pacing rate (bits/s), which
    /// also moves with the smoothed RTT. Crossing one packet changes the unit: a jump no
    /// tolerance calls steady, as the crossing is not.
    fn steady_signal(&self) -> Option<f64> {
        Some(if self.cwnd >= 1.0 { self.cwnd * self.mtu } else { self.rate() })
    }

    /// The last decrease's time (at most one per smoothed RTT); `srtt` is a duration.
    fn shift_clock(&mut self, by: SimTime) {
        if let Some(t) = &mut self.last_decrease {
            *t += by;
        }
    }
}
