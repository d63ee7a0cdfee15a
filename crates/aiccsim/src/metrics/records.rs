//! The records a run produces: one type per row of a result table, the run-wide counters, and
//! how the run ended. The engine fills them (`engine/finish.rs`); nothing here reads the
//! engine's state.

use super::json_time::ns;
use crate::time::SimTime;
use serde::Serialize;
use std::sync::Arc;

/// One row of `flows.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct FlowRecord {
    pub flow_id: u32,
    /// The hosts (GPUs) the workload named, also for a transfer over NVLink.
    pub src: u32,
    pub dst: u32,
    /// It ran over the servers' NVLink, not through the NICs.
    pub nvlink: bool,
    pub size_bytes: u64,
    pub start: SimTime,
    /// When the last byte reached the receiver; `None` if the run stopped first.
    pub finish: Option<SimTime>,
    pub ideal_fct: SimTime,
    /// `kind:id` of its collective; empty when it belongs to none. Shared by the collective's
    /// flows.
    pub collective: Arc<str>,
    /// Ranks of its collective (0 when it belongs to none).
    pub collective_ranks: u32,
    pub retransmitted_bytes: u64,
    pub timeouts: u32,
}

impl FlowRecord {
    pub fn fct(&self) -> Option<SimTime> {
        self.finish.map(|f| f - self.start)
    }
    /// FCT over the ideal FCT (>= 1 up to rounding).
    pub fn slowdown(&self) -> Option<f64> {
        self.fct().map(|f| f.0 as f64 / self.ideal_fct.0.max(1) as f64)
    }
}

/// One row of `queues.csv`: egress backlog of a switch port at a sample time.
#[derive(Clone, Copy, Debug)]
pub struct QueueSample {
    pub time: SimTime,
    pub switch: u32,
    pub port: u32,
    pub bytes: u64,
}

/// One row of `links.csv`: the bytes a switch port sent onto its link over the interval that
/// ends at a sample time. (24 bytes: as many rows as `queues.csv` may have.)
#[derive(Clone, Copy, Debug)]
pub struct LinkSample {
    pub time: SimTime,
    pub bytes: u64,
    /// The port (its index among all ports, the row of `ports.csv`).
    pub port: u32,
}

/// A link event changed port `port`'s speed at `time` (for `links.csv`'s utilisation).
#[derive(Clone, Copy, Debug)]
pub struct SpeedChange {
    pub time: SimTime,
    pub port: u32,
    pub bandwidth: crate::time::Bandwidth,
}

/// One row of `rates.csv`.
#[derive(Clone, Copy, Debug)]
pub struct RateSample {
    pub time: SimTime,
    pub flow: u32,
    /// The congestion-control rate, bits per second.
    pub rate_bps: f64,
    pub window_bytes: Option<u64>,
    /// Bytes delivered in order at the receiver over the last interval, as bits per second.
    pub throughput_bps: f64,
}

/// One row of `cc_state.csv`: one value of a flow's congestion-control state.
#[derive(Clone, Copy, Debug)]
pub struct CcStateSample {
    pub time: SimTime,
    pub flow: u32,
    /// The value's name, as an index into [`CcState::names`].
    pub name: u32,
    pub value: f64,
}

/// `cc_state.csv`'s rows, with the names the algorithms gave their values (each kept once).
#[derive(Clone, Debug, Default)]
pub struct CcState {
    pub names: Vec<String>,
    pub samples: Vec<CcStateSample>,
}

/// One row of `pauses.csv`: a PFC frame a switch port sent to its peer.
#[derive(Clone, Copy, Debug)]
pub struct PauseSample {
    pub time: SimTime,
    /// The sending port (global index).
    pub port: u32,
    pub priority: u8,
    /// PAUSE (true) or RESUME (false).
    pub pause: bool,
}

/// `pauses.csv` keeps at most this many rows; the rest are counted (`pause_log.rows_dropped`).
/// A run that sends more PFC frames than this has them in `ports.csv` totals; the timeline of
/// the first million shows how the pausing starts.
pub const MAX_PAUSE_ROWS: usize = 1_000_000;

/// A row of `pauses.csv` as written: nodes by number (names at writing).
#[derive(Clone, Copy, Debug)]
pub struct PauseRow {
    pub time: SimTime,
    pub node: u32,
    /// The port's number on `node`.
    pub port: u32,
    /// The node the frame pauses or resumes.
    pub peer: u32,
    pub priority: u8,
    pub pause: bool,
}

/// Per-port counters, for `ports.csv`.
#[derive(Clone, Debug)]
pub struct PortRecord {
    pub node: String,
    pub port: u32,
    pub peer: String,
    /// The link's speed when the run started (`[[events]]` may change it: `Results::speed_changes`).
    pub bandwidth: crate::time::Bandwidth,
    /// Largest egress backlog seen, bytes over all priorities.
    pub max_queue: u64,
    /// Data packets cut to their header here instead of being dropped (`[switch.trimming]`),
    /// counted on the egress port they were routed to, as drops are. (Not in `PortStats`, which
    /// lives in the port's cache lines and has no byte to spare: `Network::trims`.)
    pub trims: u64,
    pub stats: PortStats,
}

/// Counters for `ports.csv`, kept by each port as the run goes (the transmit counters live in
/// the port's hot lines and are copied here when the run ends).
#[derive(Clone, Copy, Debug, Default)]
pub struct PortStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub pause_sent: u64,
    pub resume_sent: u64,
    pub drops: u64,
    pub ecn_marks: u64,
    /// Time this port spent paused by its peer (any priority), and since when it is paused.
    pub paused_time: SimTime,
    pub paused_since: Option<SimTime>,
    /// Credit flow control: times this port began to wait for credits with a packet to send
    /// (none of its priorities waiting before), and the time some priority waited.
    pub credit_stalls: u64,
    pub credit_stall_time: SimTime,
}

/// Run-wide counters.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub events: u64,
    /// Packets serialised onto a link: data, ACK, NACK, CNP and PFC alike.
    pub packet_hops: u64,
    pub data_bytes_sent: u64,
    pub data_bytes_received: u64,
    pub data_bytes_dropped: u64,
    pub data_packets_sent: u64,
    /// Payload bytes of the data packets sent (retransmissions included).
    pub data_payload_sent: u64,
    pub retransmitted_bytes: u64,
    pub packets_dropped: u64,
    pub ecn_marks: u64,
    pub pause_frames: u64,
    pub resume_frames: u64,
    pub cnps: u64,
    pub acks: u64,
    /// ACKs that carried telemetry (INT records or PINT feedback).
    pub feedback_acks: u64,
    pub nacks: u64,
    pub timeouts: u64,
    /// Data packets a selective receiver kept though they arrived after a gap.
    pub out_of_order_packets: u64,
    /// Packet trimming (`[switch.trimming]`): data packets the switches cut to their header, the
    /// bytes they cut, the packets dropped all the same because not even the header found room
    /// (where trimmed, or at a later switch), and the trimmed packets that reached their
    /// receiver.
    pub packets_trimmed: u64,
    pub data_bytes_trimmed: u64,
    pub headers_dropped: u64,
    pub trimmed_received: u64,
}

/// A compute step as the run goes.
#[derive(Clone, Debug)]
pub struct ComputeStep {
    pub host: u32,
    pub duration: SimTime,
    /// It starts no earlier than this.
    pub earliest: SimTime,
    pub start: Option<SimTime>,
    pub end: Option<SimTime>,
}

/// How a run ended (`stop_reason` in `summary.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every flow finished.
    Completed,
    /// The scenario's `simulation.stop_time` came first.
    StopTime,
    /// No progress for `simulation.stall_timeout`, or no event left while flows remained.
    Stalled,
    /// Interrupted from outside (Ctrl-C).
    Interrupted,
    /// The wall-clock budget ran out.
    WallLimit,
    /// The event budget ([`crate::Simulation::set_event_limit`]) ran out.
    EventLimit,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Completed => "completed",
            StopReason::StopTime => "stop_time",
            StopReason::Stalled => "stalled",
            StopReason::Interrupted => "interrupted",
            StopReason::WallLimit => "wall_limit",
            StopReason::EventLimit => "event_limit",
        }
    }
}

/// An egress port whose peer has paused it while packets wait in it.
#[derive(Clone, Debug, Serialize)]
pub struct PausedPort {
    /// "s1:2" (node and port number, as in `ports.csv`).
    pub port: String,
    /// The node the paused link leads to.
    pub peer: String,
    pub priorities: Vec<u8>,
    pub queued_bytes: u64,
    #[serde(serialize_with = "ns")]
    pub paused_since_ns: SimTime,
}

/// A setting of the scenario that is legal but almost certainly a mistake (found when the run
/// is laid out, `engine/warnings.rs`): its dotted key and what it will do to the run.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Warning {
    /// The dotted key of the setting (`switch.ecn.enabled`).
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// An unfinished flow of a stalled run and what holds it: its window closed, its NIC paused,
/// its rate at the algorithm's floor, waiting for ACKs, or not started.
#[derive(Clone, Debug, Serialize)]
pub struct StuckFlow {
    pub flow: u32,
    pub src: String,
    pub dst: String,
    pub delivered_bytes: u64,
    pub size_bytes: u64,
    pub held_by: String,
}

/// What a stalled run was stuck on (`stall` in `summary.json`).
#[derive(Clone, Debug, Serialize)]
pub struct StallReport {
    /// The last time a flow moved: a start, or a byte delivered or acknowledged in order.
    #[serde(serialize_with = "ns")]
    pub last_progress_ns: SimTime,
    pub unfinished_flows: usize,
    /// The first unfinished flows (started ones first, at most 16), each with what holds it.
    pub stuck_flows: Vec<StuckFlow>,
    pub paused_ports: Vec<PausedPort>,
    /// Paused ports that wait on each other in a circle, each on the next (the last on the
    /// first): a PFC deadlock. Empty when the pauses form no circle.
    pub pause_cycle: Vec<String>,
}

impl StallReport {
    /// One line for a terminal.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "no flow made progress after {:.3} us; {} flow(s) unfinished",
            self.last_progress_ns.as_us_f64(),
            self.unfinished_flows
        );
        if !self.pause_cycle.is_empty() {
            let mut circle = self.pause_cycle.clone();
            circle.push(self.pause_cycle[0].clone());
            s += &format!("; PFC deadlock: paused ports wait on each other in a circle {}", circle.join(" -> "));
        }
        if let Some(first) = self.stuck_flows.first() {
            s += &format!(
                "; flow {} ({} -> {}, {} of {} B delivered): {}",
                first.flow, first.src, first.dst, first.delivered_bytes, first.size_bytes, first.held_by
            );
            let (same, other) = self.stuck_flows[1..].iter().partition::<Vec<_>, _>(|f| f.held_by == first.held_by);
            if !same.is_empty() {
                s += &format!(" (and {} more listed flow(s) likewise)", same.len());
            }
            for f in other.iter().take(2) {
                s += &format!("; flow {} ({} -> {}): {}", f.flow, f.src, f.dst, f.held_by);
            }
        }
        if self.paused_ports.is_empty() {
            s += "; no port is paused";
        } else {
            let listed: Vec<String> = self
                .paused_ports
                .iter()
                .take(8)
                .map(|p| format!("{} (to {}, {} B waiting)", p.port, p.peer, p.queued_bytes))
                .collect();
            let more = self.paused_ports.len().saturating_sub(listed.len());
            s += &format!(
                "; paused ports: {}{}",
                listed.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() }
            );
        }
        s
    }
}
