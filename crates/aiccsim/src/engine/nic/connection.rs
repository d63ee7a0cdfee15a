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
//! algorithm halves (`Simulation::ccs`, `receivers`, indexed by the connection's id, which is
//! the id of its first flow). The send queue is first in, first out: a message posted while
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

/// Each flow's connection: flows of one job with the same endpoints and connection number ride
/// the queue pair of the first of them (whose id names the connection), with its path; without
/// `persistent` connections every flow has its own. `tick(i)` is called before flow `i`.
pub(crate) fn connection_of(
    defs: &[FlowDef],
    persistent: bool,
    mut tick: impl FnMut(u64) -> Result<(), Stop>,
) -> Result<Vec<u32>, Stop> {
    // Keyed lookups only, never iterated: the order of a HashMap cannot reach the results.
    let mut first_of: HashMap<(u32, u32, u32, u32), u32> = HashMap::new();
    let mut conn_of = Vec::with_capacity(defs.len());
    for (id, d) in defs.iter().enumerate() {
        tick(id as u64)?;
        conn_of.push(match (persistent, d.connection) {
            (true, Some(k)) => *first_of.entry((d.job, d.src, d.dst, k)).or_insert(id as u32),
            _ => id as u32,
        });
    }
    Ok(conn_of)
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
        assert_eq!(conns, [0, 1, 0, 3, 4, 5, 4]);
        let own = connection_of(&defs, false, |_| Ok(())).unwrap();
        assert_eq!(own, [0, 1, 2, 3, 4, 5, 6], "per transfer: every flow its own");
    }

    #[test]
    fn a_new_connection_has_no_holder_and_nothing_in_flight() {
        let c = Connection::default();
        assert_eq!((c.holder, c.waiting.len(), c.in_flight, c.undelivered, c.seen_undelivered), (NONE, 0, 0, 0, 0));
    }
}
