//! HPCC: Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019 (§3, Algorithm 1),
//! checked against the authors' ns-3 model (`HandleAckHp` / `UpdateRateHp` in `rdma-hw.cc`).
//!
//! Every switch egress stamps an INT record on each data packet (time, bytes sent, queue length,
//! link speed: `net/telemetry.rs`); the receiver echoes the stack in the ACK. Per ACK the sender
//! (Algorithm 1):
//! - for each hop, from this record and the previous one of the same hop: the link's
//!   utilisation u_j = qlen_j / (B_j·T) + txRate_j / B_j, with qlen the smaller of the two
//!   records' queues (§3.3, "min" filters a queue that is draining) and txRate the bytes sent
//!   between them over their time difference (eq. 2);
//! - U = max_j u_j, smoothed over one base RTT by the time the records span
//!   (U = U·(T-τ)/T + u·τ/T, Algorithm 1 line 10);
//! - window: if U/η >= 1 or `max_stage` additive steps have run, multiplicative
//!   W = W_c / (U/η) + W_AI, else additive W = W_c + W_AI (eq. 4 and §3.3); the rate is W / T.
//! - The reference W_c is committed once per round trip (the ACK of the first byte sent after
//!   the last commit); the ACKs in between adjust from the same W_c ("fast reaction", §3.3).
//!
//! The state is kept as a rate (R = W/T, as in the ns-3 model); the window is R·T.
//!
//! Steady signal (fast-forward): the rate, in bits/s: the state itself; the window is R·T with
//! T fixed, so it drifts exactly as the rate does.

use super::{dctcp::window_for_rate, AckInfo, Algorithm, Cc, CcContext, Check, CongestionControl, FlowFacts, Telemetry};
use crate::time::{Bandwidth, SimTime};
use crate::wire::telemetry::{IntHop, MAX_INT_HOPS};
use serde::{Deserialize, Serialize};

/// HPCC parameters. Defaults: the HPCC paper's, at the values of the authors' ns-3 runs.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// Target utilisation η (§3.3: 95%).
    pub eta: f64,
    /// Additive steps before a multiplicative increase (maxStage = 5, §3.3).
    pub max_stage: u32,
    /// Additive increase W_AI, as a rate. Absent: 10 Mb/s per 25 Gb/s of NIC speed (the ns-3
    /// runs' `RATE_AI`), 40 Mb/s at 100 Gb/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additive_increase: Option<Bandwidth>,
    /// Floor of the rate (the study's `MIN_RATE` = 1000 Mb/s).
    pub min_rate: Bandwidth,
    /// React on every ACK from the committed reference, not only once per round trip (§3.3).
    pub fast_react: bool,
    /// INT records the header has room for (5: a three-tier fat tree's switch hops).
    pub int_max_hops: usize,
    /// INT header bytes per record (8: the 64-bit hop record of the ns-3 model).
    pub int_bytes_per_hop: u64,
    /// INT header bytes besides the records (2: the hop counter).
    pub int_base_bytes: u64,
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            eta: 0.95,
            max_stage: 5,
            additive_increase: None,
            min_rate: Bandwidth(1_000_000_000),
            fast_react: true,
            int_max_hops: 5,
            int_bytes_per_hop: 8,
            int_base_bytes: 2,
        }
    }
}

impl Algorithm for HpccConfig {
    fn name(&self) -> &'static str {
        "hpcc"
    }

    fn describe(&self) -> &'static str {
        "HPCC: switches stamp INT (queue, bytes sent, time, link speed) on every packet; the sender sets its window from the bottleneck utilisation towards eta"
    }

    fn optional_parameters(&self) -> &'static [(&'static str, &'static str)] {
        &[("additive_increase", "10 Mb/s per 25 Gb/s of NIC speed")]
    }

    fn validate(&self) -> Check {
        validate_eta(self.eta)?;
        if self.int_max_hops == 0 || self.int_max_hops > MAX_INT_HOPS {
            return Err(("cc.int_max_hops".into(), format!("must be 1 to {MAX_INT_HOPS}, got {}", self.int_max_hops)));
        }
        for (k, v) in [("int_base_bytes", self.int_base_bytes), ("int_bytes_per_hop", self.int_bytes_per_hop)] {
            if v > 256 {
                return Err((format!("cc.{k}"), format!("must be at most 256 bytes, got {v}")));
            }
        }
        Ok(())
    }

    fn telemetry(&self) -> Telemetry {
        Telemetry::Int {
            max_hops: self.int_max_hops,
            header_bytes: self.int_base_bytes + self.int_bytes_per_hop * self.int_max_hops as u64,
        }
    }

    fn min_rate(&self) -> Option<Bandwidth> {
        Some(self.min_rate)
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Hpcc(Hpcc::new(self, facts))
    }
}


pub(crate) fn validate_eta(eta: f64) -> Result<(), (String, String)> {
    if !(eta > 0.0 && eta <= 1.0) {
        return Err(("cc.eta".into(), format!("the target utilisation must be in (0, 1], got {eta}")));
    }
    Ok(())
}

/// The window rule shared by HPCC and HPCC-PINT (Algorithm 1, ComputeWind): the new rate from
/// the committed reference rate, the normalised utilisation and the additive stage.
pub(crate) struct WindowRule {
    pub eta: f64,
    pub max_stage: u32,
    pub additive: f64,
    pub min_rate: f64,
    pub line_rate: f64,
}

impl WindowRule {
    /// The rule with HPCC's default additive step when none is given: 10 Mb/s per 25 Gb/s of
    /// NIC speed (the ns-3 runs' `RATE_AI`).
    pub fn new(eta: f64, max_stage: u32, additive: Option<Bandwidth>, min_rate: Bandwidth, line_rate: f64) -> Self {
        WindowRule {
            eta,
            max_stage,
            additive: additive.map(|b| b.as_f64()).unwrap_or(line_rate / 2500.0),
            min_rate: min_rate.as_f64(),
            line_rate,
        }
    }

    /// Returns the new rate and the stage it leads to.
    pub fn next(&self, reference: f64, stage: u32, utilisation: f64) -> (f64, u32) {
        let k = utilisation / self.eta;
        let (rate, stage) = if k >= 1.0 || stage >= self.max_stage {
            (reference / k.max(1e-9) + self.additive, 0)
        } else {
            (reference + self.additive, stage + 1)
        };
        (rate.clamp(self.min_rate, self.line_rate), stage)
    }
}

/// The rate in force, and the reference rate and additive stage committed once per round trip
/// (Algorithm 1: W and W_c, incStage, lastUpdateSeq), shared by HPCC and HPCC-PINT. A commit
/// happens on the first ACK past the `snd_nxt` of the previous commit.
pub(crate) struct CommittedRate {
    pub rate: f64,
    reference: f64,
    stage: u32,
    /// `None` before the first ACK.
    commit_after: Option<u64>,
}

impl CommittedRate {
    pub fn new(line_rate: f64) -> Self {
        CommittedRate { rate: line_rate, reference: line_rate, stage: 0, commit_after: None }
    }

    /// False on the flow's first ACK, which only starts the round-trip clock.
    pub fn started(&mut self, ack: &AckInfo<'_>) -> bool {
        if self.commit_after.is_none() {
            self.commit_after = Some(ack.snd_nxt);
            return false;
        }
        true
    }

    /// This ACK closes the round trip since the last commit.
    pub fn commit_due(&self, ack: &AckInfo<'_>) -> bool {
        self.commit_after.is_some_and(|after| ack.ack_seq > after)
    }

    /// Applies the window rule for `utilisation`; on a due ACK the result becomes the reference.
    pub fn update(&mut self, rule: &WindowRule, utilisation: f64, ack: &AckInfo<'_>) {
        let commit = self.commit_due(ack);
        let (rate, stage) = rule.next(self.reference, self.stage, utilisation);
        self.rate = rate;
        if commit {
            self.reference = rate;
            self.stage = stage;
            self.commit_after = Some(ack.snd_nxt);
        }
    }

    /// A due ACK that brought no usable feedback still starts the next round trip.
    pub fn skip(&mut self, ack: &AckInfo<'_>) {
        if self.commit_due(ack) {
            self.commit_after = Some(ack.snd_nxt);
        }
    }

    /// The window that sustains the rate over `base_rtt_s`.
    pub fn window(&self, base_rtt_s: f64) -> u64 {
        window_for_rate(self.rate, base_rtt_s)
    }
}

pub struct Hpcc {
    rule: WindowRule,
    fast_react: bool,
    base_rtt_s: f64,
    rate: CommittedRate,
    /// Smoothed path utilisation U.
    utilisation: f64,
    /// The last INT record seen per hop.
    last: [IntHop; MAX_INT_HOPS],
    last_hops: usize,
}

impl Hpcc {
    pub fn new(cfg: &HpccConfig, facts: &FlowFacts) -> Self {
        let line = facts.line_rate.as_f64();
        Hpcc {
            rule: WindowRule::new(cfg.eta, cfg.max_stage, cfg.additive_increase, cfg.min_rate, line),
            fast_react: cfg.fast_react,
            base_rtt_s: facts.base_rtt.as_secs_f64(),
            rate: CommittedRate::new(line),
            utilisation: 1.0,
            last: [IntHop::default(); MAX_INT_HOPS],
            last_hops: 0,
        }
    }

    pub fn utilisation(&self) -> f64 {
        self.utilisation
    }

    /// MeasureInflight (Algorithm 1 lines 1-11): folds the ACK's records into U. Returns false
    /// when the records cannot be compared with the previous ones (first ACK, changed path).
    fn measure(&mut self, hops: &[IntHop]) -> bool {
        let comparable = hops.len() == self.last_hops && !hops.is_empty();
        let t = self.base_rtt_s;
        let mut max_u = 0.0;
        let mut max_tau = 0.0;
        if comparable {
            for (now, before) in hops.iter().zip(&self.last) {
                let tau = now.ts.saturating_sub(before.ts).as_secs_f64();
                if tau <= 0.0 {
                    continue;
                }
                let b = now.rate.as_f64();
                let tx_rate = now.tx_bytes.saturating_sub(before.tx_bytes) as f64 * 8.0 / tau;
                let qlen = now.qlen.min(before.qlen) as f64 * 8.0;
                let u = qlen / (b * t) + tx_rate / b;
                if u > max_u {
                    max_u = u;
                    max_tau = tau;
                }
            }
        }
        self.last[..hops.len()].copy_from_slice(hops);
        self.last_hops = hops.len();
        if !comparable || max_tau == 0.0 {
            return false;
        }
        let tau = max_tau.min(t);
        self.utilisation = (self.utilisation * (t - tau) + max_u * tau) / t;
        true
    }
}

impl CongestionControl for Hpcc {
    fn on_ack(&mut self, ack: &AckInfo<'_>, _cx: &mut CcContext) {
        if !self.rate.started(ack) {
            // The first ACK only gives the records to compare the next ones with.
            self.measure(ack.int);
            return;
        }
        if !self.rate.commit_due(ack) && !self.fast_react {
            return; // without fast reaction, only the once-per-round-trip ACKs are read
        }
        if self.measure(ack.int) {
            self.rate.update(&self.rule, self.utilisation, ack);
        } else {
            self.rate.skip(ack);
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

    /// The INT records kept per hop carry the time their packet left the port; the next ACK's
    /// records are compared with them. (`CommittedRate` holds a sequence number, no time.)
    fn shift_clock(&mut self, by: SimTime) {
        for hop in &mut self.last[..self.last_hops] {
            hop.ts += by;
        }
    }
}
