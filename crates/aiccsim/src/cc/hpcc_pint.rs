//! HPCC-PINT: HPCC fed by probabilistic in-band telemetry (Ben Basat et al., "PINT:
//! Probabilistic In-band Network Telemetry", SIGCOMM 2020, §4.2 and §6.2), following the HPCC
//! ns-3 code's `HandleAckHpPint`.
//!
//! Instead of a 42-byte INT stack per packet, each data packet has a one-byte field. The sender
//! selects a `feedback_fraction` p of its packets (PINT's global hash: here a hash of flow and
//! sequence number) to carry HPCC's query; every switch egress keeps its own utilisation,
//! smoothed over the base RTT (HPCC's U moved into the switch), and raises the selected
//! packet's byte to its (1+ε)-approximate encoding when higher, so the packet arrives with the
//! path's bottleneck utilisation (`net/telemetry.rs`). The receiver echoes the byte; an ACK
//! with feedback drives HPCC's window rule (`WindowRule` in `hpcc.rs`) with U = the decoded
//! value, the reference committed once per round trip. ACKs without feedback change nothing.
//!
//! Steady signal (fast-forward): the rate, in bits/s, as HPCC's (the window is R·T).

use super::hpcc::{validate_eta, CommittedRate, WindowRule};
use super::{AckInfo, Algorithm, Cc, CcContext, Check, CongestionControl, FlowFacts, Telemetry};
use crate::time::{Bandwidth, SimTime};
use crate::wire::telemetry::PintCodec;
use serde::{Deserialize, Serialize};

/// HPCC-PINT parameters: HPCC's, plus the PINT query's.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HpccPintConfig {
    /// Target utilisation η (HPCC §3.3: 95%).
    pub eta: f64,
    /// Additive steps before a multiplicative increase (HPCC's maxStage = 5).
    pub max_stage: u32,
    /// Additive increase, as a rate. Absent: 10 Mb/s per 25 Gb/s of NIC speed, as HPCC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additive_increase: Option<Bandwidth>,
    /// Floor of the rate (1000 Mb/s, as HPCC).
    pub min_rate: Bandwidth,
    /// Fraction of data packets that carry the feedback (PINT §6.2 evaluates HPCC with
    /// p = 1/16 and finds it close to p = 1).
    pub feedback_fraction: f64,
    /// Base of the logarithmic encoding: (1+ε) with ε = 5% fits utilisations up to several
    /// hundred into 8 bits (PINT §4.2; the ns-3 model's 8-bit setting).
    pub log_base: f64,
    /// Header bytes the feedback field adds to every data packet and ACK (1: 8 bits).
    pub header_bytes: u64,
    /// Smoothing period of the switches' utilisation. Absent: the largest base round trip of
    /// the run's flows (the ns-3 model uses the fabric's largest RTT).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_period: Option<SimTime>,
}

impl Default for HpccPintConfig {
    fn default() -> Self {
        HpccPintConfig {
            eta: 0.95,
            max_stage: 5,
            additive_increase: None,
            min_rate: Bandwidth(1_000_000_000),
            feedback_fraction: 1.0 / 16.0,
            log_base: 1.05,
            header_bytes: 1,
            switch_period: None,
        }
    }
}

impl Algorithm for HpccPintConfig {
    fn name(&self) -> &'static str {
        "hpcc_pint"
    }

    fn describe(&self) -> &'static str {
        "HPCC-PINT: HPCC driven by one byte of probabilistic telemetry (the path's encoded utilisation) on a fraction of packets"
    }

    fn optional_parameters(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("additive_increase", "10 Mb/s per 25 Gb/s of NIC speed"),
            ("switch_period", "the largest base RTT of the run's flows"),
        ]
    }

    fn validate(&self) -> Check {
        validate_eta(self.eta)?;
        if !(self.feedback_fraction > 0.0 && self.feedback_fraction <= 1.0) {
            return Err(("cc.feedback_fraction".into(), format!("must be in (0, 1], got {}", self.feedback_fraction)));
        }
        // Utilisation up to 16 (a queue 15 round trips deep) must fit in the byte's 255 codes.
        if !(self.log_base > 1.0 && PintCodec::new(self.log_base).max_utilisation() >= 16.0) {
            return Err((
                "cc.log_base".into(),
                format!(
                    "{} cannot encode utilisations up to 16 in 8 bits; it must be about 1.037 or more (1.05 is PINT's 8-bit setting)",
                    self.log_base
                ),
            ));
        }
        if self.header_bytes == 0 || self.header_bytes > 64 {
            return Err((
                "cc.header_bytes".into(),
                format!("the feedback field needs 1 to 64 bytes, got {}", self.header_bytes),
            ));
        }
        if self.switch_period == Some(SimTime::ZERO) {
            return Err(("cc.switch_period".into(), "must be positive (omit it to use the largest base RTT)".into()));
        }
        Ok(())
    }

    fn telemetry(&self) -> Telemetry {
        Telemetry::Pint {
            header_bytes: self.header_bytes,
            fraction: self.feedback_fraction,
            log_base: self.log_base,
            switch_period: self.switch_period,
        }
    }

    fn min_rate(&self) -> Option<Bandwidth> {
        Some(self.min_rate)
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::HpccPint(HpccPint::new(self, facts))
    }
}


pub struct HpccPint {
    rule: WindowRule,
    codec: PintCodec,
    base_rtt_s: f64,
    rate: CommittedRate,
    /// ACKs that carried feedback (for tests and diagnostics).
    feedback_acks: u64,
}

impl HpccPint {
    pub fn new(cfg: &HpccPintConfig, facts: &FlowFacts) -> Self {
        let line = facts.line_rate.as_f64();
        HpccPint {
            rule: WindowRule::new(cfg.eta, cfg.max_stage, cfg.additive_increase, cfg.min_rate, line),
            codec: PintCodec::new(cfg.log_base),
            base_rtt_s: facts.base_rtt.as_secs_f64(),
            rate: CommittedRate::new(line),
            feedback_acks: 0,
        }
    }

    pub fn feedback_acks(&self) -> u64 {
        self.feedback_acks
    }
}

impl CongestionControl for HpccPint {
    fn on_ack(&mut self, ack: &AckInfo<'_>, _cx: &mut CcContext) {
        if ack.pint == 0 {
            return;
        }
        self.feedback_acks += 1;
        if self.rate.started(ack) {
            self.rate.update(&self.rule, self.codec.decode(ack.pint), ack);
        }
    }

    fn rate(&self) -> f64 {
        self.rate.rate
    }

    fn window(&self) -> Option<u64> {
        Some(self.rate.window(self.base_rtt_s))
    }

    /// The rate (the window is R·T: the same drift).
    fn steady_signal(&self) -> Option<f64> {
        Some(self.rate.rate)
    }

    /// HPCC-PINT holds no time (the committed rate's round trip is a sequence number; the
    /// feedback is a utilisation): nothing to move.
    fn shift_clock(&mut self, _by: SimTime) {}
}
