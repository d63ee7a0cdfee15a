//! Rows into metrics: the timeline samples the engine takes as the run goes, and the records it
//! hands over when the run ends. This is the only file that reads the engine's state for
//! metrics; `metrics` itself never sees a port, a queue pair or an algorithm.

use super::Simulation;
use crate::cc::CongestionControl;
use crate::metrics::{
    CreditSummary, FlowRecord, Layouts, PauseRow, PortRecord, QueueSample, RateSample, Results, RunRecords, RunTotals,
    StallReport, StopReason, TraceSummary,
};
use crate::tags::CollectiveTag;
use crate::time::SimTime;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Simulation {
    /// One sample of the timelines: the backlog of each sampled switch port and the bytes it
    /// sent, and the rate, window, delivered throughput (and, if asked, algorithm state) of each
    /// sampled flow that is sending.
    pub(crate) fn sample_timelines(&mut self) {
        let Some(iv) = self.observe.recorder.interval() else { return };
        let now = self.now;
        let frozen_port = |p: usize| self.ff.as_ref().is_some_and(|ff| ff.port_is_frozen(p as u32));
        for (i, port) in self.net.ports.iter().enumerate() {
            // (A frozen group's ports and flows have no samples while it is frozen: nothing was
            // simulated to sample, and summary.json lists the skipped spans.)
            if port.is_host || frozen_port(i) {
                continue;
            }
            let switch = port.node - self.topo.num_hosts;
            if self.observe.recorder.samples_switch(switch) {
                self.observe.recorder.queue(i, QueueSample { time: now, switch, port: port.local, bytes: port.queued });
                self.observe.recorder.link(now, i, port.tx_bytes);
            }
        }
        for flow in self.nic.flows.iter_mut() {
            let frozen = self.ff.as_ref().is_some_and(|ff| ff.flow_is_frozen(flow.id));
            if !self.observe.recorder.samples_flow(flow.id) || !flow.started || flow.sender_done.is_some() || frozen {
                continue;
            }
            let delivered = flow.rcv_nxt - flow.sampled_bytes;
            flow.sampled_bytes = flow.rcv_nxt;
            let span = self.ff.as_mut().map_or(iv, |ff| ff.sample_span(flow.id, now, iv));
            if span == SimTime::ZERO {
                // Frozen from one sample to this one: nothing of it was simulated.
                continue;
            }
            let cc = &self.nic.ccs[flow.conn as usize];
            self.observe.recorder.rate(RateSample {
                time: now,
                flow: flow.id,
                rate_bps: cc.rate(),
                window_bytes: cc.window(),
                throughput_bps: delivered as f64 * 8.0 / span.as_secs_f64(),
            });
            if self.observe.recorder.records_cc_state() {
                let recorder = &mut self.observe.recorder;
                cc.metrics(&mut |name, value| recorder.cc_state(now, flow.id, name, value));
            }
        }
    }

    /// The run is over: its records and totals, into metrics.
    pub(crate) fn finish(mut self, stop_reason: StopReason, stall: Option<StallReport>, wall_seconds: f64) -> Results {
        let now = self.now;
        let credits: Vec<(u64, u64)> = match &self.ff {
            Some(ff) => (0..self.net.ports.len()).map(|p| ff.port_credit(p)).collect(),
            None => Vec::new(),
        };
        let fast_forward = self.fast_forward_report();
        // One shared name per collective: a run of millions of flows would otherwise spend
        // a tenth of a second formatting the same few names.
        let mut names: BTreeMap<(u8, u32), Arc<str>> = BTreeMap::new();
        let mut name_of = |c: CollectiveTag| {
            Arc::clone(names.entry((c.kind as u8, c.id)).or_insert_with(|| format!("{}:{}", c.kind, c.id).into()))
        };
        let flows: Vec<FlowRecord> = self
            .nic
            .flows
            .iter()
            .map(|f| FlowRecord {
                flow_id: f.id,
                src: self.topo.gpu_of(f.src),
                dst: self.topo.gpu_of(f.dst),
                nvlink: f.nvlink,
                size_bytes: f.full_size(),
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
            .net
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut stats = p.final_stats();
                if let Some(&(bytes, packets)) = credits.get(i) {
                    stats.tx_bytes += bytes;
                    stats.tx_packets += packets;
                }
                if let Some(since) = stats.paused_since.take() {
                    stats.paused_time += now - since;
                }
                self.credit_stats(i as u32, &mut stats);
                PortRecord {
                    node: self.topo.node_name(p.node),
                    port: p.local,
                    peer: self.topo.node_name(self.net.ports[p.peer as usize].node),
                    bandwidth: self.topo.ports[i].bandwidth,
                    max_queue: p.max_queued,
                    trims: self.net.trims.get(i).copied().unwrap_or(0),
                    stats,
                }
            })
            .collect();
        let pauses = (self.observe.recorder.pauses.iter())
            .map(|e| {
                let p = &self.net.ports[e.port as usize];
                PauseRow {
                    time: e.time,
                    node: p.node,
                    port: p.local,
                    peer: self.net.ports[p.peer as usize].node,
                    priority: e.priority,
                    pause: e.pause,
                }
            })
            .collect();
        let totals = RunTotals {
            warnings: self.observe.warnings,
            now,
            stop_reason,
            stall,
            counters: self.observe.counters,
            live_packets: self.net.packets.in_use() as u64,
            max_switch_queue_bytes: self
                .net
                .ports
                .iter()
                .filter(|p| !p.is_host)
                .map(|p| p.max_queued)
                .max()
                .unwrap_or(0),
            max_switch_buffer_bytes: self.net.switches.iter().map(|s| s.max_used).max().unwrap_or(0),
            max_headroom_bytes: self.net.switches.iter().map(|s| s.max_headroom).max().unwrap_or(0),
            credit: self.params.credit.then(|| CreditSummary {
                stalls: ports.iter().map(|p| p.stats.credit_stalls).sum(),
                stall_ns: ports.iter().fold(SimTime::ZERO, |t, p| t + p.stats.credit_stall_time),
                ports_stalled: ports.iter().filter(|p| p.stats.credit_stalls > 0).count() as u64,
            }),
            max_pending_events: self.events.max_len,
            rtts: self.observe.rtts,
            queuing: self.observe.queuing,
            probes: self.nic.probes.as_deref().map(|p| crate::metrics::ProbeSummary {
                sent: p.sent,
                lost: p.lost,
                answered: p.answered,
                rtt_ns: p.rtts.distribution(),
            }),
            trace: (self.observe.tracer.as_ref())
                .map(|t| TraceSummary { rows: t.rows.len() as u64, rows_dropped: t.rows_dropped }),
            pause_log: self.observe.recorder.logs_pauses().then_some(TraceSummary {
                rows: self.observe.recorder.pauses.len() as u64,
                rows_dropped: self.observe.recorder.pauses_dropped,
            }),
            fast_forward,
            nvlink_fluid_transfers: self.fluid.as_ref().map(|fluid| fluid.transfers),
            wall_seconds,
        };
        // Freeing the state of a large run takes as long as writing its flows.csv (a fifth of
        // a second for two million flows): another thread does it while the results are made
        // and written, so that a stopped run ends within its second.
        let state = (
            self.nic.flows,
            self.nic.ccs,
            self.nic.receivers,
            self.nic.conns,
            self.nic.facts,
            self.events,
            self.net.ports,
        );
        let state = (state, self.net.packets, self.nic.sched, self.nic.incoming_flows, self.nic.start_group);
        std::thread::spawn(move || drop(state));
        // Only a training run splits its iterations by what held them up.
        let training = !self.work.training.is_empty() || !self.work.parallel_training.is_empty();
        let predecessors = training.then(|| self.work.deps.predecessors());
        let records = RunRecords {
            flows,
            ports,
            pauses,
            queues: self.observe.recorder.queues,
            links: self.observe.recorder.links,
            speed_changes: self.net.links.map(|l| l.speed_changes).unwrap_or_default(),
            rates: self.observe.recorder.rates,
            cc_state: self.observe.recorder.cc_state,
            trace: self.observe.tracer.map(|t| t.rows),
            computes: self.work.deps.computes,
            predecessors,
        };
        Results::assemble(
            self.scenario,
            records,
            Layouts { training: self.work.training, parallel_training: self.work.parallel_training },
            &self.work.collectives,
            &self.work.jobs,
            totals,
            self.topo.names(),
        )
    }
}
