//! Settings that are legal but almost certainly a mistake.
//!
//! What cannot be meant is refused (`config/validate.rs`, `engine/build.rs`). What follows can
//! be meant (a study of DCQCN without ECN marks, a run stopped before its flows start) but
//! rarely is, and a run of it gives numbers that look fine and answer another question. Each
//! is found once, when the run is laid out, from the settings and the flows' paths; the CLI
//! prints them on stderr before the run, and `summary.json` keeps them (`warnings`).

use super::Simulation;
use crate::cc::CongestionControl;
use crate::config::Recovery;
use crate::metrics::Warning;
use crate::time::SimTime;

/// A retransmission timeout below this many times a flow's base RTT fires on an ordinary
/// queue: a BDP of queuing doubles the RTT.
const RTO_RTTS: u64 = 2;

impl Simulation {
    /// The warnings about this run's settings, in a fixed order.
    pub(crate) fn find_warnings(&self) -> Vec<Warning> {
        let s = &self.scenario;
        let mut found = Vec::new();
        let mut warn = |key: &str, message: String| found.push(Warning { key: key.into(), message });
        let algorithm = s.cc.as_algorithm();
        let name = algorithm.name();
        let ecn = &s.switch.ecn;

        // Congestion signals the algorithm will never get.
        // (NVSwitch ports never mark: only the fabric's switches count.)
        let fabric_ports = || self.topo.fabric_switch_ports();
        if algorithm.reacts_to_ecn() && fabric_ports().next().is_some() {
            if !ecn.enabled {
                warn(
                    "switch.ecn.enabled",
                    format!("{name} slows down only on ECN marks, and with ECN off no packet is marked: it will send at line rate throughout; enable switch.ecn, or run algorithm = \"pfc_only\" if that is the point"),
                );
            } else {
                let buffer = s.switch.buffer.0 as u128;
                let never = fabric_ports().all(|p| ecn.scaled(ecn.kmin, p.bandwidth) > buffer);
                if never {
                    warn(
                        "switch.ecn.kmin",
                        format!("{} (scaled to each port's speed) is above the {} buffer on every switch port, so no packet is ever marked and {name} never slows down; lower kmin and kmax below the buffer", ecn.kmin, s.switch.buffer),
                    );
                }
            }
        }

        // Marks that come only after the backpressure: with a static XOFF below Kmin, the queue
        // one ingress port fills is paused before it reaches Kmin, so PFC, not ECN, holds that
        // congestion back (RoCE fabrics mark below the backpressure point for this reason).
        let pfc = &s.switch.pfc;
        if let (true, true, true, Some(xoff)) = (algorithm.reacts_to_ecn(), ecn.enabled, pfc.enabled, pfc.xoff) {
            let backpressure = pfc.reserve.0 as u128 + xoff.0 as u128;
            let late = fabric_ports().filter(|p| ecn.scaled(ecn.kmin, p.bandwidth) > backpressure);
            if let Some(slowest) = late.map(|p| p.bandwidth).min_by_key(|b| b.bps()) {
                warn(
                    "switch.pfc.xoff",
                    format!("{xoff} (with a reserve of {}) is below ECN's kmin ({} at {}, scaled to each port's speed) on the {slowest} switch ports and faster: a queue that one ingress port fills pauses its upstream before it reaches kmin, so {name} sees no mark until several ingresses feed one queue, and PFC, not ECN, holds the congestion back; mark below the backpressure point: lower kmin (and kmax) under xoff, or raise xoff", pfc.reserve, ecn.kmin, ecn.reference_bandwidth),
                );
            }
        }

        // Trimmed headers with nowhere to go: a data queue that may take the whole buffer leaves
        // none for the headers trimmed at it, which are then dropped (`net/trimming.rs`).
        if let Some(t) = s.switch.trims() {
            if t.threshold.is_none() && s.switch.egress_alpha.is_none() {
                warn(
                    "switch.trimming.threshold",
                    format!("with neither a trimming threshold nor switch.egress_alpha one egress queue may fill the whole {} buffer, and the headers trimmed there then find no room and are dropped, each costing a timeout; give switch.trimming.threshold below the buffer (about a bandwidth-delay product, as the UEC's htsim sizes its queues with trimming), or switch.egress_alpha", s.switch.buffer),
                );
            }
        }

        // Windows the receiver's ACKs can never open (unless the sender asks for an ACK when
        // its window is full, `nic.ack_request`).
        let ack_every = s.nic.ack_every as u64;
        if ack_every > 1 && !s.nic.ack_request {
            // A flow longer than its window whose window holds fewer packets than an ACK needs:
            // the receiver waits for packets the window will not let out.
            let mtu = self.params.mtu;
            let per_window = |f: usize| self.nic.ccs[self.nic.flows[f].conn as usize].window().map(|w| w.div_ceil(mtu));
            let closed = (0..self.nic.flows.len())
                .filter(|&f| !self.nic.flows[f].nvlink)
                .filter_map(|f| per_window(f).map(|w| (f, w)))
                .filter(|&(f, w)| w < ack_every && self.nic.flows[f].size.div_ceil(mtu) > w)
                .collect::<Vec<_>>();
            if let Some(&(f, w)) = closed.first() {
                warn(
                    "nic.ack_every",
                    format!("{ack_every} packets per ACK is more than the {w} packets {name}'s window lets {} have in flight ({} of {} flows): the sender waits for an ACK the receiver sends only after {ack_every} packets, so the flow moves only by retransmission timeouts or stalls; lower nic.ack_every", self.flow_name(f), closed.len(), self.nic.flows.len()),
                );
            }
        }

        // A timeout that fires on an ordinary queue.
        let longest = (0..self.nic.flows.len())
            .filter(|&f| !self.nic.flows[f].nvlink)
            .max_by_key(|&f| self.nic.facts_of(f as u32).base_rtt);
        if let Some(f) = longest {
            let rtt = self.nic.facts_of(f as u32).base_rtt;
            if s.nic.rto.0 < rtt.0.saturating_mul(RTO_RTTS) {
                warn(
                    "nic.rto",
                    format!("{} is less than {RTO_RTTS} x the {:.2} us base RTT of {}: any queue of a bandwidth-delay product makes it time out and resend what was not lost; RDMA NICs wait milliseconds, e.g. \"1ms\"", s.nic.rto, rtt.as_us_f64(), self.flow_name(f)),
                );
            }
        }

        // A timeout shorter than a full buffer takes to drain: on a lossless fabric PFC holds
        // packets rather than drop them, so a flow behind a full queue makes no progress for
        // that long, and the timeout resends what was never lost.
        if s.switch.pfc.enabled {
            let slowest = fabric_ports().min_by_key(|p| p.bandwidth.bps());
            if let Some(p) = slowest {
                let drain = p.bandwidth.tx_time(s.switch.buffer.0);
                if s.nic.rto < drain {
                    warn(
                        "nic.rto",
                        format!("{} is less than the {drain} a full {} buffer takes to drain through a {} switch port: with PFC on, a flow can wait that long behind a full queue with nothing lost, and the timeout then resends what was on its way; leave nic.rto at its default (67.1 ms, a NIC's 4.096 us x 2^14) or set one above {drain}", s.nic.rto, s.switch.buffer, p.bandwidth),
                    );
                }
            }
        }

        // A selective receiver's bitmap shorter than a round trip of packets: the sender may not
        // have more outstanding, so the bitmap is a window below the line rate's.
        if s.nic.recovery == Recovery::Selective {
            let bits = s.nic.sack_bitmap as u64;
            let bdp = |f: usize| {
                let facts = self.nic.facts_of(f as u32);
                (facts.line_rate.as_f64() * facts.base_rtt.as_secs_f64() / 8.0 / facts.packet_bytes as f64).ceil()
                    as u64
            };
            let short = (0..self.nic.flows.len())
                .filter(|&f| !self.nic.flows[f].nvlink && self.nic.flows[f].size > bits * self.params.mtu)
                .map(|f| (f, bdp(f)))
                .filter(|&(_, packets)| packets > bits)
                .max_by_key(|&(_, packets)| packets);
            if let Some((f, packets)) = short {
                warn(
                    "nic.sack_bitmap",
                    format!("{bits} packets is less than the {packets} packets a round trip holds at line rate on the idle path of {}: the sender sends nothing that far past its first unacknowledged packet, so the flow runs below line rate; raise nic.sack_bitmap", self.flow_name(f)),
                );
            }
        }

        // Tensor parallelism over the fabric where the servers have GPUs to keep it inside.
        let per_server = s.topology.per_server();
        let plans = crate::workload::jobs::plan(
            s.workload.as_ref(),
            &s.jobs,
            s.simulation.seed,
            self.topo.fabric_hosts,
            per_server,
        );
        for plan in plans.iter().flatten().filter(|_| per_server > 1) {
            for (key, w) in &plan.workloads {
                if let crate::workload::WorkloadConfig::ParallelTraining(w) = w {
                    if let Some(message) = w.tp_warning(&plan.hosts, per_server) {
                        warn(&format!("{key}.tp"), message);
                    }
                }
            }
        }

        // A run that ends before what it measures begins.
        if let Some(stop) = s.simulation.stop_time {
            let first = self.nic.flows.iter().filter(|f| self.work.deps.flow_ready(f.id)).map(|f| f.start).min();
            if first.is_some_and(|t| t >= stop) {
                let first = first.unwrap_or(SimTime::ZERO);
                warn(
                    "simulation.stop_time",
                    format!("{stop} comes before the first flow starts ({first}): the run ends with no flow started; move stop_time later or the flows earlier"),
                );
            }
            if let Some(iv) = s.output.sample_interval.filter(|&iv| iv >= stop) {
                warn(
                    "output.sample_interval",
                    format!("{iv} is not shorter than the run ({stop}, simulation.stop_time): the timelines get one sample, at time 0; sample more often"),
                );
            }
            if let Some(warmup) = s.output.warmup.filter(|&w| w >= stop) {
                warn(
                    "output.warmup",
                    format!("{warmup} is not shorter than the run ({stop}, simulation.stop_time): no RTT or queuing delay is measured; shorten the warm-up"),
                );
            }
        }
        found
    }
}

impl Simulation {
    /// "flow 3 (h1 -> h0)".
    pub(crate) fn flow_name(&self, f: usize) -> String {
        let flow = &self.nic.flows[f];
        format!("flow {f} ({} -> {})", self.topo.node_name(flow.src), self.topo.node_name(flow.dst))
    }
}
