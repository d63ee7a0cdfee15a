//! A host's NIC: picks what goes on the wire next, and handles what arrives.
//!
//! Transmit order: PFC frames, then control packets (ACK, NACK, CNP), then data from the queue
//! pairs, round-robin among those allowed to send: data left, window open, and the pacer's
//! time reached (`pacing.rs`). When none is allowed yet the port wakes at the earliest pacer
//! time. The choice is `scheduler.rs`'s, in O(log n) of the host's queue pairs. What the receive path does with a data packet, and what it acknowledges, is the loss
//! recovery's (`go_back_n.rs`, `selective.rs`); a trimmed packet's too (`selective.rs`).

use super::connection::Connection;
use super::qp::Flow;
use super::scheduler::{QueuePairs, Scheduler};
use super::Nics;
use crate::cc::{Cc, CongestionControl, DataArrival, Receiver, ReceiverCc, Telemetry};
use crate::config::{LoadBalancing, Recovery};
use crate::engine::net::pool::PacketId;
use crate::engine::{Params, Simulation};
use crate::time::SimTime;
use crate::wire::packet::{Packet, PacketKind, CONTROL_PRIORITY};

/// A selective block: start (packets past the cumulative acknowledgement) and length.
pub(super) type Block = (u16, u16);
pub(super) const NO_BLOCK: Block = (0, 0);

/// The ACK a data packet triggers: the cumulative bytes received in order, the ECN echo, and
/// (selective recovery) the block it acknowledges out of order, or (coalesced SACKs,
/// `nic.ack_out_of_order`) the index of a copy of the receiver's bitmap of the packets it holds
/// (`NO_SACK`: none).
pub(super) struct Reply {
    pub seq: u64,
    pub ecn: bool,
    pub block: Block,
    pub sack: u32,
}

/// The queue pairs as the scheduler reads them: pacer times, windows, connections.
pub(super) struct Pairs<'a> {
    params: &'a Params,
    flows: &'a [Flow],
    ccs: &'a [Cc],
    conns: &'a [Connection],
}

impl QueuePairs for Pairs<'_> {
    #[inline(always)]
    fn next_send(&self, f: u32) -> SimTime {
        self.flows[f as usize].next_send
    }

    /// The window bounds the bytes in flight: a packet may leave while fewer than the window
    /// are outstanding (the HPCC ns-3 model's rule), so a window below one packet still lets
    /// one packet out when nothing is in flight. The bytes in flight are the connection's
    /// (`connection.rs`).
    /// (`always`: the compiler stopped inlining it once connections added their bytes in
    /// flight, when it ran once per queue pair looked at per packet: S1 702.7 M instructions
    /// without, see BENCHMARKS.md.)
    /// Selective recovery sends nothing new past what the receiver's bitmap can hold
    /// (`Params::track_bytes`), but may resend.
    #[inline(always)]
    fn window_open(&self, f: u32) -> bool {
        let flow = &self.flows[f as usize];
        if self.params.recovery == Recovery::Selective
            && flow.rtx_pending == 0
            && flow.snd_nxt - flow.snd_una >= self.params.track_bytes
        {
            return false;
        }
        match self.ccs[flow.conn as usize].window() {
            Some(w) => {
                let in_flight = if flow.shared { self.conns[flow.conn as usize].in_flight } else { flow.in_flight() };
                in_flight < w
            }
            None => true,
        }
    }

    #[inline(always)]
    fn conn(&self, f: u32) -> u32 {
        self.flows[f as usize].conn
    }
}

impl Nics {
    /// The scheduler, and the queue pairs as it reads them.
    #[inline(always)]
    pub(super) fn scheduler<'a>(&'a mut self, params: &'a Params) -> (&'a mut Scheduler, Pairs<'a>) {
        (&mut self.sched, Pairs { params, flows: &self.flows, ccs: &self.ccs, conns: &self.conns })
    }
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

    /// Round-robin over the host's queue pairs (`scheduler.rs`); builds the data packet of the
    /// first that may send.
    fn next_data_packet(&mut self, host: u32) -> Option<PacketId> {
        let now = self.now;
        let (sched, pairs) = self.nic.scheduler(&self.params);
        let f = match sched.pick(host, now, &pairs) {
            Ok(f) => f,
            Err(earliest) => {
                if earliest < SimTime::MAX {
                    let port = self.topo.host_port(host);
                    self.wake_port(port, earliest);
                }
                return None;
            }
        };
        // Selective recovery resends what was declared lost before it sends anything new.
        let resend = self.nic.flows[f as usize].rtx_pending > 0;
        let seq = if resend { self.take_lost(f) } else { self.nic.flows[f as usize].snd_nxt };
        // The entropy switches hash (`entropy.rs`): the connection's own, or one per packet.
        let ecmp_key = match self.params.load_balancing {
            LoadBalancing::Flow => self.nic.flows[f as usize].ecmp_key,
            _ => self.next_entropy(f),
        };
        let flow = &mut self.nic.flows[f as usize];
        let payload = self.params.mtu.min(flow.size - seq);
        let size = payload + self.params.header;
        let mut pkt = Packet::new(PacketKind::Data, flow.priority, size as u32);
        pkt.flow = f;
        pkt.ecmp_key = ecmp_key;
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
            let (sched, pairs) = self.nic.scheduler(&self.params);
            sched.remove(host, f, &pairs);
        }
        if handed_last && self.nic.flows[f as usize].shared {
            self.pass_queue(f);
        }
        // The turn goes back to the first queue pair only now, after the next message of the
        // connection was listed: that one, listed last, comes next if the flow that sent was
        // the last in the order.
        self.nic.sched.settle(host);
        // (`apply_cc` tells the scheduler of the flow's new pacer time.)
        let mut cx = crate::cc::CcContext::new(now);
        self.nic.ccs[self.nic.flows[f as usize].conn as usize].on_send(size, &mut cx);
        self.apply_cc(f, &cx);
        self.arm_rto(f);
        if self.params.ack_request {
            pkt.flag = resend || handed_last || self.window_full(f);
        }
        Some(self.net.packets.alloc(pkt))
    }

    /// Flow `f` may send nothing more until an ACK comes: its window is full. The sender asks
    /// for an ACK at once on the packet that fills it (`nic.ack_request`; uet-htsim
    /// `UecSrc::sendNewPacket` sets AR when `_in_flight + full_pkt_size >= _cwnd`, its credit
    /// is spent, or its backlog is).
    fn window_full(&self, f: u32) -> bool {
        let flow = &self.nic.flows[f as usize];
        self.nic.ccs[flow.conn as usize].window().is_some_and(|w| {
            let in_flight = if flow.shared { self.nic.conns[flow.conn as usize].in_flight } else { flow.in_flight() };
            in_flight >= w
        })
    }

    /// Packet `id` arrived at host port `p`, which consumes it. (Its slot is freed first: an ACK
    /// sent for it reuses that slot, which is in cache.)
    pub(crate) fn host_receive(&mut self, p: u32, id: PacketId) {
        let pkt = self.net.packets.take(id);
        match pkt.kind {
            PacketKind::Data => self.receive_data(p, &pkt),
            PacketKind::Ack => {
                self.observe.counters.acks += 1;
                let flow = &mut self.nic.flows[pkt.flow as usize];
                flow.acks = flow.acks.wrapping_add(1);
                if pkt.int != crate::wire::telemetry::NO_INT || pkt.pint != 0 || pkt.feedback != [0; 2] {
                    self.observe.counters.feedback_acks += 1;
                    flow.feedback_acks = flow.feedback_acks.wrapping_add(1);
                }
                if self.params.load_balancing == LoadBalancing::Reps {
                    self.reps_ack(&pkt);
                }
                self.on_ack(&pkt)
            }
            PacketKind::Nack => {
                self.observe.counters.nacks += 1;
                self.nic.flows[pkt.flow as usize].nacks += 1;
                self.on_nack(&pkt)
            }
            PacketKind::Cnp => self.on_cnp(pkt.flow),
            PacketKind::Probe => self.probe_received(p, &pkt),
            PacketKind::ProbeReply => self.probe_answered(&pkt),
            PacketKind::Trimmed => self.trimmed_received(p, &pkt),
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
            // A connection's next message can arrive before its last one is whole: the
            // receiver counts the connection once, as the controller's count does.
            let c = &mut self.nic.conns[self.nic.flows[f as usize].conn as usize];
            c.seen_undelivered += 1;
            if c.seen_undelivered == 1 {
                self.nic.incoming_seen[dst as usize] += 1;
            }
        }
        let receiver = &mut self.nic.receivers[self.nic.flows[f as usize].conn as usize];
        // Receiver credit (RCCC, NSCC's `receiver_credit`) travels on ACKs here, standing in for
        // the reference's pull packets, which its pacer sends whatever the ACKs do: so each data
        // packet's grant goes back at once. Held for `nic.ack_every` packets, a sender whose
        // speculation ended with fewer in flight would wait, without credit, for ACKs that only
        // more of its packets could bring, until its timeout.
        let credit = matches!(receiver, Receiver::Rccc(_));
        let action = receiver.on_data(&DataArrival {
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
            Recovery::GoBackN => self.go_back_n_receive(p, pkt, payload, credit),
            Recovery::Selective => self.selective_receive(p, pkt, payload, credit),
        };
        if newly_complete {
            self.flow_delivered(f);
        }
        match ack {
            Some(reply) => {
                // The ACK echoes the packet's timestamp and telemetry (its INT slot moves over).
                let mut about = *pkt;
                about.ecn = reply.ecn;
                if reply.sack != super::selective::NO_SACK {
                    self.send_sack_bitmap(p, &about, reply.seq, reply.sack);
                } else {
                    self.send_control_block(p, PacketKind::Ack, &about, reply.seq, reply.block);
                }
            }
            None => self.net.int_pool.release(pkt.int),
        }
    }

    /// Sends an ACK, NACK or CNP for data packet `about` (or trimmed packet: its NACK says so)
    /// back to its sender.
    pub(super) fn send_control(&mut self, p: u32, kind: PacketKind, about: &Packet, seq: u64) {
        self.send_control_block(p, kind, about, seq, NO_BLOCK);
    }

    /// [`Simulation::send_control`], for an ACK or NACK carrying a selective block (start,
    /// length: `Packet::block_start`). (Inlined, as the receive path's ACK was before blocks:
    /// out of line, its idle-port test mispredicted more and S1 ran 4% longer.)
    #[inline(always)]
    pub(super) fn send_control_block(&mut self, p: u32, kind: PacketKind, about: &Packet, seq: u64, block: Block) {
        let c = self.control_packet(kind, about, seq, block);
        self.put_control(p, c);
    }

    /// The ACK, NACK or CNP for data packet `about` that [`Simulation::send_control_block`]
    /// sends.
    #[inline(always)]
    pub(super) fn control_packet(&self, kind: PacketKind, about: &Packet, seq: u64, block: Block) -> Packet {
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
        } else if kind == PacketKind::Nack {
            c.ecn = about.kind == PacketKind::Trimmed;
            c.flag = c.ecn && about.flag; // trimmed at the last hop
        }
        c
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
