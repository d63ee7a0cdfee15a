//! A host's NIC: picks what goes on the wire next, and handles what arrives.
//!
//! Transmit order: PFC frames, then control packets (ACK, NACK, CNP), then data from the queue
//! pairs, round-robin among those allowed to send: data left, window open, and the pacer's
//! time reached (`pacing.rs`). When none is allowed yet the port wakes at the earliest pacer
//! time. What the receive path does with a data packet, and what it acknowledges, is the loss
//! recovery's (`go_back_n.rs`, `selective.rs`).

use crate::cc::{CongestionControl, DataArrival, ReceiverCc, Telemetry};
use crate::config::Recovery;
use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use crate::time::SimTime;
use crate::wire::packet::{Packet, PacketKind, CONTROL_PRIORITY};

/// A selective block: start (packets past the cumulative acknowledgement) and length.
pub(super) type Block = (u16, u16);
pub(super) const NO_BLOCK: Block = (0, 0);

/// The ACK a data packet triggers: the cumulative bytes received in order, the ECN echo, and
/// (selective recovery) the block it acknowledges out of order.
pub(super) struct Reply {
    pub seq: u64,
    pub ecn: bool,
    pub block: Block,
}

#[derive(Default)]
pub struct HostState {
    /// Queue pairs with data to send, in round-robin order.
    pub active: Vec<u32>,
    /// Index into `active` where the next round-robin search starts.
    pub rr: usize,
}

/// The NIC scheduler's pick among a host's queue pairs with data (`active`, in round-robin
/// order, the turn at `rr`): the first from the turn on that may send at `now`, by its place in
/// `active`; or, if none may, the earliest time one may (`SimTime::MAX`: none can until an ACK
/// opens a window). `pacer(f)` is flow f's pacer time, `None` while its window is closed.
#[inline(always)]
pub(crate) fn pick(
    active: &[u32],
    rr: usize,
    now: SimTime,
    pacer: impl Fn(u32) -> Option<SimTime>,
) -> Result<usize, SimTime> {
    let n = active.len();
    let mut earliest = SimTime::MAX;
    for i in 0..n {
        let idx = (rr + i) % n;
        let Some(next) = pacer(active[idx]) else { continue };
        if next > now {
            earliest = earliest.min(next);
            continue;
        }
        return Ok(idx);
    }
    Err(earliest)
}

impl Simulation {
    /// The next packet host port `p` should send, if any.
    pub(crate) fn host_next_packet(&mut self, p: u32) -> Option<PacketId> {
        let host = self.net.ports[p as usize].node;
        let port = &mut self.net.ports[p as usize];
        if port.nonempty & (1 << CONTROL_PRIORITY) != 0 {
            return port.dequeue(&self.net.packets);
        }
        if port.paused & (1 << self.params.data_priority) != 0 {
            return None; // the RESUME will kick the port
        }
        if port.nonempty != 0 {
            return port.dequeue(&self.net.packets); // an RTT probe, at the data priority
        }
        self.next_data_packet(host)
    }

    /// Round-robin over the host's queue pairs; builds the data packet of the first that may send.
    fn next_data_packet(&mut self, host: u32) -> Option<PacketId> {
        let now = self.now;
        let h = &self.nic.hosts[host as usize];
        // (A closed window is passed over: an ACK will reopen it.)
        let pacer = |f: u32| self.window_open(f).then(|| self.nic.flows[f as usize].next_send);
        let idx = match pick(&h.active, h.rr, now, pacer) {
            Ok(idx) => idx,
            Err(earliest) => {
                if earliest < SimTime::MAX {
                    let port = self.topo.host_port(host);
                    self.wake_port(port, earliest);
                }
                return None;
            }
        };
        let h = &mut self.nic.hosts[host as usize];
        let f = h.active[idx];
        h.rr = idx + 1;
        // Selective recovery resends what was declared lost before it sends anything new.
        let resend = self.nic.flows[f as usize].rtx_pending > 0;
        let seq = if resend { self.take_lost(f) } else { self.nic.flows[f as usize].snd_nxt };
        let flow = &mut self.nic.flows[f as usize];
        let payload = self.params.mtu.min(flow.size - seq);
        let size = payload + self.params.header;
        let mut pkt = Packet::new(PacketKind::Data, flow.priority, size as u32);
        pkt.flow = f;
        pkt.ecmp_key = flow.ecmp_key;
        pkt.dst = flow.dst;
        pkt.seq = seq;
        pkt.sent_at = now;
        match self.params.telemetry {
            Telemetry::None => {}
            // NVLink carries no RoCE telemetry (and its transfers run no congestion control).
            _ if flow.nvlink => {}
            Telemetry::Int { .. } => pkt.int = self.net.int_pool.alloc(),
            Telemetry::Pint { fraction, .. } => {
                // PINT's global hash: whether a packet carries the query depends only on the
                // packet, so a retransmission carries it again.
                let h = crate::rng::mix64(flow.ecmp_key ^ pkt.seq.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                if ((h >> 11) as f64) < fraction * (1u64 << 53) as f64 {
                    pkt.pint = 1; // code 0: the lowest utilisation; switches raise it
                }
            }
        }
        if flow.snd_una == flow.snd_nxt {
            flow.last_progress = now; // nothing was outstanding: the timeout clock starts now
            if flow.high_sent == 0 {
                flow.first_sent = now;
            }
        }
        let before = flow.in_flight();
        if resend {
            flow.not_in_flight -= payload; // back in the network
            flow.retransmitted_bytes += payload;
            self.observe.counters.retransmitted_bytes += payload;
        } else {
            flow.snd_nxt += payload;
            flow.high_sent = flow.high_sent.max(flow.snd_nxt);
        }
        let finished_sending = !flow.has_data_to_send();
        // The last new byte went out (once with selective recovery, which never goes back).
        let handed_last = !resend && flow.snd_nxt >= flow.size;
        self.track_in_flight(f, before);
        self.pace_after(f, size);
        self.observe.counters.data_packets_sent += 1;
        self.observe.counters.data_bytes_sent += size;
        self.observe.counters.data_payload_sent += payload;
        if finished_sending {
            self.nic.flows[f as usize].scheduled = false;
            let h = &mut self.nic.hosts[host as usize];
            h.active.remove(idx);
            if h.rr > idx {
                h.rr -= 1;
            }
        }
        if handed_last && self.nic.flows[f as usize].shared {
            self.pass_queue(f);
        }
        let h = &mut self.nic.hosts[host as usize];
        if h.rr >= h.active.len() {
            h.rr = 0;
        }
        let mut cx = crate::cc::CcContext::new(now);
        self.nic.ccs[self.nic.flows[f as usize].conn as usize].on_send(size, &mut cx);
        self.apply_cc(f, &cx);
        self.arm_rto(f);
        Some(self.net.packets.alloc(pkt))
    }

    /// The window bounds the bytes in flight: a packet may leave while fewer than the window are
    /// outstanding (the HPCC ns-3 model's rule), so a window below one packet still lets one
    /// packet out when nothing is in flight.
    /// (Once per queue pair looked at per packet: `always`, because the compiler stopped inlining
    /// it once connections added their bytes in flight: S1 702.7 M instructions without, see
    /// BENCHMARKS.md.)
    /// Selective recovery sends nothing new past what the receiver's bitmap can hold
    /// (`Params::track_bytes`), but may resend.
    #[inline(always)]
    pub(super) fn window_open(&self, f: u32) -> bool {
        let flow = &self.nic.flows[f as usize];
        if self.params.recovery == Recovery::Selective
            && flow.rtx_pending == 0
            && flow.snd_nxt - flow.snd_una >= self.params.track_bytes
        {
            return false;
        }
        match self.nic.ccs[flow.conn as usize].window() {
            Some(w) => self.window_in_flight(f) < w,
            None => true,
        }
    }

    /// Packet `id` arrived at host port `p`, which consumes it. (Its slot is freed first: an ACK
    /// sent for it reuses that slot, which is in cache.)
    pub(crate) fn host_receive(&mut self, p: u32, id: PacketId) {
        let pkt = self.net.packets.take(id);
        match pkt.kind {
            PacketKind::Data => self.receive_data(p, &pkt),
            PacketKind::Ack => {
                self.observe.counters.acks += 1;
                if pkt.int != crate::wire::telemetry::NO_INT || pkt.pint != 0 || pkt.feedback != [0; 2] {
                    self.observe.counters.feedback_acks += 1;
                }
                self.on_ack(&pkt)
            }
            PacketKind::Nack => {
                self.observe.counters.nacks += 1;
                self.on_nack(&pkt)
            }
            PacketKind::Cnp => self.on_cnp(pkt.flow),
            PacketKind::Probe => self.probe_received(p, &pkt),
            PacketKind::ProbeReply => self.probe_answered(&pkt),
            PacketKind::Pfc => unreachable!("PFC frames are handled at the port"),
        }
    }

    fn receive_data(&mut self, p: u32, pkt: &Packet) {
        if !self.nic.losses.is_empty() && self.lose(p, pkt) {
            return;
        }
        let now = self.now;
        let f = pkt.flow;
        self.observe.counters.data_bytes_received += pkt.size as u64;
        let (src, dst) = (self.nic.flows[f as usize].src, pkt.dst);
        if pkt.size as u64 == self.params.mtu + self.params.header && now >= self.params.warmup {
            let idle_path = self.nic.flows[f as usize].one_way_baseline;
            self.observe.queuing.record((now - pkt.sent_at).saturating_sub(idle_path).0);
        }
        if !self.nic.flows[f as usize].seen {
            self.nic.flows[f as usize].seen = true;
            self.nic.incoming_seen[dst as usize] += 1;
        }
        let action = self.nic.receivers[self.nic.flows[f as usize].conn as usize].on_data(&DataArrival {
            now,
            ecn_ce: pkt.ecn,
            bytes: pkt.size as u64,
            sent_at: pkt.sent_at,
            measured_delay: self.nic.clocks.measured_delay(src, dst, pkt.sent_at, now),
            incoming_flows: self.nic.incoming_flows[dst as usize],
            incoming_seen: self.nic.incoming_seen[dst as usize],
        });
        self.nic.flows[f as usize].ack_feedback = action.feedback;
        if action.send_cnp {
            self.observe.counters.cnps += 1;
            self.send_control(p, PacketKind::Cnp, pkt, 0);
        }
        let payload = pkt.size as u64 - self.params.header;
        let (ack, newly_complete) = match self.params.recovery {
            Recovery::GoBackN => self.go_back_n_receive(p, pkt, payload),
            Recovery::Selective => self.selective_receive(p, pkt, payload),
        };
        if newly_complete {
            self.flow_delivered(f);
        }
        match ack {
            Some(reply) => {
                // The ACK echoes the packet's timestamp and telemetry (its INT slot moves over).
                let mut about = *pkt;
                about.ecn = reply.ecn;
                self.send_control_block(p, PacketKind::Ack, &about, reply.seq, reply.block);
            }
            None => self.net.int_pool.release(pkt.int),
        }
    }

    /// Sends an ACK, NACK or CNP for data packet `about` back to its sender.
    pub(super) fn send_control(&mut self, p: u32, kind: PacketKind, about: &Packet, seq: u64) {
        self.send_control_block(p, kind, about, seq, NO_BLOCK);
    }

    /// [`Simulation::send_control`], for an ACK or NACK carrying a selective block (start,
    /// length: `Packet::block_start`). (Inlined, as the receive path's ACK was before blocks:
    /// out of line, its idle-port test mispredicted more and S1 ran 4% longer.)
    #[inline(always)]
    pub(super) fn send_control_block(&mut self, p: u32, kind: PacketKind, about: &Packet, seq: u64, block: Block) {
        let size = match kind {
            PacketKind::Cnp => self.params.cnp_size,
            PacketKind::Nack => self.params.nack_size,
            _ => self.params.ack_size,
        };
        let mut c = Packet::new(kind, CONTROL_PRIORITY, size);
        c.flow = about.flow;
        c.ecmp_key = about.ecmp_key;
        c.dst = self.nic.flows[about.flow as usize].src;
        c.seq = seq;
        (c.block_start, c.block_len) = block;
        c.sent_at = about.sent_at;
        if kind == PacketKind::Ack {
            c.feedback = self.nic.flows[about.flow as usize].ack_feedback;
            c.ecn = about.ecn;
            c.int = about.int;
            c.pint = about.pint;
        }
        self.put_control(p, c);
    }

    /// Control packet `c` leaves host port `p`: if the NIC is idle and no other control packet
    /// waits, it would be picked at once, so it goes straight to the wire; else it queues behind
    /// them.
    #[inline(always)]
    pub(super) fn put_control(&mut self, p: u32, c: Packet) {
        let id = self.net.packets.alloc(c);
        let port = &mut self.net.ports[p as usize];
        if self.now >= port.busy_until && port.pfc_frames == 0 && port.nonempty & (1 << CONTROL_PRIORITY) == 0 {
            port.max_queued = port.max_queued.max(c.size as u64 + port.queued);
            self.start_tx(p, id);
        } else {
            port.enqueue(id, &c);
            self.kick(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pacer times by flow id; `None`: window closed.
    fn pacers(t: &[Option<u64>]) -> impl Fn(u32) -> Option<SimTime> + '_ {
        |f| t[f as usize].map(SimTime::from_ns)
    }

    #[test]
    fn the_first_ready_queue_pair_from_the_turn_on_sends() {
        let t = [Some(0), Some(5), Some(0), Some(0)];
        let active = [0, 1, 2, 3];
        let now = SimTime::from_ns(1);
        assert_eq!(pick(&active, 0, now, pacers(&t)), Ok(0));
        assert_eq!(pick(&active, 1, now, pacers(&t)), Ok(2), "1 waits on its pacer");
        assert_eq!(pick(&active, 3, now, pacers(&t)), Ok(3));
        assert_eq!(pick(&[3, 1], 1, now, pacers(&t)), Ok(0), "the turn wraps around: flow 3");
    }

    #[test]
    fn a_closed_window_is_passed_over_and_no_one_ready_gives_the_earliest_pacer() {
        let t = [None, Some(50), Some(20), None];
        let active = [0, 1, 2, 3];
        assert_eq!(pick(&active, 0, SimTime::from_ns(10), pacers(&t)), Err(SimTime::from_ns(20)));
        assert_eq!(pick(&active, 2, SimTime::from_ns(20), pacers(&t)), Ok(2), "due exactly now");
        assert_eq!(pick(&[0, 3], 0, SimTime::ZERO, pacers(&t)), Err(SimTime::MAX), "all windows closed");
        assert_eq!(pick(&[], 0, SimTime::ZERO, pacers(&t)), Err(SimTime::MAX));
    }

    #[test]
    fn every_ready_queue_pair_gets_its_turn_in_order() {
        // Turns advance past the one that sent, as the scheduler advances `rr`.
        let t = [Some(0); 5];
        let active = [4, 0, 3, 1, 2];
        let mut rr = 0;
        let mut order = Vec::new();
        for _ in 0..10 {
            let idx = pick(&active, rr, SimTime::ZERO, pacers(&t)).unwrap();
            order.push(active[idx]);
            rr = (idx + 1) % active.len();
        }
        assert_eq!(order, [4, 0, 3, 1, 2, 4, 0, 3, 1, 2]);
    }
}
