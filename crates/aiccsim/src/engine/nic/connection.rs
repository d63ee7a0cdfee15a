//! Connections: queue pairs that outlive one transfer. A collective library keeps one
//! connection between each pair of ranks and posts its transfers (messages) on it one after
//! another, so that a message starts where the last left the queue pair: with its congestion
//! control's rate and window, its pacer, its path. A run with `nic.connections = "per_transfer"`
//! (and every flow of a flow list, an incast or a permutation) gives each transfer a queue pair
//! of its own instead.
//!
//! Each flow keeps its own record and its own byte numbering (its FCT, its loss recovery), and
//! the algorithm sees the connection's numbering, message after message (`Flow::seq_base`); what
//! the messages of a connection share lives here and in the connection's slot of the
//! algorithm halves (`Simulation::ccs`, `receivers`, indexed by the connection's number; a run
//! keeps these per connection, not per flow, so that a collective of millions of transfers
//! between a few thousand pairs of ranks holds a few thousand algorithms). The send queue is first in, first out: a message posted while
//! another is still sending waits until that one has handed its last byte to the NIC.

use crate::cc::{CcContext, CongestionControl, MAX_TIMERS};
use crate::engine::{Simulation, TimerSlot};
use crate::watch::Stop;
use crate::workload::FlowDef;
use std::collections::{HashMap, VecDeque};

/// No message yet.
pub const NONE: u32 = u32::MAX;

pub struct Connection {
    /// The message holding the send queue: sending, or the last one that sent (`NONE`: none
    /// has started yet, and the algorithm has not been started).
    pub holder: u32,
    /// Messages posted while the holder was still sending, in posting order.
    pub waiting: VecDeque<u32>,
    /// Bytes sent and not yet acknowledged over all its messages: what a window bounds. Kept
    /// only for connections with more than one message (`Flow::shared`).
    pub in_flight: u64,
    /// The algorithm's timers: they keep running between its transfers (`timers.rs`).
    pub timers: [TimerSlot; MAX_TIMERS],
    /// Its messages that have started and are not yet delivered. The controller's count of a
    /// receiver's incoming flows counts the connection once while this is above zero: messages
    /// queued behind each other on one queue pair share its one window and rate, and never
    /// send side by side.
    pub undelivered: u32,
    /// Its messages the receiver has seen a packet of and not yet received whole: the
    /// receiver's own count of its incoming flows (`incoming_seen`) counts the connection once
    /// while this is above zero, as `undelivered` does for the controller's.
    pub seen_undelivered: u32,
}

impl Default for Connection {
    fn default() -> Self {
        Connection {
            holder: NONE,
            waiting: VecDeque::new(),
            in_flight: 0,
            timers: [TimerSlot::default(); MAX_TIMERS],
            undelivered: 0,
            seen_undelivered: 0,
        }
    }
}

/// The connections of `defs`: each flow's connection, numbered from 0 in the order of their
/// first flows, and each connection's first flow (its `head`, whose id keys its path and its
/// algorithm). Flows of one job with the same endpoints and connection number ride the queue
/// pair of the first of them; without `persistent` connections every flow has its own.
/// `tick(i)` is called before flow `i`.
pub(crate) struct ConnectionsOf {
    pub of_flow: Vec<u32>,
    pub heads: Vec<u32>,
}

pub(crate) fn connection_of(
    defs: &[FlowDef],
    persistent: bool,
    mut tick: impl FnMut(u64) -> Result<(), Stop>,
) -> Result<ConnectionsOf, Stop> {
    // Keyed lookups only, never iterated: the order of a HashMap cannot reach the results.
    let mut number_of: HashMap<(u32, u32, u32, u32), u32> = HashMap::new();
    let mut of_flow = Vec::with_capacity(defs.len());
    let mut heads = Vec::new();
    for (id, d) in defs.iter().enumerate() {
        tick(id as u64)?;
        let next = heads.len() as u32;
        let conn = match (persistent, d.connection) {
            (true, Some(k)) => *number_of.entry((d.job, d.src, d.dst, k)).or_insert(next),
            _ => next,
        };
        if conn == next {
            heads.push(id as u32);
        }
        of_flow.push(conn);
    }
    Ok(ConnectionsOf { of_flow, heads })
}

impl Simulation {
    /// Flow `f` is posted: it takes its connection's send queue, or waits behind the message
    /// that holds it.
    pub(crate) fn post(&mut self, f: u32) {
        if self.is_fluid(f) {
            return self.fluid_post(f);
        }
        let c = self.nic.flows[f as usize].conn as usize;
        let holder = self.nic.conns[c].holder;
        if holder != NONE && holder != f && self.nic.flows[holder as usize].has_data_to_send() {
            self.nic.conns[c].waiting.push_back(f);
            return;
        }
        self.take_queue(f);
        self.schedule_qp(f);
    }

    /// Flow `f` becomes its connection's sending message. The first starts the algorithm; a
    /// later one goes on from the pacer of the one before.
    fn take_queue(&mut self, f: u32) {
        self.start_probing(f);
        let c = self.nic.flows[f as usize].conn as usize;
        let previous = std::mem::replace(&mut self.nic.conns[c].holder, f);
        if previous == NONE {
            let mut cx = CcContext::at_start(self.now, self.controller_count(f));
            self.nic.ccs[c].on_start(&mut cx);
            self.apply_cc(f, &cx);
            return;
        }
        let p = &self.nic.flows[previous as usize];
        let (next_send, rate, last) = (p.next_send.max(self.now), p.paced_rate, p.last_packet_size);
        let seq_base = p.seq_base + p.size;
        let flow = &mut self.nic.flows[f as usize];
        flow.seq_base = seq_base;
        flow.next_send = next_send;
        flow.paced_rate = rate;
        flow.last_packet_size = last;
        // Rates may have moved while the connection was idle.
        self.apply_cc(f, &CcContext::new(self.now));
    }

    /// Flow `f` has handed its last byte to the NIC: the next message waiting on its connection
    /// takes the queue, joining the host's list of queue pairs with data to send. (Called while
    /// the NIC is choosing its next packet, so it only lists the message: the NIC picks it up
    /// on its next turn.)
    pub(crate) fn pass_queue(&mut self, f: u32) {
        let c = self.nic.flows[f as usize].conn as usize;
        // Only the holder passes the queue on. (Go-back-N breaks this: a message that went back
        // after handing its last byte to the NIC hands it over again when it gets there anew,
        // and the message after next starts beside the next; kept, as its results are.)
        debug_assert!(
            self.params.recovery == crate::config::Recovery::GoBackN || self.nic.conns[c].holder == f,
            "flow {f} passes connection {c}'s queue, held by {}",
            self.nic.conns[c].holder
        );
        let Some(next) = self.nic.conns[c].waiting.pop_front() else { return };
        self.take_queue(next);
        let flow = &mut self.nic.flows[next as usize];
        if flow.has_data_to_send() && flow.sender_done.is_none() && !flow.scheduled {
            flow.scheduled = true;
            let (host, now) = (flow.src, self.now);
            let (sched, pairs) = self.nic.scheduler(&self.params);
            sched.push(host, next, now, &pairs);
        }
    }

    /// Flow `f`'s bytes in flight were `before` and may have changed: keeps its connection's
    /// count when the connection carries several messages.
    #[inline]
    pub(crate) fn track_in_flight(&mut self, f: u32, before: u64) {
        let flow = &self.nic.flows[f as usize];
        if flow.shared {
            let c = &mut self.nic.conns[flow.conn as usize];
            c.in_flight = c.in_flight - before + flow.in_flight();
        }
    }

    /// Bytes in flight that bound flow `f`'s window: its connection's.
    #[inline]
    pub(crate) fn window_in_flight(&self, f: u32) -> u64 {
        let flow = &self.nic.flows[f as usize];
        if flow.shared {
            self.nic.conns[flow.conn as usize].in_flight
        } else {
            flow.in_flight()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    fn def(job: u32, src: u32, dst: u32, connection: Option<u32>) -> FlowDef {
        FlowDef {
            src,
            dst,
            size: 1_000,
            start: SimTime::ZERO,
            collective: None,
            after: Vec::new(),
            after_acked: Vec::new(),
            after_compute: Vec::new(),
            stop: None,
            connection,
            job,
        }
    }

    #[test]
    fn transfers_of_one_job_between_the_same_ranks_on_the_same_connection_share_the_first_ones_queue_pair() {
        let defs = [
            def(0, 1, 2, Some(0)),
            def(0, 1, 2, Some(1)), // another connection between the same ranks
            def(0, 1, 2, Some(0)),
            def(0, 2, 1, Some(0)), // the other direction
            def(1, 1, 2, Some(0)), // another job
            def(0, 1, 2, None),    // a queue pair of its own
            def(1, 1, 2, Some(0)),
        ];
        let conns = connection_of(&defs, true, |_| Ok(())).unwrap();
        assert_eq!(conns.of_flow, [0, 1, 0, 2, 3, 4, 3], "numbered in the order of their first flows");
        assert_eq!(conns.heads, [0, 1, 3, 4, 5]);
        let own = connection_of(&defs, false, |_| Ok(())).unwrap();
        assert_eq!(own.of_flow, [0, 1, 2, 3, 4, 5, 6], "per transfer: every flow its own");
        assert_eq!(own.heads, [0, 1, 2, 3, 4, 5, 6]);
    }

    /// A ring all-reduce in 8 chunks on 4 ranks: 4 x 6 steps x 8 transfers on 4 persistent
    /// connections (each rank to the next). The run keeps an algorithm and a connection state per
    /// connection, not per transfer, and each transfer finds its connection's: every transfer of
    /// a ring step is on its sender's one connection, named by its first transfer.
    #[test]
    fn a_collective_keeps_one_algorithm_per_connection_not_per_transfer() {
        let ring = |connections: &str| {
            let toml = format!(
                "[nic]\nconnections = \"{connections}\"\n[topology]\nkind = \"star\"\nhosts = 4\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[workload]\nkind = \"all_reduce\"\nsize = \"64KB\"\nalgorithm = \"ring\"\nchunks = 8\n"
            );
            crate::engine::Simulation::new(&crate::config::Scenario::from_toml(&toml, "test").unwrap()).unwrap()
        };
        let sim = ring("persistent");
        let nic = &sim.nic;
        assert_eq!(nic.flows.len(), 4 * 6 * 8);
        let per_connection =
            (nic.ccs.len(), nic.receivers.len(), nic.facts.len(), nic.conns.len(), nic.conn_heads.len());
        assert_eq!(per_connection, (4, 4, 4, 4, 4));
        for f in &nic.flows {
            let head = &nic.flows[nic.conn_heads[f.conn as usize] as usize];
            assert_eq!((head.src, head.dst, head.conn), (f.src, f.dst, f.conn), "flow {}", f.id);
            assert!(head.id <= f.id);
        }
        let own = ring("per_transfer");
        assert_eq!((own.nic.ccs.len(), own.nic.conns.len()), (4 * 6 * 8, 4 * 6 * 8));
    }

    #[test]
    fn a_new_connection_has_no_holder_and_nothing_in_flight() {
        let c = Connection::default();
        assert_eq!((c.holder, c.waiting.len(), c.in_flight, c.undelivered, c.seen_undelivered), (NONE, 0, 0, 0, 0));
    }
}
