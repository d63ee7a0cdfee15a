//! Why a run ends, and what a stalled run was stuck on.
//!
//! A run ends when every flow is done, at the scenario's stop time, when it stops making
//! progress (no flow has moved a byte for `simulation.stall_timeout` of simulated time while
//! flows remain, or nothing is left to happen at all), or from outside: an interrupt (Ctrl-C) or
//! a wall-clock budget (`RunControl`, in `watch.rs`). A stall is diagnosed rather than simulated forever: which ports are
//! paused, with how much waiting behind them, and, when the pauses wait on each other in a
//! circle, that circle (a PFC deadlock).

use crate::cc::CongestionControl;
use crate::engine::Simulation;
use crate::metrics::{PausedPort, StallReport, StopReason, StuckFlow};
use crate::time::SimTime;
use crate::watch::Halt;
use crate::wire::packet::CONTROL_PRIORITY;

pub use crate::watch::RunControl;

/// The stop reason a stop from outside is reported as.
pub(crate) fn reason(halt: Halt) -> StopReason {
    match halt {
        Halt::Interrupted => StopReason::Interrupted,
        Halt::WallLimit => StopReason::WallLimit,
    }
}

impl Simulation {
    fn port_name(&self, p: u32) -> String {
        let port = &self.net.ports[p as usize];
        format!("{}:{}", self.topo.node_name(port.node), port.local)
    }

    /// Paused, non-empty egress ports, and a circle of them if they wait on each other.
    pub(crate) fn diagnose_stall(&self, last_progress: SimTime, unfinished: usize) -> StallReport {
        let data_classes = !(1u8 << CONTROL_PRIORITY);
        let stuck = |p: usize| {
            let port = &self.net.ports[p];
            port.paused & port.nonempty & data_classes != 0
        };
        let paused: Vec<usize> = (0..self.net.ports.len()).filter(|&p| stuck(p)).collect();
        let paused_ports = paused
            .iter()
            .map(|&p| {
                let port = &self.net.ports[p];
                let classes = port.paused & port.nonempty & data_classes;
                PausedPort {
                    port: self.port_name(p as u32),
                    peer: self.topo.node_name(self.net.ports[port.peer as usize].node),
                    priorities: (0..8).filter(|c| classes & (1 << c) != 0).collect(),
                    queued_bytes: port.queued,
                    paused_since_ns: port.stats.paused_since.unwrap_or_default(),
                }
            })
            .collect();
        // Port `p` waits on the peer's ingress port draining; that ingress port's packets sit in
        // the peer's egress queues. If one of those is itself stuck, `p` waits on it.
        let waits_on = |p: usize| -> Vec<usize> {
            let ingress = self.net.ports[p].peer;
            let node = self.net.ports[ingress as usize].node;
            self.topo.node_ports[node as usize]
                .iter()
                .map(|&q| q as usize)
                .filter(|&q| {
                    stuck(q)
                        && self.net.ports[q]
                            .prio
                            .iter()
                            .any(|queue| queue.packets.iter().any(|&id| self.net.packets[id].ingress == ingress))
                })
                .collect()
        };
        StallReport {
            last_progress_ns: last_progress,
            unfinished_flows: unfinished,
            stuck_flows: self.stuck_flows(),
            paused_ports,
            pause_cycle: find_cycle(&paused, waits_on).into_iter().map(|p| self.port_name(p as u32)).collect(),
        }
    }
}

/// Unfinished flows a stall report lists at most (with their count): enough to see the pattern.
const STUCK_FLOWS_LISTED: usize = 16;

impl Simulation {
    /// The first unfinished flows, started ones first, each with what holds it.
    fn stuck_flows(&self) -> Vec<StuckFlow> {
        let unfinished =
            |started: bool| self.nic.flows.iter().filter(move |f| f.finish.is_none() && f.started == started);
        (unfinished(true).chain(unfinished(false)))
            .take(STUCK_FLOWS_LISTED)
            .map(|flow| StuckFlow {
                flow: flow.id,
                src: self.topo.node_name(flow.src),
                dst: self.topo.node_name(flow.dst),
                delivered_bytes: flow.rcv_nxt,
                size_bytes: flow.full_size(),
                held_by: self.what_holds(flow.id),
            })
            .collect()
    }

    /// Why flow `f` sends nothing, in words: the first of its gates that is shut.
    fn what_holds(&self, f: u32) -> String {
        let flow = &self.nic.flows[f as usize];
        if !flow.started {
            return match self.work.deps.flow_ready(f) {
                true => format!("not started (starts at {})", flow.start),
                false => "not started: waits for the flows or compute steps before it".into(),
            };
        }
        if flow.sender_done.is_some() {
            return "stopped by its stop time".into();
        }
        let cc = &self.nic.ccs[flow.conn as usize];
        let ack_every = self.params.ack_every;
        let receiver = match flow.acks_pending {
            0 => String::new(),
            n => format!("; the receiver holds {n} packet(s) unacknowledged and ACKs every {ack_every}"),
        };
        let nic = &self.net.ports[self.topo.host_port(flow.src) as usize];
        if nic.paused & (1 << flow.priority) != 0 {
            let peer = self.topo.node_name(self.net.ports[nic.peer as usize].node);
            return match self.params.credit {
                false => format!("its NIC is paused by PFC from {peer}"),
                true => format!("its NIC waits for credits from {peer}"),
            };
        }
        if let Some(w) = cc.window() {
            let in_flight = self.window_in_flight(f);
            if in_flight >= w && flow.has_data_to_send() {
                return format!(
                    "window closed: {in_flight} B in flight fill its {w} B window; waits for an ACK{receiver}"
                );
            }
        }
        if !flow.has_data_to_send() {
            return format!("all {} B sent; waits for the ACK of {} B{receiver}", flow.size, flow.size - flow.snd_una);
        }
        let floor = self.scenario.cc.as_algorithm().rate_floor(self.nic.facts_of(f));
        if floor > 0.0 && cc.rate() <= floor * (1.0 + 1e-9) {
            return format!("sending at its algorithm's rate floor, {:.3} Gbps", floor / 1e9);
        }
        match flow.rto_backoff {
            1 => format!("has {} B to send at {:.3} Gbps", flow.size - flow.snd_nxt, cc.rate() / 1e9),
            b => format!("retransmission timeout backed off x{b}; {} B to send", flow.size - flow.snd_nxt),
        }
    }
}

/// A circle in the wait-for graph over `nodes` (depth-first search with three colours), in
/// order, or empty.
fn find_cycle(nodes: &[usize], edges: impl Fn(usize) -> Vec<usize>) -> Vec<usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark: std::collections::HashMap<usize, Mark> = nodes.iter().map(|&n| (n, Mark::New)).collect();
    for &root in nodes {
        if mark[&root] != Mark::New {
            continue;
        }
        // Explicit stack of (node, its successors, next successor to try) and the current path.
        let mut stack = vec![(root, edges(root), 0usize)];
        let mut path = vec![root];
        mark.insert(root, Mark::OnPath);
        while let Some((node, succ, i)) = stack.last_mut() {
            if *i == succ.len() {
                mark.insert(*node, Mark::Done);
                stack.pop();
                path.pop();
                continue;
            }
            let next = succ[*i];
            *i += 1;
            match mark.get(&next).copied().unwrap_or(Mark::Done) {
                Mark::OnPath => {
                    let from = path.iter().position(|&n| n == next).expect("on the path");
                    return path[from..].to_vec();
                }
                Mark::New => {
                    mark.insert(next, Mark::OnPath);
                    path.push(next);
                    let succ = edges(next);
                    stack.push((next, succ, 0));
                }
                Mark::Done => {}
            }
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn finds_a_circle_and_only_a_circle() {
        // 1 -> 2 -> 3 -> 1, and 4 -> 1 leading into it.
        let edges = |n: usize| match n {
            1 => vec![2],
            2 => vec![3],
            3 => vec![1],
            4 => vec![1],
            _ => vec![],
        };
        let mut c = find_cycle(&[4, 1, 2, 3], edges);
        c.sort();
        assert_eq!(c, vec![1, 2, 3]);
        // A chain is no circle.
        let chain = |n: usize| if n < 3 { vec![n + 1] } else { vec![] };
        assert!(find_cycle(&[1, 2, 3], chain).is_empty());
        // A diamond is no circle either.
        let diamond = |n: usize| match n {
            1 => vec![2, 3],
            2 | 3 => vec![4],
            _ => vec![],
        };
        assert!(find_cycle(&[1, 2, 3, 4], diamond).is_empty());
    }
}
