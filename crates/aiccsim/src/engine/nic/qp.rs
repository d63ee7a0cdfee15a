//! A queue pair: one flow's sender and receiver transport state, its start and stop, and what
//! an ACK or a CNP does to it. Loss recovery (NACK, go-back-N or selective repeat, the
//! retransmission timeout) is in `recovery.rs` and beside it; the pacer in `pacing.rs`.
//!
//! The sender keeps `snd_una` (first unacknowledged byte) and `snd_nxt` (next byte to send);
//! the receiver `rcv_nxt`, the next in-order byte it expects.

use super::connection;
use crate::cc::{
    AckInfo, Algorithm, Cc, CcConfig, CcContext, CcEvent, CongestionControl, FlowFacts, MessageDone, Receiver,
};
use crate::config::Recovery;
use crate::engine::{Dependencies, Params, Simulation};
use crate::metrics::ideal_fct;
use crate::tags::CollectiveTag;
use crate::time::SimTime;
use crate::topology::{routing, Topology};
use crate::watch::Stop;
use crate::wire::packet::Packet;
use crate::workload::FlowDef;
use std::collections::{BTreeMap, BTreeSet};

pub struct Flow {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: SimTime,
    pub collective: Option<CollectiveTag>,
    pub priority: u8,
    pub ecmp_key: u64,
    pub ideal_fct: SimTime,
    /// Between two GPUs' NVLink ports (`src` and `dst` are those ports' hosts).
    pub nvlink: bool,
    /// Its connection's number (`connection.rs`), the index of its queue pair's shared state
    /// and algorithm.
    pub conn: u32,
    /// Its connection carries other flows too.
    pub shared: bool,
    /// Bytes of the messages before it on its connection: its byte n is byte `seq_base + n` of
    /// the connection, the numbering its algorithm sees (HPCC's once-per-round-trip commit
    /// compares sequence numbers across messages).
    pub seq_base: u64,

    // Sender.
    pub started: bool,
    /// When its first byte left the NIC (message-level algorithms time messages from here).
    pub first_sent: SimTime,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The pacer lets the next packet out no earlier than this.
    pub next_send: SimTime,
    /// The rate `next_send` was computed with, and the size of the packet it paced.
    pub paced_rate: f64,
    pub last_packet_size: u64,
    /// On its host's list of queue pairs with data to send.
    pub scheduled: bool,
    /// Time of the one queued retransmission-timeout check, and its generation.
    pub rto_queued: Option<SimTime>,
    pub rto_gen: u32,
    pub rto_backoff: u32,
    /// Last time the cumulative ACK advanced (or sending resumed from idle).
    pub last_progress: SimTime,
    pub sender_done: Option<SimTime>,
    pub retransmitted_bytes: u64,
    pub timeouts: u32,
    /// The highest byte handed to the NIC so far (a go-back lowers `snd_nxt`, not this).
    pub high_sent: u64,
    /// Selective recovery: bytes between `snd_una` and `snd_nxt` that are not in the network:
    /// acknowledged selectively, or declared lost and not yet resent (0 with go-back-N).
    pub not_in_flight: u64,
    /// Selective recovery: packets declared lost and not yet resent.
    pub rtx_pending: u32,

    // Receiver.
    pub rcv_nxt: u64,
    pub acks_pending: u32,
    pub ecn_pending: bool,
    /// The last NACK: for which missing byte, and when.
    pub last_nack: Option<(u64, SimTime)>,
    /// When the last byte arrived at the receiver.
    pub finish: Option<SimTime>,
    /// The receiver has seen a packet of this flow (for its own count of incoming flows).
    pub seen: bool,
    /// What the receiver half asked the next ACK to carry.
    pub ack_feedback: [u32; 2],
    /// Forward-path baseline: the one-way time of a full packet on the idle path.
    pub one_way_baseline: SimTime,
    /// Receiver bytes at the previous timeline sample (throughput).
    pub sampled_bytes: u64,
    /// Bytes fast-forward credited to it (`engine/fast_forward/`): delivered without being
    /// simulated, so taken off the end of `size`, which the transport counts to. Its size as
    /// the workload gave it is `size + skipped`.
    pub skipped: u64,
    /// ACKs (and of them those with feedback), NACKs and CNPs its sender received: fast-forward
    /// measures their rates.
    pub acks: u32,
    pub feedback_acks: u32,
    pub nacks: u32,
    pub cnps: u32,
}

impl Flow {
    pub fn new(id: u32, d: &FlowDef, ecmp_key: u64, ideal_fct: SimTime, priority: u8) -> Flow {
        Flow {
            id,
            src: d.src,
            dst: d.dst,
            size: d.size,
            start: d.start,
            collective: d.collective,
            priority,
            ecmp_key,
            ideal_fct,
            nvlink: false,
            conn: id,
            shared: false,
            seq_base: 0,
            started: false,
            first_sent: SimTime::ZERO,
            snd_una: 0,
            snd_nxt: 0,
            next_send: SimTime::ZERO,
            paced_rate: 0.0,
            last_packet_size: 0,
            scheduled: false,
            rto_queued: None,
            rto_gen: 0,
            rto_backoff: 1,
            last_progress: SimTime::ZERO,
            sender_done: None,
            retransmitted_bytes: 0,
            timeouts: 0,
            high_sent: 0,
            not_in_flight: 0,
            rtx_pending: 0,
            rcv_nxt: 0,
            acks_pending: 0,
            ecn_pending: false,
            last_nack: None,
            finish: None,
            seen: false,
            ack_feedback: [0; 2],
            one_way_baseline: SimTime::ZERO,
            sampled_bytes: 0,
            skipped: 0,
            acks: 0,
            feedback_acks: 0,
            nacks: 0,
            cnps: 0,
        }
    }

    pub fn has_data_to_send(&self) -> bool {
        self.snd_nxt < self.size || self.rtx_pending > 0
    }

    /// Its size as the workload gave it (fast-forward shrinks `size`).
    pub fn full_size(&self) -> u64 {
        self.size + self.skipped
    }

    pub fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una - self.not_in_flight
    }
}

/// The start groups: flows that wait for nothing, grouped by receiver and start time, each
/// flow's group (`u32::MAX` for a flow that waits for another) and each group's size. A group
/// counts connections (`conn_of`), as the receiver's count of incoming flows does: of several
/// messages of one connection in a group only the first (the first to start: ready flows start
/// in id order) is a member, the others are `u32::MAX`.
pub(crate) fn start_groups(defs: &[FlowDef], deps: &Dependencies, conn_of: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut groups: BTreeMap<(u32, SimTime), u32> = BTreeMap::new();
    let mut members: BTreeSet<(u32, u32)> = BTreeSet::new();
    let mut start_group = vec![u32::MAX; defs.len()];
    let mut unstarted = Vec::new();
    for (id, d) in defs.iter().enumerate() {
        if deps.flow_ready(id as u32) {
            let next = groups.len() as u32;
            let g = *groups.entry((d.dst, d.start)).or_insert(next);
            if g == next {
                unstarted.push(0);
            }
            if members.insert((g, conn_of[id])) {
                unstarted[g as usize] += 1;
                start_group[id] = g;
            }
        }
    }
    (start_group, unstarted)
}

/// Every flow's queue pair with both halves of its algorithm and what they were told.
pub(crate) struct QueuePairs {
    pub(crate) flows: Vec<Flow>,
    pub(crate) ccs: Vec<Cc>,
    pub(crate) receivers: Vec<Receiver>,
    pub(crate) facts: Vec<FlowFacts>,
    pub(crate) largest_base_rtt: SimTime,
}

impl QueuePairs {
    /// Each flow on its connection's path (`conn_of`), with what its algorithm knows of that
    /// path; `tick(i)` is called before flow `i`.
    pub(crate) fn build(
        topo: &Topology,
        params: &Params,
        defs: &[FlowDef],
        conn_of: &connection::ConnectionsOf,
        algorithm: &dyn Algorithm,
        mut tick: impl FnMut(u64) -> Result<(), Stop>,
    ) -> Result<QueuePairs, Stop> {
        let mut messages = vec![0u32; conn_of.heads.len()];
        for &c in &conn_of.of_flow {
            messages[c as usize] += 1;
        }
        // NVLink is lossless and credit-flow-controlled: no congestion control of the NIC's
        // runs on it, so its transfers send at the link's rate.
        let nvlink_cc = CcConfig::None(Default::default());
        let max_packet = params.mtu + params.header;
        let mut pairs = QueuePairs {
            flows: Vec::with_capacity(defs.len()),
            ccs: Vec::with_capacity(conn_of.heads.len()),
            receivers: Vec::with_capacity(conn_of.heads.len()),
            facts: Vec::with_capacity(conn_of.heads.len()),
            largest_base_rtt: SimTime::ZERO,
        };
        for (id, d) in defs.iter().enumerate() {
            tick(id as u64)?;
            let conn = conn_of.of_flow[id];
            // The connection's path and the algorithm's flow id are its first flow's.
            let head = conn_of.heads[conn as usize];
            let key = routing::flow_key(params.seed, head);
            let path = topo.path(d.src, d.dst, key);
            let back = topo.path(d.dst, d.src, key);
            // The ideal is the same for every algorithm: telemetry headers count against it.
            let ideal = ideal_fct(topo, &path, d.size, params.mtu, params.base_header);
            let base_rtt = topo.path_latency(&path, max_packet) + topo.path_latency(&back, u64::from(params.ack_size));
            pairs.largest_base_rtt = pairs.largest_base_rtt.max(base_rtt);
            let one_way_baseline = topo.path_latency(&path, max_packet);
            let facts = FlowFacts {
                flow: head,
                line_rate: topo.ports[topo.host_port(d.src) as usize].bandwidth,
                base_rtt,
                hops: path.len() as u32 - 1,
                one_way_baseline,
                receiver_line_rate: topo.ports[topo.host_port(d.dst) as usize].bandwidth,
                mtu: params.mtu,
                packet_bytes: max_packet,
                collective: d.collective.map(|c| (c.kind, c.group_size)),
                network_rtt: SimTime::ZERO, // known once every flow's path is
                trimming: params.trimming,
            };
            let mut flow = Flow::new(id as u32, d, key, ideal, params.data_priority);
            flow.one_way_baseline = one_way_baseline;
            flow.nvlink = topo.is_nvlink_port(d.src);
            flow.conn = conn;
            flow.shared = messages[conn as usize] > 1;
            pairs.flows.push(flow);
            if head == id as u32 {
                pairs.facts.push(facts);
            }
        }
        // The algorithms start from the facts, which include the network's round trip: one per
        // connection, its first flow's (connections are numbered in the order of those).
        for (facts, &head) in pairs.facts.iter_mut().zip(&conn_of.heads) {
            facts.network_rtt = pairs.largest_base_rtt;
            let flow = &pairs.flows[head as usize];
            let flow_algorithm = if flow.nvlink { nvlink_cc.as_algorithm() } else { algorithm };
            pairs.ccs.push(flow_algorithm.sender(facts));
            pairs.receivers.push(flow_algorithm.receiver(facts));
        }
        Ok(pairs)
    }
}

impl Simulation {
    pub(crate) fn flow_start(&mut self, f: u32) {
        // A fluid NVLink transfer has no packets to skip and shares no port with the fabric.
        let fluid = self.is_fluid(f);
        if let Some(ff) = self.ff.as_mut().filter(|_| !fluid) {
            ff.started.push(f);
            if ff.any_frozen() {
                self.thaw_for_start(f);
            }
        }
        let flow = &mut self.nic.flows[f as usize];
        flow.started = true;
        flow.start = self.now; // later than configured when it waited for other flows
        let (dst, conn) = (flow.dst, flow.conn);
        flow.next_send = self.now;
        flow.last_progress = self.now;
        self.work.flows_started += 1;
        self.work.progress_at = self.now;
        // The controller counts connections: a message posted behind another on its queue pair
        // adds no flow to its receiver (`Connection::undelivered`).
        let c = &mut self.nic.conns[conn as usize];
        c.undelivered += 1;
        if c.undelivered == 1 {
            self.nic.incoming_flows[dst as usize] += 1;
        }
        if let Some(left) = self.nic.group_unstarted.get_mut(self.nic.start_group[f as usize] as usize) {
            *left -= 1;
        }
        self.post(f);
    }

    /// The controller's count of flows into flow `f`'s receiver as `f` starts: the connections
    /// already sending to it, plus those of the group it starts with that have not started yet.
    pub(crate) fn controller_count(&self, f: u32) -> u32 {
        let dst = self.nic.flows[f as usize].dst;
        let left = self.nic.group_unstarted.get(self.nic.start_group[f as usize] as usize).copied().unwrap_or(0);
        self.nic.incoming_flows[dst as usize] + left
    }

    /// Puts a flow with data to send on its host's scheduling list (if it is not there yet) and
    /// wakes the NIC: a go-back may have made it eligible even if it was already listed.
    pub(crate) fn schedule_qp(&mut self, f: u32) {
        let flow = &mut self.nic.flows[f as usize];
        if !flow.has_data_to_send() || flow.sender_done.is_some() {
            return;
        }
        let host = flow.src;
        if !flow.scheduled {
            flow.scheduled = true;
            let now = self.now;
            let (sched, pairs) = self.nic.scheduler(&self.params);
            sched.push(host, f, now, &pairs);
        }
        let port = self.topo.host_port(host);
        self.kick(port);
    }

    /// Flow `f`'s sender stops taking new data: the flow ends with what it has handed to the NIC
    /// (still delivered in full, with go-back-N if needed), and its ideal FCT is that size's.
    pub(crate) fn flow_stop(&mut self, f: u32) {
        if self.is_fluid(f) {
            return self.fluid_stop(f);
        }
        if self.ff.as_ref().is_some_and(|ff| ff.flow_is_frozen(f)) {
            self.thaw_flow(f);
        }
        let now = self.now;
        let flow = &mut self.nic.flows[f as usize];
        if flow.high_sent >= flow.size || !flow.started {
            return;
        }
        flow.size = flow.high_sent;
        if flow.scheduled && !flow.has_data_to_send() {
            self.unlist(f);
        }
        let flow = &mut self.nic.flows[f as usize];
        let path = self.topo.path(flow.src, flow.dst, flow.ecmp_key);
        flow.ideal_fct = crate::metrics::ideal_fct(
            &self.topo,
            &path,
            flow.full_size().max(1),
            self.params.mtu,
            self.params.base_header,
        );
        // What was sent may all have arrived, and been acknowledged, already.
        let flow = &mut self.nic.flows[f as usize];
        if flow.rcv_nxt >= flow.size && flow.finish.is_none() {
            flow.finish = Some(now);
            self.flow_delivered(f);
        }
        let flow = &mut self.nic.flows[f as usize];
        if flow.snd_una >= flow.size && flow.sender_done.is_none() {
            flow.sender_done = Some(now);
            self.work.flows_done += 1;
            self.nic.sack.release(f);
            self.release_connection_state(f);
            self.release_acked(f);
        }
    }

    /// Flow `f`'s sender is done: a connection that carried it alone sends no more, and its
    /// load balancing's state goes back (`entropy.rs`).
    #[inline]
    fn release_connection_state(&mut self, f: u32) {
        let flow = &self.nic.flows[f as usize];
        if !flow.shared {
            self.nic.entropy.release(flow.conn);
        }
    }

    /// Takes flow `f`, which has nothing left to send, off its host's list of queue pairs with
    /// data to send.
    pub(crate) fn unlist(&mut self, f: u32) {
        let flow = &mut self.nic.flows[f as usize];
        flow.scheduled = false;
        let host = flow.src;
        let (sched, pairs) = self.nic.scheduler(&self.params);
        sched.remove(host, f, &pairs);
        sched.settle(host);
    }

    /// Every byte of flow `f` has reached its receiver: start what waited for it.
    pub(crate) fn flow_delivered(&mut self, f: u32) {
        let flow = &self.nic.flows[f as usize];
        let (dst, seen, conn) = (flow.dst as usize, flow.seen, flow.conn as usize);
        let c = &mut self.nic.conns[conn];
        c.undelivered -= 1;
        if c.undelivered == 0 {
            self.nic.incoming_flows[dst] -= 1;
        }
        if seen {
            c.seen_undelivered -= 1;
            if c.seen_undelivered == 0 {
                self.nic.incoming_seen[dst] -= 1;
            }
        }
        self.release(f);
    }

    /// An ACK reached the sender.
    pub(crate) fn on_ack(&mut self, pkt: &Packet) {
        let now = self.now;
        let (f, ack_seq) = (pkt.flow, pkt.seq);
        let flow = &mut self.nic.flows[f as usize];
        if flow.sender_done.is_some() {
            self.net.int_pool.release(pkt.int);
            self.nic.sack.forget_ack_map(pkt); // a coalesced SACK's bitmap, if it carries one
            return;
        }
        let before = flow.in_flight();
        let newly = ack_seq.saturating_sub(flow.snd_una);
        // With selective recovery the algorithm hears of bytes acknowledged out of order when
        // their SACK comes, not again when the cumulative acknowledgement passes them.
        let acked = match self.params.recovery {
            Recovery::GoBackN => newly,
            Recovery::Selective => self.sack_ack(f, pkt),
        };
        let flow = &mut self.nic.flows[f as usize];
        let mut backoff_reset = false;
        if newly > 0 {
            flow.snd_una = ack_seq;
            flow.last_progress = now;
            self.work.progress_at = now;
            backoff_reset = flow.rto_backoff > 1;
            flow.rto_backoff = 1;
            if flow.snd_nxt < flow.snd_una {
                flow.snd_nxt = flow.snd_una; // an ACK overtook a go-back
            }
        }
        let rtt = now.saturating_sub(pkt.sent_at);
        if now >= self.params.warmup {
            self.observe.rtts.record(rtt.0);
        }
        self.track_in_flight(f, before);
        let flow = &self.nic.flows[f as usize];
        let ack = AckInfo {
            ack_seq: flow.seq_base + ack_seq,
            newly_acked: acked,
            ecn_echo: pkt.ecn,
            rtt,
            in_flight: self.window_in_flight(f),
            snd_nxt: flow.seq_base + flow.snd_nxt,
            int: self.net.int_pool.hops(pkt.int),
            pint: pkt.pint,
            feedback: pkt.feedback,
        };
        let done = flow.snd_una >= flow.size;
        let mut cx = CcContext::new(now);
        let cc = &mut self.nic.ccs[flow.conn as usize];
        cc.on_ack(&ack, &mut cx);
        if done {
            // The message's end is heard in the same instant: one context, applied once.
            cc.on_event(
                CcEvent::MessageDone(MessageDone { bytes: flow.full_size(), first_sent: flow.first_sent }),
                &mut cx,
            );
        }
        self.net.int_pool.release(pkt.int);
        self.apply_cc(f, &cx);
        if done {
            self.nic.flows[f as usize].sender_done = Some(now);
            self.work.flows_done += 1;
            self.nic.sack.release(f);
            self.release_connection_state(f);
            self.release_acked(f);
        } else if backoff_reset {
            self.arm_rto(f); // the deadline moved earlier
        }
        // The window may have opened: this flow's, or, when the last ACK of a message comes in,
        // that of the next message on its connection, which its bytes in flight held back.
        if !done || self.nic.flows[f as usize].shared {
            let port = self.topo.host_port(self.nic.flows[f as usize].src);
            self.kick(port);
        }
    }

    pub(crate) fn on_cnp(&mut self, f: u32) {
        self.nic.flows[f as usize].cnps += 1;
        if self.nic.flows[f as usize].sender_done.is_some() {
            return;
        }
        let mut cx = CcContext::new(self.now);
        self.nic.ccs[self.nic.flows[f as usize].conn as usize].on_event(CcEvent::Cnp, &mut cx);
        self.apply_cc(f, &cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(src: u32, dst: u32, start_us: u64, after: Vec<u32>) -> FlowDef {
        FlowDef {
            src,
            dst,
            size: 5_000,
            start: SimTime::from_us(start_us),
            collective: None,
            after,
            after_acked: Vec::new(),
            after_compute: Vec::new(),
            stop: None,
            connection: None,
            job: 0,
        }
    }

    #[test]
    fn flows_to_one_receiver_starting_together_form_a_group_and_waiting_flows_none() {
        let defs = [
            def(1, 0, 0, vec![]),
            def(2, 0, 0, vec![]),
            def(3, 0, 5, vec![]),  // later: a group of its own
            def(1, 4, 0, vec![]),  // another receiver
            def(2, 0, 0, vec![0]), // waits for flow 0
            def(3, 0, 0, vec![]),
        ];
        let deps = Dependencies::new(&defs, &[]);
        let own: Vec<u32> = (0..defs.len() as u32).collect();
        let (group, size) = start_groups(&defs, &deps, &own);
        assert_eq!(group, [0, 0, 1, 2, u32::MAX, 0]);
        assert_eq!(size, [3, 1, 1]);
        // Flows 0 and 5 on one connection: the group counts it once, at its first message.
        let (group, size) = start_groups(&defs, &deps, &[0, 1, 2, 3, 4, 0]);
        assert_eq!(group, [0, 0, 1, 2, u32::MAX, u32::MAX]);
        assert_eq!(size, [2, 1, 1]);
    }

    #[test]
    fn bytes_in_flight_leave_out_what_selective_recovery_holds_apart() {
        let mut f = Flow::new(0, &def(1, 0, 0, vec![]), 7, SimTime::ZERO, 3);
        assert!(f.has_data_to_send() && f.in_flight() == 0);
        (f.snd_una, f.snd_nxt) = (1_000, 5_000);
        assert_eq!(f.in_flight(), 4_000);
        f.not_in_flight = 1_000;
        assert_eq!(f.in_flight(), 3_000);
        f.snd_nxt = f.size;
        assert!(!f.has_data_to_send(), "everything handed to the NIC");
        f.rtx_pending = 1;
        assert!(f.has_data_to_send(), "but a packet declared lost is to be resent");
    }
}
