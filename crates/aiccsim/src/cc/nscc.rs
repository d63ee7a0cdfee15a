//! NSCC: the network-signal congestion control of the Ultra Ethernet transport (UE 1.0
//! specification, congestion management sublayer; from SMaRTT, Bonato et al., arXiv 2404.01630),
//! as the UEC's reference simulator runs it: ultraethernet/uet-htsim `htsim/sim/uec.cpp`
//! (`UecSrc::initNsccParams`, `updateCwndOnAck_NSCC`, `updateCwndOnNack_NSCC`, `quick_adapt`,
//! `fair_increase`, `proportional_increase`, `fast_increase`, `multiplicative_decrease`,
//! `fulfill_adjustment`, `update_base_rtt`, `update_delay`), after its commit 2658277 ("Fixed
//! issue with NSCC not matching specs": the once-per-period additive step `eta` only in
//! `fulfill_adjustment`, whose clock it alone moves).
//!
//! A window, in bytes, paced at line rate. Each ACK brings two signals: whether it echoes an ECN
//! mark, and its queuing delay, the RTT sample less the base RTT, against a target delay. The
//! four combinations (the quadrants):
//!
//! - **no mark, delay below the target**: proportional increase, the window grows by
//!   `alpha` x acked x (target - delay) / window, or by `fast_increase` x acked per ACK once a
//!   whole window has come back with almost no delay (fast increase);
//! - **no mark, delay at or above the target**: fair increase, `fi` x acked / window, the same
//!   step for every flow whatever its window (the queue is someone else's: no mark on our path);
//! - **mark, delay at or above the target**: multiplicative decrease, window x max(1 - `gamma` x
//!   (avg - target) / avg, 0.5) with avg the smoothed delay, at most once per base RTT;
//! - **mark, delay below the target**: no change (the reference only switches path).
//!
//! Increases accumulate and are applied together once 8 packets have been acknowledged or one
//! base RTT has passed (`fulfill_adjustment`), when once per base RTT the window also gains `eta`.
//!
//! **QuickAdapt.** Once per base RTT + target delay the sender looks at the bytes acknowledged
//! in that period; if a loss (a NACK: a trimmed or lost packet; a timeout) or a delay above 4 x
//! the target was seen, and they are below an eighth of the largest window, the window drops to
//! them at once, and marked ACKs are ignored until what was in flight then is acknowledged. A
//! NACK otherwise takes one packet off the window.
//!
//! **Network RTT, base RTT and bounds.** Everything derives from one round trip R
//! (`rtt_from`): by default the network's, the largest base RTT among the run's flows, as the
//! reference gives every flow the fabric's largest unloaded RTT (`main_uec.cpp` `calculate_rtt`,
//! passed to `initNsccParams` and `initNscc`); with `rtt_from = "flow"`, the flow's own. The
//! target delay is 0.75 x R with trimming on, R without (`initNsccParams`); the adjustment period
//! is R. The base RTT starts at R and follows the lowest RTT sampled; the largest window is 1.5
//! bandwidth-delay products of it, the smallest one packet. The gains scale with the product of
//! R against the reference's 100 Gbps x 12 us (`scaling_factor_a`) and with the target against
//! 12 us (`scaling_factor_b`).
//!
//! With `receiver_credit` the flow also obeys the receiver's credit (RCCC, `rccc.rs`): its window
//! is the smaller of NSCC's and the credit's.
//!
//! With receiver credit, a NACK of a packet trimmed at the last hop leaves the window alone (the
//! credit paces the receiver's link; `updateCwndOnNack_NSCC`'s `!_receiver_based_cc ||
//! !last_hop`).
//!
//! Where this differs from the reference: R is the largest base RTT among the run's flows, not
//! the fabric's diameter (the same whenever a flow crosses it); windows count payload bytes (the
//! NIC's bytes in flight), not wire bytes; a NACK carries no RTT, so it neither lowers the base
//! RTT nor feeds the smoothed delay its own sample (the reference's `update_base_rtt_on_nack`);
//! a timeout arms QuickAdapt as a NACK does (SMaRTT
//! counts it a loss; the reference's timeout only takes one packet off the window, which it does
//! here too when QuickAdapt does not fire).
//!
//! Steady signal (fast-forward): the window, in bytes, since it alone limits sending (with
//! receiver credit, the smaller of it and the credit rate's window over the base RTT).

use super::rccc::{Credit, RcccConfig, RcccReceiver};
use super::{AckInfo, Algorithm, Cc, CcContext, CcEvent, Check, CongestionControl, FlowFacts, Receiver};
use crate::time::{Bandwidth, SimTime};
use serde::{Deserialize, Serialize};

/// NSCC parameters. Defaults: the UEC reference simulator's (`UecSrc::initNsccParams` and
/// `main_uec.cpp` in uet-htsim), which its README gives as the spec's.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct NsccConfig {
    /// Which round trip the parameters derive from: the network's (the reference) or the
    /// flow's own.
    pub rtt_from: RttFrom,
    /// Target queuing delay. Absent: with `rtt_from = "network"`, the network RTT, times 0.75
    /// with trimming on (`initNsccParams`); with `"flow"`, the flow's base RTT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_delay: Option<SimTime>,
    /// The largest window, in bandwidth-delay products (`initNscc`/`update_base_rtt`: 1.5 x BDP).
    pub max_window: f64,
    /// The first window, in bandwidth-delay products. Absent: `max_window` (`initNscc`: a zero
    /// `-cwnd` starts at `_maxwnd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<f64>,
    /// Fair increase, MTUs per MTU acknowledged, scaled by the BDP ratio (`_fi = 5 * _mss *
    /// scaling_factor_a`).
    pub fair_increase: f64,
    /// Proportional increase gain (`_alpha = 4.0 * _mss * a * b / _target_Qdelay`).
    pub proportional_gain: f64,
    /// Additive step once per base RTT, in MTUs scaled by the BDP ratio (`_eta = 0.15 * _mss *
    /// a`).
    pub eta: f64,
    /// Fast increase: bytes added per byte acknowledged, scaled by the BDP ratio (`_fi_scale =
    /// .25 * a`).
    pub fast_increase: f64,
    /// Fast increase holds while the delay stays below this (`fast_increase`: 1 us).
    pub fast_increase_delay: SimTime,
    /// Multiplicative decrease gain (`_gamma = 0.8`).
    pub md_gain: f64,
    /// Gain of the smoothed delay (`_delay_alpha = 0.0125`).
    pub delay_ewma: f64,
    /// QuickAdapt on or off (`_disable_quick_adapt = false`).
    pub quick_adapt: bool,
    /// QuickAdapt fires only below max window / 2^`qa_gate` acknowledged per period (`main_uec`
    /// passes -1, which `initNsccParams` turns into 3).
    pub qa_gate: u32,
    /// A delay above this many target delays arms QuickAdapt (`_qa_threshold = 4 *
    /// _target_Qdelay`).
    pub qa_delay: f64,
    /// Increases are applied once this many MTUs are acknowledged (`_adjust_bytes_threshold = 8
    /// * _mtu`), or a base RTT passed.
    pub adjust_packets: u32,
    /// The RTT the gains are scaled against (`_reference_network_rtt`: 12 us).
    pub reference_rtt: SimTime,
    /// The rate the gains are scaled against (`_reference_network_linkspeed`: 100 Gbps).
    pub reference_rate: Bandwidth,
    /// Also obey the receiver's credit (RCCC with its defaults; `main_uec -sender_cc
    /// -receiver_cc`).
    pub receiver_credit: bool,
}

/// The round trip NSCC derives its target delay, its gains, its adjustment period and its first
/// base RTT and largest window from.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RttFrom {
    /// The network's: the largest base RTT among the run's flows, for every flow, as the
    /// reference gives every flow the fabric's largest unloaded RTT (`main_uec.cpp`
    /// `calculate_rtt`, passed to `initNsccParams` and `initNscc`); the target delay is 0.75 x
    /// it with trimming on, 1 x without (`initNsccParams`).
    #[default]
    Network,
    /// The flow's own base RTT, for everything, the target delay included (1 x it, trimming or
    /// not): aiccsim's first reading, kept as a variant.
    Flow,
}

impl Default for NsccConfig {
    fn default() -> Self {
        NsccConfig {
            rtt_from: RttFrom::Network,
            target_delay: None,
            max_window: 1.5,
            initial_window: None,
            fair_increase: 5.0,
            proportional_gain: 4.0,
            eta: 0.15,
            fast_increase: 0.25,
            fast_increase_delay: SimTime::from_us(1),
            md_gain: 0.8,
            delay_ewma: 0.0125,
            quick_adapt: true,
            qa_gate: 3,
            qa_delay: 4.0,
            adjust_packets: 8,
            reference_rtt: SimTime::from_us(12),
            reference_rate: Bandwidth::from_gbps(100),
            receiver_credit: false,
        }
    }
}

impl Algorithm for NsccConfig {
    fn reacts_to_ecn(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "nscc"
    }

    fn describe(&self) -> &'static str {
        "NSCC (Ultra Ethernet): a window driven by ECN echoes and queuing delay against a target (increase, fair increase, multiplicative decrease, no change), QuickAdapt on losses; receiver_credit adds RCCC's credit"
    }

    fn optional_parameters(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("target_delay", "the network RTT (x 0.75 with trimming), or the flow's base RTT with rtt_from = \"flow\""),
            ("initial_window", "max_window"),
        ]
    }

    fn validate(&self) -> Check {
        let key = |k: &str| format!("cc.{k}");
        if self.target_delay == Some(SimTime::ZERO) {
            return Err((key("target_delay"), "must be above zero (omit it for the one rtt_from gives)".into()));
        }
        if !(self.max_window > 0.0 && self.max_window <= 100.0) {
            return Err((key("max_window"), format!("must be in (0, 100] BDPs, got {}", self.max_window)));
        }
        if let Some(w) = self.initial_window {
            if !(w > 0.0 && w <= self.max_window) {
                return Err((key("initial_window"), format!("must be in (0, max_window = {}], got {w}", self.max_window)));
            }
        }
        for (name, v) in [
            ("fair_increase", self.fair_increase),
            ("proportional_gain", self.proportional_gain),
            ("eta", self.eta),
            ("fast_increase", self.fast_increase),
        ] {
            if !(0.0..=1000.0).contains(&v) {
                return Err((key(name), format!("must be in [0, 1000], got {v}")));
            }
        }
        if !(self.md_gain > 0.0 && self.md_gain <= 1.0) {
            return Err((key("md_gain"), format!("must be in (0, 1], got {}", self.md_gain)));
        }
        if !(self.delay_ewma > 0.0 && self.delay_ewma <= 1.0) {
            return Err((key("delay_ewma"), format!("must be in (0, 1], got {}", self.delay_ewma)));
        }
        if self.qa_gate > 20 {
            return Err((key("qa_gate"), format!("must be at most 20, got {}", self.qa_gate)));
        }
        if !(self.qa_delay > 0.0 && self.qa_delay <= 1000.0) {
            return Err((key("qa_delay"), format!("must be in (0, 1000] target delays, got {}", self.qa_delay)));
        }
        if self.adjust_packets == 0 {
            return Err((key("adjust_packets"), "must be at least 1".into()));
        }
        if self.reference_rtt == SimTime::ZERO {
            return Err((key("reference_rtt"), "must be above zero (the reference's is 12us)".into()));
        }
        if self.reference_rate.bps() == 0 {
            return Err((key("reference_rate"), "must be above zero (the reference's is 100Gbps)".into()));
        }
        Ok(())
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Nscc(Nscc::new(self, facts))
    }

    fn receiver(&self, facts: &FlowFacts) -> Receiver {
        if self.receiver_credit {
            Receiver::Rccc(RcccReceiver::new(&RcccConfig::default(), facts))
        } else {
            Receiver::Echo
        }
    }
}

/// The largest window shrinks with the base RTT to this many products, but never below one
/// packet.
fn max_window(factor: f64, line_bytes_per_s: f64, base_rtt: SimTime, mtu: f64) -> f64 {
    (factor * line_bytes_per_s * base_rtt.as_secs_f64()).max(mtu)
}

/// NSCC's sender half.
pub struct Nscc {
    // Fixed at the start (`initNsccParams`, scaled to the flow).
    max_factor: f64,
    line_bytes: f64,
    mtu: f64,
    header: u64,
    target: SimTime,
    /// Bytes^2 per byte acknowledged per picosecond below the target.
    alpha: f64,
    /// Bytes^2 per byte acknowledged.
    fi: f64,
    eta: f64,
    fi_scale: f64,
    fi_delay: SimTime,
    gamma: f64,
    delay_ewma: f64,
    quick_adapt: bool,
    qa_gate: u32,
    qa_threshold: SimTime,
    adjust_bytes: f64,
    adjust_period: SimTime,
    network_rtt: SimTime,

    // State.
    cwnd: f64,
    maxwnd: f64,
    base_rtt: SimTime,
    /// Smoothed queuing delay, ps.
    avg_delay: f64,
    /// Increases accumulated until the next adjustment (bytes^2).
    inc: f64,
    /// Bytes acknowledged since the last adjustment.
    received: f64,
    last_adjust: Option<SimTime>,
    last_decrease: Option<SimTime>,
    /// Fast increase: bytes acknowledged at a delay below `fi_delay` in a row, and whether it
    /// is on.
    fi_count: f64,
    increasing: bool,
    // QuickAdapt.
    achieved: f64,
    qa_end: Option<SimTime>,
    trigger_qa: bool,
    bytes_to_ignore: f64,
    bytes_ignored: f64,
    /// Payload bytes in flight (the last ACK's, plus what was sent since).
    in_flight: u64,
    credit: Option<Credit>,
}

impl Nscc {
    pub fn new(cfg: &NsccConfig, facts: &FlowFacts) -> Self {
        let line_bytes = facts.line_rate.as_f64() / 8.0;
        let mtu = facts.mtu as f64;
        let (network_rtt, default_target) = match cfg.rtt_from {
            // initNsccParams: `_target_Qdelay = _network_rtt * 0.75` with trimming, else
            // `_network_rtt` (integer picoseconds; 3/4 of one is exact in them but for a
            // rounding the reference's double product truncates alike).
            RttFrom::Network => {
                let rtt = facts.network_rtt.max(SimTime(1));
                (rtt, if facts.trimming { SimTime(rtt.0 * 3 / 4) } else { rtt })
            }
            RttFrom::Flow => (facts.base_rtt, facts.base_rtt),
        };
        let target = cfg.target_delay.unwrap_or(default_target).max(SimTime(1));
        // initNsccParams: the gains scale with the network's BDP against the reference's, and
        // with the target against the reference RTT; initNscc: the base RTT and the largest
        // window start from the network's round trip too.
        let reference_bdp = cfg.reference_rate.as_f64() / 8.0 * cfg.reference_rtt.as_secs_f64();
        let a = line_bytes * network_rtt.as_secs_f64() / reference_bdp;
        let b = target.0 as f64 / cfg.reference_rtt.0 as f64;
        let maxwnd = max_window(cfg.max_window, line_bytes, network_rtt, mtu);
        let initial = cfg.initial_window.map_or(maxwnd, |w| max_window(w, line_bytes, network_rtt, mtu));
        Nscc {
            max_factor: cfg.max_window,
            line_bytes,
            mtu,
            header: facts.packet_bytes.saturating_sub(facts.mtu),
            target,
            alpha: cfg.proportional_gain * mtu * a * b / target.0 as f64,
            fi: cfg.fair_increase * mtu * a,
            eta: cfg.eta * mtu * a,
            fi_scale: cfg.fast_increase * a,
            fi_delay: cfg.fast_increase_delay,
            gamma: cfg.md_gain,
            delay_ewma: cfg.delay_ewma,
            quick_adapt: cfg.quick_adapt,
            qa_gate: cfg.qa_gate,
            qa_threshold: SimTime((cfg.qa_delay * target.0 as f64) as u64),
            adjust_bytes: f64::from(cfg.adjust_packets) * mtu,
            adjust_period: network_rtt,
            network_rtt,
            cwnd: initial.min(maxwnd),
            maxwnd,
            base_rtt: network_rtt,
            avg_delay: 0.0,
            inc: 0.0,
            received: 0.0,
            last_adjust: None,
            last_decrease: None,
            fi_count: 0.0,
            increasing: false,
            achieved: 0.0,
            qa_end: None,
            trigger_qa: false,
            bytes_to_ignore: 0.0,
            bytes_ignored: 0.0,
            in_flight: 0,
            credit: cfg.receiver_credit.then(|| Credit::new(&RcccConfig::default(), facts)),
        }
    }

    /// The congestion window, bytes.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The largest window now (it shrinks with the base RTT), bytes.
    pub fn max_cwnd(&self) -> f64 {
        self.maxwnd
    }

    /// The smallest window, bytes: one packet.
    pub fn min_cwnd(&self) -> f64 {
        self.mtu
    }

    pub fn target_delay(&self) -> SimTime {
        self.target
    }

    fn bound(&mut self) {
        self.cwnd = self.cwnd.clamp(self.mtu, self.maxwnd);
    }

    /// Time since `t`, or "long ago" for a `t` never set (the reference's times start at zero,
    /// when its flows start).
    fn since(now: SimTime, t: Option<SimTime>) -> SimTime {
        t.map_or(SimTime::MAX, |t| now.saturating_sub(t))
    }

    /// `update_base_rtt`: a lower RTT lowers the base and the largest window with it.
    fn sample_base_rtt(&mut self, rtt: SimTime) {
        if rtt < self.base_rtt {
            self.base_rtt = rtt;
            self.maxwnd = max_window(self.max_factor, self.line_bytes, rtt, self.mtu);
        }
    }

    /// `update_delay`: the smoothed delay. An unmarked sample above the target counts as a
    /// quarter base RTT: a queue that marks nothing is not on this flow's path.
    fn smooth_delay(&mut self, delay: SimTime, marked: bool) {
        let sample =
            if !marked && delay > self.target { self.base_rtt.0 as f64 * 0.25 } else { delay.0 as f64 };
        self.avg_delay = self.delay_ewma * sample + (1.0 - self.delay_ewma) * self.avg_delay;
    }

    /// `quick_adapt`: true if it acted (cut the window) or the ACK is one to ignore.
    fn quick_adapt(&mut self, now: SimTime, loss: bool, marked: bool, delay: SimTime) -> bool {
        if !self.quick_adapt {
            return false;
        }
        let mut done = false;
        if self.bytes_ignored < self.bytes_to_ignore && marked {
            // Marks on what was in flight at the last QuickAdapt: that congestion is dealt with.
            done = true;
        } else if self.qa_end.is_none_or(|end| now > end) {
            let gate = self.maxwnd / f64::from(1u32 << self.qa_gate);
            if self.qa_end.is_some()
                && (self.trigger_qa || loss || delay > self.qa_threshold)
                && self.achieved < gate
            {
                self.cwnd = self.achieved.max(self.mtu);
                self.bytes_to_ignore = self.in_flight as f64;
                self.bytes_ignored = 0.0;
                self.trigger_qa = false;
                done = true;
            }
            self.achieved = 0.0;
            self.qa_end = Some(now + self.base_rtt + self.target);
        }
        if done {
            self.inc = 0.0;
            self.received = 0.0;
        }
        done
    }

    /// `fast_increase`: after a whole window at almost no delay, every byte acknowledged adds
    /// `fi_scale` bytes, until the delay rises.
    fn fast_increase(&mut self, acked: f64, delay: SimTime) {
        if delay < self.fi_delay {
            self.fi_count += acked;
            if self.fi_count > self.cwnd || self.increasing {
                self.cwnd += acked * self.fi_scale;
                self.increasing = true;
                return;
            }
        } else {
            self.fi_count = 0.0;
        }
        self.increasing = false;
    }

    fn proportional_increase(&mut self, acked: f64, delay: SimTime) {
        self.fast_increase(acked, delay);
        if !self.increasing {
            self.inc += self.alpha * acked * (self.target.0 - delay.0) as f64;
        }
    }

    fn multiplicative_decrease(&mut self, now: SimTime) {
        self.increasing = false;
        self.fi_count = 0.0;
        let (avg, target) = (self.avg_delay, self.target.0 as f64);
        if avg > target && Self::since(now, self.last_decrease) > self.base_rtt {
            // Never more than halve at once.
            self.cwnd *= (1.0 - self.gamma * (avg - target) / avg).max(0.5);
            self.cwnd = self.cwnd.max(self.mtu);
            self.last_decrease = Some(now);
        }
    }

    /// `fulfill_adjustment`: the increases gathered since the last one, and `eta` once per
    /// period.
    fn adjust(&mut self, now: SimTime) {
        self.cwnd += self.inc / self.cwnd;
        if Self::since(now, self.last_adjust) >= self.adjust_period {
            self.cwnd += self.eta;
            self.last_adjust = Some(now);
        }
        self.inc = 0.0;
        self.received = 0.0;
    }

    /// A NACK or a timeout (`updateCwndOnNack_NSCC`): QuickAdapt is armed; unless it fires now,
    /// the window loses a packet, but for a trim at the last hop with receiver credit (`if
    /// (adjust_cwnd && (!_receiver_based_cc || !last_hop))`: the receiver's credit paces its own
    /// link, so a queue there is the credit's to drain).
    fn on_loss(&mut self, now: SimTime, nack: bool, last_hop: bool) {
        if nack {
            // The NACKed packet counts against the marks to ignore, and a trim means a queue of
            // about the network RTT (the reference's estimate of the trimming threshold).
            self.bytes_ignored += self.mtu;
            self.smooth_delay(self.network_rtt, true);
        }
        self.trigger_qa = true;
        let adapted = self.quick_adapt(now, true, true, SimTime::ZERO);
        // With receiver credit, a queue at the receiver's link is the credit's to drain.
        let spared = last_hop && self.credit.is_some();
        if !(adapted || spared) {
            self.cwnd -= self.mtu;
            self.bound();
        }
        if let Some(c) = &mut self.credit {
            if nack {
                c.on_nack();
            } else {
                c.on_loss();
            }
        }
    }

    /// The window the credit allows, as a steady signal: its rate over the base RTT.
    fn credit_window(&self) -> Option<f64> {
        self.credit.as_ref().map(|c| c.share() / 8.0 * self.base_rtt.as_secs_f64())
    }
}

impl CongestionControl for Nscc {
    fn on_ack(&mut self, ack: &AckInfo<'_>, cx: &mut CcContext) {
        let now = cx.now();
        self.in_flight = ack.in_flight;
        if let Some(c) = &mut self.credit {
            c.on_ack(ack);
        }
        let acked = ack.newly_acked as f64;
        self.achieved += acked;
        self.received += acked;
        self.bytes_ignored += acked;
        // processAck: the base RTT first, so the sample is never below it.
        self.sample_base_rtt(ack.rtt);
        let delay = ack.rtt - self.base_rtt;
        let marked = ack.ecn_echo;
        self.smooth_delay(delay, marked);

        if self.quick_adapt(now, false, marked, delay) {
            // (The reference returns unbounded here, so a window above a largest window just
            // lowered with the base RTT waits for the next ACK to come down.)
            self.bound();
            return;
        }
        match (marked, delay >= self.target) {
            (false, true) => self.inc += self.fi * acked,
            (false, false) => self.proportional_increase(acked, delay),
            (true, true) => self.multiplicative_decrease(now),
            (true, false) => {} // a mark below the target delay: no change
        }
        self.bound();
        if self.received > self.adjust_bytes || Self::since(now, self.last_adjust) > self.adjust_period {
            self.adjust(now);
        }
        self.bound();
    }

    fn on_send(&mut self, bytes: u64, _cx: &mut CcContext) {
        self.in_flight += bytes.saturating_sub(self.header);
        if let Some(c) = &mut self.credit {
            c.on_send(bytes);
        }
    }

    fn on_event(&mut self, ev: CcEvent, cx: &mut CcContext) {
        match ev {
            CcEvent::Nack { last_hop, .. } => self.on_loss(cx.now(), true, last_hop),
            CcEvent::Timeout => self.on_loss(cx.now(), false, false),
            _ => {}
        }
    }

    fn rate(&self) -> f64 {
        self.line_bytes * 8.0
    }

    fn window(&self) -> Option<u64> {
        let cwnd = (self.cwnd as u64).max(1);
        Some(self.credit.as_ref().map_or(cwnd, |c| cwnd.min(c.window())))
    }

    /// The smoothed queuing delay and the base RTT; the credit held with receiver credit.
    fn metrics(&self, report: &mut dyn FnMut(&str, f64)) {
        report("avg_delay_us", self.avg_delay / 1e6);
        report("base_rtt_us", self.base_rtt.as_us_f64());
        if let Some(c) = &self.credit {
            report("credit_bytes", c.credit());
        }
    }

    /// The window (bytes): it alone limits sending (with receiver credit, the smaller of it and
    /// the credit rate's window over the base RTT).
    fn steady_signal(&self) -> Option<f64> {
        Some(self.credit_window().map_or(self.cwnd, |w| w.min(self.cwnd)))
    }

    /// The end of the QuickAdapt period and the times of the last adjustment and decrease.
    fn shift_clock(&mut self, by: SimTime) {
        for t in [&mut self.qa_end, &mut self.last_adjust, &mut self.last_decrease] {
            *t = t.map(|t| t + by);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::facts;

    fn ack(newly: u64, ecn: bool, rtt: SimTime, in_flight: u64) -> AckInfo<'static> {
        AckInfo {
            ack_seq: 0,
            newly_acked: newly,
            ecn_echo: ecn,
            rtt,
            in_flight,
            snd_nxt: 0,
            int: &[],
            pint: 0,
            feedback: [0; 2],
        }
    }

    /// A flow whose window was set to half its largest, after one ACK has opened the QuickAdapt
    /// period and the adjustment clock (so that the next ACKs are judged by their quadrant).
    fn started(cfg: &NsccConfig) -> (Nscc, SimTime) {
        let f = facts();
        let mut n = Nscc::new(cfg, &f);
        n.cwnd = n.maxwnd / 2.0;
        let t0 = SimTime::from_us(10);
        n.on_ack(&ack(1000, false, f.base_rtt, 50_000), &mut CcContext::new(t0));
        n.cwnd = n.maxwnd / 2.0;
        (n, t0)
    }

    /// `count` ACKs of one packet each, 100 ns apart from `from`, with this mark and RTT.
    fn acks(n: &mut Nscc, from: SimTime, count: u64, ecn: bool, rtt: SimTime) -> SimTime {
        let mut now = from;
        for _ in 0..count {
            now += SimTime::from_ns(100);
            n.on_ack(&ack(1000, ecn, rtt, 50_000), &mut CcContext::new(now));
        }
        now
    }

    #[test]
    fn defaults_follow_the_reference_scaling() {
        let f = facts(); // 100 Gbps, 8 us base RTT, 1000 B MTU
        let n = Nscc::new(&NsccConfig::default(), &f);
        let bdp = 100e9 / 8.0 * 8e-6; // 100 KB
        assert!((n.maxwnd - 1.5 * bdp).abs() < 1.0, "max window {}", n.maxwnd);
        assert_eq!(n.cwnd, n.maxwnd, "starts at the largest window");
        assert_eq!(n.target, f.base_rtt);
        let a = bdp / 150_000.0; // against 100 Gbps x 12 us
        assert!((n.fi - 5.0 * 1000.0 * a).abs() < 1e-9);
        assert!((n.eta - 0.15 * 1000.0 * a).abs() < 1e-9);
        assert_eq!(n.qa_threshold, SimTime::from_us(32));
    }

    #[test]
    fn by_default_the_parameters_come_from_the_networks_rtt_and_the_flows_with_the_variant() {
        // A flow of 4 us in a network whose longest round trip is 8 us.
        let f = FlowFacts { base_rtt: SimTime::from_us(4), network_rtt: SimTime::from_us(8), ..facts() };
        let n = Nscc::new(&NsccConfig::default(), &f);
        // initNscc: base RTT and largest window from the network's round trip.
        assert_eq!(n.base_rtt, SimTime::from_us(8));
        let network_bdp = 100e9 / 8.0 * 8e-6;
        assert!((n.maxwnd - 1.5 * network_bdp).abs() < 1.0, "max window {}", n.maxwnd);
        // initNsccParams: target 1 x the network RTT without trimming, gains scaled by its BDP,
        // adjustment period one network RTT.
        assert_eq!((n.target, n.adjust_period, n.network_rtt), (f.network_rtt, f.network_rtt, f.network_rtt));
        let a = network_bdp / 150_000.0;
        assert!((n.fi - 5.0 * 1000.0 * a).abs() < 1e-9);
        // With trimming on: 0.75 x it, and the gains and thresholds that follow from it.
        let t = Nscc::new(&NsccConfig::default(), &FlowFacts { trimming: true, ..f });
        assert_eq!(t.target, SimTime::from_us(6));
        assert_eq!(t.qa_threshold, SimTime::from_us(24));
        let b = 6.0 / 12.0;
        assert!((t.alpha - 4.0 * 1000.0 * a * b / 6e6).abs() < 1e-15, "alpha {}", t.alpha);
        // A target given explicitly wins.
        let cfg = NsccConfig { target_delay: Some(SimTime::from_us(3)), ..NsccConfig::default() };
        assert_eq!(Nscc::new(&cfg, &FlowFacts { trimming: true, ..f }).target, SimTime::from_us(3));
        // The variant: everything from the flow's own round trip, trimming or not.
        let cfg = NsccConfig { rtt_from: RttFrom::Flow, ..NsccConfig::default() };
        let v = Nscc::new(&cfg, &FlowFacts { trimming: true, ..f });
        assert_eq!((v.base_rtt, v.target, v.adjust_period), (f.base_rtt, f.base_rtt, f.base_rtt));
        assert!((v.maxwnd - 1.5 * network_bdp / 2.0).abs() < 1.0);
    }

    #[test]
    fn a_last_hop_trim_spares_the_window_only_under_receiver_credit() {
        let f = facts();
        // A NACK well inside the QuickAdapt period, which therefore only takes a packet off.
        let nack = |cfg: &NsccConfig, last_hop: bool| {
            let mut n = Nscc::new(cfg, &f);
            let t0 = SimTime::from_us(10);
            n.on_ack(&ack(1000, false, f.base_rtt, 50_000), &mut CcContext::new(t0));
            let before = n.cwnd;
            n.on_event(CcEvent::Nack { seq: 0, trimmed: true, last_hop }, &mut CcContext::new(t0 + SimTime::from_ns(500)));
            assert!(n.trigger_qa, "QuickAdapt armed either way");
            before - n.cwnd
        };
        let alone = NsccConfig::default();
        assert_eq!(nack(&alone, false), 1000.0);
        assert_eq!(nack(&alone, true), 1000.0, "without credit a last-hop trim cuts as any other");
        let credit = NsccConfig { receiver_credit: true, ..NsccConfig::default() };
        assert_eq!(nack(&credit, false), 1000.0, "a trim inside the fabric cuts");
        assert_eq!(nack(&credit, true), 0.0, "the receiver's credit paces its own link");
    }

    #[test]
    fn no_mark_and_delay_below_target_increases_in_proportion_to_the_headroom() {
        let cfg = NsccConfig::default();
        let base = facts().base_rtt;
        // 2 us of queuing against an 8 us target: proportional, not fast, increase.
        let (mut n, t0) = started(&cfg);
        let before = n.cwnd;
        acks(&mut n, t0, 9, false, base + SimTime::from_us(2));
        let grown = n.cwnd - before;
        // Nine packets acknowledged (the adjustment comes after more than 8): alpha x acked x
        // headroom / window, and no eta (the period has not passed).
        let want = n.alpha * 9000.0 * 6e6 / before;
        assert!(grown > 0.0 && (grown - want).abs() < 1e-6 * want, "grew {grown}, expected {want}");
        // Less headroom, less growth.
        let (mut m, t0) = started(&cfg);
        acks(&mut m, t0, 9, false, base + SimTime::from_us(6));
        assert!(m.cwnd - before < grown / 2.0, "{} vs {grown}", m.cwnd - before);
    }

    #[test]
    fn no_mark_and_delay_above_target_increases_fairly() {
        let cfg = NsccConfig::default();
        let base = facts().base_rtt;
        let (mut n, t0) = started(&cfg);
        let before = n.cwnd;
        acks(&mut n, t0, 9, false, base + SimTime::from_us(20));
        let want = n.fi * 9000.0 / before;
        assert!((n.cwnd - before - want).abs() < 1e-6 * want, "grew {}, expected {want}", n.cwnd - before);
        // The same step for a window twice as small: fair, whatever the window.
        let (mut m, t0) = started(&cfg);
        m.cwnd = before / 2.0;
        acks(&mut m, t0, 9, false, base + SimTime::from_us(20));
        assert!((m.cwnd - before / 2.0 - 2.0 * want).abs() < 1e-6 * want, "the step scales as 1 / window");
    }

    #[test]
    fn a_mark_with_delay_below_target_changes_nothing() {
        let cfg = NsccConfig::default();
        let base = facts().base_rtt;
        let (mut n, t0) = started(&cfg);
        let before = n.cwnd;
        acks(&mut n, t0, 20, true, base + SimTime::from_us(2));
        assert_eq!(n.cwnd, before);
    }

    #[test]
    fn a_mark_with_delay_above_target_cuts_once_per_base_rtt() {
        let cfg = NsccConfig::default();
        let base = facts().base_rtt;
        let (mut n, t0) = started(&cfg);
        n.avg_delay = SimTime::from_us(16).0 as f64; // twice the target
        let before = n.cwnd;
        let now = acks(&mut n, t0, 1, true, base + SimTime::from_us(20));
        // avg moved a little towards 20 us: the cut is 1 - 0.8 x (avg - 8) / avg, about 0.4.
        let avg = n.avg_delay;
        let want = before * (1.0 - 0.8 * (avg - 8e6) / avg);
        assert!((n.cwnd - want).abs() < 1e-6 * want, "cut to {}, expected {want}", n.cwnd);
        // More marks within the base RTT: no further cut.
        let cut = n.cwnd;
        let now = acks(&mut n, now, 20, true, base + SimTime::from_us(20));
        assert_eq!(n.cwnd, cut);
        // After a base RTT, the next cut.
        n.on_ack(&ack(1000, true, base + SimTime::from_us(20), 50_000), &mut CcContext::new(now + base));
        assert!(n.cwnd < cut, "{} after a base RTT", n.cwnd);
    }

    #[test]
    fn a_cut_never_more_than_halves() {
        let cfg = NsccConfig::default();
        let (mut n, t0) = started(&cfg);
        n.avg_delay = SimTime::from_us(800).0 as f64;
        let before = n.cwnd;
        acks(&mut n, t0, 1, true, facts().base_rtt + SimTime::from_us(800));
        assert!((n.cwnd - before * 0.5).abs() < 1e-6 * before, "{} from {before}", n.cwnd);
    }

    #[test]
    fn clean_acks_at_no_delay_turn_on_fast_increase_after_a_window() {
        let cfg = NsccConfig::default();
        let base = facts().base_rtt;
        let (mut n, t0) = started(&cfg);
        n.cwnd = 5_000.0; // five packets
        // The first ACK counted one packet already: four more make a window, not more.
        let now = acks(&mut n, t0, 4, false, base);
        assert!(!n.increasing, "not before more than a window came back");
        let before = n.cwnd;
        acks(&mut n, now, 1, false, base);
        assert!(n.increasing);
        assert!(n.cwnd - before >= 1000.0 * n.fi_scale - 1e-9, "fast step {}", n.cwnd - before);
    }

    #[test]
    fn quick_adapt_on_a_nack_drops_the_window_to_what_came_back() {
        let cfg = NsccConfig::default();
        let f = facts();
        let mut n = Nscc::new(&cfg, &f);
        let t0 = SimTime::from_us(10);
        n.on_ack(&ack(1000, false, f.base_rtt, 50_000), &mut CcContext::new(t0)); // opens the period
        let end = n.qa_end.unwrap();
        // Three packets come back in the period, far below an eighth of the largest window.
        acks(&mut n, t0, 3, false, f.base_rtt);
        let before = n.cwnd;
        // A NACK within the period only takes a packet off; QuickAdapt waits for the period's end.
        n.on_event(CcEvent::Nack { seq: 0, trimmed: true, last_hop: false }, &mut CcContext::new(t0 + SimTime::from_ns(500)));
        assert_eq!(n.cwnd, before - 1000.0);
        assert!(n.trigger_qa);
        // The next ACK after the period: the window becomes the bytes achieved in it.
        n.on_ack(&ack(1000, false, f.base_rtt, 20_000), &mut CcContext::new(end + SimTime::from_ns(1)));
        assert_eq!(n.cwnd, 4000.0, "three ACKs in the period and this one");
        assert!(!n.trigger_qa);
        // Marked ACKs for what was in flight then are ignored: no cut however late.
        n.avg_delay = 1e9;
        let later = end + SimTime::from_us(100);
        n.on_ack(&ack(1000, true, f.base_rtt + SimTime::from_us(50), 20_000), &mut CcContext::new(later));
        assert_eq!(n.cwnd, 4000.0);
    }

    #[test]
    fn quick_adapt_on_a_timeout_and_only_below_the_gate() {
        let cfg = NsccConfig::default();
        let f = facts();
        let mut n = Nscc::new(&cfg, &f);
        let t0 = SimTime::from_us(10);
        n.on_ack(&ack(1000, false, f.base_rtt, 50_000), &mut CcContext::new(t0));
        let end = n.qa_end.unwrap();
        n.on_event(CcEvent::Timeout, &mut CcContext::new(end + SimTime::from_ns(1)));
        assert_eq!(n.cwnd, 1000.0, "no byte came back in the period: down to one packet");
        // A flow that got most of its window through is left alone.
        let mut m = Nscc::new(&cfg, &f);
        m.on_ack(&ack(1000, false, f.base_rtt, 50_000), &mut CcContext::new(t0));
        m.on_ack(&ack(100_000, false, f.base_rtt, 50_000), &mut CcContext::new(t0 + SimTime::from_us(1)));
        let before = m.cwnd;
        m.on_event(CcEvent::Timeout, &mut CcContext::new(end + SimTime::from_ns(1)));
        assert_eq!(m.cwnd, before - 1000.0, "above the gate: one packet off");
    }

    #[test]
    fn a_long_delay_without_loss_also_arms_quick_adapt() {
        let cfg = NsccConfig::default();
        let f = facts();
        let mut n = Nscc::new(&cfg, &f);
        let t0 = SimTime::from_us(10);
        n.on_ack(&ack(1000, false, f.base_rtt, 50_000), &mut CcContext::new(t0));
        let end = n.qa_end.unwrap();
        // Above 4 x the target (32 us of queuing).
        n.on_ack(&ack(1000, false, f.base_rtt + SimTime::from_us(40), 50_000), &mut CcContext::new(end + SimTime(1)));
        assert_eq!(n.cwnd, 1000.0);
    }

    #[test]
    fn the_window_stays_between_one_packet_and_its_largest() {
        let cfg = NsccConfig::default();
        let f = facts();
        let mut n = Nscc::new(&cfg, &f);
        n.cwnd = 1000.0;
        let mut now = SimTime::ZERO;
        // Growth: clean ACKs at no delay for long.
        for _ in 0..10_000 {
            now += SimTime::from_ns(80);
            n.on_ack(&ack(1000, false, f.base_rtt, 50_000), &mut CcContext::new(now));
            assert!(n.cwnd <= n.maxwnd && n.window().unwrap() as f64 <= n.maxwnd);
        }
        assert_eq!(n.cwnd, n.maxwnd, "reaches and holds its largest window");
        // Cuts: marks at a huge delay, NACKs and timeouts.
        n.avg_delay = 1e12;
        for i in 0..10_000u64 {
            now += SimTime::from_us(10);
            match i % 3 {
                0 => n.on_ack(&ack(0, true, f.base_rtt + SimTime::from_ms(1), 50_000), &mut CcContext::new(now)),
                1 => n.on_event(CcEvent::Nack { seq: 0, trimmed: true, last_hop: false }, &mut CcContext::new(now)),
                _ => n.on_event(CcEvent::Timeout, &mut CcContext::new(now)),
            }
            assert!(n.cwnd >= 1000.0 && n.window().unwrap() >= 1000, "window {} below a packet", n.cwnd);
        }
        assert_eq!(n.cwnd, 1000.0, "reaches and holds one packet");
    }

    #[test]
    fn a_lower_rtt_lowers_the_base_and_the_largest_window() {
        let cfg = NsccConfig::default();
        let f = facts();
        let mut n = Nscc::new(&cfg, &f);
        n.on_ack(&ack(1000, false, SimTime::from_us(4), 0), &mut CcContext::new(SimTime::from_us(5)));
        assert_eq!(n.base_rtt, SimTime::from_us(4));
        assert!((n.maxwnd - 75_000.0).abs() < 1.0, "1.5 x 100 Gbps x 4 us: {}", n.maxwnd);
        assert!(n.cwnd <= n.maxwnd);
    }

    #[test]
    fn with_receiver_credit_the_window_is_the_smaller() {
        let cfg = NsccConfig { receiver_credit: true, ..NsccConfig::default() };
        let f = facts();
        let mut n = Nscc::new(&cfg, &f);
        let mut cx = CcContext::new(SimTime::from_us(1));
        // The speculative credit (1.5 products) is as large as the first window.
        assert_eq!(n.window(), Some(150_000));
        // An ACK without a credit word changes nothing of the credit (10 KB in flight plus the
        // speculative 150 KB is above NSCC's window).
        n.on_ack(&ack(1000, false, f.base_rtt, 10_000), &mut cx);
        assert_eq!(n.window(), Some(150_000));
        // The first credit ACK ends the speculation: 10 KB in flight, no credit left.
        let mut a = ack(0, false, f.base_rtt, 10_000);
        a.feedback = [0, 2];
        n.on_ack(&a, &mut cx);
        assert_eq!(n.window(), Some(10_000));
        // 5 KB granted: 15 KB, below NSCC's window.
        a.feedback = [5_000, 2];
        n.on_ack(&a, &mut cx);
        assert_eq!(n.window(), Some(15_000));
        // NSCC's window below that: NSCC's.
        n.cwnd = 8_000.0;
        assert_eq!(n.window(), Some(8_000));
        assert_eq!(n.steady_signal(), Some(8_000.0));
    }
}
