//! What a run measures: per-flow completion, run-wide counters, and opt-in sampled timelines.

mod histogram;
mod ideal;
pub mod iterations;
pub mod trace;

pub use histogram::DurationHistogram;

pub use ideal::ideal_fct;

use crate::cc::{Cc, CongestionControl, Telemetry};
use crate::config::{OutputConfig, Scenario};
use crate::engine::net::port::{Port, PortStats};
use crate::engine::nic::qp::Flow;
use crate::engine::{ComputeStep, Counters, StallReport, StopReason};
use crate::time::SimTime;
use crate::topology::{NodeNames, Topology};
use serde::Serialize;

/// One row of `flows.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct FlowRecord {
    pub flow_id: u32,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub start: SimTime,
    /// When the last byte reached the receiver; `None` if the run stopped first.
    pub finish: Option<SimTime>,
    pub ideal_fct: SimTime,
    pub collective: String,
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
    /// Largest egress backlog seen, bytes over all priorities.
    pub max_queue: u64,
    pub stats: PortStats,
}

/// Records timelines during the run; does nothing when timelines are off.
pub struct Recorder {
    interval: Option<SimTime>,
    queue_switch: Vec<bool>,
    rate_flow: Vec<bool>,
    last_queue: Vec<u64>,
    pub queues: Vec<QueueSample>,
    pub rates: Vec<RateSample>,
    pub pauses: Vec<PauseSample>,
    pub pauses_dropped: u64,
}

impl Recorder {
    pub fn new(out: &OutputConfig, topo: &Topology, flows: usize) -> Recorder {
        let mut queue_switch = vec![out.queue_switches.is_none(); topo.num_switches as usize];
        for &s in out.queue_switches.iter().flatten() {
            queue_switch[s as usize] = true;
        }
        let mut rate_flow = vec![out.rate_flows.is_none(); flows];
        for &f in out.rate_flows.iter().flatten() {
            if let Some(x) = rate_flow.get_mut(f as usize) {
                *x = true;
            }
        }
        Recorder {
            interval: out.sample_interval,
            queue_switch,
            rate_flow,
            last_queue: vec![0; topo.ports.len()],
            queues: Vec::new(),
            rates: Vec::new(),
            pauses: Vec::new(),
            pauses_dropped: 0,
        }
    }

    /// Whether PFC frames are logged (timelines are on).
    #[inline]
    pub fn logs_pauses(&self) -> bool {
        self.interval.is_some()
    }

    /// Switch port `port` sends a PFC frame: every one is logged, not sampled, because a
    /// pause can start and end between two samples.
    #[cold]
    pub fn pfc_frame(&mut self, time: SimTime, port: u32, priority: u8, pause: bool) {
        if self.pauses.len() < MAX_PAUSE_ROWS {
            self.pauses.push(PauseSample { time, port, priority, pause });
        } else {
            self.pauses_dropped += 1;
        }
    }

    pub fn sample(&mut self, now: SimTime, topo: &Topology, ports: &[Port], flows: &mut [Flow], ccs: &[Cc]) {
        let Some(iv) = self.interval else { return };
        for (i, port) in ports.iter().enumerate() {
            if port.is_host || !self.queue_switch[(port.node - topo.num_hosts) as usize] {
                continue;
            }
            let bytes = port.queued;
            // Only changes from or to a non-empty queue: an idle fabric writes nothing.
            if bytes > 0 || self.last_queue[i] > 0 {
                self.queues.push(QueueSample {
                    time: now,
                    switch: port.node - topo.num_hosts,
                    port: port.local,
                    bytes,
                });
            }
            self.last_queue[i] = bytes;
        }
        for flow in flows.iter_mut() {
            if !self.rate_flow[flow.id as usize] || !flow.started || flow.sender_done.is_some() {
                continue;
            }
            let cc = &ccs[flow.id as usize];
            let delivered = flow.rcv_nxt - flow.sampled_bytes;
            flow.sampled_bytes = flow.rcv_nxt;
            self.rates.push(RateSample {
                time: now,
                flow: flow.id,
                rate_bps: cc.rate(),
                window_bytes: cc.window(),
                throughput_bps: delivered as f64 * 8.0 / iv.as_secs_f64(),
            });
        }
    }
}

/// Summary statistics of a sample: mean and nearest-rank percentiles.
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

/// The byte ledger: every data byte a NIC put on the wire is received, dropped, or still in flight.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ByteLedger {
    pub sent: u64,
    pub received: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub algorithm: String,
    pub flows: usize,
    pub flows_finished: usize,
    /// Bytes the workload asked to move.
    pub bytes: u64,
    pub simulated_time_ns: f64,
    /// When the last flow was delivered (the workload's completion time); absent if one never was.
    pub completion_time_ns: Option<f64>,
    /// Each collective's span: first flow start to last flow delivery.
    pub collectives: Vec<CollectiveRecord>,
    /// The training iterations (`training` workloads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<iterations::IterationSummary>,
    /// True when the run ended before every flow finished (see `stop_reason`).
    pub partial: bool,
    /// `completed`, `stop_time`, `stalled` (no progress: see `stall`), `interrupted` (Ctrl-C) or
    /// `wall_limit`.
    pub stop_reason: StopReason,
    /// What a stalled run was stuck on: paused ports and any circle of pauses (PFC deadlock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<StallReport>,
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
    /// Data bytes on the wire, headers included.
    pub data_bytes: ByteLedger,
    /// Feedback the switches stamped for the algorithm, and its cost.
    pub telemetry: TelemetrySummary,
    pub max_switch_queue_bytes: u64,
    /// Largest occupancy of any switch's shared buffer.
    pub max_switch_buffer_bytes: u64,
    /// Most events pending at once in the event queue.
    pub max_pending_events: usize,
    pub fct_ns: Distribution,
    pub slowdown: Distribution,
    /// Round-trip time of every ACK (data sent to ACK received, on the sender's clock).
    pub rtt_ns: Distribution,
    /// One-way queuing delay of every full-size data packet: its trip from the sending NIC to
    /// the receiver minus the same trip on the idle path (true time, whatever the clocks).
    pub queuing_delay_ns: Distribution,
    /// Rows of `trace.csv` kept and dropped past `output.trace.max_rows` (with a trace only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSummary>,
    /// Rows of `pauses.csv` kept and dropped past `MAX_PAUSE_ROWS` (with timelines only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_log: Option<TraceSummary>,
    /// Wall-clock figures: the only fields that differ between two runs of the same scenario.
    pub performance: Performance,
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
    pub start_ns: f64,
    /// Last delivery; absent if a flow never finished.
    pub finish_ns: Option<f64>,
    pub duration_ns: Option<f64>,
}

impl CollectiveRecord {
    fn of(flows: &[Flow], records: &[FlowRecord]) -> Vec<CollectiveRecord> {
        let mut by_name: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
        for (i, r) in records.iter().enumerate() {
            if !r.collective.is_empty() {
                by_name.entry(r.collective.as_str()).or_default().push(i);
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
                    ranks: flows[members[0]].collective.map(|c| c.group_size).unwrap_or(0),
                    flows: members.len(),
                    start_ns: start.as_ns_f64(),
                    finish_ns: finish.map(|f| f.as_ns_f64()),
                    duration_ns: finish.map(|f| (f - start).as_ns_f64()),
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

/// Everything a run produced.
pub struct Results {
    pub scenario: Scenario,
    pub flows: Vec<FlowRecord>,
    pub summary: Summary,
    pub queues: Vec<QueueSample>,
    pub rates: Vec<RateSample>,
    /// PFC frames sent by switches, with node names resolved (timelines only).
    pub pauses: Vec<PauseRow>,
    pub ports: Vec<PortRecord>,
    pub timelines: bool,
    /// The per-packet trace, when the scenario asked for one.
    pub trace: Option<Vec<trace::TraceRow>>,
    /// Every compute step: when it started and ended (empty unless the workload has steps).
    pub computes: Vec<ComputeStep>,
    /// One row per training iteration (`training` workloads only).
    pub iterations: Option<Vec<iterations::IterationRecord>>,
    /// How the fabric the run used numbers its nodes (node names for the trace and pauses).
    pub topology: NodeNames,
}

/// Jain's fairness index of a set of throughputs: 1 when all are equal, 1/n when one takes all.
pub fn jain_index(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if sq == 0.0 {
        return 1.0;
    }
    sum * sum / (x.len() as f64 * sq)
}

impl Results {
    /// Mean throughput of each sampled flow over the steady phase: the sample times at which every
    /// sampled flow is active, without the first fifth of them (the start-up transient).
    /// `None` without timelines or with fewer than two such samples.
    pub fn steady_throughputs(&self) -> Option<Vec<f64>> {
        let flows: std::collections::BTreeSet<u32> = self.rates.iter().map(|r| r.flow).collect();
        if flows.len() < 2 {
            return None;
        }
        let mut per_time: std::collections::BTreeMap<SimTime, Vec<&RateSample>> = Default::default();
        for r in &self.rates {
            per_time.entry(r.time).or_default().push(r);
        }
        let full: Vec<&Vec<&RateSample>> = per_time.values().filter(|v| v.len() == flows.len()).collect();
        // The first sample of a flow covers the time before it started; skip it with the transient.
        let skip = (full.len() / 5).max(1);
        if full.len() < skip + 2 {
            return None;
        }
        let index: std::collections::BTreeMap<u32, usize> = flows.iter().enumerate().map(|(i, &f)| (f, i)).collect();
        let mut sums = vec![0.0; flows.len()];
        for samples in &full[skip..] {
            for r in samples.iter() {
                sums[index[&r.flow]] += r.throughput_bps;
            }
        }
        let n = (full.len() - skip) as f64;
        Some(sums.into_iter().map(|s| s / n).collect())
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn collect(
    scenario: Scenario,
    topo: Topology,
    flows: Vec<Flow>,
    ports: Vec<Port>,
    counters: Counters,
    recorder: Recorder,
    now: SimTime,
    (stop_reason, stall): (StopReason, Option<StallReport>),
    live_packets: u64,
    max_switch_buffer_bytes: u64,
    max_pending_events: usize,
    delays: (DurationHistogram, DurationHistogram),
    (computes, training): (Vec<ComputeStep>, Option<crate::workload::training::Layout>),
    tracer: Option<trace::Tracer>,
    wall_seconds: f64,
) -> Results {
    let records: Vec<FlowRecord> = flows
        .iter()
        .map(|f| FlowRecord {
            flow_id: f.id,
            src: f.src,
            dst: f.dst,
            size_bytes: f.size,
            start: f.start,
            finish: f.finish,
            ideal_fct: f.ideal_fct,
            collective: f.collective.map(|c| format!("{}:{}", c.kind, c.id)).unwrap_or_default(),
            retransmitted_bytes: f.retransmitted_bytes,
            timeouts: f.timeouts,
        })
        .collect();
    let iterations = training.map(|layout| iterations::measure(&layout, &computes, &records));
    let fcts: Vec<f64> = records.iter().filter_map(|r| r.fct()).map(|t| t.as_ns_f64()).collect();
    let slowdowns: Vec<f64> = records.iter().filter_map(|r| r.slowdown()).collect();
    let in_flight = counters.data_bytes_sent - counters.data_bytes_received - counters.data_bytes_dropped;
    debug_assert!(live_packets > 0 || in_flight == 0);
    let max_queue = ports.iter().filter(|p| !p.is_host).map(|p| p.max_queued).max().unwrap_or(0);
    let mut port_records = Vec::with_capacity(ports.len());
    for p in &ports {
        let mut stats = p.final_stats();
        if let Some(since) = stats.paused_since.take() {
            stats.paused_time += now - since;
        }
        port_records.push(PortRecord {
            node: topo.node_name(p.node),
            port: p.local,
            peer: topo.node_name(ports[p.peer as usize].node),
            max_queue: p.max_queued,
            stats,
        });
    }
    let secs = wall_seconds.max(1e-9);
    let summary = Summary {
        algorithm: scenario.cc.name().to_string(),
        flows: records.len(),
        flows_finished: records.iter().filter(|r| r.finish.is_some()).count(),
        // Saturating: each size fits in 64 bits, their sum need not.
        bytes: records.iter().fold(0u64, |sum, r| sum.saturating_add(r.size_bytes)),
        simulated_time_ns: now.as_ns_f64(),
        completion_time_ns: records
            .iter()
            .map(|r| r.finish)
            .collect::<Option<Vec<_>>>()
            .and_then(|f| f.into_iter().max())
            .map(|t| t.as_ns_f64()),
        collectives: CollectiveRecord::of(&flows, &records),
        iterations: iterations.as_deref().map(iterations::IterationSummary::of),
        partial: stop_reason != StopReason::Completed,
        stop_reason,
        stall,
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
            in_flight,
        },
        max_switch_queue_bytes: max_queue,
        max_switch_buffer_bytes,
        max_pending_events,
        fct_ns: Distribution::of(&fcts),
        slowdown: Distribution::of(&slowdowns),
        rtt_ns: delays.0.summary_ns(),
        queuing_delay_ns: delays.1.summary_ns(),
        trace: tracer.as_ref().map(|t| TraceSummary { rows: t.rows.len() as u64, rows_dropped: t.rows_dropped }),
        pause_log: recorder
            .logs_pauses()
            .then_some(TraceSummary { rows: recorder.pauses.len() as u64, rows_dropped: recorder.pauses_dropped }),
        performance: Performance {
            wall_seconds,
            events_per_second: counters.events as f64 / secs,
            packet_hops_per_second: counters.packet_hops as f64 / secs,
        },
    };
    let timelines = scenario.output.sample_interval.is_some();
    Results {
        scenario,
        flows: records,
        summary,
        pauses: recorder
            .pauses
            .iter()
            .map(|e| {
                let p = &ports[e.port as usize];
                PauseRow {
                    time: e.time,
                    node: p.node,
                    port: p.local,
                    peer: ports[p.peer as usize].node,
                    priority: e.priority,
                    pause: e.pause,
                }
            })
            .collect(),
        queues: recorder.queues,
        rates: recorder.rates,
        ports: port_records,
        timelines,
        trace: tracer.map(|t| t.rows),
        computes,
        iterations,
        topology: topo.names(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let d = Distribution::of(&v);
        assert_eq!((d.p50, d.p90, d.p99, d.max), (50.0, 90.0, 99.0, 100.0));
        assert_eq!(d.mean, 50.5);
    }
}
