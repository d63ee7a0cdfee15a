//! Congestion control: one trait, one file per algorithm.
//!
//! An algorithm has two halves. The **sender half** ([`CongestionControl`]) lives with the
//! sending queue pair: it hears ACKs, CNPs, NACKs, timeouts and its own timers, and answers
//! with a sending rate and, optionally, a window. The **receiver half** ([`ReceiverCc`]) lives
//! with the receiving queue pair: it sees each data packet and decides what feedback goes back
//! (an ECN echo in the ACK, a CNP). Neither half touches the engine or another flow: timers are
//! requested through [`CcContext`], and everything the algorithm knows about the path arrives
//! in [`FlowFacts`] when it is built.
//!
//! To add an algorithm: write `myalgo.rs` with `MyAlgoConfig` (serde, `Default` citing the
//! paper) and the two halves, add a variant to [`CcConfig`], [`Cc`] and, if it needs a special
//! receiver, [`Receiver`]. Rust users can also plug a boxed implementation in through
//! [`Cc::Custom`].

pub mod dcqcn;
pub mod pfc_only;

use crate::config::CollectiveKind;
use crate::time::{Bandwidth, SimTime};
use crate::topology::Topology;
use serde::Serialize;

pub use dcqcn::{Dcqcn, DcqcnConfig, DcqcnReceiver};
pub use pfc_only::{PfcOnly, PfcOnlyConfig};

/// Timers an algorithm may own, addressed by a small slot number.
pub const MAX_TIMERS: usize = 4;

/// What the algorithm knows about its flow and path, fixed when the flow starts.
#[derive(Clone, Copy, Debug)]
pub struct FlowFacts {
    /// Speed of the sender's NIC: the highest rate the flow can use.
    pub line_rate: Bandwidth,
    /// Round-trip time of an MTU packet and its ACK on the idle path (propagation and
    /// serialisation at every hop).
    pub base_rtt: SimTime,
    /// Switch hops on the path.
    pub hops: u32,
    /// Payload bytes per full packet.
    pub mtu: u64,
    /// Wire bytes of a full data packet (payload + headers).
    pub packet_bytes: u64,
    pub collective: Option<(CollectiveKind, u32)>,
}

/// Per-packet facts at the receiver (what a real NIC sees on a data packet).
#[derive(Clone, Copy, Debug)]
pub struct DataArrival {
    pub now: SimTime,
    pub ecn_ce: bool,
    /// Wire bytes of the packet.
    pub bytes: u64,
    /// Sender's transmit timestamp carried in the packet.
    pub sent_at: SimTime,
}

/// What the receiver half asks for in response to one data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverAction {
    /// Send a congestion notification packet to the sender now.
    pub send_cnp: bool,
}

/// Feedback an ACK carries back to the sender half.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// Cumulative bytes the receiver has in order.
    pub ack_seq: u64,
    /// Bytes newly acknowledged by this ACK.
    pub newly_acked: u64,
    /// Some packet covered by this ACK was marked CE.
    pub ecn_echo: bool,
    /// RTT from the echoed transmit timestamp of the packet that triggered the ACK.
    pub rtt: SimTime,
    /// Bytes sent but not yet acknowledged, after this ACK.
    pub in_flight: u64,
}

/// Rare signals, one hook (as Linux's `cwnd_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcEvent {
    /// A congestion notification packet arrived.
    Cnp,
    /// The receiver saw a gap and asked to go back to `seq`.
    Nack { seq: u64 },
    /// No ACK progress for the retransmission timeout.
    Timeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimerOp {
    Keep,
    Set(SimTime),
    Cancel,
}

/// The algorithm's window onto the simulation during one hook call: the current time and its
/// timer requests. The engine applies the requests after the hook returns.
pub struct CcContext {
    now: SimTime,
    ops: [TimerOp; MAX_TIMERS],
}

impl CcContext {
    pub fn new(now: SimTime) -> Self {
        CcContext { now, ops: [TimerOp::Keep; MAX_TIMERS] }
    }
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Fire timer `slot` at `at` (replacing any pending one). A time in the past fires now.
    pub fn set_timer(&mut self, slot: usize, at: SimTime) {
        self.ops[slot] = TimerOp::Set(at.max(self.now));
    }
    pub fn cancel_timer(&mut self, slot: usize) {
        self.ops[slot] = TimerOp::Cancel;
    }
    /// The requests, for the engine: `Some(Some(t))` set, `Some(None)` cancel, `None` keep.
    pub fn timer_requests(&self) -> impl Iterator<Item = (usize, Option<SimTime>)> + '_ {
        self.ops.iter().enumerate().filter_map(|(i, op)| match op {
            TimerOp::Keep => None,
            TimerOp::Set(t) => Some((i, Some(*t))),
            TimerOp::Cancel => Some((i, None)),
        })
    }
}

/// The sender half of a congestion-control algorithm.
pub trait CongestionControl {
    /// Called once when the flow starts (arm timers here).
    fn on_start(&mut self, _cx: &mut CcContext) {}
    /// Every ACK (the hot path).
    fn on_ack(&mut self, _ack: &AckInfo, _cx: &mut CcContext) {}
    /// Every data packet handed to the wire (byte counters).
    fn on_send(&mut self, _bytes: u64, _cx: &mut CcContext) {}
    /// CNP, NACK, timeout.
    fn on_event(&mut self, _ev: CcEvent, _cx: &mut CcContext) {}
    /// A timer the algorithm set has fired.
    fn on_timer(&mut self, _slot: usize, _cx: &mut CcContext) {}
    /// Current sending rate in bits per second; the NIC paces packets at this rate.
    fn rate(&self) -> f64;
    /// Current window in bytes in flight, if the algorithm limits it.
    fn window(&self) -> Option<u64> {
        None
    }
}

/// The receiver half.
pub trait ReceiverCc {
    fn on_data(&mut self, pkt: &DataArrival) -> ReceiverAction;
}

/// Algorithm choice and parameters, as written under `[cc]` in a scenario.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "algorithm", rename_all = "snake_case")]
pub enum CcConfig {
    /// No end-to-end congestion control: every flow sends at line rate; only PFC holds it back.
    None(PfcOnlyConfig),
    /// DCQCN (Zhu et al., SIGCOMM 2015) with the HPCC ns-3 study's parameters.
    Dcqcn(DcqcnConfig),
}

tagged_enum!(CcConfig, "algorithm", {
    "none" => None(PfcOnlyConfig),
    "pfc_only" => None(PfcOnlyConfig),
    "dcqcn" => Dcqcn(DcqcnConfig),
});

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::Dcqcn(DcqcnConfig::default())
    }
}

impl CcConfig {
    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::None(_) => "none",
            CcConfig::Dcqcn(_) => "dcqcn",
        }
    }

    /// Every built-in algorithm with its default parameters (for `aiccsim algorithms`).
    pub fn all_defaults() -> Vec<CcConfig> {
        vec![CcConfig::None(PfcOnlyConfig {}), CcConfig::Dcqcn(DcqcnConfig::default())]
    }

    /// One-line description.
    pub fn describe(&self) -> &'static str {
        match self {
            CcConfig::None(_) => "PFC only: line rate, no end-to-end reaction (alias: pfc_only)",
            CcConfig::Dcqcn(_) => "DCQCN: ECN-marked packets make the receiver send CNPs; the sender cuts its rate by alpha/2 and recovers by timer and byte counter",
        }
    }

    pub fn validate(&self, topo: &Topology) -> Result<(), (String, String)> {
        match self {
            CcConfig::None(_) => Ok(()),
            CcConfig::Dcqcn(c) => c.validate(topo),
        }
    }

    /// Builds the sender half for one flow.
    pub fn sender(&self, facts: &FlowFacts) -> Cc {
        match self {
            CcConfig::None(_) => Cc::None(PfcOnly::new(facts)),
            CcConfig::Dcqcn(c) => Cc::Dcqcn(Dcqcn::new(c, facts)),
        }
    }

    /// Builds the receiver half for one flow.
    pub fn receiver(&self) -> Receiver {
        match self {
            CcConfig::None(_) => Receiver::Echo,
            CcConfig::Dcqcn(c) => Receiver::Dcqcn(DcqcnReceiver::new(c)),
        }
    }
}

/// A sender half, statically dispatched for the built-ins.
pub enum Cc {
    None(PfcOnly),
    Dcqcn(Dcqcn),
    /// A user-supplied algorithm (Rust API only).
    Custom(Box<dyn CongestionControl + Send>),
}

macro_rules! dispatch {
    ($self:ident, $cc:ident => $e:expr) => {
        match $self {
            Cc::None($cc) => $e,
            Cc::Dcqcn($cc) => $e,
            Cc::Custom($cc) => $e,
        }
    };
}

impl CongestionControl for Cc {
    fn on_start(&mut self, cx: &mut CcContext) {
        dispatch!(self, c => c.on_start(cx))
    }
    #[inline]
    fn on_ack(&mut self, ack: &AckInfo, cx: &mut CcContext) {
        dispatch!(self, c => c.on_ack(ack, cx))
    }
    #[inline]
    fn on_send(&mut self, bytes: u64, cx: &mut CcContext) {
        dispatch!(self, c => c.on_send(bytes, cx))
    }
    fn on_event(&mut self, ev: CcEvent, cx: &mut CcContext) {
        dispatch!(self, c => c.on_event(ev, cx))
    }
    fn on_timer(&mut self, slot: usize, cx: &mut CcContext) {
        dispatch!(self, c => c.on_timer(slot, cx))
    }
    #[inline]
    fn rate(&self) -> f64 {
        dispatch!(self, c => c.rate())
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        dispatch!(self, c => c.window())
    }
}

/// A receiver half.
pub enum Receiver {
    /// ACKs only (with the ECN echo and timestamp every ACK carries).
    Echo,
    Dcqcn(DcqcnReceiver),
    Custom(Box<dyn ReceiverCc + Send>),
}

impl ReceiverCc for Receiver {
    #[inline]
    fn on_data(&mut self, pkt: &DataArrival) -> ReceiverAction {
        match self {
            Receiver::Echo => ReceiverAction::default(),
            Receiver::Dcqcn(r) => r.on_data(pkt),
            Receiver::Custom(r) => r.on_data(pkt),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Random event sequences applied to every algorithm: no NaN, no rate outside
    //! [min, line], no timer in the past.
    use super::*;
    use rand::{RngExt, SeedableRng};

    pub(crate) fn facts() -> FlowFacts {
        FlowFacts {
            line_rate: Bandwidth::from_gbps(100),
            base_rtt: SimTime::from_us(8),
            hops: 1,
            mtu: 1000,
            packet_bytes: 1048,
            collective: None,
        }
    }

    #[test]
    fn random_event_sequences_keep_every_algorithm_sane() {
        for cfg in CcConfig::all_defaults() {
            let f = facts();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
            for _trial in 0..50 {
                let mut cc = cfg.sender(&f);
                let mut now = SimTime::ZERO;
                let mut timers: [Option<SimTime>; MAX_TIMERS] = [None; MAX_TIMERS];
                let mut cx = CcContext::new(now);
                cc.on_start(&mut cx);
                for _step in 0..2000 {
                    for (slot, req) in cx.timer_requests() {
                        if let Some(t) = req {
                            assert!(t >= now, "{}: timer in the past", cfg.name());
                        }
                        timers[slot] = req;
                    }
                    now += SimTime(rng.random_range(0..5_000_000));
                    cx = CcContext::new(now);
                    match rng.random_range(0..6) {
                        0 => cc.on_ack(
                            &AckInfo {
                                ack_seq: 0,
                                newly_acked: 1000,
                                ecn_echo: rng.random_bool(0.3),
                                rtt: SimTime(rng.random_range(1..100_000_000)),
                                in_flight: rng.random_range(0..1_000_000),
                            },
                            &mut cx,
                        ),
                        1 => cc.on_event(CcEvent::Cnp, &mut cx),
                        2 => cc.on_event(CcEvent::Timeout, &mut cx),
                        3 => cc.on_send(1048, &mut cx),
                        _ => {
                            // Fire every due timer.
                            for (slot, due) in timers.iter_mut().enumerate() {
                                if due.is_some_and(|t| t <= now) {
                                    *due = None;
                                    cc.on_timer(slot, &mut cx);
                                }
                            }
                        }
                    }
                    let r = cc.rate();
                    assert!(r.is_finite(), "{}: rate NaN", cfg.name());
                    assert!(r <= f.line_rate.as_f64() + 1.0, "{}: rate {r} above line", cfg.name());
                    let min = match &cfg {
                        CcConfig::Dcqcn(c) => c.min_rate.as_f64(),
                        _ => f.line_rate.as_f64(),
                    };
                    assert!(r >= min - 1.0, "{}: rate {r} below min {min}", cfg.name());
                }
            }
        }
    }
}
