//! DCQCN: Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015,
//! as the HPCC ns-3 study runs it (Li et al., SIGCOMM 2019, `rdma-hw.cc`, the "Mellanox" mode).
//!
//! Three parts (paper §3):
//! - **CP** (the switch) marks ECN RED-style: see `net/switch.rs`.
//! - **NP** (the receiver, [`DcqcnReceiver`]) answers a CE-marked packet with a CNP, at most one
//!   per flow every `cnp_interval` (0 by default, as the HPCC study: one CNP per marked packet).
//! - **RP** (the sender, [`Dcqcn`]):
//!   * alpha: every `alpha_update_interval`, alpha = (1-g)·alpha + g if a CNP arrived in the last
//!     interval, else (1-g)·alpha (paper eq. 2);
//!   * decrease: every `rate_decrease_interval`, if a CNP arrived since the last check,
//!     target = current, current = current·(1 - alpha/2) (eq. 1), not below `min_rate`;
//!   * increase, by a timer (`rate_increase_interval`) and a byte counter (`byte_counter`):
//!     fast recovery current = (target + current)/2 for the first `fast_recovery_stages` events,
//!     then additive increase target += R_AI, then hyper increase target += R_HAI (eqs. 3-4,
//!     and the stage rule of §3.2: fast recovery while both counters are below F, hyper once
//!     both exceed F, additive otherwise).
//!
//! The alpha and decrease clocks of the ns-3 model tick forever once the first CNP arrives
//! (every 1 us and 4 us, per flow). We keep the same tick grids but evaluate them lazily: alpha
//! is brought up to date, tick by tick, whenever it is read or a CNP arrives, and a decrease
//! timer is armed only for the first tick after a CNP. The results are the same as ticking, with
//! millions fewer events.
//!
//! Steady signal (fast-forward): the current rate R_C, in bits/s (DCQCN has no window).

use super::{Algorithm, Cc, CcContext, CcEvent, Check, CongestionControl, DataArrival, FlowFacts, Receiver, ReceiverAction, ReceiverCc};
use crate::time::ByteSize;
use crate::time::{Bandwidth, SimTime};
use serde::{Deserialize, Serialize};

const DECREASE_TIMER: usize = 0;
const INCREASE_TIMER: usize = 1;

/// DCQCN parameters. Defaults: the HPCC ns-3 study's configuration at 100 Gbps
/// (`mix/config.txt` of alibaba-edu/High-Precision-Congestion-Control), which follows the NIC
/// vendor's recommended values.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnConfig {
    /// EWMA gain of alpha (EWMA_GAIN = 1/256).
    pub g: f64,
    /// Alpha update period (ALPHA_RESUME_INTERVAL = 1 us).
    pub alpha_update_interval: SimTime,
    /// At most one rate decrease per this period (RATE_DECREASE_INTERVAL = 4 us).
    pub rate_decrease_interval: SimTime,
    /// Rate-increase timer period (RP_TIMER = 300 us).
    pub rate_increase_interval: SimTime,
    /// Rate-increase byte counter: one increase event per this many bytes sent. The HPCC study
    /// does not model it (timer only), so it is off by default; the DCQCN paper uses 10 MB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub byte_counter: Option<ByteSize>,
    /// Increase events spent in fast recovery before additive increase (FAST_RECOVERY_TIMES = 1).
    pub fast_recovery_stages: u32,
    /// Additive increase step R_AI (RATE_AI = 20 Mb/s).
    pub additive_increase: Bandwidth,
    /// Hyper increase step R_HAI (RATE_HAI = 200 Mb/s).
    pub hyper_increase: Bandwidth,
    /// Floor of the sending rate (MIN_RATE = 1000 Mb/s).
    pub min_rate: Bandwidth,
    /// Current and target rate become this fraction of the current rate on the first CNP (1.0).
    pub rate_on_first_cnp: f64,
    /// The vendor's `rate_to_set_on_first_cnp`: on the first CNP the rate limiter starts at this
    /// rate (absent: the vendor's 0, full port speed; then `rate_on_first_cnp` applies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_to_set_on_first_cnp: Option<Bandwidth>,
    /// Also lower the target on a decrease that follows no increase (CLAMP_TARGET_RATE = 0).
    pub clamp_target_rate: bool,
    /// The vendor's `clamp_tgt_rate_after_time_inc` (1): a decrease also sets the target to the
    /// current rate when the increases since the last decrease were all by the timer. Off, only
    /// byte-counter increases (or `clamp_target_rate`) move the target down at a decrease.
    pub clamp_target_after_timer_increase: bool,
    /// The vendor's `rpg_max_rate` (absent: its 0, full port speed): once an increase brings
    /// the rate to this, the flow is no longer rate-limited and sends at line rate again, as
    /// before its first CNP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<Bandwidth>,
    /// Alpha on a flow's first CNP (1.0; the vendor's `initial_alpha_value` = 1023/1024).
    pub initial_alpha: f64,
    /// One decrease leaves at least this fraction of the rate (0: no bound, as the HPCC study;
    /// the vendor's `rpg_min_dec_fac` = 50%). It binds when alpha would cut more than that.
    pub min_dec_factor: f64,
    /// NP: at most one CNP per flow per this period. 0, one CNP per marked packet: the HPCC
    /// study's receiver (`rdma-hw.cc` `ReceiveUdp`) sets the CNP flag on the ACK of every
    /// ECN-marked packet (`if (ecnbits) seqh.SetCnp()`), with no interval between two. The NIC
    /// vendor's `min_time_between_cnps` (4 us) is the `nvidia` preset's.
    pub cnp_interval: SimTime,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            g: 1.0 / 256.0,
            alpha_update_interval: SimTime::from_us(1),
            rate_decrease_interval: SimTime::from_us(4),
            rate_increase_interval: SimTime::from_us(300),
            byte_counter: None,
            fast_recovery_stages: 1,
            additive_increase: Bandwidth(20_000_000),
            hyper_increase: Bandwidth(200_000_000),
            min_rate: Bandwidth(1_000_000_000),
            rate_on_first_cnp: 1.0,
            rate_to_set_on_first_cnp: None,
            clamp_target_rate: false,
            clamp_target_after_timer_increase: true,
            max_rate: None,
            initial_alpha: 1.0,
            min_dec_factor: 0.0,
            cnp_interval: SimTime::ZERO,
        }
    }
}

/// The named parameter sets of `preset = "..."`.
const PRESETS: &[&str] = &["hpcc_study", "nvidia", "barre_tuned"];

impl DcqcnConfig {
    /// Preset `name`: `hpcc_study` is the defaults above; `nvidia` is the NIC vendor's defaults
    /// for ConnectX-4 and later (NVIDIA, "DCQCN CC Parameters"; docs/scenario.md cites each):
    /// `dce_tcp_g` = 1019 keeps 1019/1024 of alpha per update (g = 5/1024), `dce_tcp_rtt` 1 us,
    /// `initial_alpha_value` 1023, `rate_reduce_monitor_period` 4 us, `rpg_min_dec_fac` 50%,
    /// `rpg_min_rate` 1 Mb/s, `rpg_time_reset` 300 us, `rpg_byte_reset` 32767 B,
    /// `rpg_threshold` 1, `rpg_ai_rate` 5 Mb/s, `rpg_hai_rate` 50 Mb/s, `clamp_tgt_rate` 0,
    /// `clamp_tgt_rate_after_time_inc` 1, `rpg_max_rate` 0 (port speed),
    /// `rate_to_set_on_first_cnp` 0 (port speed: no cut of its own), `min_time_between_cnps` 4 us.
    /// `barre_tuned` is `nvidia` with the tuned table of the Barre talk ("DCQCN
    /// Parameter Tuning Settings"), which gives ranges: the middle of each is taken.
    pub fn preset(name: &str) -> Option<DcqcnConfig> {
        match name {
            "hpcc_study" => Some(DcqcnConfig::default()),
            "nvidia" => Some(DcqcnConfig {
                g: 5.0 / 1024.0,
                alpha_update_interval: SimTime::from_us(1),
                rate_decrease_interval: SimTime::from_us(4),
                rate_increase_interval: SimTime::from_us(300),
                byte_counter: Some(ByteSize(32767)),
                fast_recovery_stages: 1,
                additive_increase: Bandwidth(5_000_000),
                hyper_increase: Bandwidth(50_000_000),
                min_rate: Bandwidth(1_000_000),
                rate_on_first_cnp: 1.0,
                rate_to_set_on_first_cnp: None,
                clamp_target_rate: false,
                clamp_target_after_timer_increase: true,
                max_rate: None,
                initial_alpha: 1023.0 / 1024.0,
                min_dec_factor: 0.5,
                cnp_interval: SimTime::from_us(4),
            }),
            "barre_tuned" => Some(DcqcnConfig {
                cnp_interval: SimTime::from_us(1),              // min_time_between_cnps 0~2 us
                min_dec_factor: 0.89,                           // rpg_min_dec_fac 80~98
                rate_decrease_interval: SimTime::from_ns(2500), // rate_reduce_monitor_period 1~4 us
                additive_increase: Bandwidth(14_000_000),       // "rpg_alpha_rate" (rpg_ai_rate) 8~20
                rate_increase_interval: SimTime::from_us(60),   // rpg_time_reset 20~100 us
                ..DcqcnConfig::preset("nvidia")?
            }),
            _ => None,
        }
    }
}

impl Algorithm for DcqcnConfig {
    fn reacts_to_ecn(&self) -> bool {
        true
    }
    /// The rate rises by timer (every `rate_increase_interval`) as well as by bytes: a rate held
    /// for less than that may be about to step.
    fn settling_time(&self, facts: &FlowFacts) -> SimTime {
        (self.rate_increase_interval.max(self.alpha_update_interval).max(self.rate_decrease_interval)).max(facts.base_rtt)
    }
    fn name(&self) -> &'static str {
        "dcqcn"
    }

    fn describe(&self) -> &'static str {
        "DCQCN: ECN-marked packets make the receiver send CNPs; the sender cuts its rate by alpha/2 and recovers by timer and byte counter"
    }

    fn optional_parameters(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("byte_counter", "off; the DCQCN paper uses \"10MB\""),
            ("rate_to_set_on_first_cnp", "full port speed, then rate_on_first_cnp applies"),
            ("max_rate", "full port speed"),
        ]
    }

    fn presets(&self) -> &'static [&'static str] {
        PRESETS
    }

    fn preset_table(&self, name: &str) -> Option<toml::Table> {
        let cfg = DcqcnConfig::preset(name)?;
        Some(toml::Table::try_from(cfg).expect("a config serialises to a table"))
    }

    fn validate(&self) -> Check {
        let key = |k: &str| format!("cc.{k}");
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err((key("g"), format!("the alpha gain must be in (0, 1], got {}", self.g)));
        }
        for (k, v) in [
            ("alpha_update_interval", self.alpha_update_interval),
            ("rate_decrease_interval", self.rate_decrease_interval),
            ("rate_increase_interval", self.rate_increase_interval),
        ] {
            if v.0 == 0 {
                return Err((key(k), "must be positive, e.g. \"4us\"".into()));
            }
        }
        if self.byte_counter == Some(ByteSize(0)) {
            return Err((key("byte_counter"), "must be positive (omit it to turn the byte counter off)".into()));
        }
        if !(self.rate_on_first_cnp > 0.0 && self.rate_on_first_cnp <= 1.0) {
            return Err((key("rate_on_first_cnp"), format!("must be in (0, 1], got {}", self.rate_on_first_cnp)));
        }
        if self.rate_to_set_on_first_cnp.is_some() && self.rate_on_first_cnp != 1.0 {
            return Err((
                key("rate_to_set_on_first_cnp"),
                "set either it (a rate) or rate_on_first_cnp (a fraction of the current rate), not both".into(),
            ));
        }
        for (k, v) in [("rate_to_set_on_first_cnp", self.rate_to_set_on_first_cnp), ("max_rate", self.max_rate)] {
            if v.is_some_and(|r| r < self.min_rate) {
                return Err((
                    key(k),
                    format!("must be at least min_rate ({} b/s); omit it for full port speed", self.min_rate.0),
                ));
            }
        }
        if !(self.initial_alpha > 0.0 && self.initial_alpha <= 1.0) {
            return Err((key("initial_alpha"), format!("must be in (0, 1], got {}", self.initial_alpha)));
        }
        if !(0.0..1.0).contains(&self.min_dec_factor) {
            return Err((
                key("min_dec_factor"),
                format!("must be in [0, 1) (0.5: a cut at most halves the rate), got {}", self.min_dec_factor),
            ));
        }
        Ok(())
    }

    fn min_rate(&self) -> Option<Bandwidth> {
        Some(self.min_rate)
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Dcqcn(Dcqcn::new(self, facts))
    }

    fn receiver(&self, _facts: &FlowFacts) -> Receiver {
        Receiver::Dcqcn(DcqcnReceiver::new(self))
    }
}


/// DCQCN reaction point: the sender's rate state.
pub struct Dcqcn {
    cfg: DcqcnConfig,
    line_rate: f64,
    /// Current sending rate R_C (bits/s).
    rate: f64,
    /// Target rate R_T (bits/s).
    target: f64,
    alpha: f64,
    /// Time of the first CNP: the origin of the alpha and decrease tick grids.
    first_cnp: Option<SimTime>,
    /// Alpha ticks already applied.
    alpha_ticks: u64,
    /// A CNP arrived since the last alpha tick.
    cnp_for_alpha: bool,
    /// A CNP arrived since the last decrease check.
    cnp_for_decrease: bool,
    decrease_armed: bool,
    increase_armed: bool,
    /// Increase events by timer (T) and by byte counter (BC) since the last decrease.
    timer_stage: u32,
    byte_stage: u32,
    bytes_since_increase: u64,
}

impl Dcqcn {
    pub fn new(cfg: &DcqcnConfig, facts: &FlowFacts) -> Self {
        let line = facts.line_rate.as_f64();
        Dcqcn {
            cfg: cfg.clone(),
            line_rate: line,
            rate: line,
            target: line,
            alpha: 1.0,
            first_cnp: None,
            alpha_ticks: 0,
            cnp_for_alpha: false,
            cnp_for_decrease: false,
            decrease_armed: false,
            increase_armed: false,
            timer_stage: 0,
            byte_stage: 0,
            bytes_since_increase: 0,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn target_rate(&self) -> f64 {
        self.target
    }

    /// Applies every alpha tick up to and including `now` (eq. 2, one tick per interval).
    fn update_alpha(&mut self, now: SimTime) {
        let Some(t0) = self.first_cnp else { return };
        let ticks = (now - t0).0 / self.cfg.alpha_update_interval.0;
        if ticks <= self.alpha_ticks {
            return;
        }
        let g = self.cfg.g;
        // The first pending tick sees the CNP flag; the rest saw no CNP and only decay.
        self.alpha = (1.0 - g) * self.alpha + if self.cnp_for_alpha { g } else { 0.0 };
        self.cnp_for_alpha = false;
        let quiet = ticks - self.alpha_ticks - 1;
        if quiet > 0 {
            self.alpha *= (1.0 - g).powf(quiet as f64);
        }
        self.alpha_ticks = ticks;
    }

    /// The first decrease tick strictly after `now`. Ticks sit 1 ns after alpha ticks so alpha is
    /// updated first, as in the ns-3 model.
    fn next_decrease_tick(&self, now: SimTime) -> SimTime {
        let base = self.first_cnp.expect("decrease grid starts at the first CNP") + SimTime::from_ns(1);
        let iv = self.cfg.rate_decrease_interval.0;
        if now < base {
            return base + SimTime(iv);
        }
        let k = (now - base).0 / iv + 1;
        base + SimTime(k * iv)
    }

    fn on_cnp(&mut self, cx: &mut CcContext) {
        let now = cx.now();
        self.cnp_for_decrease = true;
        if self.first_cnp.is_none() {
            // First CNP of the flow: alpha starts at `initial_alpha` and both clocks start
            // (rdma-hw.cc, cnp_received_mlx).
            self.first_cnp = Some(now);
            self.alpha = self.cfg.initial_alpha;
            self.alpha_ticks = 0;
            self.cnp_for_alpha = false;
            let first = match self.cfg.rate_to_set_on_first_cnp {
                Some(r) => r.as_f64().min(self.rate),
                None => self.rate * self.cfg.rate_on_first_cnp,
            };
            self.rate = first.max(self.cfg.min_rate.as_f64());
            self.target = self.rate;
        } else {
            self.update_alpha(now);
            self.cnp_for_alpha = true;
        }
        if !self.decrease_armed {
            self.decrease_armed = true;
            cx.set_timer(DECREASE_TIMER, self.next_decrease_tick(now));
        }
    }

    /// Rate decrease (eq. 1) at a decrease tick that follows a CNP.
    fn decrease(&mut self, cx: &mut CcContext) {
        self.update_alpha(cx.now());
        let timer_counts = self.cfg.clamp_target_after_timer_increase && self.timer_stage != 0;
        if self.cfg.clamp_target_rate || timer_counts || self.byte_stage != 0 {
            self.target = self.rate;
        }
        let cut = (1.0 - self.alpha / 2.0).max(self.cfg.min_dec_factor);
        self.rate = (self.rate * cut).max(self.cfg.min_rate.as_f64());
        self.timer_stage = 0;
        self.byte_stage = 0;
        self.bytes_since_increase = 0;
        self.increase_armed = true;
        cx.set_timer(INCREASE_TIMER, cx.now() + self.cfg.rate_increase_interval);
    }

    /// One rate-increase event (eqs. 3-4); the stage counters are read before they advance.
    fn increase(&mut self) {
        let f = self.cfg.fast_recovery_stages;
        let (lo, hi) = if self.cfg.byte_counter.is_some() {
            (self.timer_stage.min(self.byte_stage), self.timer_stage.max(self.byte_stage))
        } else {
            (self.timer_stage, self.timer_stage)
        };
        if hi < f {
            // fast recovery: only the current rate moves towards the target
        } else if lo > f {
            self.target += self.cfg.hyper_increase.as_f64();
        } else {
            self.target += self.cfg.additive_increase.as_f64();
        }
        self.target = self.target.min(self.line_rate);
        self.rate = ((self.rate + self.target) / 2.0).min(self.line_rate);
        if self.cfg.max_rate.is_some_and(|max| self.rate >= max.as_f64()) {
            // The limiter is released: line rate, as before the first CNP.
            (self.rate, self.target) = (self.line_rate, self.line_rate);
        }
    }

    fn saturated(&self) -> bool {
        self.rate >= self.line_rate && self.target >= self.line_rate
    }
}

impl CongestionControl for Dcqcn {
    fn on_send(&mut self, bytes: u64, _cx: &mut CcContext) {
        let Some(b) = self.cfg.byte_counter else {
            return;
        };
        if self.saturated() {
            return;
        }
        self.bytes_since_increase += bytes;
        if self.bytes_since_increase >= b.0 {
            self.bytes_since_increase -= b.0;
            self.increase();
            self.byte_stage += 1;
        }
    }

    fn on_event(&mut self, ev: CcEvent, cx: &mut CcContext) {
        if ev == CcEvent::Cnp {
            self.on_cnp(cx);
        }
    }

    fn on_timer(&mut self, slot: usize, cx: &mut CcContext) {
        match slot {
            DECREASE_TIMER => {
                self.decrease_armed = false;
                if self.cnp_for_decrease {
                    self.cnp_for_decrease = false;
                    self.decrease(cx);
                }
            }
            INCREASE_TIMER => {
                // At line rate with the target at line rate every increase is a no-op, so the
                // timer can rest until the next decrease re-arms it.
                if self.saturated() {
                    self.increase_armed = false;
                    return;
                }
                self.increase();
                self.timer_stage += 1;
                cx.set_timer(INCREASE_TIMER, cx.now() + self.cfg.rate_increase_interval);
            }
            _ => {}
        }
    }

    fn rate(&self) -> f64 {
        self.rate
    }

    /// Alpha (the estimate of the marked share that sizes each cut) and the target rate R_T.
    fn metrics(&self, report: &mut dyn FnMut(&str, f64)) {
        report("alpha", self.alpha);
        report("target_gbps", self.target / 1e9);
    }

    /// The current rate R_C, which the NIC paces at.
    fn steady_signal(&self) -> Option<f64> {
        Some(self.rate)
    }

    /// The first CNP's time: the origin of the alpha and decrease tick grids (`alpha_ticks`
    /// counts ticks from it, so it stays).
    fn shift_clock(&mut self, by: SimTime) {
        if let Some(t) = &mut self.first_cnp {
            *t += by;
        }
    }
}

/// DCQCN notification point: CNPs for CE-marked packets, at most one per `cnp_interval` (with 0,
/// one for each).
pub struct DcqcnReceiver {
    interval: SimTime,
    last_cnp: Option<SimTime>,
}

impl DcqcnReceiver {
    pub fn new(cfg: &DcqcnConfig) -> Self {
        DcqcnReceiver { interval: cfg.cnp_interval, last_cnp: None }
    }
}

impl ReceiverCc for DcqcnReceiver {
    fn on_data(&mut self, pkt: &DataArrival) -> ReceiverAction {
        if !pkt.ecn_ce {
            return ReceiverAction::default();
        }
        let due = self.last_cnp.is_none_or(|t| pkt.now.saturating_sub(t) >= self.interval);
        if due {
            self.last_cnp = Some(pkt.now);
        }
        ReceiverAction { send_cnp: due, ..Default::default() }
    }

    /// The last CNP's time, which spaces the next one.
    fn shift_clock(&mut self, by: SimTime) {
        if let Some(t) = &mut self.last_cnp {
            *t += by;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::facts;

    /// Runs timers and CNPs on a schedule; returns the rate after `until`.
    fn run(cfg: DcqcnConfig, cnps: &[SimTime], until: SimTime) -> Dcqcn {
        let mut cc = Dcqcn::new(&cfg, &facts());
        let mut pending = [None; 4];
        let mut cnps = cnps.to_vec();
        cnps.reverse();
        loop {
            let next_timer = pending.iter().enumerate().filter_map(|(i, t)| t.map(|t| (t, i))).min();
            let next_cnp = cnps.last().copied();
            let (now, what) = match (next_timer, next_cnp) {
                (Some((t, i)), Some(c)) if t <= c => (t, Some(i)),
                (_, Some(c)) => (c, None),
                (Some((t, i)), None) => (t, Some(i)),
                (None, None) => break,
            };
            if now > until {
                break;
            }
            let mut cx = CcContext::new(now);
            match what {
                Some(slot) => {
                    pending[slot] = None;
                    cc.on_timer(slot, &mut cx)
                }
                None => {
                    cnps.pop();
                    cc.on_event(CcEvent::Cnp, &mut cx)
                }
            }
            for (slot, t) in cx.timer_requests() {
                pending[slot] = t;
            }
        }
        cc
    }

    #[test]
    fn a_decrease_keeps_at_least_min_dec_factor_of_the_rate() {
        // One CNP, alpha about 1: the cut would halve the rate; a floor of 80% holds it there.
        let at = |f: f64| {
            let cfg = DcqcnConfig { min_dec_factor: f, ..DcqcnConfig::default() };
            run(cfg, &[SimTime::ZERO], SimTime::from_us(10)).rate()
        };
        assert!((at(0.8) - 80e9).abs() < 1.0, "{}", at(0.8));
        assert!(at(0.0) < 51e9);
        // The vendor's 50% never binds with alpha at most 1.
        assert_eq!(at(0.5), at(0.0));
    }

    #[test]
    fn the_first_cnp_sets_alpha_to_initial_alpha() {
        let cfg = DcqcnConfig { initial_alpha: 0.5, ..DcqcnConfig::default() };
        let cc = run(cfg, &[SimTime::ZERO], SimTime::from_us(10));
        // Decayed for 4 ticks before the decrease at 4 us + 1 ns, then alpha/2 = 0.25 cut.
        let alpha = 0.5 * (1.0f64 - 1.0 / 256.0).powi(4);
        assert!((cc.rate() - 100e9 * (1.0 - alpha / 2.0)).abs() < 1.0, "{}", cc.rate());
    }

    #[test]
    fn presets_are_the_defaults_and_the_vendors_values() {
        assert_eq!(DcqcnConfig::preset("hpcc_study"), Some(DcqcnConfig::default()));
        let nvidia = DcqcnConfig::preset("nvidia").unwrap();
        assert_eq!((nvidia.g, nvidia.byte_counter, nvidia.min_dec_factor), (5.0 / 1024.0, Some(ByteSize(32767)), 0.5));
        assert_eq!((nvidia.additive_increase, nvidia.hyper_increase), (Bandwidth(5_000_000), Bandwidth(50_000_000)));
        assert_eq!(nvidia.cnp_interval, SimTime::from_us(4), "min_time_between_cnps");
        assert!(nvidia.validate().is_ok());
        assert!(DcqcnConfig::preset("fastest").is_none());
        let tuned = DcqcnConfig::preset("barre_tuned").unwrap();
        assert_eq!((tuned.g, tuned.min_dec_factor, tuned.rate_increase_interval), (nvidia.g, 0.89, SimTime::from_us(60)));
        assert!(tuned.validate().is_ok());
        for name in PRESETS {
            assert!(DcqcnConfig::default().preset_table(name).is_some(), "{name}");
        }
    }

    #[test]
    fn clamp_after_timer_increase_decides_whether_timer_increases_move_the_target() {
        // A CNP at 0 (decrease at 4 us), a timer increase at 304 us, a CNP at 400 us (decrease
        // at 404 us): the increases since the last decrease were all by the timer.
        let cnps = [SimTime::ZERO, SimTime::from_us(400)];
        let at = |clamp: bool| {
            let cfg = DcqcnConfig { clamp_target_after_timer_increase: clamp, ..DcqcnConfig::default() };
            run(cfg, &cnps, SimTime::from_us(410))
        };
        let (on, off) = (at(true), at(false));
        assert!(on.target_rate() < 80e9, "the target follows the rate: {}", on.target_rate());
        assert_eq!(off.target_rate(), 100e9, "the target stays where the first CNP left it");
    }

    #[test]
    fn reaching_max_rate_releases_the_limiter() {
        // A CNP halves the rate at 4 us; the timer increase at 304 us brings it to 75 Gb/s.
        let at = |max_rate| run(DcqcnConfig { max_rate, ..DcqcnConfig::default() }, &[SimTime::ZERO], SimTime::from_us(310));
        assert!((at(None).rate() - 75e9).abs() < 0.5e9, "{}", at(None).rate());
        assert_eq!(at(Some(Bandwidth(60_000_000_000))).rate(), 100e9, "60 Gb/s reached: line rate");
        assert!((at(Some(Bandwidth(90_000_000_000))).rate() - 75e9).abs() < 0.5e9);
    }

    #[test]
    fn the_first_cnp_starts_the_limiter_at_rate_to_set_on_first_cnp() {
        let cfg = DcqcnConfig { rate_to_set_on_first_cnp: Some(Bandwidth(10_000_000_000)), ..DcqcnConfig::default() };
        let cc = run(cfg.clone(), &[SimTime::ZERO], SimTime::from_us(1));
        assert_eq!((cc.rate(), cc.target_rate()), (10e9, 10e9));
        let both = DcqcnConfig { rate_on_first_cnp: 0.5, ..cfg };
        assert_eq!(both.validate().unwrap_err().0, "cc.rate_to_set_on_first_cnp");
        let below = DcqcnConfig { max_rate: Some(Bandwidth(1000)), ..DcqcnConfig::default() };
        assert_eq!(below.validate().unwrap_err().0, "cc.max_rate");
    }

    #[test]
    fn first_cnp_halves_the_rate_after_one_decrease_interval() {
        let cc = run(DcqcnConfig::default(), &[SimTime::ZERO], SimTime::from_us(10));
        // alpha starts at 1 and decays for 4 ticks before the decrease at 4 us + 1 ns.
        let alpha = (1.0f64 - 1.0 / 256.0).powi(4);
        let expect = 100e9 * (1.0 - alpha / 2.0);
        assert!((cc.rate() - expect).abs() < 1.0, "{} vs {expect}", cc.rate());
        assert_eq!(cc.target_rate(), 100e9);
    }

    #[test]
    fn lazy_alpha_matches_ticking_alpha() {
        // CNPs every 10 us for 1 ms: compare with a per-tick reference computation.
        let cnps: Vec<SimTime> = (0..100).map(|i| SimTime::from_ns(i * 10_000 + 300)).collect();
        let cc = run(DcqcnConfig::default(), &cnps, SimTime::from_ms(1));
        let g = 1.0 / 256.0;
        let mut alpha = 1.0f64;
        let t0 = 300u64;
        let mut flag = false;
        let mut ci = 1;
        for tick in 1..=((1_000_000 - t0) / 1000) {
            let t = t0 + tick * 1000;
            // CNPs strictly before this tick (ns) count for it.
            while ci < 100 && cnps[ci].0 / 1000 < t {
                flag = true;
                ci += 1;
            }
            alpha = (1.0 - g) * alpha + if flag { g } else { 0.0 };
            flag = false;
        }
        let mut probe = cc;
        probe.update_alpha(SimTime::from_ms(1));
        assert!((probe.alpha() - alpha).abs() < 1e-9, "{} vs {alpha}", probe.alpha());
    }

    #[test]
    fn rate_recovers_to_line_rate_without_cnps() {
        let cc = run(DcqcnConfig::default(), &[SimTime::ZERO], SimTime::from_ms(100));
        assert!((cc.rate() - 100e9).abs() < 1.0, "{}", cc.rate());
    }

    #[test]
    fn byte_counter_drives_increases() {
        let cfg = DcqcnConfig { byte_counter: Some(ByteSize(1_000_000)), ..DcqcnConfig::default() };
        let mut cc = run(cfg, &[SimTime::ZERO], SimTime::from_us(10));
        let before = cc.rate();
        let mut cx = CcContext::new(SimTime::from_us(11));
        for _ in 0..1000 {
            cc.on_send(1000, &mut cx);
        }
        // One byte-counter event: fast recovery halfway back to the target.
        let expect = (before + 100e9) / 2.0;
        assert!((cc.rate() - expect).abs() < 1.0, "{} vs {expect}", cc.rate());
    }

    fn arrival(ns: u64, ce: bool) -> DataArrival {
        DataArrival {
            now: SimTime::from_ns(ns),
            ecn_ce: ce,
            bytes: 1048,
            sent_at: SimTime::ZERO,
            measured_delay: 0,
            incoming_flows: 1,
            incoming_seen: 1,
        }
    }

    #[test]
    fn receiver_paces_cnps() {
        // The vendor's pacing (`nvidia`): one CNP per 4 us at most.
        let mut np = DcqcnReceiver::new(&DcqcnConfig::preset("nvidia").unwrap());
        assert!(np.on_data(&arrival(0, true)).send_cnp);
        assert!(!np.on_data(&arrival(1000, true)).send_cnp);
        assert!(!np.on_data(&arrival(5000, false)).send_cnp);
        assert!(np.on_data(&arrival(4000 + 10, true)).send_cnp);
    }

    #[test]
    fn the_hpcc_study_receiver_answers_every_marked_packet_with_a_cnp() {
        // rdma-hw.cc ReceiveUdp flags the ACK of every marked packet: no interval between CNPs.
        let cfg = DcqcnConfig::preset("hpcc_study").unwrap();
        assert_eq!(cfg.cnp_interval, SimTime::ZERO);
        assert!(cfg.validate().is_ok());
        // 40 packets 84 ns apart (1048 B at 100 Gb/s) within one 4 us span, every other one
        // marked: 20 CNPs, one for each marked packet and none for the others.
        let mut np = DcqcnReceiver::new(&cfg);
        let cnps: Vec<bool> = (0..40).map(|i| np.on_data(&arrival(i * 84, i % 2 == 0)).send_cnp).collect();
        assert!(cnps.iter().enumerate().all(|(i, &cnp)| cnp == (i % 2 == 0)), "{cnps:?}");
        // Two marked packets in the same nanosecond still get one each.
        assert!(np.on_data(&arrival(3400, true)).send_cnp && np.on_data(&arrival(3400, true)).send_cnp);
    }
}
