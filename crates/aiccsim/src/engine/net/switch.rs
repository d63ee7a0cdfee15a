//! A switch: the shared buffer a packet occupies from admission until it starts leaving.
//!
//! Buffer accounting follows the HPCC ns-3 switch MMU: a packet holds buffer from the moment it
//! is admitted until it starts leaving the egress port; the bytes are charged to the egress queue
//! (for ECN, `ecn.rs`) and to the ingress port and priority it came from (for PFC, `pfc.rs`).
//! The egress port is chosen on arrival (`routing.rs`); telemetry is stamped as the packet
//! leaves (`telemetry.rs`).

use super::pfc::total_headroom;
use crate::cc::Telemetry;
use crate::config::SwitchConfig;
use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use crate::metrics::trace::TraceEvent;
use crate::topology::Topology;
use crate::wire::packet::{PacketKind, CONTROL_PRIORITY};

pub struct SwitchState {
    /// Bytes of the shared buffer in use.
    pub used: u64,
    /// Bytes the buffer holds: a packet that would take `used` past it is dropped.
    pub capacity: u64,
    /// Buffer set aside as PFC headroom on all ports.
    pub reserved: u64,
    /// Largest `used` seen.
    pub max_used: u64,
    /// This switch sends PFC frames and marks ECN (`[switch]`); an NVSwitch does neither.
    pub pfc: bool,
    pub ecn: bool,
}

impl SwitchState {
    /// A fabric switch, as `[switch]` describes it.
    pub fn new(topo: &Topology, node: u32, sw: &SwitchConfig, max_packet: u64, pause_size: u64) -> Self {
        let reserved = total_headroom(topo, node, &sw.pfc, max_packet, pause_size).min(sw.buffer.0);
        SwitchState { used: 0, capacity: sw.buffer.0, reserved, max_used: 0, pfc: sw.pfc.enabled, ecn: sw.ecn.enabled }
    }

    /// A server's NVSwitch: NVLink's credit-based flow control never loses a packet, which we
    /// model as a buffer that never fills (senders on NVLink are held back by nothing else, so
    /// what queues here is what credits would have held in the GPUs); no PFC, no ECN.
    pub fn nvswitch() -> Self {
        SwitchState { used: 0, capacity: u64::MAX, reserved: 0, max_used: 0, pfc: false, ecn: false }
    }
}

impl Simulation {
    #[inline]
    pub(super) fn switch_index(&self, node: u32) -> usize {
        (node - self.topo.num_hosts) as usize
    }

    /// Packet `id` has fully arrived at switch port `in_port`.
    pub(crate) fn switch_receive(&mut self, in_port: u32, id: PacketId) {
        let node = self.ports[in_port as usize].node;
        let sw = self.switch_index(node);
        let pkt = &mut self.packets[id];
        pkt.ingress = in_port;
        let (size, prio, kind) = (pkt.size as u64, pkt.priority, pkt.kind);
        let (dst, ecmp_key) = (pkt.dst, pkt.ecmp_key);
        let out = self.route(node, sw, dst, ecmp_key);

        let s = &self.switches[sw];
        let (pfc, ecn) = (s.pfc, s.ecn);
        if s.used.saturating_add(size) > s.capacity {
            if self.tracer.is_some() {
                self.trace_packet(TraceEvent::Drop, out, id);
            }
            self.ports[out as usize].stats.drops += 1;
            self.counters.packets_dropped += 1;
            if kind == PacketKind::Data {
                self.counters.data_bytes_dropped += size;
            }
            let dropped = self.packets.take(id);
            self.int_pool.release(dropped.int);
            return;
        }
        let s = &mut self.switches[sw];
        s.used += size;
        s.max_used = s.max_used.max(s.used);
        if prio != CONTROL_PRIORITY {
            self.ports[in_port as usize].prio[prio as usize].ingress_bytes += size;
        }
        if ecn && !self.params.ecn_at_dequeue && kind == PacketKind::Data {
            self.maybe_mark(out, sw, id);
        }

        if pfc && prio != CONTROL_PRIORITY {
            self.pause_if_above_xoff(in_port, prio, sw);
        }
        let port = &mut self.ports[out as usize];
        let paused = port.paused & !(1 << CONTROL_PRIORITY) & (1 << prio) != 0;
        if self.now >= port.busy_until && port.nonempty == 0 && port.pfc_frames == 0 && !paused {
            // The egress port is idle with nothing queued: the packet would be dequeued at once,
            // so it goes straight to the wire (the same accounting, without a trip through the
            // queue's memory).
            port.max_queued = port.max_queued.max(size);
            self.leave_buffer(out, id);
            self.start_tx(out, id);
        } else {
            port.enqueue(id, &self.packets[id]);
            self.kick(out);
        }
    }

    /// Picks the next packet for switch port `p` and releases its buffer.
    pub(crate) fn switch_dequeue(&mut self, p: u32) -> Option<PacketId> {
        let id = self.ports[p as usize].dequeue(&self.packets)?;
        self.leave_buffer(p, id);
        Some(id)
    }

    /// Packet `id` leaves the buffer through egress port `p`: its bytes are released (maybe
    /// resuming the upstream), and it is marked and stamped as it goes.
    #[inline]
    fn leave_buffer(&mut self, p: u32, id: PacketId) {
        let pkt = &self.packets[id];
        let (prio, size, kind, ingress) = (pkt.priority, pkt.size as u64, pkt.kind, pkt.ingress);
        let sw = self.switch_index(self.ports[p as usize].node);
        let s = &mut self.switches[sw];
        s.used -= size;
        let (pfc, ecn) = (s.pfc, s.ecn);
        if prio != CONTROL_PRIORITY {
            let ing = ingress as usize;
            self.ports[ing].prio[prio as usize].ingress_bytes -= size;
            if pfc && self.ports[ing].pausing_peer & (1 << prio) != 0 {
                self.resume_if_below_xon(ing as u32, prio, sw);
            }
        }
        if ecn && self.params.ecn_at_dequeue && kind == PacketKind::Data {
            self.maybe_mark(p, sw, id);
        }
        if self.params.telemetry != Telemetry::None && kind == PacketKind::Data {
            self.stamp_telemetry(p, id);
        }
    }
}
