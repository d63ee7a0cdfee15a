//! The run's parameters that the hot path reads, derived once from the scenario.

use crate::cc::Telemetry;
use crate::config::{
    AckOutOfOrder, ControlPriority, FlowControl, FlowletPick, LoadBalancing, MarkPoint, Recovery, Routing, Scenario,
};
use crate::time::SimTime;

/// Derived per-run parameters the hot path reads.
pub(crate) struct Params {
    pub mtu: u64,
    /// Header bytes of a data packet, telemetry included.
    pub header: u64,
    /// The NIC's own header bytes (what ideal FCTs count).
    pub base_header: u64,
    /// ACK bytes, telemetry echo included.
    pub ack_size: u32,
    /// NACK bytes (no telemetry).
    pub nack_size: u32,
    pub cnp_size: u32,
    pub pause_size: u32,
    pub ack_every: u32,
    /// Ultra Ethernet's AR flag and immediate ACKs (`nic.ack_request`).
    pub ack_request: bool,
    /// Selective recovery: a packet after a gap is acknowledged as an in-order one is, and ACKs
    /// name the packets held in a bitmap (`nic.ack_out_of_order = "coalesced"`).
    pub sack_coalesced: bool,
    pub rto: SimTime,
    pub nack_interval: SimTime,
    pub data_priority: u8,
    pub recovery: Recovery,
    /// Where the sender puts each data packet (`nic/entropy.rs`): `Flow` keeps the connection's
    /// one ECMP key, the others choose an entropy per packet.
    pub load_balancing: LoadBalancing,
    /// Selective recovery: the loss threshold (packets arrived past a missing one).
    pub reorder_window: u32,
    /// Selective recovery: the sender sends no new byte this far or further past its first
    /// unacknowledged one (`sack_bitmap` packets).
    pub track_bytes: u64,
    /// Without PFC, an egress queue holds at most this fraction of the free buffer.
    pub egress_alpha: Option<f64>,
    pub pfc_static_xoff: Option<u64>,
    pub pfc_alpha: f64,
    pub xon_delta: u64,
    pub ecn_pmax: f64,
    pub ecn_at_dequeue: bool,
    /// Switches queue ACKs, NACKs and CNPs behind data, at the data priority
    /// (`switch.control_priority = "data"`), instead of at the top priority.
    pub control_at_data: bool,
    /// Flowlet switching's gap and where a new flowlet goes (switches that route by flowlet).
    pub flowlet_gap: SimTime,
    pub flowlet_pick: FlowletPick,
    /// Spraying past a threshold: the queue of a flow's ECMP port above which it sprays.
    pub spray_threshold: u64,
    /// Packet trimming is on (`[switch.trimming]`, `net/trimming.rs`): a data packet the buffer
    /// has no room for, or whose egress queue would pass `trim_above` bytes, is cut to
    /// `trim_header` bytes (`u64::MAX`: no threshold, trimmed only where it would be dropped).
    pub trimming: bool,
    pub trim_above: u64,
    pub trim_header: u64,
    /// A packet put on the wire needs more than its arrival scheduled: a trace row, a check of
    /// its link, CONGA's estimator and header, or its credits taken (tracing, `[[events]]`,
    /// `routing = "conga"`, credit flow control).
    pub tx_hooks: bool,
    /// The links run credits instead of PFC (`switch.flow_control = "credit"`, `net/credit.rs`).
    pub credit: bool,
    pub seed: u64,
    pub stop_time: SimTime,
    /// A per-packet trace is on (`tracer` is set).
    pub tracing: bool,
    pub sample_interval: Option<SimTime>,
    /// RTT and queuing-delay samples before this time are not recorded (`output.warmup`).
    pub warmup: SimTime,
    /// Feedback switches add to data packets (set by the algorithm).
    pub telemetry: Telemetry,
}

impl Params {
    pub(crate) fn of(scenario: &Scenario) -> Params {
        let nic = &scenario.nic;
        let sw = &scenario.switch;
        let algorithm = scenario.cc.as_algorithm();
        let (data_extra, ack_extra) = algorithm.extra_header_bytes();
        let selective = nic.recovery == Recovery::Selective;
        // Selective ACKs and NACKs carry a block (`wire/packet.rs`).
        let credit = sw.flow_control == FlowControl::Credit;
        let block_bytes = if selective { crate::engine::nic::selective::BLOCK_HEADER_BYTES } else { 0 };
        Params {
            mtu: nic.mtu.0,
            header: nic.header.0 + data_extra,
            base_header: nic.header.0,
            ack_size: (nic.ack_size.0 + ack_extra + block_bytes) as u32,
            nack_size: (nic.ack_size.0 + block_bytes) as u32,
            cnp_size: nic.cnp_size.0 as u32,
            pause_size: nic.pause_size.0 as u32,
            ack_every: nic.ack_every,
            ack_request: nic.ack_request,
            sack_coalesced: nic.ack_out_of_order == AckOutOfOrder::Coalesced,
            rto: nic.rto,
            nack_interval: nic.nack_interval,
            data_priority: nic.data_priority,
            recovery: nic.recovery,
            load_balancing: nic.load_balancing,
            reorder_window: nic.reorder_window,
            track_bytes: if selective { nic.sack_bitmap as u64 * nic.mtu.0 } else { u64::MAX },
            egress_alpha: sw.egress_alpha,
            pfc_static_xoff: sw.pfc.xoff.map(|x| x.0),
            pfc_alpha: sw.pfc.dynamic_alpha,
            xon_delta: sw.pfc.xon_delta.0,
            ecn_pmax: sw.ecn.pmax,
            ecn_at_dequeue: sw.ecn.mark_at == MarkPoint::Dequeue,
            control_at_data: sw.control_priority == ControlPriority::Data,
            flowlet_gap: sw.flowlet.unwrap_or_default().gap,
            flowlet_pick: sw.flowlet.unwrap_or_default().pick,
            spray_threshold: sw.spray_threshold.unwrap_or_default().threshold.0,
            trimming: sw.trims().is_some(),
            trim_above: sw.trims().and_then(|t| t.threshold).map_or(u64::MAX, |t| t.0),
            trim_header: sw.trims().map_or(0, |t| t.header.0),
            tx_hooks: scenario.output.trace.is_some()
                || !scenario.events.is_empty()
                || sw.routing.uses(Routing::Conga)
                || credit,
            credit,
            seed: scenario.simulation.seed,
            // Events at `SimTime::MAX` are the ones whose time saturated ("never", see
            // `SimTime`'s addition): the run ends just before them, as at a stop time.
            stop_time: scenario.simulation.stop_time.unwrap_or(SimTime::MAX).min(SimTime(u64::MAX - 1)),
            tracing: scenario.output.trace.is_some(),
            sample_interval: scenario.output.sample_interval,
            warmup: scenario.output.warmup.unwrap_or(SimTime::ZERO),
            telemetry: algorithm.telemetry(),
        }
    }
}

impl Params {
    /// The largest packet a NIC sends at the data priority, bytes: a full data packet, or an
    /// RTT probe (probes are `cnp_size` bytes).
    pub(crate) fn nic_data_packet(&self) -> u64 {
        (self.mtu + self.header).max(self.cnp_size as u64)
    }
}
