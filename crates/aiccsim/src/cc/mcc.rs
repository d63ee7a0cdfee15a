//! MCC: congestion control with message-level signals (Li, Ren, Li, Liu and Chen, "Congestion
//! Control for AI Workloads with Message-Level Signaling", iSING Lab, HKUST, slides of August
//! 2025). Written in the NIC-event view (`program.rs`): it acts on messages, which
//! that view hears of.
//!
//! Under packet spray or adaptive routing the paths between two hosts behave as one wide pipe.
//! A per-packet signal (a CNP, one packet's RTT) tells of one path, and an algorithm that cuts on
//! it cuts for every path: the slides' "overreaction" (1% CNPs from one path cost up to 60% of
//! the other three). MCC looks at two signals (slide "Message-level Congestion Signal"):
//!
//! - the **message delay**: how long a message took from its first byte sent to its last byte
//!   acknowledged, against the time the idle pipe would take at the flow's window. It grows when
//!   the pipe as a whole delivers slowly;
//! - **sampled packet delays**: the queuing delay (RTT less the base RTT) of one ACK in
//!   `sample_every`, since the last message completed. Spread over the paths, they tell whether
//!   every path queues (global congestion) or only some (partial congestion).
//!
//! Once per message completed (slide "Congestion Control with Message-level Signals"):
//! - the message took over `target` more than expected **and** every sampled packet queued over
//!   `target` (or none was sampled): the pipe is congested. The window is cut by
//!   `beta` x (excess / message time), at most `max_decrease`, once per window of messages (a
//!   message sent before the last cut does not cut again);
//! - otherwise, if the message was late or some sampled packet queued over `target`: only some
//!   paths are congested, which spraying absorbs. The sender keeps its *rate* (slide "Right
//!   Reaction: Keep Rate": "the sender maintains full sending rate"): the paths' mean RTT has
//!   grown, so the bytes in flight that rate needs have too (Little's law: rate x mean RTT over
//!   the sampled packets), and the window stretches to them, up to `max_window` BDPs. Holding
//!   the window instead would cut the rate by the queue's share of the RTT;
//! - otherwise the window grows by `additive_increase` chunks per window of messages.
//!
//! The window counts bytes in flight and moves in message chunks (`chunk`, 64 KB: slide
//! "Integrate into CCLs"). Its *base* (the window at the base RTT, which sets the rate) starts at
//! `initial_window` bandwidth-delay products and stays between one packet and one BDP plus
//! `headroom` chunks; cuts and increases move the base, and a clear message or a cut ends a
//! stretch. The NIC paces at line rate. A NACK or a timeout (a loss: rare on a lossless fabric)
//! cuts by `max_decrease`.
//! docs/cc/mcc.md lists every choice the slides leave open.
//!
//! Steady signal (fast-forward): the window, in bytes, since it alone limits sending.

use super::{
    Algorithm, Cc, Check, FlowContext, FlowFacts, MessageDone, NicEvent, NicProgram, Programmed,
};
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// MCC parameters. The slides give the chunk size (64 KB); docs/cc/mcc.md says where every
/// other default comes from.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MccConfig {
    /// The message chunk: the window's unit of change (slides: "typically 64KB").
    pub chunk: ByteSize,
    /// Queuing delay above which a message or a sampled packet counts as delayed. Absent: one
    /// chunk's serialisation at the flow's line rate (5.12 us at 100 Gbps): a path queuing more
    /// than a whole message is congested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<SimTime>,
    /// One ACK in this many gives a packet-delay sample.
    pub sample_every: u32,
    /// Chunks added per window of messages completed without delay.
    pub additive_increase: f64,
    /// Gain of the cut: the window is multiplied by 1 - beta x (excess / message time).
    pub beta: f64,
    /// The most one cut takes, as a fraction of the window.
    pub max_decrease: f64,
    /// The first window, in bandwidth-delay products of the flow's line rate and base RTT.
    pub initial_window: f64,
    /// Chunks the window may exceed the bandwidth-delay product by: a message can then start
    /// while the last ones are being acknowledged.
    pub headroom: f64,
    /// The most the window may stretch to while it keeps its rate through partial congestion,
    /// in bandwidth-delay products.
    pub max_window: f64,
}

impl Default for MccConfig {
    fn default() -> Self {
        MccConfig {
            chunk: ByteSize(64_000),
            target: None,
            sample_every: 4,
            additive_increase: 1.0,
            beta: 0.5,
            max_decrease: 0.5,
            initial_window: 1.0,
            headroom: 1.0,
            max_window: 4.0,
        }
    }
}

impl Algorithm for MccConfig {
    fn name(&self) -> &'static str {
        "mcc"
    }

    fn describe(&self) -> &'static str {
        "MCC: a window in message chunks, cut only when a message is late and every sampled packet queued (the whole pipe), held when only some paths queue (for packet spray)"
    }

    fn optional_parameters(&self) -> &'static [(&'static str, &'static str)] {
        &[("target", "one chunk's serialisation time at the flow's line rate")]
    }

    fn validate(&self) -> Check {
        let key = |k: &str| format!("cc.{k}");
        if self.chunk.0 < 1024 {
            return Err((key("chunk"), format!("at least 1KB (the slides use 64KB), got {} B", self.chunk.0)));
        }
        if self.target == Some(SimTime::ZERO) {
            return Err((key("target"), "must be above zero (leave it out for one chunk's serialisation time)".into()));
        }
        if self.sample_every == 0 {
            return Err((key("sample_every"), "at least 1 (1: every ACK is a sample)".into()));
        }
        for (k, v, hi) in [("additive_increase", self.additive_increase, 100.0), ("headroom", self.headroom, 100.0)] {
            if !(v >= 0.0 && v <= hi) {
                return Err((key(k), format!("chunks in [0, {hi}], got {v}")));
            }
        }
        for (k, v) in [("beta", self.beta), ("max_decrease", self.max_decrease)] {
            if !(v > 0.0 && v < 1.0) {
                return Err((key(k), format!("must be in (0, 1), got {v}")));
            }
        }
        if !(self.max_window >= 1.0 && self.max_window <= 100.0) {
            return Err((
                key("max_window"),
                format!("bandwidth-delay products in [1, 100] (default 4), got {}", self.max_window),
            ));
        }
        if !(self.initial_window > 0.0 && self.initial_window <= 1.0) {
            return Err((
                key("initial_window"),
                format!("a fraction of the bandwidth-delay product in (0, 1], got {}", self.initial_window),
            ));
        }
        Ok(())
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Mcc(Programmed::new(MccRules::new(self, facts), facts))
    }
}

/// The sender half: MCC's rules run as a NIC program.
pub type Mcc = Programmed<MccRules>;

/// MCC's state for one connection.
pub struct MccRules {
    cfg: MccConfig,
    target: SimTime,
    /// Bounds of the base window and the base window itself (the window at the base RTT, which
    /// sets the rate), bytes.
    min_window: f64,
    max_window: f64,
    window: f64,
    /// How far the window stretches over its base to keep the rate while some paths queue
    /// (1: not at all), and the most it may reach, bytes.
    stretch: f64,
    stretch_cap: f64,
    /// ACKs seen, for sampling one in `sample_every`.
    acks: u32,
    /// Packet-delay samples since the last message completed: how many, how many queued over
    /// the target, the least queuing among them, and the sum of their RTTs (seconds).
    samples: u32,
    delayed_samples: u32,
    least_queuing: SimTime,
    rtt_sum: f64,
    /// When the window was last cut: a message first sent before then does not cut again.
    last_cut: Option<SimTime>,
}

/// What one completed message says about the pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Late, and every sampled packet queued: cut.
    PipeCongested,
    /// Late or some sampled packet queued, not all: keep the rate.
    PathCongested,
    /// On time and no sample queued: grow.
    Clear,
}

impl MccRules {
    pub fn new(cfg: &MccConfig, facts: &FlowFacts) -> Self {
        let line = facts.line_rate.as_f64();
        let chunk = cfg.chunk.0 as f64;
        let bdp = line / 8.0 * facts.base_rtt.as_secs_f64();
        let min_window = facts.packet_bytes as f64;
        let max_window = (bdp + cfg.headroom * chunk).max(min_window);
        MccRules {
            cfg: cfg.clone(),
            target: cfg.target.unwrap_or_else(|| facts.line_rate.tx_time(cfg.chunk.0)),
            min_window,
            max_window,
            window: (bdp * cfg.initial_window).clamp(min_window, max_window),
            stretch: 1.0,
            stretch_cap: (bdp * cfg.max_window).max(max_window),
            acks: 0,
            samples: 0,
            delayed_samples: 0,
            least_queuing: SimTime::MAX,
            rtt_sum: 0.0,
            last_cut: None,
        }
    }

    /// The window the NIC holds the flow to: the base window, stretched, bytes.
    pub fn window(&self) -> f64 {
        (self.window * self.stretch).min(self.stretch_cap).max(self.window)
    }

    /// The base window (the window at the base RTT), bytes.
    pub fn base_window(&self) -> f64 {
        self.window
    }

    /// Time the idle pipe takes to carry a message of `payload` bytes at the current window:
    /// its wire bytes at the lower of the line rate and one window per base RTT, then one base
    /// RTT for the last packet and its ACK.
    fn expected_time(&self, payload: u64, facts: &FlowFacts) -> SimTime {
        let packets = payload.div_ceil(facts.mtu.max(1));
        let wire = (payload + packets * facts.packet_bytes.saturating_sub(facts.mtu)) as f64;
        let rtt = facts.base_rtt.as_secs_f64();
        let bytes_per_s = (facts.line_rate.as_f64() / 8.0).min(self.window / rtt);
        SimTime::from_secs_f64(wire / bytes_per_s + rtt)
    }

    /// The stretch that keeps the base window's rate, min(line rate, base window / base RTT),
    /// at the paths' mean RTT: the sampled packets' mean (Little's law: bytes in flight = rate
    /// x mean RTT), or with no sample the base RTT plus the message's lateness.
    fn rate_keeping_stretch(&self, late_by: SimTime, facts: &FlowFacts) -> f64 {
        let base = facts.base_rtt.as_secs_f64().max(f64::MIN_POSITIVE);
        let mean_rtt =
            if self.samples > 0 { self.rtt_sum / f64::from(self.samples) } else { base + late_by.as_secs_f64() };
        let rate = (facts.line_rate.as_f64() / 8.0).min(self.window / base);
        (rate * mean_rtt / self.window).max(1.0)
    }

    /// Judges a completed message (its time against the expected one, and the samples since the
    /// last message), and forgets the samples.
    fn judge(&mut self, late_by: SimTime) -> Verdict {
        let late = late_by > self.target;
        let every_path = self.samples == 0 || self.least_queuing > self.target;
        let verdict = if late && every_path {
            Verdict::PipeCongested
        } else if late || self.delayed_samples > 0 {
            Verdict::PathCongested
        } else {
            Verdict::Clear
        };
        self.samples = 0;
        self.delayed_samples = 0;
        self.least_queuing = SimTime::MAX;
        self.rtt_sum = 0.0;
        verdict
    }

    /// Cuts the window to `factor` of itself, unless a cut already answered this window of
    /// messages (one first sent before it).
    fn cut(&mut self, factor: f64, first_sent: SimTime, now: SimTime) {
        if self.last_cut.is_some_and(|t| first_sent < t) {
            return;
        }
        self.window = (self.window * factor).max(self.min_window);
        self.stretch = 1.0;
        self.last_cut = Some(now);
    }

    fn message_done(&mut self, m: &MessageDone, flow: &mut FlowContext<'_>) {
        let now = flow.now();
        let took = now.saturating_sub(m.first_sent);
        let expected = self.expected_time(m.bytes, flow.facts());
        let late_by = took.saturating_sub(expected);
        let stretch = self.rate_keeping_stretch(late_by, flow.facts());
        match self.judge(late_by) {
            Verdict::PipeCongested => {
                let share = late_by.as_secs_f64() / took.as_secs_f64().max(f64::MIN_POSITIVE);
                let factor = 1.0 - (self.cfg.beta * share).min(self.cfg.max_decrease);
                self.cut(factor, m.first_sent, now);
            }
            Verdict::PathCongested => self.stretch = stretch,
            Verdict::Clear => {
                self.stretch = 1.0;
                // One chunk per window's worth of messages: each adds its share of the window.
                let chunk = self.cfg.chunk.0 as f64;
                let step = self.cfg.additive_increase * chunk * m.bytes as f64 / self.window;
                self.window = (self.window + step).min(self.max_window);
            }
        }
        flow.set_window(Some(self.window() as u64));
    }
}

impl NicProgram for MccRules {
    fn on_event(&mut self, event: &NicEvent<'_>, flow: &mut FlowContext<'_>) {
        match event {
            NicEvent::Start => flow.set_window(Some(self.window() as u64)),
            NicEvent::Ack(ack) => {
                self.acks = self.acks.wrapping_add(1);
                if self.acks.is_multiple_of(self.cfg.sample_every) {
                    let queuing = ack.rtt.saturating_sub(flow.facts().base_rtt);
                    self.samples += 1;
                    self.delayed_samples += u32::from(queuing > self.target);
                    self.least_queuing = self.least_queuing.min(queuing);
                    self.rtt_sum += ack.rtt.as_secs_f64();
                }
            }
            NicEvent::MessageDone(m) => self.message_done(m, flow),
            NicEvent::Nack { .. } | NicEvent::Timeout => {
                let now = flow.now();
                // Every loss cuts (a message-level window rule would need the lost packet's send
                // time, which the NACK does not carry; losses are rare under PFC).
                self.cut(1.0 - self.cfg.max_decrease, now, now);
                flow.set_window(Some(self.window() as u64));
            }
            NicEvent::Tx { .. } | NicEvent::Cnp | NicEvent::RttProbe(_) | NicEvent::Timer { .. } => {}
        }
    }

    /// The window: the NIC paces at line rate, so it alone limits sending.
    fn steady_signal(&self, _rate: f64, _window: Option<u64>) -> Option<f64> {
        Some(self.window())
    }

    /// The last cut's time. (`target` and `least_queuing` are durations, the latter's
    /// `SimTime::MAX` standing for "no sample".)
    fn shift_clock(&mut self, by: SimTime) {
        if let Some(t) = &mut self.last_cut {
            *t += by;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::facts;
    use crate::cc::{AckInfo, CcContext, CcEvent, CongestionControl};

    fn mcc() -> Mcc {
        match MccConfig::default().sender(&facts()) {
            Cc::Mcc(m) => m,
            _ => unreachable!(),
        }
    }

    fn ack(cc: &mut Mcc, at_us: f64, rtt: SimTime) {
        let a = AckInfo {
            ack_seq: 0,
            newly_acked: 1000,
            ecn_echo: false,
            rtt,
            in_flight: 0,
            snd_nxt: 0,
            int: &[],
            pint: 0,
            feedback: [0; 2],
        };
        cc.on_ack(&a, &mut CcContext::new(SimTime::from_secs_f64(at_us * 1e-6)));
    }

    /// Completes a 64 KB message first sent at `from_us` at `at_us`.
    fn done(cc: &mut Mcc, from_us: f64, at_us: f64) {
        let m = MessageDone { bytes: 65536, first_sent: SimTime::from_secs_f64(from_us * 1e-6) };
        cc.on_event(CcEvent::MessageDone(m), &mut CcContext::new(SimTime::from_secs_f64(at_us * 1e-6)));
    }

    /// 100 Gbps, 8 us base RTT: the BDP is 100 KB; a 64 KB message (67 packets of 1048 B) takes
    /// 5.6 us to send and 13.6 us to complete on the idle pipe; the target is 5.12 us.
    #[test]
    fn an_on_time_message_grows_the_window_by_its_share_of_a_chunk() {
        let mut cc = mcc();
        cc.on_start(&mut CcContext::new(SimTime::ZERO));
        assert_eq!(cc.window(), Some(100_000));
        ack(&mut cc, 10.0, SimTime::from_us(9));
        done(&mut cc, 0.0, 14.0);
        // + a 64 KB chunk x the message's 65 536 B / the 100 KB window.
        let w = cc.window().unwrap();
        assert_eq!(w, 100_000 + 64_000 * 65536 / 100_000);
    }

    #[test]
    fn a_late_message_with_one_path_queuing_keeps_the_rate() {
        let mut cc = mcc();
        cc.on_start(&mut CcContext::new(SimTime::ZERO));
        // Four samples: one path queues 20 us, the others nothing.
        for (i, q) in [20, 0, 0, 0].iter().enumerate() {
            for _ in 0..4 {
                ack(&mut cc, 10.0 + i as f64, SimTime::from_us(8 + q));
            }
        }
        done(&mut cc, 0.0, 40.0);
        // The rate stays 100 Gb/s (the base window over the base RTT) at the samples' mean RTT
        // of (28 + 3 x 8) / 4 = 13 us: 162.5 KB in flight. The base window is not cut.
        assert_eq!(cc.window(), Some(162_500));
        assert_eq!(cc.program.base_window(), 100_000.0);
        assert_eq!(cc.program.judge(SimTime::ZERO), Verdict::Clear, "the samples were forgotten");
        // A clear message ends the stretch (and grows the base window by its share of a chunk).
        done(&mut cc, 50.0, 64.0);
        assert_eq!(cc.window(), Some(100_000 + 64_000 * 65536 / 100_000));
    }

    #[test]
    fn the_stretch_stops_at_max_window() {
        let mut cc = mcc();
        cc.on_start(&mut CcContext::new(SimTime::ZERO));
        // One path of two queues 1 ms: the mean RTT is 508 us, far beyond 4 BDPs.
        for q in [1000, 0] {
            for _ in 0..4 {
                ack(&mut cc, 10.0, SimTime::from_us(8 + q));
            }
        }
        done(&mut cc, 0.0, 40.0);
        assert_eq!(cc.window(), Some(400_000));
    }

    #[test]
    fn a_late_message_with_every_path_queuing_cuts_once_per_window_of_messages() {
        let mut cc = mcc();
        cc.on_start(&mut CcContext::new(SimTime::ZERO));
        for _ in 0..8 {
            ack(&mut cc, 20.0, SimTime::from_us(8 + 15));
        }
        // 13.6 us expected, 40 us taken: 26.4 late; cut by 0.5 x 26.4 / 40 = 0.33.
        done(&mut cc, 0.0, 40.0);
        let w = cc.window().unwrap() as f64;
        assert!((w - 100_000.0 * (1.0 - 0.5 * 26.42 / 40.0)).abs() < 200.0, "{w}");
        // A message first sent before that cut is the same congestion: no second cut.
        for _ in 0..8 {
            ack(&mut cc, 41.0, SimTime::from_us(8 + 15));
        }
        done(&mut cc, 5.0, 42.0);
        assert_eq!(cc.window().unwrap() as f64, w.floor());
        // One first sent after it cuts again.
        for _ in 0..8 {
            ack(&mut cc, 60.0, SimTime::from_us(8 + 15));
        }
        done(&mut cc, 41.0, 90.0);
        assert!((cc.window().unwrap() as f64) < w);
    }

    #[test]
    fn the_window_stays_between_one_packet_and_a_bdp_plus_headroom() {
        let mut cc = mcc();
        cc.on_start(&mut CcContext::new(SimTime::ZERO));
        for i in 0..100 {
            done(&mut cc, i as f64 * 20.0, i as f64 * 20.0 + 13.0);
        }
        assert_eq!(cc.window(), Some(100_000 + 64_000));
        for i in 0..100 {
            let t = 3000.0 + i as f64 * 100.0;
            cc.on_event(CcEvent::Timeout, &mut CcContext::new(SimTime::from_secs_f64(t * 1e-6)));
        }
        assert_eq!(cc.window(), Some(1048));
        assert_eq!(cc.rate(), 100e9, "MCC paces at line rate");
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let bad = |c: MccConfig| c.validate().unwrap_err().0;
        assert_eq!(bad(MccConfig { chunk: ByteSize(10), ..Default::default() }), "cc.chunk");
        assert_eq!(bad(MccConfig { sample_every: 0, ..Default::default() }), "cc.sample_every");
        assert_eq!(bad(MccConfig { beta: 1.0, ..Default::default() }), "cc.beta");
        assert_eq!(bad(MccConfig { target: Some(SimTime::ZERO), ..Default::default() }), "cc.target");
        assert_eq!(bad(MccConfig { headroom: -1.0, ..Default::default() }), "cc.headroom");
        assert_eq!(bad(MccConfig { max_window: 0.5, ..Default::default() }), "cc.max_window");
    }
}
