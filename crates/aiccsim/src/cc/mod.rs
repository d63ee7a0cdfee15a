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
pub mod dctcp;
pub mod hpcc;
pub mod hpcc_pint;
pub mod pc4;
pub mod pfc_only;
pub mod swift;
pub mod timely;

use crate::tags::CollectiveKind;
use crate::time::{Bandwidth, SimTime};
use crate::topology::Topology;
pub use crate::wire::telemetry::{IntHop, Telemetry};
use serde::Serialize;

pub use dcqcn::{Dcqcn, DcqcnConfig, DcqcnReceiver};
pub use dctcp::{Dctcp, DctcpConfig};
pub use hpcc::{Hpcc, HpccConfig};
pub use hpcc_pint::{HpccPint, HpccPintConfig};
pub use pc4::{Pc4, Pc4Config, Pc4Receiver};
pub use pfc_only::{PfcOnly, PfcOnlyConfig};
pub use swift::{Swift, SwiftConfig};
pub use timely::{Timely, TimelyConfig};

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
    /// One-way time of a full data packet on the idle path (propagation and serialisation at
    /// every hop): the baseline a one-way delay is measured against.
    pub one_way_baseline: SimTime,
    /// Speed of the receiver's NIC.
    pub receiver_line_rate: Bandwidth,
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
    /// Sender's transmit timestamp carried in the packet (true time).
    pub sent_at: SimTime,
    /// The receiver's clock at arrival minus the sender's timestamp, picoseconds: the true
    /// forward delay plus both clocks' errors (`[clocks]`); may be negative.
    pub measured_delay: i64,
    /// Flows into this receiver that have started and are not yet delivered, as a central
    /// controller that knows the job's traffic counts them (this one included).
    pub incoming_flows: u32,
    /// Flows into this receiver it has seen a packet of and not yet received whole (this one
    /// included): what the receiver can count on its own.
    pub incoming_seen: u32,
}

/// What the receiver half asks for in response to one data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverAction {
    /// Send a congestion notification packet to the sender now.
    pub send_cnp: bool,
    /// Carried back by the next ACK of this flow (the algorithm's own encoding).
    pub feedback: [u32; 2],
}

/// Feedback an ACK carries back to the sender half.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo<'a> {
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
    /// Next byte the sender will send (`snd_nxt`), after this ACK: with `ack_seq`, tells an
    /// algorithm when a window's worth of data has been acknowledged.
    pub snd_nxt: u64,
    /// INT records of the acknowledged packet, one per switch hop, in path order (empty unless
    /// the algorithm asked for [`Telemetry::Int`]).
    pub int: &'a [IntHop],
    /// PINT feedback echoed from the acknowledged packet (0 = none).
    pub pint: u8,
    /// What the receiver half put in this ACK ([`ReceiverAction::feedback`]).
    pub feedback: [u32; 2],
}

/// A rate floor must not exceed the slowest NIC.
pub(crate) fn check_min_rate(min_rate: Bandwidth, topo: &Topology) -> Result<(), (String, String)> {
    let slowest_nic = (0..topo.num_hosts).map(|h| topo.ports[topo.host_port(h) as usize].bandwidth).min();
    match slowest_nic {
        Some(nic) if min_rate > nic => Err(("cc.min_rate".into(), format!("{min_rate} is above the NIC speed {nic}"))),
        _ => Ok(()),
    }
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
    incoming_at_start: u32,
}

impl CcContext {
    pub fn new(now: SimTime) -> Self {
        CcContext { now, ops: [TimerOp::Keep; MAX_TIMERS], incoming_at_start: 0 }
    }
    /// The context of `on_start`, with the number of flows a central controller knows are
    /// heading to the flow's receiver as it starts (this one and those starting with it
    /// included).
    pub fn at_start(now: SimTime, incoming: u32) -> Self {
        CcContext { incoming_at_start: incoming, ..CcContext::new(now) }
    }
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// In `on_start`: flows heading to the receiver (0 elsewhere).
    pub fn incoming_at_start(&self) -> u32 {
        self.incoming_at_start
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
    fn on_ack(&mut self, _ack: &AckInfo<'_>, _cx: &mut CcContext) {}
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
    /// DCTCP (Alizadeh et al., SIGCOMM 2010) on RoCE, as the HPCC study runs it.
    Dctcp(DctcpConfig),
    /// TIMELY (Mittal et al., SIGCOMM 2015).
    Timely(TimelyConfig),
    /// HPCC (Li et al., SIGCOMM 2019), with INT.
    Hpcc(HpccConfig),
    /// HPCC with PINT's 8-bit probabilistic feedback (Ben Basat et al., SIGCOMM 2020).
    HpccPint(HpccPintConfig),
    /// Swift (Kumar et al., SIGCOMM 2020).
    Swift(SwiftConfig),
    /// PC4 (paper 000): receiver base rate per collective, one-way delay against a target.
    Pc4(Pc4Config),
}

tagged_enum!(CcConfig, "algorithm", {
    "none" => None(PfcOnlyConfig),
    "pfc_only" => None(PfcOnlyConfig),
    "dcqcn" => Dcqcn(DcqcnConfig),
    "dctcp" => Dctcp(DctcpConfig),
    "timely" => Timely(TimelyConfig),
    "hpcc" => Hpcc(HpccConfig),
    "hpcc_pint" => HpccPint(HpccPintConfig),
    "swift" => Swift(SwiftConfig),
    "pc4" => Pc4(Pc4Config),
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
            CcConfig::Dctcp(_) => "dctcp",
            CcConfig::Timely(_) => "timely",
            CcConfig::Hpcc(_) => "hpcc",
            CcConfig::HpccPint(_) => "hpcc_pint",
            CcConfig::Swift(_) => "swift",
            CcConfig::Pc4(_) => "pc4",
        }
    }

    /// Every built-in algorithm with its default parameters (for `aiccsim algorithms`).
    pub fn all_defaults() -> Vec<CcConfig> {
        vec![
            CcConfig::None(PfcOnlyConfig {}),
            CcConfig::Dcqcn(DcqcnConfig::default()),
            CcConfig::Dctcp(DctcpConfig::default()),
            CcConfig::Timely(TimelyConfig::default()),
            CcConfig::Hpcc(HpccConfig::default()),
            CcConfig::HpccPint(HpccPintConfig::default()),
            CcConfig::Swift(SwiftConfig::default()),
            CcConfig::Pc4(Pc4Config::default()),
        ]
    }

    /// One-line description.
    pub fn describe(&self) -> &'static str {
        match self {
            CcConfig::None(_) => "PFC only: line rate, no end-to-end reaction (alias: pfc_only)",
            CcConfig::Dcqcn(_) => "DCQCN: ECN-marked packets make the receiver send CNPs; the sender cuts its rate by alpha/2 and recovers by timer and byte counter",
            CcConfig::Dctcp(_) => "DCTCP: ACKs echo ECN marks; once per window the rate/window is cut by alpha/2, alpha the EWMA of the marked fraction (set switch.ecn to a step at K)",
            CcConfig::Timely(_) => "TIMELY: RTT-gradient rate control; additive increase below T_low, multiplicative decrease above T_high, gradient-driven between",
            CcConfig::Hpcc(_) => "HPCC: switches stamp INT (queue, bytes sent, time, link speed) on every packet; the sender sets its window from the bottleneck utilisation towards eta",
            CcConfig::HpccPint(_) => "HPCC-PINT: HPCC driven by one byte of probabilistic telemetry (the path's encoded utilisation) on a fraction of packets",
            CcConfig::Swift(_) => "Swift: delay-based window; additive increase below a target delay scaled by hops and window, multiplicative decrease above, paced below one packet",
            CcConfig::Pc4(_) => "PC4: the receiver sends each flow its share of the line (base rate, from the incoming flows and the collective) and the one-way delay; the sender jumps to the share and fine-tunes around a target queuing time",
        }
    }

    /// Parameters whose default depends on the run (unset in the listing above), with the rule.
    pub fn optional_parameters(&self) -> &'static [(&'static str, &'static str)] {
        match self {
            CcConfig::Dcqcn(_) => &[("byte_counter", "off; the DCQCN paper uses \"10MB\"")],
            CcConfig::Timely(_) => &[("additive_increase", "10 Mb/s per 10 Gb/s of NIC speed")],
            CcConfig::Hpcc(_) => &[("additive_increase", "10 Mb/s per 25 Gb/s of NIC speed")],
            CcConfig::HpccPint(_) => &[
                ("additive_increase", "10 Mb/s per 25 Gb/s of NIC speed"),
                ("switch_period", "the largest base RTT of the run's flows"),
            ],
            CcConfig::Pc4(_) => &[("adjust_interval", "adjust_rtts x the latest RTT sample")],
            _ => &[],
        }
    }

    /// Header bytes the algorithm adds to each data packet and to each ACK (telemetry, or its
    /// own fields).
    pub fn extra_header_bytes(&self) -> (u64, u64) {
        match self {
            CcConfig::Pc4(c) => (c.data_header_bytes, c.ack_header_bytes),
            _ => {
                let t = self.telemetry().header_bytes();
                (t, t)
            }
        }
    }

    /// What the fabric must stamp on this algorithm's packets.
    pub fn telemetry(&self) -> Telemetry {
        match self {
            CcConfig::Hpcc(c) => c.telemetry(),
            CcConfig::HpccPint(c) => c.telemetry(),
            _ => Telemetry::None,
        }
    }

    pub fn validate(&self, topo: &Topology) -> Result<(), (String, String)> {
        match self {
            CcConfig::None(_) => Ok(()),
            CcConfig::Dcqcn(c) => c.validate(topo),
            CcConfig::Dctcp(c) => c.validate(topo),
            CcConfig::Timely(c) => c.validate(topo),
            CcConfig::Hpcc(c) => c.validate(topo),
            CcConfig::HpccPint(c) => c.validate(topo),
            CcConfig::Swift(c) => c.validate(topo),
            CcConfig::Pc4(c) => c.validate(topo),
        }
    }

    /// The lowest rate the sender half may ever report (bits/s): its configured floor; 0 for
    /// window algorithms that pace sub-packet windows ever more slowly.
    pub fn rate_floor(&self, facts: &FlowFacts) -> f64 {
        match self {
            CcConfig::None(_) => facts.line_rate.as_f64(),
            CcConfig::Dcqcn(c) => c.min_rate.as_f64(),
            CcConfig::Dctcp(c) => c.min_rate.as_f64(),
            CcConfig::Timely(c) => c.min_rate.as_f64(),
            CcConfig::Hpcc(c) => c.min_rate.as_f64(),
            CcConfig::HpccPint(c) => c.min_rate.as_f64(),
            CcConfig::Swift(_) | CcConfig::Pc4(_) => 0.0,
        }
    }

    /// Builds the sender half for one flow.
    pub fn sender(&self, facts: &FlowFacts) -> Cc {
        match self {
            CcConfig::None(_) => Cc::None(PfcOnly::new(facts)),
            CcConfig::Dcqcn(c) => Cc::Dcqcn(Dcqcn::new(c, facts)),
            CcConfig::Dctcp(c) => Cc::Dctcp(Dctcp::new(c, facts)),
            CcConfig::Timely(c) => Cc::Timely(Timely::new(c, facts)),
            CcConfig::Hpcc(c) => Cc::Hpcc(Hpcc::new(c, facts)),
            CcConfig::HpccPint(c) => Cc::HpccPint(HpccPint::new(c, facts)),
            CcConfig::Swift(c) => Cc::Swift(Swift::new(c, facts)),
            CcConfig::Pc4(c) => Cc::Pc4(Pc4::new(c, facts)),
        }
    }

    /// Builds the receiver half for one flow.
    pub fn receiver(&self, facts: &FlowFacts) -> Receiver {
        match self {
            CcConfig::Dcqcn(c) => Receiver::Dcqcn(DcqcnReceiver::new(c)),
            CcConfig::Pc4(c) => Receiver::Pc4(Pc4Receiver::new(c, facts)),
            _ => Receiver::Echo,
        }
    }
}

/// A sender half, statically dispatched for the built-ins.
pub enum Cc {
    None(PfcOnly),
    Dcqcn(Dcqcn),
    Dctcp(Dctcp),
    Timely(Timely),
    Hpcc(Hpcc),
    HpccPint(HpccPint),
    Swift(Swift),
    Pc4(Pc4),
    /// A user-supplied algorithm (Rust API only).
    Custom(Box<dyn CongestionControl + Send>),
}

macro_rules! dispatch {
    ($self:ident, $cc:ident => $e:expr) => {
        match $self {
            Cc::None($cc) => $e,
            Cc::Dcqcn($cc) => $e,
            Cc::Dctcp($cc) => $e,
            Cc::Timely($cc) => $e,
            Cc::Hpcc($cc) => $e,
            Cc::HpccPint($cc) => $e,
            Cc::Swift($cc) => $e,
            Cc::Pc4($cc) => $e,
            Cc::Custom($cc) => $e,
        }
    };
}

impl CongestionControl for Cc {
    fn on_start(&mut self, cx: &mut CcContext) {
        dispatch!(self, c => c.on_start(cx))
    }
    #[inline]
    fn on_ack(&mut self, ack: &AckInfo<'_>, cx: &mut CcContext) {
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
    Pc4(Pc4Receiver),
    Custom(Box<dyn ReceiverCc + Send>),
}

impl ReceiverCc for Receiver {
    #[inline]
    fn on_data(&mut self, pkt: &DataArrival) -> ReceiverAction {
        match self {
            Receiver::Echo => ReceiverAction::default(),
            Receiver::Dcqcn(r) => r.on_data(pkt),
            Receiver::Pc4(r) => r.on_data(pkt),
            Receiver::Custom(r) => r.on_data(pkt),
        }
    }
}

#[cfg(test)]
mod properties;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 100 Gbps flow over one switch: the facts most unit tests start from.
    pub(crate) fn facts() -> FlowFacts {
        FlowFacts {
            line_rate: Bandwidth::from_gbps(100),
            base_rtt: SimTime::from_us(8),
            hops: 1,
            one_way_baseline: SimTime::from_ns(2180),
            receiver_line_rate: Bandwidth::from_gbps(100),
            mtu: 1000,
            packet_bytes: 1048,
            collective: None,
        }
    }
}
