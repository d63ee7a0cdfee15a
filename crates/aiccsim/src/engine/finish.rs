//! Rows into metrics: the timeline samples the engine takes as the run goes, and the records it
//! hands over when the run ends. This is the only file that reads the engine's state for
//! metrics; `metrics` itself never sees a port, a queue pair or an algorithm.

use super::Simulation;
use crate::cc::CongestionControl;
use crate::metrics::{
    FlowRecord, PauseRow, PortRecord, QueueSample, RateSample, Results, RunRecords, RunTotals, StallReport, StopReason,
    TraceSummary,
};
use crate::tags::CollectiveTag;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Simulation {
    /// One sample of the timelines: the backlog of each sampled switch port and the bytes it
    /// sent, and the rate, window, delivered throughput (and, if asked, algorithm state) of each
    /// sampled flow that is sending.
    pub(crate) fn sample_timelines(&mut self) {
        let Some(iv) = self.recorder.interval() else { return };
        let now = self.now;
        for (i, port) in self.ports.iter().enumerate() {
            if port.is_host {
                continue;
            }
            let switch = port.node - self.topo.num_hosts;
            if self.recorder.samples_switch(switch) {
                self.recorder.queue(i, QueueSample { time: now, switch, port: port.local, bytes: port.queued });
                self.recorder.link(now, i, port.tx_bytes);
            }
        }
        for flow in self.flows.iter_mut() {
            if !self.recorder.samples_flow(flow.id) || !flow.started || flow.sender_done.is_some() {
                continue;
            }
            let cc = &self.ccs[flow.conn as usize];
            let delivered = flow.rcv_nxt - flow.sampled_bytes;
            flow.sampled_bytes = flow.rcv_nxt;
            self.recorder.rate(RateSample {
                time: now,
                flow: flow.id,
                rate_bps: cc.rate(),
                window_bytes: cc.window(),
                throughput_bps: delivered as f64 * 8.0 / iv.as_secs_f64(),
            });
            if self.recorder.records_cc_state() {
                let recorder = &mut self.recorder;
                cc.metrics(&mut |name, value| recorder.cc_state(now, flow.id, name, value));
            }
        }
    }

    /// The run is over: its records and totals, into metrics.
    pub(crate) fn finish(self, stop_reason: StopReason, stall: Option<StallReport>, wall_seconds: f64) -> Results {
        let now = self.now;
        // One shared name per collective: a run of millions of flows would otherwise spend
        // a tenth of a second formatting the same few names.
        let mut names: BTreeMap<(u8, u32), Arc<str>> = BTreeMap::new();
        let mut name_of = |c: CollectiveTag| {
            Arc::clone(names.entry((c.kind as u8, c.id)).or_insert_with(|| format!("{}:{}", c.kind, c.id).into()))
        };
        let flows: Vec<FlowRecord> = self
            .flows
            .iter()
            .map(|f| FlowRecord {
                flow_id: f.id,
                src: self.topo.gpu_of(f.src),
                dst: self.topo.gpu_of(f.dst),
                nvlink: f.nvlink,
                size_bytes: f.size,
                start: f.start,
                finish: f.finish,
                ideal_fct: f.ideal_fct,
                collective: f.collective.map(&mut name_of).unwrap_or_default(),
                collective_ranks: f.collective.map(|c| c.group_size).unwrap_or(0),
                retransmitted_bytes: f.retransmitted_bytes,
                timeouts: f.timeouts,
            })
            .collect();
        let ports: Vec<PortRecord> = self
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut stats = p.final_stats();
                if let Some(since) = stats.paused_since.take() {
                    stats.paused_time += now - since;
                }
                PortRecord {
                    node: self.topo.node_name(p.node),
                    port: p.local,
                    peer: self.topo.node_name(self.ports[p.peer as usize].node),
                    bandwidth: self.topo.ports[i].bandwidth,
                    max_queue: p.max_queued,
                    stats,
                }
            })
            .collect();
        let pauses = (self.recorder.pauses.iter())
            .map(|e| {
                let p = &self.ports[e.port as usize];
                PauseRow {
                    time: e.time,
                    node: p.node,
                    port: p.local,
                    peer: self.ports[p.peer as usize].node,
                    priority: e.priority,
                    pause: e.pause,
                }
            })
            .collect();
        let totals = RunTotals {
            warnings: self.warnings,
            now,
            stop_reason,
            stall,
            counters: self.counters,
            live_packets: self.packets.in_use() as u64,
            max_switch_queue_bytes: self.ports.iter().filter(|p| !p.is_host).map(|p| p.max_queued).max().unwrap_or(0),
            max_switch_buffer_bytes: self.switches.iter().map(|s| s.max_used).max().unwrap_or(0),
            max_headroom_bytes: self.switches.iter().map(|s| s.max_headroom).max().unwrap_or(0),
            max_pending_events: self.events.max_len,
            rtts: self.rtts,
            queuing: self.queuing,
            probes: self.probes.as_deref().map(|p| crate::metrics::ProbeSummary {
                sent: p.sent,
                lost: p.lost,
                answered: p.answered,
                rtt_ns: p.rtts.distribution(),
            }),
            trace: (self.tracer.as_ref())
                .map(|t| TraceSummary { rows: t.rows.len() as u64, rows_dropped: t.rows_dropped }),
            pause_log: self.recorder.logs_pauses().then_some(TraceSummary {
                rows: self.recorder.pauses.len() as u64,
                rows_dropped: self.recorder.pauses_dropped,
            }),
            wall_seconds,
        };
        // Freeing the state of a large run takes as long as writing its flows.csv (a fifth of
        // a second for two million flows): another thread does it while the results are made
        // and written, so that a stopped run ends within its second.
        let state = (self.flows, self.ccs, self.receivers, self.conns, self.facts, self.events, self.ports);
        let state = (state, self.packets, self.hosts, self.incoming_flows, self.start_group);
        std::thread::spawn(move || drop(state));
        let records = RunRecords {
            flows,
            ports,
            pauses,
            queues: self.recorder.queues,
            links: self.recorder.links,
            speed_changes: self.links.map(|l| l.speed_changes).unwrap_or_default(),
            rates: self.recorder.rates,
            cc_state: self.recorder.cc_state,
            trace: self.tracer.map(|t| t.rows),
            computes: self.deps.computes,
        };
        Results::assemble(
            self.scenario,
            records,
            self.training,
            &self.collectives,
            &self.jobs,
            totals,
            self.topo.names(),
        )
    }
}
