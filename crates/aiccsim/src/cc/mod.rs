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
//! paper), its two halves and `impl Algorithm for MyAlgoConfig`, and add its line to the
//! registry (`registry.rs`); docs/cc/adding.md walks through an example. Rust users can also plug
//! a boxed implementation into single flows through [`Cc::Custom`] and [`Receiver::Custom`].
//!
//! The sender half may report its internal state by name ([`CongestionControl::metrics`], as
//! quinn's controllers do): DCQCN's alpha, Barre's restriction. A run with `output.cc_state` writes it to `cc_state.csv`
//! at each timeline sample; nothing reads it on the per-packet path.
//!
//! For fast-forward (which skips a flow's steady stretches), the sender half names the variable
//! that controls its sending ([`CongestionControl::steady_signal`]) and, when a frozen flow
//! resumes, moves the times it holds on by the time skipped ([`CongestionControl::shift_clock`],
//! and [`ReceiverCc::shift_clock`] for the receiver half). An algorithm that does not opt in is
//! never fast-forwarded.

#[macro_use]
mod registry;
pub mod events;
pub mod external;
pub mod program;

use crate::tags::CollectiveKind;
use crate::time::{Bandwidth, SimTime};
pub use crate::wire::telemetry::{IntHop, Telemetry};

pub use events::{CcEvent, MessageDone, NicEvent, NicEventInfo, ProbeReply, NIC_EVENTS};
pub use program::{FlowContext, NicProgram, Programmed};
use serde::Serialize;

/// Timers an algorithm may own, addressed by a small slot number.
pub const MAX_TIMERS: usize = 4;

/// What the algorithm knows about its flow and path, fixed when the flow starts.
#[derive(Clone, Copy, Debug)]
pub struct FlowFacts {
    /// The flow's id (for a connection that carries several flows' messages, its first flow's).
    pub flow: u32,
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
    /// The largest `base_rtt` among the run's flows: the network's round trip, for algorithms
    /// whose parameters are the network's rather than the flow's (NSCC's `rtt_from`).
    pub network_rtt: SimTime,
    /// Switches trim what they cannot queue (`[switch.trimming]`) instead of dropping it.
    pub trimming: bool,
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
    /// controller that knows the job's traffic counts them (this one included). A flow here is
    /// a connection (queue pair): messages posted one after another on one connection count
    /// once, as they share its window and never send side by side.
    pub incoming_flows: u32,
    /// Flows into this receiver it has seen a packet of and not yet received whole (this one
    /// included): what the receiver can count on its own. Counted by connection too: a
    /// connection's next message, arriving before its last one is whole, adds nothing.
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
    /// Internal state worth plotting beside the rate and window (DCQCN's alpha), one call of
    /// `report(name, value)` per value, the same names every time; the default reports none.
    /// Read at timeline samples only (`cc_state.csv`), never on the per-packet path.
    fn metrics(&self, _report: &mut dyn FnMut(&str, f64)) {}
    /// The variable that controls sending, whose drift fast-forward watches to judge whether
    /// the flow is steady: the rate in bits per second for a rate-based algorithm, the window in
    /// bytes for a window-based one (with both, the one that limits sending; each algorithm's
    /// file says which it reports, and why). Read between events, never on the per-packet path.
    ///
    /// `None` (the default) declares the algorithm never steady: fast-forward never skips a
    /// flow whose algorithm returns it, so an algorithm that has not opted in (a user's own, a
    /// Python one) is always simulated packet by packet. An algorithm that returns `Some` must
    /// also implement [`CongestionControl::shift_clock`].
    fn steady_signal(&self) -> Option<f64> {
        None
    }
    /// Moves every point in time the state holds on by `by` (a last-update time, a window's
    /// start, the time of the first CNP, `Option<SimTime>`s and times inside nested structs
    /// included); durations, intervals and RTT samples stay as they are. Fast-forward calls it
    /// when it resumes a steady flow it froze `by` earlier (the engine moves the flow's pending
    /// timers itself): from then on, each hook called at `t + by` with event times moved by `by`
    /// must do exactly what it would have done at `t`.
    ///
    /// Only called on an algorithm whose [`CongestionControl::steady_signal`] is `Some`, so the
    /// default does nothing; an algorithm that opts in must implement both.
    fn shift_clock(&mut self, _by: SimTime) {}
}

/// The receiver half.
pub trait ReceiverCc {
    fn on_data(&mut self, pkt: &DataArrival) -> ReceiverAction;
    /// Moves every point in time the receiver holds on by `by` (DCQCN's time of its last CNP),
    /// as [`CongestionControl::shift_clock`] does for the sender half, whose steadiness covers
    /// both halves: called only on the receiver of a flow whose sender half reports a
    /// [`CongestionControl::steady_signal`]. The default (a receiver that holds no time) does
    /// nothing.
    fn shift_clock(&mut self, _by: SimTime) {}
}

/// One congestion-control algorithm, as its `[cc]` settings describe it: everything the rest of
/// the simulator asks of an algorithm besides its two halves' behaviour. Each algorithm's config
/// type implements it in the algorithm's own file; [`CcConfig::as_algorithm`] is the one place
/// that picks the implementation (see `registry.rs` and docs/cc/adding.md).
pub trait Algorithm {
    /// The `algorithm = "..."` value that selects it.
    fn name(&self) -> &'static str;
    /// One line for `aiccsim algorithms`.
    fn describe(&self) -> &'static str;
    /// Parameters whose default depends on the run (unset in the listing), with the rule.
    fn optional_parameters(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// The named parameter sets it ships (`preset = "..."` under `[cc]`): a vendor's defaults,
    /// a study's, a tuned table. Each is documented with its source in docs/scenario.md.
    fn presets(&self) -> &'static [&'static str] {
        &[]
    }
    /// Preset `name`'s parameters, as the scenario would write them; the scenario's own keys
    /// then override them.
    fn preset_table(&self, _name: &str) -> Option<toml::Table> {
        None
    }
    /// Checks the parameters on their own; each failure names its key (`cc.g`) and the fix.
    fn validate(&self) -> Check {
        Ok(())
    }
    /// The configured lowest sending rate, if the algorithm has one; the run refuses a floor
    /// above the slowest NIC (`cc.min_rate`).
    fn min_rate(&self) -> Option<Bandwidth> {
        None
    }
    /// The lowest rate the sender half may ever report (bits/s): the configured floor; 0 for
    /// window algorithms that pace sub-packet windows ever more slowly.
    fn rate_floor(&self, _facts: &FlowFacts) -> f64 {
        self.min_rate().map_or(0.0, |r| r.as_f64())
    }
    /// Whether ECN marks are its congestion signal (a run with ECN off is then warned about).
    fn reacts_to_ecn(&self) -> bool {
        false
    }
    /// What the fabric must stamp on this algorithm's packets.
    fn telemetry(&self) -> Telemetry {
        Telemetry::None
    }
    /// Header bytes the algorithm adds to each data packet and to each ACK (its telemetry, or
    /// its own fields).
    fn extra_header_bytes(&self) -> (u64, u64) {
        let t = self.telemetry().header_bytes();
        (t, t)
    }
    /// Builds the sender half for one flow.
    fn sender(&self, facts: &FlowFacts) -> Cc;
    /// Builds the receiver half for one flow: by default it only echoes (ACKs carry the ECN echo
    /// and the timestamp every ACK carries).
    fn receiver(&self, _facts: &FlowFacts) -> Receiver {
        Receiver::Echo
    }
    /// How often the sending NIC probes the round trip of one of its flows, if the algorithm
    /// wants probes (`engine/nic/probe.rs`): each reply reaches the sender half as
    /// [`CcEvent::RttProbe`]. `None` (the default): no probes, and the run pays nothing for them.
    fn rtt_probe_interval(&self, _facts: &FlowFacts) -> Option<SimTime> {
        None
    }
    /// The longest period of the algorithm's own dynamics on this flow (a timer that raises the
    /// rate, a probe interval): fast-forward judges a flow steady only over windows at least
    /// this long, so that a rate held between two timed steps is not mistaken for a converged
    /// one (`engine/fast_forward/`). The default: the flow's base round trip.
    fn settling_time(&self, facts: &FlowFacts) -> SimTime {
        facts.base_rtt
    }
}

/// A check's outcome: the dotted key at fault and what to write instead.
pub type Check = Result<(), (String, String)>;

// The registry: one line per built-in algorithm (module: name | aliases => variant(config,
// sender half[, receiver half])). `registry.rs` says what it makes.
registry! {
    /// No end-to-end congestion control: every flow sends at line rate; only PFC holds it back.
    pfc_only: "none" | "pfc_only" => None(PfcOnlyConfig, PfcOnly),
    /// DCQCN (Zhu et al., SIGCOMM 2015) with the HPCC ns-3 study's parameters.
    dcqcn: "dcqcn" => Dcqcn(DcqcnConfig, Dcqcn, DcqcnReceiver),
    /// DCTCP (Alizadeh et al., SIGCOMM 2010) on RoCE, as the HPCC study runs it.
    dctcp: "dctcp" => Dctcp(DctcpConfig, Dctcp),
    /// TIMELY (Mittal et al., SIGCOMM 2015).
    timely: "timely" => Timely(TimelyConfig, Timely),
    /// HPCC (Li et al., SIGCOMM 2019), with INT.
    hpcc: "hpcc" => Hpcc(HpccConfig, Hpcc),
    /// HPCC with PINT's 8-bit probabilistic feedback (Ben Basat et al., SIGCOMM 2020).
    hpcc_pint: "hpcc_pint" => HpccPint(HpccPintConfig, HpccPint),
    /// Swift (Kumar et al., SIGCOMM 2020).
    swift: "swift" => Swift(SwiftConfig, Swift),
    /// PC4 ("Precision Collective Communication Congestion Control for AI Cluster"): receiver base rate per collective, one-way delay against a target.
    pc4: "pc4" => Pc4(Pc4Config, Pc4, Pc4Receiver),
    /// MCC ("Congestion Control for AI Workloads with Message-Level Signaling", slides): a window in message chunks, cut on message delay, held on one path's.
    mcc: "mcc" => Mcc(MccConfig, Mcc),
    /// AIMD on ECN echoes: the worked example of docs/cc/adding.md.
    aimd: "aimd" => Aimd(AimdConfig, Aimd),
    /// Barre ("Barre: Empowering Simplified and Versatile Programmable Congestion Control in
    /// High-Speed AI Clusters", slides): a NIC program on CNPs and RTT probes.
    barre: "barre" => Barre(BarreConfig, Barre),
    /// NSCC (Ultra Ethernet, UE 1.0; SMaRTT, arXiv 2404.01630): a window on ECN and queuing
    /// delay, with QuickAdapt.
    nscc: "nscc" => Nscc(NsccConfig, Nscc),
    /// RCCC (Ultra Ethernet, UE 1.0): the receiver grants credit to its senders; its receiver
    /// half is also NSCC's with `receiver_credit`.
    rccc: "rccc" => Rccc(RcccConfig, Rccc, RcccReceiver),
}

#[cfg(test)]
mod properties;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 100 Gbps flow over one switch: the facts most unit tests start from.
    pub(crate) fn facts() -> FlowFacts {
        FlowFacts {
            flow: 0,
            line_rate: Bandwidth::from_gbps(100),
            base_rtt: SimTime::from_us(8),
            hops: 1,
            one_way_baseline: SimTime::from_ns(2180),
            receiver_line_rate: Bandwidth::from_gbps(100),
            mtu: 1000,
            packet_bytes: 1048,
            collective: None,
            network_rtt: SimTime::from_us(8),
            trimming: false,
        }
    }
}
