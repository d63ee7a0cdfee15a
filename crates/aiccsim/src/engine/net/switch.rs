//! A switch: the shared buffer a packet occupies from admission until it starts leaving.
//!
//! Buffer accounting follows the HPCC ns-3 switch MMU: a packet holds buffer from the moment it
//! is admitted until it starts leaving the egress port; the bytes are charged to the egress queue
//! (for ECN, `ecn.rs`) and to the ingress port and priority it came from, in one of three pools
//! (`buffer.rs`; for PFC, `pfc.rs`). Without PFC an egress queue may be limited to a fraction of
//! the free buffer (`switch.egress_alpha`, drop-tail).
//! The egress port is chosen on arrival (`routing.rs`); telemetry is stamped as the packet
//! leaves (`telemetry.rs`).

use super::buffer::Pools;
use super::port::Port;
use crate::cc::Telemetry;
use crate::config::{Routing, SwitchConfig};
use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use crate::metrics::trace::TraceEvent;
use crate::topology::Topology;
use crate::wire::packet::{PacketKind, CONTROL_PRIORITY};

pub struct SwitchState {
    /// The buffer's pools and what is in use in each.
    pub pools: Pools,
    /// Largest `pools.used` seen.
    pub max_used: u64,
    /// Most bytes one ingress port and priority held in its headroom.
    pub max_headroom: u64,
    /// Bytes reserved per ingress port and priority (0 without PFC).
    pub reserve: u64,
    /// This switch sends PFC frames and marks ECN (`[switch]`); an NVSwitch does neither.
    pub pfc: bool,
    pub ecn: bool,
    /// How it picks among equal-cost next hops (its tier's `switch.routing`).
    pub routing: Routing,
}

impl SwitchState {
    /// A fabric switch, as `[switch]` describes it, with its `ports` (their headrooms set),
    /// routing as `routing` says.
    pub fn new(topo: &Topology, node: u32, sw: &SwitchConfig, ports: &[Port], routing: Routing) -> Self {
        let own = &topo.node_ports[node as usize];
        let reserve = if sw.pfc.enabled { sw.pfc.reserve.0 } else { 0 };
        let headroom = own.iter().map(|&p| ports[p as usize].headroom).sum();
        let pools = Pools::new(sw.buffer.0, reserve.saturating_mul(own.len() as u64), headroom);
        SwitchState { pools, max_used: 0, max_headroom: 0, reserve, pfc: sw.pfc.enabled, ecn: sw.ecn.enabled, routing }
    }

    /// A server's NVSwitch: NVLink's credit-based flow control never loses a packet, which we
    /// model as a buffer that never fills (senders on NVLink are held back by nothing else, so
    /// what queues here is what credits would have held in the GPUs); no PFC, no ECN.
    pub fn nvswitch() -> Self {
        let pools = Pools::new(u64::MAX, 0, 0);
        SwitchState { pools, max_used: 0, max_headroom: 0, reserve: 0, pfc: false, ecn: false, routing: Routing::Ecmp }
    }
}

impl Simulation {
    #[inline]
    pub(super) fn switch_index(&self, node: u32) -> usize {
        (node - self.topo.num_hosts) as usize
    }

    /// Packet `id` has fully arrived at switch port `in_port`.
    pub(crate) fn switch_receive(&mut self, in_port: u32, id: PacketId) {
        let node = self.net.ports[in_port as usize].node;
        let sw = self.switch_index(node);
        let pkt = &mut self.net.packets[id];
        pkt.ingress = in_port;
        let (size, prio, kind) = (pkt.size as u64, pkt.priority, pkt.kind);
        let (dst, ecmp_key) = (pkt.dst, pkt.ecmp_key);
        let out = self.route(node, sw, dst, ecmp_key);

        let (pfc, ecn) = (self.net.switches[sw].pfc, self.net.switches[sw].ecn);
        if !self.admit(sw, in_port, out, prio, size) {
            if self.observe.tracer.is_some() {
                self.trace_packet(TraceEvent::Drop, out, id);
            }
            self.net.ports[out as usize].stats.drops += 1;
            self.observe.counters.packets_dropped += 1;
            if kind == PacketKind::Data {
                self.observe.counters.data_bytes_dropped += size;
            }
            let dropped = self.net.packets.take(id);
            self.net.int_pool.release(dropped.int);
            return;
        }
        if ecn && !self.params.ecn_at_dequeue && kind == PacketKind::Data {
            self.maybe_mark(out, sw, id);
        }

        if pfc && prio != CONTROL_PRIORITY {
            self.pause_if_above_xoff(in_port, prio, sw);
        }
        let port = &mut self.net.ports[out as usize];
        let paused = port.paused & !(1 << CONTROL_PRIORITY) & (1 << prio) != 0;
        if self.now >= port.busy_until && port.nonempty == 0 && port.pfc_frames == 0 && !paused {
            // The egress port is idle with nothing queued: the packet would be dequeued at once,
            // so it goes straight to the wire (the same accounting, without a trip through the
            // queue's memory).
            port.max_queued = port.max_queued.max(size);
            self.leave_buffer(out, id);
            self.start_tx(out, id);
        } else {
            port.enqueue(id, &self.net.packets[id]);
            self.kick(out);
        }
    }

    /// Packet `id` is lost at port `p` (a full buffer, a failed link): counted there and in the
    /// run's totals, and taken out of the network.
    #[cold]
    #[inline(never)]
    pub(crate) fn drop_packet(&mut self, p: u32, id: PacketId) {
        if self.observe.tracer.is_some() {
            self.trace_packet(TraceEvent::Drop, p, id);
        }
        let (kind, size) = (self.net.packets[id].kind, self.net.packets[id].size as u64);
        self.net.ports[p as usize].stats.drops += 1;
        self.observe.counters.packets_dropped += 1;
        if kind == PacketKind::Data {
            self.observe.counters.data_bytes_dropped += size;
        }
        let dropped = self.net.packets.take(id);
        self.net.int_pool.release(dropped.int);
    }

    /// Charges a packet of `size` bytes from `in_port` at `prio`, bound for egress `out`, to the
    /// switch's buffer; false if it has no room there (the packet is dropped).
    #[inline]
    fn admit(&mut self, sw: usize, in_port: u32, out: u32, prio: u8, size: u64) -> bool {
        let s = &mut self.net.switches[sw];
        if !s.pfc {
            // Drop-tail: the buffer, and the egress queue's share of its free part.
            if let Some(alpha) = self.params.egress_alpha {
                let free = s.pools.capacity.saturating_sub(s.pools.used);
                if self.net.ports[out as usize].prio[prio as usize].bytes + size > (free as f64 * alpha) as u64 {
                    return false;
                }
            }
        }
        let admitted = if prio == CONTROL_PRIORITY {
            s.pools.admit_unowned(size)
        } else {
            let port = &mut self.net.ports[in_port as usize];
            let paused = port.pausing_peer & (1 << prio) != 0;
            let (headroom, ingress) = (port.headroom, &mut port.prio[prio as usize].ingress);
            let ok = ingress.admit(size, s.reserve, headroom, paused, &mut s.pools);
            if paused {
                s.max_headroom = s.max_headroom.max(ingress.headroom);
            }
            ok
        };
        s.max_used = s.max_used.max(s.pools.used);
        admitted
    }

    /// Picks the next packet for switch port `p` and releases its buffer.
    pub(crate) fn switch_dequeue(&mut self, p: u32) -> Option<PacketId> {
        let id = self.net.ports[p as usize].dequeue(&self.net.packets)?;
        self.leave_buffer(p, id);
        Some(id)
    }

    /// Packet `id` leaves the buffer through egress port `p`: its bytes are released (maybe
    /// resuming the upstream), and it is marked and stamped as it goes.
    #[inline]
    fn leave_buffer(&mut self, p: u32, id: PacketId) {
        let pkt = &self.net.packets[id];
        let (prio, size, kind, ingress) = (pkt.priority, pkt.size as u64, pkt.kind, pkt.ingress);
        let sw = self.switch_index(self.net.ports[p as usize].node);
        let s = &mut self.net.switches[sw];
        let (pfc, ecn) = (s.pfc, s.ecn);
        if prio == CONTROL_PRIORITY {
            s.pools.release_unowned(size);
        } else {
            let ing = ingress as usize;
            self.net.ports[ing].prio[prio as usize].ingress.release(size, s.reserve, &mut s.pools);
            if pfc && self.net.ports[ing].pausing_peer & (1 << prio) != 0 {
                self.resume_if_below_xon(ing as u32, prio, sw, ing as u32 == p);
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
