//! PC4: "Precision Collective Communication Congestion Control for AI Cluster". The receiver
//! knows how many flows are coming in and for which collective, and tells each sender its share (the base rate); the sender jumps to a new share at once and
//! fine-tunes around it on the one-way delay, against a target queuing time.
//!
//! - **Receiver** (Algorithm 1, Table I), per data packet: base rate = receiver line rate / n for
//!   all-reduce and for traffic without a collective tag, line rate / (n - 1) for all-to-all and
//!   all-gather, n the flows coming in (a central controller's count by default, or the flows
//!   the receiver has seen itself); one-way delay = receive time - send timestamp - baseline
//!   (§III-B), on the hosts' clocks. Both go back in the ACK.
//! - **Sender** (Algorithm 2): when the ACK's base rate differs from the recorded one, the rate
//!   becomes the base rate at once (lines 4-7); otherwise, at most once per adjust interval
//!   (lines 9-11, §III-C "at least one RTT"), zero delay -> hyper additive increase, delay below
//!   target -> additive increase, else multiplicative decrease by
//!   max(1 - max_mdf, 1 - beta (delay - target) / (delay + baseline)) (lines 20-27). The window
//!   is rate x RTT (line 12), allowed down to `min_cwnd` packets; below one packet the sender
//!   paces one packet every RTT / cwnd (lines 13-16, §III-C).
//! - **ACK timeout** (lines 17-19, §III-D): cut by max_mdf and forget the base rate.
//! - **Target queuing time** (§III-C, §IV-C): scaled by the path's baseline and, where a flow's
//!   share is less than a packet per base RTT, by the span between its delay samples; the
//!   paper's O(1/N) term is a setting. The paper gives no formula; ours is in `docs/cc/pc4.md`.
//!
//! What the paper leaves open and we chose is documented per field and in `docs/cc/pc4.md`.
//! Where our default reads Algorithm 2 differently from its letter (the window over the base
//! RTT, a negative delay counted as zero), the letter is a setting: [`WindowRtt`],
//! [`NegativeDelay`].
//!
//! Steady signal (fast-forward): what limits sending: the window, in bytes, at a packet or
//! more (the NIC then paces at line rate); below one packet, the pacing rate, in bits/s
//! (tx_rate then).

use super::{AckInfo, Algorithm, Cc, CcContext, CcEvent, Check, CongestionControl, DataArrival, FlowFacts, Receiver, ReceiverAction, ReceiverCc};
use crate::tags::CollectiveKind;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Where the receiver's count of incoming flows comes from.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowCount {
    /// The job's central controller (§II-A): every flow into the receiver from the moment it
    /// starts until it is delivered, even before its first packet arrives.
    #[default]
    Controller,
    /// What the receiver counts itself: flows it has received a packet of and not yet received
    /// whole. It learns of a new flow one one-way delay later than the controller.
    Observed,
}

/// The round trip in Algorithm 2's line 12 (window = tx_rate x RTT) and line 14 (pacing gap
/// RTT / window). The same RTT goes in both, so below one packet the paced rate is tx_rate
/// whichever it is; they differ in how much a window of a packet or more lets into the queue.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WindowRtt {
    /// The idle path's round trip, as HPCC's W = R x T: a flow keeps at most its rate's worth of
    /// one base RTT in flight, so a queue cannot widen the window that built it.
    Base,
    /// The latest RTT sample, as the paper writes line 12: the window grows with the queue, so
    /// a flow's throughput follows tx_rate whatever the queue, and only the delay rule drains it.
    #[default]
    Latest,
}

/// What a one-way delay below zero does (clock offset or noise on an idle path measures one).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NegativeDelay {
    /// Counts as zero: no queue on the path, hyper additive increase (line 22).
    AsZero,
    /// As Algorithm 2 is written: neither "= 0" (line 21) nor "0 < d < target" (line 23) holds,
    /// so line 26's factor 1 - beta (d - target) / (d + baseline) applies, which is then above 1
    /// (x2.4 at d = -1 us with a 1 us target and a 2.2 us baseline).
    #[default]
    AsWritten,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Pc4Config {
    /// Use the receiver's base rate (Algorithm 2 lines 4-7); off for the paper's ablations.
    pub base_rate: bool,
    /// Fine-tune on the one-way delay (lines 9-11, 20-27); off for the paper's ablations.
    pub adjust_rate: bool,
    pub flow_count: FlowCount,
    /// Start at the share the controller knows at the flow's start (line rate / the flows heading
    /// to the receiver, by Table I) instead of at line rate until the first ACK. Needs
    /// `base_rate`; applies with either `flow_count`, since the sender's controller is the same.
    pub start_at_share: bool,
    /// Target queuing time for a path with the reference baseline and one flow.
    pub target_qtime: SimTime,
    /// Scale the target by the path's baseline / `reference_baseline` (§III-C: longer paths
    /// get proportionally more room, for fairness across path lengths).
    pub scale_target_by_baseline: bool,
    /// The baseline at which the target is `target_qtime` (2 us: one switch, 1 us links).
    pub reference_baseline: SimTime,
    /// Divide the target by the number of competing flows N (§III-C: O(1/N)); N is the
    /// receiver's count as the base rate tells it (line rate / base rate). Off by default: past
    /// N of about 50 the target falls below one packet's serialisation and every queued packet
    /// triggers a decrease (see `docs/cc/pc4.md`).
    pub scale_target_by_flows: bool,
    /// Divide the target by the flow's window in packets when its share's window is below one
    /// packet (share x base RTT < one packet). Such a flow gets one delay sample per packet, one
    /// every base RTT / window, and the queue of N paced flows moves over that span, not over one
    /// RTT: the target grows with the span so that it stays target_qtime per RTT of feedback.
    /// From what a deployment knows: the controller's share and the base RTT (see
    /// `docs/cc/pc4.md`, "Many flows").
    pub scale_target_by_window: bool,
    /// Additive increase per adjustment, as a fraction of the flow's share (its base rate, or
    /// the line rate before it has one): N flows together then add the same total whatever N.
    pub additive_increase: f64,
    /// Hyper additive increase (zero delay), same unit.
    pub hyper_increase: f64,
    /// Multiplicative decrease gain beta.
    pub beta: f64,
    /// Largest cut per adjustment (and per ACK timeout).
    pub max_mdf: f64,
    /// Least time between two adjustments. Absent: `adjust_rtts` times the latest RTT sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adjust_interval: Option<SimTime>,
    /// Without `adjust_interval`: adjust at most once per this many (latest) RTTs. §III-C asks
    /// for more than one, so that the packets sent at the new rate have propagated: their ACKs
    /// start coming back one RTT after the change and have all come back one RTT later.
    pub adjust_rtts: f64,
    /// Smallest window, packets (§III-C: 0.0001).
    pub min_cwnd: f64,
    pub window_rtt: WindowRtt,
    pub negative_delay: NegativeDelay,
    /// Bytes PC4 adds to a data packet: the send timestamp (8) and the baseline (4).
    pub data_header_bytes: u64,
    /// Bytes PC4 adds to an ACK: the base rate (4) and the one-way delay (4).
    pub ack_header_bytes: u64,
}

/// The default is Algorithm 2 as the paper writes it, with what the text leaves open filled in
/// from the text (docs/cc/pc4.md maps each line to the code and lists every departure).
impl Default for Pc4Config {
    fn default() -> Self {
        Pc4Config {
            base_rate: true,
            adjust_rate: true,
            flow_count: FlowCount::Controller,
            // Line 1: base_recorded = 0 and no initial rate: the flow starts as an RDMA NIC
            // does, at line rate, and takes its share from the first ACK (lines 4-7).
            start_at_share: false,
            target_qtime: SimTime::from_us(1),
            // §III-C: "PC4 utilizes the known baseline delay as a reference point for setting
            // the target qtime threshold" ...
            scale_target_by_baseline: true,
            reference_baseline: SimTime::from_us(2),
            // ... "we decrease the target qtime with an O(1/N) reduction".
            scale_target_by_flows: true,
            scale_target_by_window: false,
            additive_increase: 0.01,
            hyper_increase: 0.05,
            beta: 0.8,
            max_mdf: 0.5,
            adjust_interval: None,
            // §III-C: the interval "is set to exceed one RTT, ensuring sufficient time for the
            // data packets with the updated cwnd to propagate": a window sent at the new rate
            // takes one RTT to leave and its last ACK one more to come back.
            adjust_rtts: 2.0,
            min_cwnd: 0.0001,
            // Line 12: cwnd = tx_rate x rtt, the latest RTT; lines 21-27 as written.
            window_rtt: WindowRtt::Latest,
            negative_delay: NegativeDelay::AsWritten,
            data_header_bytes: 12,
            ack_header_bytes: 8,
        }
    }
}

/// The named parameter sets of `preset = "..."`.
const PRESETS: &[&str] = &["paper", "ours"];

impl Pc4Config {
    /// Preset `name`: `paper` is the default above, Algorithm 2 as written; `ours` is aiccsim's
    /// reading of it, which departs from the text in five places, each made after an
    /// experiment (docs/cc/pc4.md, "Two readings"): the window over the base RTT, a negative
    /// delay counted as zero, the start at the controller's share, and the target divided by the
    /// share's window below one packet instead of by the number of flows.
    pub fn preset(name: &str) -> Option<Pc4Config> {
        match name {
            "paper" => Some(Pc4Config::default()),
            "ours" => Some(Pc4Config {
                window_rtt: WindowRtt::Base,
                negative_delay: NegativeDelay::AsZero,
                start_at_share: true,
                scale_target_by_flows: false,
                scale_target_by_window: true,
                ..Pc4Config::default()
            }),
            _ => None,
        }
    }
}

impl Algorithm for Pc4Config {
    fn name(&self) -> &'static str {
        "pc4"
    }

    fn describe(&self) -> &'static str {
        "PC4: the receiver sends each flow its share of the line (base rate, from the incoming flows and the collective) and the one-way delay; the sender jumps to the share and fine-tunes around a target queuing time"
    }

    fn optional_parameters(&self) -> &'static [(&'static str, &'static str)] {
        &[("adjust_interval", "adjust_rtts x the latest RTT sample")]
    }

    fn presets(&self) -> &'static [&'static str] {
        PRESETS
    }

    fn preset_table(&self, name: &str) -> Option<toml::Table> {
        let cfg = Pc4Config::preset(name)?;
        Some(toml::Table::try_from(cfg).expect("a config serialises to a table"))
    }

    fn validate(&self) -> Check {
        let key = |k: &str| format!("cc.{k}");
        for (k, v) in [("additive_increase", self.additive_increase), ("hyper_increase", self.hyper_increase)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err((key(k), format!("a fraction of the flow's share in (0, 1], got {v}")));
            }
        }
        for (k, v) in [("beta", self.beta), ("max_mdf", self.max_mdf)] {
            if !(v > 0.0 && v < 1.0) {
                return Err((key(k), format!("must be in (0, 1), got {v}")));
            }
        }
        if !(self.min_cwnd > 0.0 && self.min_cwnd <= 1.0) {
            return Err((key("min_cwnd"), format!("must be in (0, 1] packets, got {}", self.min_cwnd)));
        }
        if self.reference_baseline.0 == 0 {
            return Err((key("reference_baseline"), "must be positive, e.g. \"2us\"".into()));
        }
        if !(self.adjust_rtts >= 1.0 && self.adjust_rtts.is_finite()) {
            return Err((key("adjust_rtts"), format!("must be at least 1 (one RTT), got {}", self.adjust_rtts)));
        }
        if self.adjust_interval == Some(SimTime::ZERO) {
            return Err((key("adjust_interval"), "must be positive (omit it to adjust once per RTT)".into()));
        }
        for (k, v) in [("data_header_bytes", self.data_header_bytes), ("ack_header_bytes", self.ack_header_bytes)] {
            if v > 256 {
                return Err((key(k), format!("must be at most 256 bytes, got {v}")));
            }
        }
        Ok(())
    }

    fn extra_header_bytes(&self) -> (u64, u64) {
        (self.data_header_bytes, self.ack_header_bytes)
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Pc4(Pc4::new(self, facts))
    }

    fn receiver(&self, facts: &FlowFacts) -> Receiver {
        Receiver::Pc4(Pc4Receiver::new(self, facts))
    }
}


/// The ACK's two feedback words: base rate in kb/s, one-way delay in ns (two's complement).
fn encode(base_rate_bps: f64, one_way_delay_ps: i64) -> [u32; 2] {
    let rate = (base_rate_bps / 1e3).round().clamp(1.0, u32::MAX as f64) as u32;
    let delay = (one_way_delay_ps as f64 / 1e3).round().clamp(i32::MIN as f64, i32::MAX as f64) as i32;
    [rate, delay as u32]
}

fn decode(feedback: [u32; 2]) -> (u32, f64) {
    (feedback[0], feedback[1] as i32 as f64 * 1e-9)
}

/// Algorithm 1: the receiver half.
pub struct Pc4Receiver {
    line_rate: f64,
    /// Table I: all-to-all and all-gather divide by n - 1.
    minus_one: bool,
    baseline_ps: i64,
    flow_count: FlowCount,
}

impl Pc4Receiver {
    pub fn new(cfg: &Pc4Config, facts: &FlowFacts) -> Self {
        let minus_one = matches!(facts.collective, Some((CollectiveKind::AllToAll | CollectiveKind::AllGather, _)));
        Pc4Receiver {
            line_rate: facts.receiver_line_rate.as_f64(),
            minus_one,
            baseline_ps: facts.one_way_baseline.0 as i64,
            flow_count: cfg.flow_count,
        }
    }
}

impl ReceiverCc for Pc4Receiver {
    fn on_data(&mut self, pkt: &DataArrival) -> ReceiverAction {
        let n = match self.flow_count {
            FlowCount::Controller => pkt.incoming_flows,
            FlowCount::Observed => pkt.incoming_seen,
        };
        let divisor = if self.minus_one { n.saturating_sub(1) } else { n }.max(1);
        let base_rate = self.line_rate / divisor as f64;
        let one_way_delay = pkt.measured_delay - self.baseline_ps;
        ReceiverAction { send_cnp: false, feedback: encode(base_rate, one_way_delay) }
    }

    /// The receiver holds no time (the one-way delay arrives measured): nothing to move.
    fn shift_clock(&mut self, _by: SimTime) {}
}

/// Algorithm 2: the sender half.
pub struct Pc4 {
    cfg: Pc4Config,
    line_rate: f64,
    /// The receiver's line rate: what base rates are shares of.
    receiver_line_rate: f64,
    packet_bits: f64,
    mtu: f64,
    baseline: f64,
    /// Target before the flow-count term (seconds).
    path_target: f64,
    /// tx_rate, bits/s.
    rate: f64,
    /// The base rate last taken from an ACK, kb/s (0: none).
    base_recorded: u32,
    last_adjust: SimTime,
    /// Latest RTT sample, seconds (the adjust interval).
    rtt: f64,
    /// The idle path's round trip, seconds.
    base_rtt: f64,
    /// Table I for this flow: divide by n - 1 (all-to-all, all-gather).
    minus_one: bool,
    /// Window, packets.
    cwnd: f64,
}

impl Pc4 {
    pub fn new(cfg: &Pc4Config, facts: &FlowFacts) -> Self {
        let line = facts.line_rate.as_f64();
        let baseline = facts.one_way_baseline.as_secs_f64();
        let mut path_target = cfg.target_qtime.as_secs_f64();
        if cfg.scale_target_by_baseline {
            path_target *= baseline / cfg.reference_baseline.as_secs_f64();
        }
        let packet_bits = facts.packet_bytes as f64 * 8.0;
        let rtt = facts.base_rtt.as_secs_f64();
        Pc4 {
            line_rate: line,
            receiver_line_rate: facts.receiver_line_rate.as_f64(),
            packet_bits,
            mtu: facts.mtu as f64,
            baseline,
            path_target,
            rate: line,
            base_recorded: 0,
            last_adjust: SimTime::ZERO,
            rtt,
            base_rtt: rtt,
            minus_one: matches!(facts.collective, Some((CollectiveKind::AllToAll | CollectiveKind::AllGather, _))),
            cwnd: line * rtt / packet_bits,
            cfg: cfg.clone(),
        }
    }

    /// tx_rate, bits/s.
    pub fn tx_rate(&self) -> f64 {
        self.rate
    }

    /// Window, packets.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The target queuing time now (seconds).
    pub fn target_qtime(&self) -> f64 {
        let mut target = self.path_target;
        if self.base_recorded == 0 {
            return target;
        }
        let share = self.base_recorded as f64 * 1e3;
        if self.cfg.scale_target_by_flows {
            target /= (self.receiver_line_rate / share).round().max(1.0);
        }
        if self.cfg.scale_target_by_window {
            let window = share * self.base_rtt / self.packet_bits;
            if window < 1.0 {
                target /= window;
            }
        }
        target
    }

    /// The flow's share: the recorded base rate, or the line rate before it has one.
    fn share(&self) -> f64 {
        if self.base_recorded > 0 {
            self.base_recorded as f64 * 1e3
        } else {
            self.line_rate
        }
    }

    /// COMPUTE RATE (lines 20-27).
    fn adjusted(&self, one_way_delay: f64) -> f64 {
        let target = self.target_qtime();
        let as_zero = self.cfg.negative_delay == NegativeDelay::AsZero;
        if one_way_delay == 0.0 || (as_zero && one_way_delay < 0.0) {
            // No queue on the path.
            self.rate + self.cfg.hyper_increase * self.share()
        } else if one_way_delay > 0.0 && one_way_delay < target {
            self.rate + self.cfg.additive_increase * self.share()
        } else {
            // At or above the target a cut; below zero (`AsWritten`) the same formula raises the
            // rate. A sample at or below minus the baseline (noise wider than the path) has no
            // finite factor: its limit, line rate (`set_rate` caps it).
            let over = one_way_delay + self.baseline;
            if over <= 0.0 {
                return self.line_rate;
            }
            let factor = 1.0 - self.cfg.beta * (one_way_delay - target) / over;
            self.rate * factor.max(1.0 - self.cfg.max_mdf)
        }
    }

    /// The RTT of lines 12 and 14, seconds (see [`WindowRtt`]). Every ACK that moves `rtt`
    /// also sets the window again, so the window and the pacing gap always use the same one.
    fn window_rtt(&self) -> f64 {
        match self.cfg.window_rtt {
            WindowRtt::Base => self.base_rtt,
            WindowRtt::Latest => self.rtt,
        }
    }

    /// Line 12: the window follows the rate over the window RTT, at least `min_cwnd`.
    fn set_rate(&mut self, rate: f64) {
        let rtt = self.window_rtt();
        // A short RTT sample (`Latest`) can put a large `min_cwnd`'s rate above the line.
        let min_rate = (self.cfg.min_cwnd * self.packet_bits / rtt).min(self.line_rate);
        self.rate = rate.clamp(min_rate, self.line_rate);
        self.cwnd = (self.rate * rtt / self.packet_bits).max(self.cfg.min_cwnd);
    }
}

impl CongestionControl for Pc4 {
    fn on_start(&mut self, cx: &mut CcContext) {
        let n = cx.incoming_at_start();
        if self.cfg.base_rate && self.cfg.start_at_share && n > 0 {
            let divisor = if self.minus_one { n.saturating_sub(1) } else { n }.max(1);
            // As the receiver will encode it, so the first ACK does not count as a change.
            let base = encode(self.receiver_line_rate / divisor as f64, 0)[0];
            self.base_recorded = base;
            self.last_adjust = cx.now();
            self.set_rate(base as f64 * 1e3);
        }
    }

    fn on_ack(&mut self, ack: &AckInfo<'_>, cx: &mut CcContext) {
        let now = cx.now();
        if ack.rtt.0 > 0 {
            self.rtt = ack.rtt.as_secs_f64();
        }
        let (base, one_way_delay) = decode(ack.feedback);
        if self.cfg.base_rate && base != 0 && base != self.base_recorded {
            self.base_recorded = base;
            self.last_adjust = now;
            self.set_rate(base as f64 * 1e3);
            return;
        }
        let interval = self.cfg.adjust_interval.map(|t| t.as_secs_f64()).unwrap_or(self.cfg.adjust_rtts * self.rtt);
        if self.cfg.adjust_rate && (now - self.last_adjust).as_secs_f64() >= interval {
            self.last_adjust = now;
            let rate = self.adjusted(one_way_delay);
            self.set_rate(rate);
        } else {
            let rate = self.rate;
            self.set_rate(rate); // the RTT moved: the window follows
        }
    }

    fn on_event(&mut self, ev: CcEvent, _cx: &mut CcContext) {
        if ev == CcEvent::Timeout {
            // Lines 17-19.
            let rate = self.rate * (1.0 - self.cfg.max_mdf);
            self.set_rate(rate);
            self.base_recorded = 0;
        }
    }

    /// Line rate with a window of a packet or more; below it, one packet per RTT / cwnd.
    fn rate(&self) -> f64 {
        if self.cwnd >= 1.0 {
            self.line_rate
        } else {
            (self.packet_bits * self.cwnd / self.window_rtt()).min(self.line_rate)
        }
    }

    fn window(&self) -> Option<u64> {
        Some(((self.cwnd * self.mtu) as u64).max(1))
    }

    /// The window (bytes) while it is a packet or more; below, the pacing rate (bits/s).
    /// Crossing one packet changes the unit: a jump no tolerance calls steady, as the crossing
    /// is not.
    fn steady_signal(&self) -> Option<f64> {
        Some(if self.cwnd >= 1.0 { self.cwnd * self.mtu } else { self.rate() })
    }

    /// The last adjustment's time (at the flow's start, 0: the origin moves with the rest).
    /// `rtt` and `base_rtt` are durations.
    fn shift_clock(&mut self, by: SimTime) {
        self.last_adjust += by;
    }

    /// The share the receiver last gave (0 before one came, or after a timeout forgot it) and
    /// tx_rate, of which the window is made.
    fn metrics(&self, report: &mut dyn FnMut(&str, f64)) {
        report("base_gbps", f64::from(self.base_recorded) / 1e6);
        report("tx_rate_gbps", self.rate / 1e9);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::facts;
    use crate::time::pacing_gap;

    fn ack(base_kbps: u32, delay_ns: i32, rtt: SimTime) -> AckInfo<'static> {
        AckInfo {
            ack_seq: 0,
            newly_acked: 1000,
            ecn_echo: false,
            rtt,
            in_flight: 0,
            snd_nxt: 0,
            int: &[],
            pint: 0,
            feedback: [base_kbps, delay_ns as u32],
        }
    }

    #[test]
    fn the_paper_is_the_default_and_ours_departs_in_five_keys() {
        assert_eq!(Pc4Config::preset("paper"), Some(Pc4Config::default()));
        let paper = toml::Table::try_from(Pc4Config::default()).unwrap();
        let ours = toml::Table::try_from(Pc4Config::preset("ours").unwrap()).unwrap();
        let mut differ: Vec<&str> = paper.keys().filter(|k| paper[*k] != ours[*k]).map(String::as_str).collect();
        differ.sort_unstable();
        assert_eq!(
            differ,
            ["negative_delay", "scale_target_by_flows", "scale_target_by_window", "start_at_share", "window_rtt"]
        );
        assert!(Pc4Config::preset("fastest").is_none());
    }

    #[test]
    fn a_window_of_a_hundredth_of_a_packet_sends_one_packet_every_hundred_rtts() {
        let f = facts();
        let mut pc4 = Pc4::new(&Pc4Config::default(), &f);
        let rtt = SimTime::from_us(8);
        // The base rate for which rate x RTT is 0.01 packets of 1048 bytes.
        let base_bps = 0.01 * 1048.0 * 8.0 / rtt.as_secs_f64();
        pc4.on_ack(&ack((base_bps / 1e3) as u32, 0, rtt), &mut CcContext::new(SimTime::from_us(10)));
        assert!((pc4.cwnd() - 0.01).abs() < 1e-4, "cwnd {}", pc4.cwnd());
        let gap = pacing_gap(1048, pc4.rate());
        assert!((gap.as_secs_f64() / (100.0 * rtt.as_secs_f64()) - 1.0).abs() < 0.01, "gap {gap:?}");
        assert!(pc4.window().unwrap() < 1000, "below one packet");
    }

    #[test]
    fn algorithm_2_jumps_to_a_new_base_rate_and_adjusts_once_per_interval() {
        let f = facts();
        // (The target held at the path's, not divided among the flows: 1.09 us.)
        let cfg =
            Pc4Config { adjust_interval: Some(SimTime::from_us(10)), scale_target_by_flows: false, ..Default::default() };
        let mut pc4 = Pc4::new(&cfg, &f);
        let rtt = SimTime::from_us(8);
        let at = |us| CcContext::new(SimTime::from_us(us));
        // A base rate of 25 Gb/s: taken at once.
        pc4.on_ack(&ack(25_000_000, 0, rtt), &mut at(1));
        assert_eq!(pc4.tx_rate(), 25e9);
        // Same base, zero delay, within the interval: nothing moves.
        pc4.on_ack(&ack(25_000_000, 0, rtt), &mut at(5));
        assert_eq!(pc4.tx_rate(), 25e9);
        // After the interval: hyper increase by 5% of the share.
        pc4.on_ack(&ack(25_000_000, 0, rtt), &mut at(11));
        assert!((pc4.tx_rate() - 25e9 * 1.05).abs() < 1.0);
        // Delay below the target (1 us x 2.18/2 = 1.09 us): additive, 1%.
        let before = pc4.tx_rate();
        pc4.on_ack(&ack(25_000_000, 500, rtt), &mut at(21));
        assert!((pc4.tx_rate() - before - 0.01 * 25e9).abs() < 1.0);
        // Far above it: multiplicative decrease, bounded by max_mdf.
        let before = pc4.tx_rate();
        pc4.on_ack(&ack(25_000_000, 100_000, rtt), &mut at(31));
        assert!((pc4.tx_rate() / before - 0.5).abs() < 1e-9, "cut bounded at 1 - max_mdf");
        // A little above: 1 - beta (d - target) / (d + baseline).
        let before = pc4.tx_rate();
        pc4.on_ack(&ack(25_000_000, 2000, rtt), &mut at(41));
        let target = pc4.target_qtime();
        let want = 1.0 - 0.8 * (2e-6 - target) / (2e-6 + f.one_way_baseline.as_secs_f64());
        assert!((pc4.tx_rate() / before - want).abs() < 1e-9);
        // An ACK timeout cuts by max_mdf and forgets the base rate: the next ACK's base is new.
        let before = pc4.tx_rate();
        pc4.on_event(CcEvent::Timeout, &mut at(50));
        assert!((pc4.tx_rate() / before - 0.5).abs() < 1e-9);
        pc4.on_ack(&ack(25_000_000, 0, rtt), &mut at(51));
        assert_eq!(pc4.tx_rate(), 25e9);
    }

    #[test]
    fn a_negative_delay_takes_line_26_by_default_and_counts_as_zero_in_ours() {
        let f = facts(); // baseline 2.18 us, target 1.09 us
        let rtt = SimTime::from_us(8);
        let at = |us| CcContext::new(SimTime::from_us(us));
        assert_eq!(Pc4Config::default().negative_delay, NegativeDelay::AsWritten);
        assert_eq!(Pc4Config::preset("ours").unwrap().negative_delay, NegativeDelay::AsZero);
        let cfg = |negative_delay| Pc4Config {
            adjust_interval: Some(SimTime::from_us(10)),
            negative_delay,
            scale_target_by_flows: false,
            ..Default::default()
        };
        // -500 ns, counted as zero: no queue, so a hyper increase of 5% of the share.
        let mut pc4 = Pc4::new(&cfg(NegativeDelay::AsZero), &f);
        pc4.on_ack(&ack(25_000_000, 0, rtt), &mut at(1));
        pc4.on_ack(&ack(25_000_000, -500, rtt), &mut at(11));
        assert!((pc4.tx_rate() - 25e9 * 1.05).abs() < 1.0);
        // As written: 1 - beta (d - target) / (d + baseline), above 1.
        let mut pc4 = Pc4::new(&cfg(NegativeDelay::AsWritten), &f);
        pc4.on_ack(&ack(25_000_000, 0, rtt), &mut at(1));
        pc4.on_ack(&ack(25_000_000, -500, rtt), &mut at(11));
        let (d, target, baseline) = (-0.5e-6, pc4.target_qtime(), f.one_way_baseline.as_secs_f64());
        let want = 25e9 * (1.0 - 0.8 * (d - target) / (d + baseline));
        assert!(want > 25e9 * 1.4 && (pc4.tx_rate() - want).abs() < 1.0, "{} vs {want}", pc4.tx_rate());
        // Exactly zero is still line 21's hyper increase.
        let before = pc4.tx_rate();
        pc4.on_ack(&ack(25_000_000, 0, rtt), &mut at(21));
        assert!((pc4.tx_rate() - before - 0.05 * 25e9).abs() < 1.0);
        // At or below minus the baseline the factor has no finite value: line rate.
        pc4.on_ack(&ack(25_000_000, -3000, rtt), &mut at(31));
        assert_eq!(pc4.tx_rate(), f.line_rate.as_f64());
    }

    #[test]
    fn the_window_is_over_the_base_rtt_or_the_latest_sample_and_pacing_follows_the_rate() {
        let f = facts();
        let base = f.base_rtt.as_secs_f64();
        let sample = SimTime::from_us(40);
        let packet_bits = f.packet_bytes as f64 * 8.0;
        for (window_rtt, over) in [(WindowRtt::Base, base), (WindowRtt::Latest, sample.as_secs_f64())] {
            let mut pc4 = Pc4::new(&Pc4Config { window_rtt, ..Default::default() }, &f);
            // 10 Gb/s: a window of 1 packet or more; 10 Mb/s: below one, paced.
            pc4.on_ack(&ack(10_000_000, 0, sample), &mut CcContext::new(SimTime::from_us(1)));
            assert!((pc4.cwnd() - 10e9 * over / packet_bits).abs() < 1e-9, "{window_rtt:?}: {}", pc4.cwnd());
            pc4.on_ack(&ack(10_000, 0, sample), &mut CcContext::new(SimTime::from_us(2)));
            assert!((pc4.cwnd() - 10e6 * over / packet_bits).abs() < 1e-9, "{window_rtt:?}: {}", pc4.cwnd());
            assert!(pc4.cwnd() < 1.0);
            assert!((pc4.rate() / 10e6 - 1.0).abs() < 1e-9, "{window_rtt:?}: paced at tx_rate, {}", pc4.rate());
        }
    }

    #[test]
    fn the_target_scales_with_baseline_and_flows_and_each_term_switches_off() {
        let f = facts(); // baseline 2.18 us
        let rtt = SimTime::from_us(8);
        let flows_on = Pc4Config { scale_target_by_flows: true, ..Default::default() };
        let mut pc4 = Pc4::new(&flows_on, &f);
        assert!((pc4.target_qtime() - 1e-6 * 2.18 / 2.0).abs() < 1e-12);
        pc4.on_ack(&ack(12_500_000, 0, rtt), &mut CcContext::new(SimTime::from_us(1)));
        assert!((pc4.target_qtime() - 1e-6 * 2.18 / 2.0 / 8.0).abs() < 1e-12, "8 flows share the line");
        let plain = Pc4Config { scale_target_by_baseline: false, scale_target_by_flows: false, ..Default::default() };
        let mut pc4 = Pc4::new(&plain, &f);
        pc4.on_ack(&ack(12_500_000, 0, rtt), &mut CcContext::new(SimTime::from_us(1)));
        assert_eq!(pc4.target_qtime(), 1e-6);
    }

    #[test]
    fn below_one_packet_of_window_the_target_grows_with_the_span_between_samples() {
        let f = facts(); // baseline 2.18 us
        let path_target = 1e-6 * 2.18 / 2.0;
        let packet_bits = f.packet_bytes as f64 * 8.0;
        let share_for = |window: f64| window * packet_bits / f.base_rtt.as_secs_f64();
        let target_at = |cfg: &Pc4Config, window: f64| {
            let mut pc4 = Pc4::new(cfg, &f);
            let kbps = (share_for(window) / 1e3).round() as u32;
            pc4.on_ack(&ack(kbps, 0, f.base_rtt), &mut CcContext::new(SimTime::from_us(1)));
            pc4.target_qtime()
        };
        let on = Pc4Config::preset("ours").unwrap();
        // A window of 3 packets (16 flows on this path): the target as configured.
        assert!((target_at(&on, 3.0) - path_target).abs() < 1e-12);
        // A hundredth of a packet (thousands of flows): one sample per 100 base RTTs, 100x.
        let t = target_at(&on, 0.01);
        assert!((t / (path_target * 100.0) - 1.0).abs() < 1e-3, "{t}");
        let off = Pc4Config { scale_target_by_window: false, ..on.clone() };
        assert!((target_at(&off, 0.01) - path_target).abs() < 1e-12);
        // Before any base rate (none recorded) there is no share to scale by.
        let no_base = Pc4Config { base_rate: false, ..on };
        assert!((Pc4::new(&no_base, &f).target_qtime() - path_target).abs() < 1e-12);
    }

    #[test]
    fn ablations_ignore_the_base_rate_or_the_delay() {
        let f = facts();
        let rtt = SimTime::from_us(8);
        let no_base = Pc4Config { base_rate: false, adjust_interval: Some(SimTime::from_us(1)), ..Default::default() };
        let mut pc4 = Pc4::new(&no_base, &f);
        pc4.on_ack(&ack(25_000_000, 100_000, rtt), &mut CcContext::new(SimTime::from_us(5)));
        assert!((pc4.tx_rate() - 50e9).abs() < 1.0, "no jump to 25 Gb/s; the large delay halves line rate");
        let no_adjust = Pc4Config { adjust_rate: false, ..Default::default() };
        let mut pc4 = Pc4::new(&no_adjust, &f);
        pc4.on_ack(&ack(25_000_000, 0, rtt), &mut CcContext::new(SimTime::from_us(1)));
        pc4.on_ack(&ack(25_000_000, 100_000, rtt), &mut CcContext::new(SimTime::from_us(100)));
        assert_eq!(pc4.tx_rate(), 25e9, "only the base rate moves it");
    }

    #[test]
    fn the_receiver_divides_the_line_by_the_collective_rule() {
        let mut f = facts();
        let arrival = |n| DataArrival {
            now: SimTime::from_us(10),
            ecn_ce: false,
            bytes: 1048,
            sent_at: SimTime::from_us(5),
            measured_delay: 5_000_000,
            incoming_flows: n,
            incoming_seen: 1,
        };
        let cfg = Pc4Config::default();
        let mut rx = Pc4Receiver::new(&cfg, &f);
        let a = rx.on_data(&arrival(4));
        assert_eq!(a.feedback[0], 25_000_000, "no tag: line / n");
        assert_eq!(a.feedback[1] as i32, 5000 - 2180, "one-way delay minus the baseline, ns");
        f.collective = Some((CollectiveKind::AllToAll, 8));
        let mut rx = Pc4Receiver::new(&cfg, &f);
        assert_eq!(rx.on_data(&arrival(8)).feedback[0], 100_000_000 / 7, "all-to-all: line / (n - 1)");
        assert_eq!(rx.on_data(&arrival(1)).feedback[0], 100_000_000, "never above line rate");
        let observed = Pc4Config { flow_count: FlowCount::Observed, ..Default::default() };
        let mut rx = Pc4Receiver::new(&observed, &facts());
        assert_eq!(rx.on_data(&arrival(4)).feedback[0], 100_000_000, "counts what it has seen: 1");
    }
}
