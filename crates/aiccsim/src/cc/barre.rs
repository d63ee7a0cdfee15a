//! Barre: Peng, Wei et al., "Barre: Empowering Simplified and Versatile Programmable Congestion
//! Control in High-Speed AI Clusters" (ByteDance; the talk's slides). Written as a
//! program on a programmable NIC ([`NicProgram`]), as the slides' BlueField-3 implementation is:
//! one handler over the NIC's events (TX, CNP, RTT-probe reply, timer).
//!
//! The rules, each with the slide it comes from ("Basic idea", "Functional Components",
//! "RTT-based Enhancement"), and each switchable for ablations:
//! - **delay-based increase** (Basic idea): R += alpha when no CNP came in the last *real-time*
//!   RTT, at most once per such RTT. The real-time RTT is the last RTT probe's (network part);
//!   off (`realtime_rtt = false`), the path's base RTT stands in and no probes are sent.
//! - **per-CNP decrease** (Basic idea): R *= beta (0.95 < beta < 0.99) on every CNP; off, at most
//!   once per RTT.
//! - **fast increase** (Fast Increase): the step is alpha, and A once no CNP has come for
//!   `fast_increase_rtts` RTTs.
//! - **dual lock** (Dual-lock): an increase needs the timer (a real-time RTT since the last one)
//!   AND the byte counter (`byte_counter_packets` full packets sent since the last one): a flow
//!   whose rate x RTT is below one MTU sends less than a packet per RTT, so the byte counter
//!   paces its increases to the packets that can bring back a CNP; a fast flow sends many
//!   packets per RTT, and the timer binds.
//! - **inflight monitor** (Inflight Monitor): S_now, the bytes sent in the current RTT (TX
//!   events), above R x RTT cuts the rate to R/4 until the next CNP, or (our addition, see
//!   docs/cc/barre.md) until an increase finds a whole RTT without one: a restriction no
//!   congestion follows would otherwise hold the flow at R/4 for good.
//! - **per-flow alpha** (RTT-based Enhancement): alpha_k = RTT_k x alpha / C (and A likewise),
//!   so that flows with different path lengths, which increase once per their own RTT, gain
//!   rate at the same speed.
//!
//! The receiver is DCQCN's notification point: a CNP for an ECN-marked packet, at most one per
//! flow per `cnp_interval` (the slides: "each time receives a CNP (~1 us)").
//! docs/cc/barre.md states every choice the slides leave open.
//!
//! Steady signal (fast-forward): the rate the NIC paces at, in bits/s (R, or R/4 while the
//! inflight monitor restricts the flow): Barre has no window.

use super::{Algorithm, Cc, Check, DcqcnConfig, DcqcnReceiver, FlowFacts, Receiver};
use super::{FlowContext, NicEvent, NicProgram, Programmed};
use crate::time::{Bandwidth, SimTime};
use serde::{Deserialize, Serialize};

/// The increase timer's slot.
const INCREASE_TIMER: usize = 0;

/// The shortest RTT the rules take from a probe: a shorter one (none a real fabric returns)
/// would spin the increase timer.
const MIN_RTT: SimTime = SimTime(100_000);

/// Barre's parameters. The slides give beta's range and the rules, not the constants: each
/// default is argued in docs/cc/barre.md.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BarreConfig {
    /// Conservative increase step alpha, per RTT (per `reference_rtt` with `per_flow_alpha`).
    pub alpha: Bandwidth,
    /// Aggressive increase step A, after `fast_increase_rtts` RTTs without a CNP.
    pub fast_step: Bandwidth,
    /// RTTs without a CNP before the step becomes A.
    pub fast_increase_rtts: u32,
    /// Factor of each decrease (the slides: 0.95 < beta < 0.99).
    pub beta: f64,
    /// C of alpha_k = RTT_k x alpha / C: the RTT at which a flow's step is alpha.
    pub reference_rtt: SimTime,
    /// Floor of the sending rate.
    pub min_rate: Bandwidth,
    /// Receiver: at most one CNP per flow per this period.
    pub cnp_interval: SimTime,
    /// Time between a flow's RTT probes.
    pub probe_interval: SimTime,
    /// Dual lock: full packets sent since the last increase before the next may come.
    pub byte_counter_packets: u32,
    /// Delay-based increase on the real-time (probed) RTT; off, on the path's base RTT, and no
    /// probes.
    pub realtime_rtt: bool,
    /// Decrease on every CNP; off, at most once per RTT.
    pub per_cnp_decrease: bool,
    pub fast_increase: bool,
    pub dual_lock: bool,
    pub inflight_monitor: bool,
    pub per_flow_alpha: bool,
}

impl Default for BarreConfig {
    fn default() -> Self {
        BarreConfig {
            // The talk's tuned DCQCN steps 8-20 Mb/s per 20-100 us at 400 Gb/s (the middle of
            // each: 14 Mb/s per 60 us), and the vendor's hyper step is ten of its steps.
            alpha: Bandwidth(14_000_000),
            fast_step: Bandwidth(140_000_000),
            fast_increase_rtts: 5,
            beta: 0.97,
            reference_rtt: SimTime::from_us(60),
            min_rate: Bandwidth(10_000_000),
            cnp_interval: SimTime::from_us(1),
            probe_interval: SimTime::from_us(10),
            byte_counter_packets: 1,
            realtime_rtt: true,
            per_cnp_decrease: true,
            fast_increase: true,
            dual_lock: true,
            inflight_monitor: true,
            per_flow_alpha: true,
        }
    }
}

impl Algorithm for BarreConfig {
    fn name(&self) -> &'static str {
        "barre"
    }

    /// Its increases follow the probed RTT, one probe every `probe_interval`.
    fn settling_time(&self, facts: &FlowFacts) -> SimTime {
        self.probe_interval.max(facts.base_rtt)
    }

    fn describe(&self) -> &'static str {
        "Barre (ByteDance, USENIX ATC 2025): R += alpha per real-time RTT without a CNP (RTT probes), R x beta per CNP; fast increase, dual lock, inflight monitor, per-flow alpha"
    }

    fn reacts_to_ecn(&self) -> bool {
        true
    }

    fn validate(&self) -> Check {
        let key = |k: &str| format!("cc.{k}");
        for (k, v) in [("alpha", self.alpha), ("fast_step", self.fast_step), ("min_rate", self.min_rate)] {
            if v.0 == 0 {
                return Err((key(k), "must be positive, e.g. \"100Mbps\"".into()));
            }
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err((key("beta"), format!("must be in (0, 1) (the slides: 0.95 to 0.99), got {}", self.beta)));
        }
        for (k, v) in [
            ("reference_rtt", self.reference_rtt),
            ("cnp_interval", self.cnp_interval),
            ("probe_interval", self.probe_interval),
        ] {
            if v < SimTime::from_ns(10) {
                return Err((key(k), format!("must be at least 10ns, e.g. \"10us\", got {v}")));
            }
        }
        if self.byte_counter_packets == 0 {
            return Err((key("byte_counter_packets"), "must be at least 1 (dual_lock = false turns it off)".into()));
        }
        Ok(())
    }

    fn min_rate(&self) -> Option<Bandwidth> {
        Some(self.min_rate)
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Barre(Programmed::new(BarreRules::new(self, facts), facts))
    }

    fn receiver(&self, _facts: &FlowFacts) -> Receiver {
        Receiver::Dcqcn(DcqcnReceiver::new(&DcqcnConfig { cnp_interval: self.cnp_interval, ..DcqcnConfig::default() }))
    }

    fn rtt_probe_interval(&self, _facts: &FlowFacts) -> Option<SimTime> {
        self.realtime_rtt.then_some(self.probe_interval)
    }
}

/// Barre's sender half: its rules as a NIC program.
pub type Barre = Programmed<BarreRules>;

/// One flow's Barre state.
pub struct BarreRules {
    cfg: BarreConfig,
    line: f64,
    min: f64,
    packet_bytes: u64,
    /// R, the rate the rules keep (bits/s); the NIC sends at R/4 while the inflight monitor
    /// restricts it.
    rate: f64,
    /// The real-time RTT: the last probe's network round trip (the base RTT until one comes).
    rtt: SimTime,
    /// The last CNP, or the flow's start: the CNP-free period counts from here.
    quiet_since: SimTime,
    last_increase: SimTime,
    last_decrease: Option<SimTime>,
    /// Dual lock's byte counter.
    bytes_since_increase: u64,
    /// Inflight monitor: the current RTT window (its start and length, the real-time RTT when
    /// it started) and the bytes sent in it (S_now).
    window_start: SimTime,
    window_rtt: SimTime,
    sent_in_window: u64,
    restricted: bool,
}

impl BarreRules {
    pub fn new(cfg: &BarreConfig, facts: &FlowFacts) -> Self {
        let line = facts.line_rate.as_f64();
        BarreRules {
            cfg: cfg.clone(),
            line,
            min: cfg.min_rate.as_f64().min(line),
            packet_bytes: facts.packet_bytes,
            rate: line,
            rtt: facts.base_rtt.max(MIN_RTT),
            quiet_since: SimTime::ZERO,
            last_increase: SimTime::ZERO,
            last_decrease: None,
            bytes_since_increase: 0,
            window_start: SimTime::ZERO,
            window_rtt: facts.base_rtt.max(MIN_RTT),
            sent_in_window: 0,
            restricted: false,
        }
    }

    /// R, before the inflight monitor's restriction.
    pub fn nominal_rate(&self) -> f64 {
        self.rate
    }

    /// The inflight monitor holds the flow at R/4.
    pub fn restricted(&self) -> bool {
        self.restricted
    }

    /// The RTT the rules run on.
    pub fn rtt(&self) -> SimTime {
        self.rtt
    }

    /// The rate the NIC paces at.
    fn sending_rate(&self) -> f64 {
        let r = if self.restricted { self.rate / 4.0 } else { self.rate };
        r.clamp(self.min, self.line)
    }

    /// The step of one increase: alpha, or A after a CNP-free period (Fast Increase), scaled by
    /// RTT_k / C (RTT-based Enhancement).
    fn step(&self, now: SimTime) -> f64 {
        let quiet = now.saturating_sub(self.quiet_since);
        let fast = self.cfg.fast_increase && quiet.0 >= self.rtt.0.saturating_mul(self.cfg.fast_increase_rtts as u64);
        let step = if fast { self.cfg.fast_step } else { self.cfg.alpha }.as_f64();
        match self.cfg.per_flow_alpha {
            true => step * self.rtt.as_secs_f64() / self.cfg.reference_rtt.as_secs_f64(),
            false => step,
        }
    }

    /// Delay-based increase (Basic idea), under the dual lock (Dual-lock): a real-time RTT since
    /// the last increase and without a CNP, and, with the lock, the byte counter full.
    fn try_increase(&mut self, now: SimTime) {
        let timer = now.saturating_sub(self.last_increase) >= self.rtt;
        let no_cnp = now.saturating_sub(self.quiet_since) >= self.rtt;
        let bytes = !self.cfg.dual_lock
            || self.bytes_since_increase >= self.packet_bytes.saturating_mul(self.cfg.byte_counter_packets as u64);
        if timer && no_cnp && bytes {
            // A whole RTT without a CNP: whatever set the inflight monitor off was not
            // congestion (a shrinking RTT sample shortens the window S_now is held to).
            self.restricted = false;
            if self.rate < self.line {
                self.rate = (self.rate + self.step(now)).min(self.line);
                self.last_increase = now;
                self.bytes_since_increase = 0;
            }
        }
    }

    /// Per-CNP decrease (Basic idea), which also ends the inflight monitor's restriction
    /// (Inflight Monitor: "keep until CNP is received").
    fn on_cnp(&mut self, now: SimTime) {
        self.quiet_since = now;
        self.restricted = false;
        let due = self.cfg.per_cnp_decrease || self.last_decrease.is_none_or(|t| now.saturating_sub(t) >= self.rtt);
        if due {
            self.rate = (self.rate * self.cfg.beta).max(self.min);
            self.last_decrease = Some(now);
        }
    }

    /// Inflight Monitor: S_now, the bytes sent in the current RTT, against R x RTT. One packet
    /// of slack: the limiter sends whole packets, so a flow paced at R whose R x RTT is below a
    /// packet still sends one in some RTTs.
    /// The window keeps the length it started with: measured against a real-time RTT that
    /// shrank in the middle of it, bytes sent at the full rate would look like an excess.
    fn monitor(&mut self, now: SimTime, bytes: u64) {
        if now.saturating_sub(self.window_start) >= self.window_rtt {
            self.window_start = now;
            self.window_rtt = self.rtt;
            self.sent_in_window = 0;
        }
        self.sent_in_window += bytes;
        let allowed = self.rate * self.window_rtt.as_secs_f64() / 8.0 + self.packet_bytes as f64;
        if self.cfg.inflight_monitor && !self.restricted && self.sent_in_window as f64 > allowed {
            self.restricted = true;
        }
    }
}

impl NicProgram for BarreRules {
    fn on_event(&mut self, event: &NicEvent<'_>, flow: &mut FlowContext<'_>) {
        let now = flow.now();
        match *event {
            NicEvent::Start => {
                self.quiet_since = now;
                self.last_increase = now;
                self.window_start = now;
                self.window_rtt = self.rtt;
                flow.set_timer(INCREASE_TIMER, now + self.rtt);
            }
            NicEvent::Tx { bytes } => {
                self.monitor(now, bytes);
                self.bytes_since_increase = self.bytes_since_increase.saturating_add(bytes);
                self.try_increase(now);
            }
            NicEvent::Cnp => self.on_cnp(now),
            NicEvent::RttProbe(reply) if self.cfg.realtime_rtt => {
                // RTT-based Enhancement: "update the last real-time RTT whenever an RTT probe
                // packet returns" (the time the receiver held it is not the network's).
                self.rtt = reply.network_rtt().max(MIN_RTT);
            }
            NicEvent::Timer { slot: INCREASE_TIMER } => {
                self.try_increase(now);
                flow.set_timer(INCREASE_TIMER, now + self.rtt);
            }
            _ => return,
        }
        flow.set_rate(self.sending_rate());
    }

    /// R before the inflight monitor's restriction, the restriction (1 while the NIC sends at
    /// R/4) and the real-time RTT the rules run on.
    fn metrics(&self, report: &mut dyn FnMut(&str, f64)) {
        report("nominal_gbps", self.rate / 1e9);
        report("restricted", f64::from(u8::from(self.restricted)));
        report("rtt_ns", self.rtt.as_ns_f64());
    }

    /// The rate the NIC paces at (what the rules last set: R, or R/4 while restricted).
    fn steady_signal(&self, rate: f64, _window: Option<u64>) -> Option<f64> {
        Some(rate)
    }

    /// The CNP-free period's start, the last increase and decrease, and the inflight
    /// monitor's window start. (`rtt` and `window_rtt` are durations.)
    fn shift_clock(&mut self, by: SimTime) {
        self.quiet_since += by;
        self.last_increase += by;
        if let Some(t) = &mut self.last_decrease {
            *t += by;
        }
        self.window_start += by;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::facts;
    use crate::cc::{CcContext, CcEvent, CongestionControl, ProbeReply};

    fn barre(cfg: BarreConfig) -> Barre {
        let mut b = Programmed::new(BarreRules::new(&cfg, &facts()), &facts());
        b.on_start(&mut CcContext::new(SimTime::ZERO));
        b
    }

    fn at_us(us: u64) -> CcContext {
        CcContext::new(SimTime::from_us(us))
    }

    fn at_ns(ns: u64) -> CcContext {
        CcContext::new(SimTime::from_ns(ns))
    }

    fn probe(b: &mut Barre, now: SimTime, rtt: SimTime) {
        let reply = ProbeReply { sent_at: now.saturating_sub(rtt), remote_arrival: 0, remote_reply: 0, rtt };
        b.on_event(CcEvent::RttProbe(reply), &mut CcContext::new(now));
    }

    #[test]
    fn each_cnp_cuts_by_beta_and_a_quiet_rtt_adds_alpha() {
        let cfg = BarreConfig { fast_increase: false, per_flow_alpha: false, dual_lock: false, ..round_steps() };
        let mut b = barre(cfg);
        b.on_event(CcEvent::Cnp, &mut at_us(1));
        b.on_event(CcEvent::Cnp, &mut at_us(2));
        assert!((b.rate() - 100e9 * 0.97 * 0.97).abs() < 1.0, "{}", b.rate());
        let after_cuts = b.rate();
        // The timer at 8 us: the last CNP (2 us) is inside the last RTT (8 us): no increase.
        b.on_timer(INCREASE_TIMER, &mut at_us(8));
        assert_eq!(b.rate(), after_cuts);
        // At 16 us the last RTT was quiet: one step of alpha.
        b.on_timer(INCREASE_TIMER, &mut at_us(16));
        assert!((b.rate() - (after_cuts + 100e6)).abs() < 1.0, "{}", b.rate());
    }

    #[test]
    fn without_per_cnp_decrease_cnps_within_one_rtt_cut_once() {
        let cfg = BarreConfig { per_cnp_decrease: false, ..Default::default() };
        let mut b = barre(cfg);
        for us in 1..5 {
            b.on_event(CcEvent::Cnp, &mut at_us(us));
        }
        assert!((b.rate() - 97e9).abs() < 1.0, "{}", b.rate());
    }

    #[test]
    fn the_real_time_rtt_is_the_last_probes_network_rtt() {
        let mut b = barre(BarreConfig::default());
        assert_eq!(b.program.rtt(), facts().base_rtt);
        let reply =
            ProbeReply { sent_at: SimTime::from_us(10), remote_arrival: 1_000_000, remote_reply: 3_000_000, rtt: SimTime::from_us(20) };
        b.on_event(CcEvent::RttProbe(reply), &mut at_us(30));
        assert_eq!(b.program.rtt(), SimTime::from_us(18), "the 2 us the receiver held it are left out");
        // Off, probes are not asked for and do not move the RTT.
        let off = BarreConfig { realtime_rtt: false, ..Default::default() };
        assert_eq!(off.rtt_probe_interval(&facts()), None);
        assert_eq!(BarreConfig::default().rtt_probe_interval(&facts()), Some(SimTime::from_us(10)));
        let mut b = barre(off);
        b.on_event(CcEvent::RttProbe(reply), &mut at_us(30));
        assert_eq!(b.program.rtt(), facts().base_rtt);
    }

    #[test]
    fn fast_increase_takes_the_aggressive_step_after_a_quiet_period() {
        let cfg = BarreConfig { per_flow_alpha: false, dual_lock: false, ..round_steps() };
        let mut b = barre(cfg);
        for _ in 0..10 {
            b.on_event(CcEvent::Cnp, &mut at_us(0)); // 74 Gb/s: room for the steps below
        }
        let mut last = b.rate();
        let mut steps = Vec::new();
        for k in 1..=8 {
            b.on_timer(INCREASE_TIMER, &mut at_us(8 * k));
            steps.push(((b.rate() - last) / 1e6).round() as u64);
            last = b.rate();
        }
        // Quiet for 5 RTTs (40 us) from the CNP at 0: alpha (100 Mb/s) until then, A (1 Gb/s) on.
        assert_eq!(steps, vec![100, 100, 100, 100, 1000, 1000, 1000, 1000]);
    }

    #[test]
    fn per_flow_alpha_scales_the_step_with_the_flows_rtt() {
        let cfg = BarreConfig { fast_increase: false, dual_lock: false, ..round_steps() };
        let step = |rtt_us: u64| {
            let mut b = barre(cfg.clone());
            b.on_event(CcEvent::Cnp, &mut at_us(0));
            probe(&mut b, SimTime::from_us(1), SimTime::from_us(rtt_us));
            let before = b.rate();
            b.on_timer(INCREASE_TIMER, &mut at_us(200));
            b.rate() - before
        };
        // alpha_k = RTT_k x alpha / C, C = 10 us: 20 us doubles the step, 5 us halves it.
        assert!((step(20) - 200e6).abs() < 1.0, "{}", step(20));
        assert!((step(5) - 50e6).abs() < 1.0, "{}", step(5));
    }

    #[test]
    fn dual_lock_holds_a_sub_mtu_flow_until_its_byte_counter_fills() {
        // 1 Gb/s x 8 us = 1000 B, below one 1048 B packet: the flow sends less than a packet
        // per RTT.
        let cfg = BarreConfig { fast_increase: false, per_flow_alpha: false, inflight_monitor: false, ..round_steps() };
        let mut b = barre(cfg);
        for _ in 0..152 {
            b.on_event(CcEvent::Cnp, &mut at_ns(0)); // 100 Gb/s x 0.97^152 ~ 1 Gb/s
        }
        let low = b.rate();
        assert!(low * 8e-6 / 8.0 < 1048.0, "rate x RTT {} B", low * 1e-6);
        // Timer ticks with no packet sent: the timer allows, the byte counter does not.
        for k in 1..=3 {
            b.on_timer(INCREASE_TIMER, &mut at_us(8 * k));
        }
        assert_eq!(b.rate(), low, "no increase without a packet sent");
        // A packet goes out (8.4 us at 1 Gb/s): the lock opens once.
        b.on_send(1048, &mut at_us(30));
        assert!((b.rate() - (low + 100e6)).abs() < 1.0, "{}", b.rate());
        let once = b.rate();
        b.on_timer(INCREASE_TIMER, &mut at_us(40));
        assert_eq!(b.rate(), once, "the byte counter is empty again");
        // Without the lock the same ticks increase every RTT.
        let mut free = barre(BarreConfig { dual_lock: false, ..cfg_of(&b) });
        for _ in 0..152 {
            free.on_event(CcEvent::Cnp, &mut at_ns(0));
        }
        for k in 1..=3 {
            free.on_timer(INCREASE_TIMER, &mut at_us(8 * k));
        }
        assert!((free.rate() - (low + 300e6)).abs() < 1.0, "{}", free.rate());
    }

    /// Steps of round numbers (100 Mb/s, A = 1 Gb/s, per 10 us), so the rules' arithmetic reads
    /// plainly; the defaults are checked on fabrics (tests/all/cc_barre.rs).
    fn round_steps() -> BarreConfig {
        BarreConfig {
            alpha: Bandwidth(100_000_000),
            fast_step: Bandwidth(1_000_000_000),
            reference_rtt: SimTime::from_us(10),
            ..Default::default()
        }
    }

    fn cfg_of(b: &Barre) -> BarreConfig {
        b.program.cfg.clone()
    }

    #[test]
    fn the_inflight_monitor_cuts_to_a_quarter_until_the_next_cnp() {
        let cfg = BarreConfig { fast_increase: false, per_flow_alpha: false, dual_lock: false, ..round_steps() };
        let mut b = barre(cfg);
        for _ in 0..23 {
            b.on_event(CcEvent::Cnp, &mut at_ns(0)); // ~50 Gb/s: R x RTT = 50 KB
        }
        let r = b.rate();
        let allowed = r * 8e-6 / 8.0;
        // Sending at R stays within R x RTT (one packet of slack).
        let mut sent = 0.0;
        while sent + 1048.0 <= allowed + 1048.0 {
            b.on_send(1048, &mut at_us(1));
            sent += 1048.0;
        }
        assert!(!b.program.restricted());
        // More than R x RTT in the same RTT: R/4.
        b.on_send(1048, &mut at_us(2));
        b.on_send(1048, &mut at_us(2));
        assert!(b.program.restricted());
        assert!((b.rate() - r / 4.0).abs() < 1.0, "{} vs {}", b.rate(), r / 4.0);
        // The next CNP releases it (and cuts R by beta).
        b.on_event(CcEvent::Cnp, &mut at_us(3));
        assert!(!b.program.restricted());
        assert!((b.rate() - r * 0.97).abs() < 1.0, "{}", b.rate());
        // Set off again in the next window; with a CNP inside the last RTT the timer does not
        // release it.
        for _ in 0..100 {
            b.on_send(1048, &mut at_us(10));
        }
        assert!(b.program.restricted());
        b.on_timer(INCREASE_TIMER, &mut at_us(10));
        assert!(b.program.restricted());
        // A whole RTT without a CNP (the increase rule fires) releases it too: no congestion
        // followed the excess.
        b.on_timer(INCREASE_TIMER, &mut at_us(12));
        assert!(!b.program.restricted());
        assert!((b.rate() - (r * 0.97 + 100e6)).abs() < 1.0, "{}", b.rate());
        // Off, the same burst changes nothing.
        let mut off = barre(BarreConfig { inflight_monitor: false, ..cfg_of(&b) });
        for _ in 0..200 {
            off.on_send(1048, &mut at_us(1));
        }
        assert!(!off.program.restricted());
        assert_eq!(off.rate(), 100e9);
    }

    #[test]
    fn the_rate_stays_between_the_floor_and_the_line() {
        let mut b = barre(BarreConfig::default());
        for i in 0..2000 {
            b.on_event(CcEvent::Cnp, &mut at_ns(i));
        }
        assert_eq!(b.rate(), 10e6);
        for _ in 0..100 {
            b.on_send(1048, &mut at_us(3));
        }
        assert_eq!(b.rate(), 10e6, "the restriction never goes below the floor");
        b.on_event(CcEvent::Cnp, &mut at_us(4));
        for k in 1..10_000 {
            b.on_send(1048, &mut at_us(4 + 8 * k));
            b.on_timer(INCREASE_TIMER, &mut at_us(4 + 8 * k));
        }
        assert_eq!(b.rate(), 100e9);
    }

    #[test]
    fn validation_names_the_key() {
        let bad = |cfg: BarreConfig| cfg.validate().unwrap_err().0;
        assert_eq!(bad(BarreConfig { beta: 1.0, ..Default::default() }), "cc.beta");
        assert_eq!(bad(BarreConfig { alpha: Bandwidth(0), ..Default::default() }), "cc.alpha");
        assert_eq!(bad(BarreConfig { probe_interval: SimTime::ZERO, ..Default::default() }), "cc.probe_interval");
        assert_eq!(bad(BarreConfig { byte_counter_packets: 0, ..Default::default() }), "cc.byte_counter_packets");
        assert!(BarreConfig::default().validate().is_ok());
    }
}
