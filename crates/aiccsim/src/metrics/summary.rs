//! `summary.json`: counts, distributions, collectives and iterations of one run.

use super::json_time::{ns, opt_ns, TimeDistribution};
use super::{iterations, Counters, DurationHistogram, FlowRecord, StallReport, StopReason, Warning};
use crate::config::Scenario;
use crate::time::SimTime;
use crate::wire::telemetry::Telemetry;
use serde::Serialize;

/// Summary statistics of a sample of ratios: mean and nearest-rank percentiles.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Distribution {
    pub count: usize,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Distribution {
    pub fn of(values: &[f64]) -> Distribution {
        if values.is_empty() {
            return Distribution::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let pct = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Distribution {
            count: v.len(),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: pct(0.50),
            p90: pct(0.90),
            p99: pct(0.99),
            max: v[v.len() - 1],
        }
    }
}

/// The byte ledger: every data byte a NIC put on the wire is received, dropped, cut by a
/// trimming switch, or still in flight. A trimmed packet's header goes on as data bytes: received
/// (it reached its receiver, which NACKed it), dropped, or in flight.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ByteLedger {
    pub sent: u64,
    pub received: u64,
    pub dropped: u64,
    /// Only with `[switch.trimming]`: the bytes switches cut off the packets they trimmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trimmed: Option<u64>,
    pub in_flight: u64,
}

/// Packet trimming's totals (`[switch.trimming]`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TrimmingSummary {
    /// Data packets the switches cut to their header (the sum of `ports.csv`'s `trims`).
    pub packets_trimmed: u64,
    /// Bytes they cut off (the ledger's `trimmed`).
    pub bytes_cut: u64,
    /// Trimmed packets that reached their receiver (each answered by a NACK, or by an ACK if it
    /// held the packet already).
    pub received: u64,
    /// Packets lost although trimming was on: data packets for whose header not even the
    /// control priority had room, and trimmed packets dropped at a later switch (they are in
    /// `packets_dropped` too).
    pub headers_dropped: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub algorithm: String,
    pub flows: usize,
    pub flows_finished: usize,
    /// Bytes the workload asked to move.
    pub bytes: u64,
    #[serde(serialize_with = "ns")]
    pub simulated_time_ns: SimTime,
    /// When the last flow was delivered (the workload's completion time); absent if one never was.
    #[serde(serialize_with = "opt_ns")]
    pub completion_time_ns: Option<SimTime>,
    /// Each collective's span: first flow start to last flow delivery.
    pub collectives: Vec<CollectiveRecord>,
    /// The training iterations (`training` workloads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<iterations::IterationSummary>,
    /// The jobs of a `[[jobs]]` scenario, each with its own iterations.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<super::jobs::JobSummary>,
    /// True when the run ended before every flow finished (see `stop_reason`).
    pub partial: bool,
    /// `completed`, `stop_time`, `stalled` (no progress: see `stall`), `interrupted` (Ctrl-C) or
    /// `wall_limit`.
    pub stop_reason: StopReason,
    /// What a stalled run was stuck on: paused ports and any circle of pauses (PFC deadlock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<StallReport>,
    /// Settings that are legal but almost certainly a mistake, each with its key.
    pub warnings: Vec<Warning>,
    pub events: u64,
    pub packet_hops: u64,
    pub pause_frames: u64,
    pub resume_frames: u64,
    pub packets_dropped: u64,
    pub ecn_marks: u64,
    /// Data packets the NICs sent, retransmissions included.
    pub data_packets: u64,
    pub acks: u64,
    pub cnps: u64,
    pub nacks: u64,
    pub timeouts: u64,
    pub retransmitted_bytes: u64,
    /// Selective recovery only: data packets the receivers kept though they arrived after a
    /// gap (go-back-N discards them, and NACKs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_of_order_packets: Option<u64>,
    /// Packet trimming's totals (`[switch.trimming]` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trimming: Option<TrimmingSummary>,
    /// Data bytes on the wire, headers included.
    pub data_bytes: ByteLedger,
    /// Feedback the switches stamped for the algorithm, and its cost.
    pub telemetry: TelemetrySummary,
    pub max_switch_queue_bytes: u64,
    /// Largest occupancy of any switch's buffer (all its pools).
    pub max_switch_buffer_bytes: u64,
    /// Most bytes one switch ingress port and priority held in its PFC headroom.
    pub max_headroom_bytes: u64,
    /// Credit flow control only: how long ports waited for credits (`ports.csv` per port).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit: Option<CreditSummary>,
    /// Most events pending at once in the event queue.
    pub max_pending_events: usize,
    pub fct_ns: TimeDistribution,
    pub slowdown: Distribution,
    /// Round-trip time of every ACK (data sent to ACK received, on the sender's clock).
    pub rtt_ns: TimeDistribution,
    /// One-way queuing delay of every full-size data packet: its trip from the sending NIC to
    /// the receiver minus the same trip on the idle path (true time, whatever the clocks).
    pub queuing_delay_ns: TimeDistribution,
    /// RTT probes (algorithms that send them only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_probes: Option<ProbeSummary>,
    /// Rows of `trace.csv` kept and dropped past `output.trace.max_rows` (with a trace only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSummary>,
    /// Rows of `pauses.csv` kept and dropped past `MAX_PAUSE_ROWS` (with timelines only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_log: Option<TraceSummary>,
    /// What fast-forward skipped (`simulation.fast_forward` on only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_forward: Option<super::fast_forward::FastForwardReport>,
    /// Transfers that crossed NVLink as rates, not packets (`simulation.nvlink = "fluid"` on a
    /// fabric with NVLink only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvlink_fluid_transfers: Option<u64>,
    /// Wall-clock figures: the only fields that differ between two runs of the same scenario.
    pub performance: Performance,
}

/// The credit loop's stalls over all ports (`switch.flow_control = "credit"`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CreditSummary {
    /// Times a port began to wait for credits with a packet to send, summed over ports.
    pub stalls: u64,
    /// Time ports waited for credits, summed over ports.
    #[serde(serialize_with = "ns")]
    pub stall_ns: SimTime,
    /// Ports that waited at least once.
    pub ports_stalled: u64,
}

/// What the RTT probes did (`engine/nic/probe.rs`).
#[derive(Clone, Debug, Serialize)]
pub struct ProbeSummary {
    /// Requests the NICs sent.
    pub sent: u64,
    /// Requests that reached their receiver and got no reply (`nic.probe_loss`).
    pub lost: u64,
    /// Replies that reached their sender.
    pub answered: u64,
    /// Round trip of every answered probe (request sent to reply received, sender's clock).
    pub rtt_ns: TimeDistribution,
}

#[derive(Clone, Debug, Serialize)]
pub struct TraceSummary {
    pub rows: u64,
    pub rows_dropped: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TelemetrySummary {
    /// Switch telemetry: `none`, `int` (HPCC) or `pint` (HPCC-PINT).
    pub kind: &'static str,
    /// Bytes the algorithm adds to every data packet (its telemetry, or its own fields).
    pub header_bytes: u64,
    /// ACKs that brought feedback back to the sender (telemetry, or the receiver half's words).
    pub feedback_acks: u64,
    /// Header bytes (telemetry included) over all data bytes on the wire.
    pub header_overhead: f64,
}

/// One collective instance (the flows sharing a collective tag).
#[derive(Clone, Debug, Serialize)]
pub struct CollectiveRecord {
    /// `kind:id`, as in the `collective` column of `flows.csv`.
    pub name: String,
    pub ranks: u32,
    pub flows: usize,
    #[serde(serialize_with = "ns")]
    pub start_ns: SimTime,
    /// Last delivery; absent if a flow never finished.
    #[serde(serialize_with = "opt_ns")]
    pub finish_ns: Option<SimTime>,
    #[serde(serialize_with = "opt_ns")]
    pub duration_ns: Option<SimTime>,
}

impl CollectiveRecord {
    fn of(records: &[FlowRecord]) -> Vec<CollectiveRecord> {
        let mut by_name: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
        for (i, r) in records.iter().enumerate() {
            if !r.collective.is_empty() {
                by_name.entry(&r.collective).or_default().push(i);
            }
        }
        by_name
            .into_iter()
            .map(|(name, members)| {
                let start = members.iter().map(|&i| records[i].start).min().unwrap_or_default();
                let finish = members.iter().map(|&i| records[i].finish).collect::<Option<Vec<_>>>();
                let finish = finish.and_then(|f| f.into_iter().max());
                CollectiveRecord {
                    name: name.to_string(),
                    ranks: records[members[0]].collective_ranks,
                    flows: members.len(),
                    start_ns: start,
                    finish_ns: finish,
                    duration_ns: finish.map(|f| f - start),
                }
            })
            .collect()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Performance {
    pub wall_seconds: f64,
    pub events_per_second: f64,
    pub packet_hops_per_second: f64,
}

/// What the engine reports about a finished run besides its records.
pub struct RunTotals {
    /// The scenario's settings that are legal but almost certainly a mistake.
    pub warnings: Vec<Warning>,
    /// Simulated time when the run ended.
    pub now: SimTime,
    pub stop_reason: StopReason,
    pub stall: Option<StallReport>,
    pub counters: Counters,
    /// Packets still in the network (queued or on a link).
    pub live_packets: u64,
    pub max_switch_queue_bytes: u64,
    pub max_switch_buffer_bytes: u64,
    pub max_headroom_bytes: u64,
    pub credit: Option<CreditSummary>,
    pub max_pending_events: usize,
    /// Every ACK's RTT, and every full data packet's one-way queuing delay.
    pub rtts: DurationHistogram,
    pub queuing: DurationHistogram,
    pub probes: Option<ProbeSummary>,
    /// Rows of `trace.csv` and of `pauses.csv` kept and dropped (when recorded).
    pub trace: Option<TraceSummary>,
    pub pause_log: Option<TraceSummary>,
    pub fast_forward: Option<super::fast_forward::FastForwardReport>,
    pub nvlink_fluid_transfers: Option<u64>,
    pub wall_seconds: f64,
}

impl Summary {
    /// The summary of a run of `scenario` with these flow records and totals.
    pub fn new(
        scenario: &Scenario,
        records: &[FlowRecord],
        iterations: Option<&[iterations::IterationRecord]>,
        jobs: &[super::jobs::JobRow],
        totals: RunTotals,
    ) -> Summary {
        let RunTotals {
            warnings,
            now,
            stop_reason,
            stall,
            counters,
            live_packets,
            max_switch_queue_bytes: max_queue,
            max_switch_buffer_bytes,
            max_headroom_bytes,
            credit,
            max_pending_events,
            rtts,
            queuing,
            probes,
            trace,
            pause_log,
            fast_forward,
            nvlink_fluid_transfers,
            wall_seconds,
        } = totals;
        let fcts: Vec<SimTime> = records.iter().filter_map(|r| r.fct()).collect();
        let slowdowns: Vec<f64> = records.iter().filter_map(|r| r.slowdown()).collect();
        let in_flight = counters.data_bytes_sent
            - counters.data_bytes_received
            - counters.data_bytes_dropped
            - counters.data_bytes_trimmed;
        let trims = scenario.switch.trims().is_some();
        debug_assert!(live_packets > 0 || in_flight == 0);
        let secs = wall_seconds.max(1e-9);
        Summary {
            algorithm: scenario.cc.name().to_string(),
            flows: records.len(),
            flows_finished: records.iter().filter(|r| r.finish.is_some()).count(),
            // Saturating: each size fits in 64 bits, their sum need not.
            bytes: records.iter().fold(0u64, |sum, r| sum.saturating_add(r.size_bytes)),
            simulated_time_ns: now,
            completion_time_ns: records
                .iter()
                .map(|r| r.finish)
                .collect::<Option<Vec<_>>>()
                .and_then(|f| f.into_iter().max()),
            collectives: CollectiveRecord::of(records),
            iterations: iterations.map(iterations::IterationSummary::of),
            jobs: jobs.iter().map(super::jobs::JobRow::summary).collect(),
            partial: stop_reason != StopReason::Completed,
            stop_reason,
            stall,
            warnings,
            events: counters.events,
            packet_hops: counters.packet_hops,
            pause_frames: counters.pause_frames,
            resume_frames: counters.resume_frames,
            packets_dropped: counters.packets_dropped,
            ecn_marks: counters.ecn_marks,
            data_packets: counters.data_packets_sent,
            acks: counters.acks,
            cnps: counters.cnps,
            nacks: counters.nacks,
            timeouts: counters.timeouts,
            retransmitted_bytes: counters.retransmitted_bytes,
            out_of_order_packets: (scenario.nic.recovery == crate::config::Recovery::Selective)
                .then_some(counters.out_of_order_packets),
            trimming: trims.then_some(TrimmingSummary {
                packets_trimmed: counters.packets_trimmed,
                bytes_cut: counters.data_bytes_trimmed,
                received: counters.trimmed_received,
                headers_dropped: counters.headers_dropped,
            }),
            telemetry: TelemetrySummary {
                kind: match scenario.cc.as_algorithm().telemetry() {
                    Telemetry::None => "none",
                    Telemetry::Int { .. } => "int",
                    Telemetry::Pint { .. } => "pint",
                },
                header_bytes: scenario.cc.as_algorithm().extra_header_bytes().0,
                feedback_acks: counters.feedback_acks,
                header_overhead: if counters.data_bytes_sent == 0 {
                    0.0
                } else {
                    1.0 - counters.data_payload_sent as f64 / counters.data_bytes_sent as f64
                },
            },
            data_bytes: ByteLedger {
                sent: counters.data_bytes_sent,
                received: counters.data_bytes_received,
                dropped: counters.data_bytes_dropped,
                trimmed: trims.then_some(counters.data_bytes_trimmed),
                in_flight,
            },
            max_switch_queue_bytes: max_queue,
            max_switch_buffer_bytes,
            max_headroom_bytes,
            credit,
            max_pending_events,
            fct_ns: TimeDistribution::of(&fcts),
            slowdown: Distribution::of(&slowdowns),
            rtt_ns: rtts.distribution(),
            queuing_delay_ns: queuing.distribution(),
            rtt_probes: probes,
            trace,
            pause_log,
            fast_forward,
            nvlink_fluid_transfers,
            performance: Performance {
                wall_seconds,
                events_per_second: counters.events as f64 / secs,
                packet_hops_per_second: counters.packet_hops as f64 / secs,
            },
        }
    }
}
