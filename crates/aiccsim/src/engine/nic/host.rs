//! A host's NIC: picks what goes on the wire next, and handles what arrives.
//!
//! Transmit order: PFC frames, then control packets (ACK, NACK, CNP), then data from the queue
//! pairs, round-robin among those allowed to send: data left, window open, and the pacer's
//! time reached (`pacing.rs`). When none is allowed yet the port wakes at the earliest pacer
//! time. The receive path accepts the next in-order packet and acknowledges it; a gap is
//! answered by loss recovery (`recovery.rs`).

use crate::cc::{CongestionControl, DataArrival, ReceiverCc, Telemetry};
use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use crate::time::SimTime;
use crate::wire::packet::{Packet, PacketKind, CONTROL_PRIORITY};

#[derive(Default)]
pub struct HostState {
    /// Queue pairs with data to send, in round-robin order.
    pub active: Vec<u32>,
    /// Index into `active` where the next round-robin search starts.
    pub rr: usize,
}

impl Simulation {
    /// The next packet host port `p` should send, if any.
    pub(crate) fn host_next_packet(&mut self, p: u32) -> Option<PacketId> {
        let host = self.ports[p as usize].node;
        let port = &mut self.ports[p as usize];
        if port.nonempty & (1 << CONTROL_PRIORITY) != 0 {
            return port.dequeue(&self.packets);
        }
        if port.paused & (1 << self.params.data_priority) != 0 {
            return None; // the RESUME will kick the port
        }
        self.next_data_packet(host)
    }

    /// Round-robin over the host's queue pairs; builds the data packet of the first that may send.
    fn next_data_packet(&mut self, host: u32) -> Option<PacketId> {
        let now = self.now;
        let h = &self.hosts[host as usize];
        let n = h.active.len();
        let mut earliest = SimTime::MAX;
        let mut chosen = None;
        for i in 0..n {
            let idx = (h.rr + i) % n;
            let f = h.active[idx];
            if !self.window_open(f) {
                continue; // an ACK will reopen it
            }
            let next = self.flows[f as usize].next_send;
            if next > now {
                earliest = earliest.min(next);
                continue;
            }
            chosen = Some(idx);
            break;
        }
        let Some(idx) = chosen else {
            if earliest < SimTime::MAX {
                let port = self.topo.host_port(host);
                self.wake_port(port, earliest);
            }
            return None;
        };
        let h = &mut self.hosts[host as usize];
        let f = h.active[idx];
        h.rr = idx + 1;
        let flow = &mut self.flows[f as usize];
        let payload = self.params.mtu.min(flow.size - flow.snd_nxt);
        let size = payload + self.params.header;
        let mut pkt = Packet::new(PacketKind::Data, flow.priority, size as u32);
        pkt.flow = f;
        pkt.ecmp_key = flow.ecmp_key;
        pkt.dst = flow.dst;
        pkt.seq = flow.snd_nxt;
        pkt.sent_at = now;
        match self.params.telemetry {
            Telemetry::None => {}
            // NVLink carries no RoCE telemetry (and its transfers run no congestion control).
            _ if flow.nvlink => {}
            Telemetry::Int { .. } => pkt.int = self.int_pool.alloc(),
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
        }
        let before = flow.in_flight();
        flow.snd_nxt += payload;
        flow.high_sent = flow.high_sent.max(flow.snd_nxt);
        let finished_sending = !flow.has_data_to_send();
        self.track_in_flight(f, before);
        self.pace_after(f, size);
        self.counters.data_packets_sent += 1;
        self.counters.data_bytes_sent += size;
        self.counters.data_payload_sent += payload;
        if finished_sending {
            self.flows[f as usize].scheduled = false;
            let h = &mut self.hosts[host as usize];
            h.active.remove(idx);
            if h.rr > idx {
                h.rr -= 1;
            }
        }
        if finished_sending && self.flows[f as usize].shared {
            self.pass_queue(f);
        }
        let h = &mut self.hosts[host as usize];
        if h.rr >= h.active.len() {
            h.rr = 0;
        }
        let mut cx = crate::cc::CcContext::new(now);
        self.ccs[self.flows[f as usize].conn as usize].on_send(size, &mut cx);
        self.apply_cc(f, &cx);
        self.arm_rto(f);
        Some(self.packets.alloc(pkt))
    }

    /// The window bounds the bytes in flight: a packet may leave while fewer than the window are
    /// outstanding (the HPCC ns-3 model's rule), so a window below one packet still lets one
    /// packet out when nothing is in flight.
    /// (Once per queue pair looked at per packet: `always`, because the compiler stopped inlining
    /// it once connections added their bytes in flight: S1 702.7 M instructions without, see
    /// BENCHMARKS.md.)
    #[inline(always)]
    pub(super) fn window_open(&self, f: u32) -> bool {
        match self.ccs[self.flows[f as usize].conn as usize].window() {
            Some(w) => self.window_in_flight(f) < w,
            None => true,
        }
    }

    /// Packet `id` arrived at host port `p`, which consumes it. (Its slot is freed first: an ACK
    /// sent for it reuses that slot, which is in cache.)
    pub(crate) fn host_receive(&mut self, p: u32, id: PacketId) {
        let pkt = self.packets.take(id);
        match pkt.kind {
            PacketKind::Data => self.receive_data(p, &pkt),
            PacketKind::Ack => {
                self.counters.acks += 1;
                if pkt.int != crate::wire::telemetry::NO_INT || pkt.pint != 0 || pkt.feedback != [0; 2] {
                    self.counters.feedback_acks += 1;
                }
                self.on_ack(&pkt)
            }
            PacketKind::Nack => {
                self.counters.nacks += 1;
                self.on_nack(pkt.flow, pkt.seq)
            }
            PacketKind::Cnp => self.on_cnp(pkt.flow),
            PacketKind::Pfc => unreachable!("PFC frames are handled at the port"),
        }
    }

    fn receive_data(&mut self, p: u32, pkt: &Packet) {
        let now = self.now;
        let f = pkt.flow;
        self.counters.data_bytes_received += pkt.size as u64;
        let (src, dst) = (self.flows[f as usize].src, pkt.dst);
        if pkt.size as u64 == self.params.mtu + self.params.header && now >= self.params.warmup {
            let idle_path = self.flows[f as usize].one_way_baseline;
            self.queuing.record((now - pkt.sent_at).saturating_sub(idle_path).0);
        }
        if !self.flows[f as usize].seen {
            self.flows[f as usize].seen = true;
            self.incoming_seen[dst as usize] += 1;
        }
        let action = self.receivers[self.flows[f as usize].conn as usize].on_data(&DataArrival {
            now,
            ecn_ce: pkt.ecn,
            bytes: pkt.size as u64,
            sent_at: pkt.sent_at,
            measured_delay: self.clocks.measured_delay(src, dst, pkt.sent_at, now),
            incoming_flows: self.incoming_flows[dst as usize],
            incoming_seen: self.incoming_seen[dst as usize],
        });
        self.flows[f as usize].ack_feedback = action.feedback;
        if action.send_cnp {
            self.counters.cnps += 1;
            self.send_control(p, PacketKind::Cnp, pkt, 0);
        }
        let ack_every = self.params.ack_every;
        let payload = pkt.size as u64 - self.params.header;
        let flow = &mut self.flows[f as usize];
        // The ACK this packet triggers, if any, as (cumulative seq, ECN echo).
        let mut ack = None;
        let mut newly_complete = false;
        if pkt.seq == flow.rcv_nxt {
            self.progress_at = now;
            self.bytes_delivered += payload;
            flow.rcv_nxt += payload;
            flow.acks_pending += 1;
            flow.ecn_pending |= pkt.ecn;
            flow.last_nack = None;
            let complete = flow.rcv_nxt == flow.size;
            newly_complete = complete && flow.finish.is_none();
            if newly_complete {
                flow.finish = Some(now);
            }
            if complete || flow.acks_pending >= ack_every {
                ack = Some((flow.rcv_nxt, flow.ecn_pending));
                flow.acks_pending = 0;
                flow.ecn_pending = false;
            }
        } else if pkt.seq > flow.rcv_nxt {
            self.answer_gap(p, pkt);
        } else {
            // A duplicate from a go-back: re-acknowledge so the sender catches up (always for the
            // flow's last packet, whose ACK may be what the sender lost).
            flow.acks_pending += 1;
            let last = pkt.seq + payload >= flow.size;
            if flow.acks_pending >= ack_every || last {
                flow.acks_pending = 0;
                ack = Some((flow.rcv_nxt, false));
            }
        }
        if newly_complete {
            self.flow_delivered(f);
        }
        match ack {
            Some((seq, ecn)) => {
                // The ACK echoes the packet's timestamp and telemetry (its INT slot moves over).
                let mut about = *pkt;
                about.ecn = ecn;
                self.send_control(p, PacketKind::Ack, &about, seq);
            }
            None => self.int_pool.release(pkt.int),
        }
    }

    /// Sends an ACK, NACK or CNP for data packet `about` back to its sender.
    pub(super) fn send_control(&mut self, p: u32, kind: PacketKind, about: &Packet, seq: u64) {
        let size = match kind {
            PacketKind::Cnp => self.params.cnp_size,
            PacketKind::Nack => self.params.nack_size,
            _ => self.params.ack_size,
        };
        let mut c = Packet::new(kind, CONTROL_PRIORITY, size);
        c.flow = about.flow;
        c.ecmp_key = about.ecmp_key;
        c.dst = self.flows[about.flow as usize].src;
        c.seq = seq;
        c.sent_at = about.sent_at;
        if kind == PacketKind::Ack {
            c.feedback = self.flows[about.flow as usize].ack_feedback;
            c.ecn = about.ecn;
            c.int = about.int;
            c.pint = about.pint;
        }
        let id = self.packets.alloc(c);
        let port = &mut self.ports[p as usize];
        if self.now >= port.busy_until && port.pfc_frames == 0 && port.nonempty & (1 << CONTROL_PRIORITY) == 0 {
            // The NIC is idle and no other control packet waits: this one would be picked at
            // once, so it goes straight to the wire.
            port.max_queued = port.max_queued.max(c.size as u64 + port.queued);
            self.start_tx(p, id);
        } else {
            port.enqueue(id, &c);
            self.kick(p);
        }
    }
}
