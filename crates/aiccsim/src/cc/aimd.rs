//! AIMD: the textbook window rule, driven by ECN echoes. It is here as the worked example of
//! docs/cc/adding.md (how to add an algorithm), and as the simplest ECN baseline there is.
//!
//! - The window starts at `initial_window` times the bandwidth-delay product of the flow's line
//!   and base RTT, and never exceeds that product (more would only build a queue) nor falls
//!   below one packet.
//! - **Additive increase** (RFC 5681 §3.1, congestion avoidance): every ACK without a mark adds
//!   `additive_increase` packets x the newly acknowledged bytes / the window, about that many
//!   packets per round trip.
//! - **Multiplicative decrease** (RFC 3168 §6.1.2): an ACK echoing a CE mark multiplies the
//!   window by `beta`, at most once per window of data: marks on ACKs for data sent before the
//!   cut are the same congestion event.
//! - A retransmission timeout sets the window to one packet (RFC 5681 §3.1).
//!
//! The NIC paces at line rate; the window alone limits the flow.
//!
//! Steady signal (fast-forward): the window, in bytes, since it alone limits sending.

use super::{AckInfo, Algorithm, Cc, CcContext, CcEvent, Check, CongestionControl, FlowFacts};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// AIMD parameters. Defaults: Reno's (RFC 5681: one packet per round trip, halve on congestion).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AimdConfig {
    /// Packets (of the flow's MTU) added per window of data acknowledged.
    pub additive_increase: f64,
    /// The window is multiplied by this on congestion.
    pub beta: f64,
    /// The first window, as a fraction of the bandwidth-delay product.
    pub initial_window: f64,
}

impl Default for AimdConfig {
    fn default() -> Self {
        AimdConfig { additive_increase: 1.0, beta: 0.5, initial_window: 1.0 }
    }
}

impl Algorithm for AimdConfig {
    fn reacts_to_ecn(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "aimd"
    }

    fn describe(&self) -> &'static str {
        "AIMD: a window that grows by additive_increase packets per round trip and is multiplied by beta once per window when ACKs echo ECN marks (the example of docs/cc/adding.md)"
    }

    fn validate(&self) -> Check {
        let key = |k: &str| format!("cc.{k}");
        if !(self.additive_increase > 0.0 && self.additive_increase <= 1000.0) {
            return Err((key("additive_increase"), format!("must be in (0, 1000] packets, got {}", self.additive_increase)));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err((key("beta"), format!("must be in (0, 1), got {}", self.beta)));
        }
        if !(self.initial_window > 0.0 && self.initial_window <= 1.0) {
            return Err((key("initial_window"), format!("a fraction of the BDP in (0, 1], got {}", self.initial_window)));
        }
        Ok(())
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Aimd(Aimd::new(self, facts))
    }
}

/// The sender half.
pub struct Aimd {
    cfg: AimdConfig,
    line_rate: f64,
    mtu: f64,
    /// Bytes in flight allowed.
    window: f64,
    /// The bandwidth-delay product: the largest window.
    bdp: f64,
    /// `snd_nxt` when the window was last cut: marks on ACKs up to here are that same event.
    recover: u64,
}

impl Aimd {
    pub fn new(cfg: &AimdConfig, facts: &FlowFacts) -> Self {
        let line_rate = facts.line_rate.as_f64();
        let mtu = facts.mtu as f64;
        let bdp = (line_rate * facts.base_rtt.as_secs_f64() / 8.0).max(mtu);
        Aimd { cfg: cfg.clone(), line_rate, mtu, window: (cfg.initial_window * bdp).max(mtu), bdp, recover: 0 }
    }

    fn set_window(&mut self, w: f64) {
        self.window = w.clamp(self.mtu, self.bdp);
    }
}

impl CongestionControl for Aimd {
    fn on_ack(&mut self, ack: &AckInfo<'_>, _cx: &mut CcContext) {
        if ack.ecn_echo {
            // A mark never grows the window; it cuts it once per window of data.
            if ack.ack_seq > self.recover {
                self.recover = ack.snd_nxt;
                self.set_window(self.window * self.cfg.beta);
            }
        } else if ack.newly_acked > 0 {
            let step = self.cfg.additive_increase * self.mtu * ack.newly_acked as f64 / self.window;
            self.set_window(self.window + step);
        }
    }

    fn on_event(&mut self, ev: CcEvent, _cx: &mut CcContext) {
        if ev == CcEvent::Timeout {
            self.set_window(self.mtu);
        }
    }

    fn rate(&self) -> f64 {
        self.line_rate
    }

    fn window(&self) -> Option<u64> {
        Some(self.window as u64)
    }

    /// The window: the NIC paces at line rate, so it alone limits sending.
    fn steady_signal(&self) -> Option<f64> {
        Some(self.window)
    }

    /// AIMD holds no time (`recover` is a sequence number): nothing to move.
    fn shift_clock(&mut self, _by: SimTime) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::facts;

    fn ack(ack_seq: u64, newly_acked: u64, ecn_echo: bool, snd_nxt: u64) -> AckInfo<'static> {
        AckInfo {
            ack_seq,
            newly_acked,
            ecn_echo,
            rtt: facts().base_rtt,
            in_flight: snd_nxt - ack_seq,
            snd_nxt,
            int: &[],
            pint: 0,
            feedback: [0; 2],
        }
    }

    #[test]
    fn halves_once_per_window_and_grows_a_packet_per_window() {
        let f = facts(); // 100 Gb/s, 8 us: a BDP of 100 000 B, 1000 B packets
        let mut a = Aimd::new(&AimdConfig::default(), &f);
        let mut cx = CcContext::new(f.base_rtt);
        assert_eq!(a.window(), Some(100_000));
        a.on_ack(&ack(1000, 1000, true, 100_000), &mut cx);
        assert_eq!(a.window(), Some(50_000));
        // A second mark for data sent before the cut is the same congestion event.
        a.on_ack(&ack(2000, 1000, true, 100_000), &mut cx);
        assert_eq!(a.window(), Some(50_000));
        // A window's worth of clean ACKs adds about one packet.
        for i in 0..50 {
            a.on_ack(&ack(101_000 + i * 1000, 1000, false, 160_000), &mut cx);
        }
        let w = a.window().unwrap();
        assert!((50_900..=51_000).contains(&w), "{w}");
        // Past the recovery point, a mark cuts again.
        a.on_ack(&ack(160_001, 1, true, 200_000), &mut cx);
        assert_eq!(a.window(), Some(w / 2));
        a.on_event(CcEvent::Timeout, &mut cx);
        assert_eq!(a.window(), Some(1000));
    }
}
