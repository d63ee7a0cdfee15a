//! A switch: shared buffer, routing, PFC per ingress port and priority, RED-style ECN.
//!
//! Buffer accounting follows the HPCC ns-3 switch MMU: a packet holds buffer from the moment it
//! is admitted until it starts leaving the egress port; the bytes are charged to the egress queue
//! (for ECN) and to the ingress port and priority it came from (for PFC). When an ingress counter
//! rises above XOFF the switch sends PAUSE upstream; when it falls to XOFF - xon_delta, RESUME.
//! Each port keeps `headroom` in reserve for what the upstream still sends after its PAUSE.

use crate::cc::Telemetry;
use crate::config::{PfcConfig, Routing};
use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use crate::metrics::trace::TraceEvent;
use crate::topology::{routing, Topology};
use crate::wire::packet::{PacketKind, CONTROL_PRIORITY};
use rand::RngExt;

pub struct SwitchState {
    /// Bytes of the shared buffer in use.
    pub used: u64,
    /// Buffer set aside as PFC headroom on all ports.
    pub reserved: u64,
    /// Largest `used` seen.
    pub max_used: u64,
}

/// PFC headroom reserved over all ports of switch `node`.
pub fn total_headroom(topo: &Topology, node: u32, pfc: &PfcConfig, max_packet: u64, pause_size: u64) -> u64 {
    if !pfc.enabled {
        return 0;
    }
    topo.node_ports[node as usize]
        .iter()
        .map(|&p| {
            let info = &topo.ports[p as usize];
            pfc.headroom.map(|h| h.0).unwrap_or_else(|| {
                // After XOFF leaves, the upstream keeps sending for one round trip on the link,
                // plus the packets already being serialised at each end and the PAUSE itself.
                2 * info.bandwidth.bytes_in(info.delay) + 3 * max_packet + pause_size
            })
        })
        .sum()
}

impl SwitchState {
    pub fn new(topo: &Topology, node: u32, pfc: &PfcConfig, buffer: u64, max_packet: u64, pause_size: u64) -> Self {
        let reserved = total_headroom(topo, node, pfc, max_packet, pause_size).min(buffer);
        SwitchState { used: 0, reserved, max_used: 0 }
    }
}

impl Simulation {
    #[inline]
    fn switch_index(&self, node: u32) -> usize {
        (node - self.topo.num_hosts) as usize
    }

    /// XOFF threshold of this switch right now.
    #[inline]
    fn xoff(&self, sw: usize) -> u64 {
        match self.params.pfc_static_xoff {
            Some(x) => x,
            None => {
                let s = &self.switches[sw];
                let free = self.params.buffer.saturating_sub(s.reserved).saturating_sub(s.used);
                (free as f64 * self.params.pfc_alpha) as u64
            }
        }
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

        if self.switches[sw].used + size > self.params.buffer {
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
        if self.params.ecn_enabled && !self.params.ecn_at_dequeue && kind == PacketKind::Data {
            self.maybe_mark(out, sw, id);
        }

        if self.params.pfc_enabled && prio != CONTROL_PRIORITY {
            let port = &self.ports[in_port as usize];
            if port.pausing_peer & (1 << prio) == 0 && port.prio[prio as usize].ingress_bytes > self.xoff(sw) {
                self.ports[in_port as usize].pausing_peer |= 1 << prio;
                self.send_pfc(in_port, prio, true);
            }
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
        self.switches[sw].used -= size;
        if prio != CONTROL_PRIORITY {
            let ing = ingress as usize;
            self.ports[ing].prio[prio as usize].ingress_bytes -= size;
            if self.params.pfc_enabled && self.ports[ing].pausing_peer & (1 << prio) != 0 {
                let left = self.ports[ing].prio[prio as usize].ingress_bytes;
                if left == 0 || left <= self.xoff(sw).saturating_sub(self.params.xon_delta) {
                    self.ports[ing].pausing_peer &= !(1 << prio);
                    self.send_pfc(ing as u32, prio, false);
                }
            }
        }
        if self.params.ecn_enabled && self.params.ecn_at_dequeue && kind == PacketKind::Data {
            self.maybe_mark(p, sw, id);
        }
        if self.params.telemetry != Telemetry::None && kind == PacketKind::Data {
            self.stamp_telemetry(p, id);
        }
    }

    /// RED: mark packet `id` with probability 0 below Kmin, rising linearly to Pmax at Kmax, 1
    /// above Kmax, judged on the egress queue of the packet's priority.
    fn maybe_mark(&mut self, port: u32, sw: usize, id: PacketId) {
        let pt = &self.ports[port as usize];
        let q = pt.prio[self.packets[id].priority as usize].bytes;
        let (kmin, kmax) = (pt.kmin as u64, pt.kmax as u64);
        let mark = if q <= kmin {
            false
        } else if q > kmax {
            true
        } else {
            let p = self.params.ecn_pmax * (q - kmin) as f64 / (kmax - kmin).max(1) as f64;
            self.ecn_rng[sw].random::<f64>() < p
        };
        let pkt = &mut self.packets[id];
        if mark && !pkt.ecn {
            pkt.ecn = true;
            self.ports[port as usize].stats.ecn_marks += 1;
            self.counters.ecn_marks += 1;
        }
    }

    /// The egress port at switch `node` for a packet to host `dst` with ECMP hash input `key`.
    #[inline]
    fn route(&mut self, node: u32, sw: usize, dst: u32, key: u64) -> u32 {
        let hops = self.topo.next_hops(node, dst);
        if hops.len() == 1 {
            return hops[0];
        }
        match self.params.routing {
            Routing::Ecmp => hops[routing::ecmp_pick(key, node, hops.len())],
            Routing::Spray => hops[self.spray_rng[sw].random_range(0..hops.len())],
            Routing::Adaptive => {
                // A packet's bytes leave `queued` when its serialisation starts, so a port busy
                // sending its last packet would look as free as an idle one; flows arriving
                // together would then all follow their hashes. The bytes still to serialise
                // count too: the load is what a new packet would wait behind.
                let now = self.now;
                // An idle port's rest is 0 without the multiply and divide of `bytes_in`.
                let load = |p: &crate::engine::net::port::Port| {
                    p.queued + if p.busy_until > now { p.bandwidth.bytes_in(p.busy_until - now) } else { 0 }
                };
                let first = routing::ecmp_pick(key, node, hops.len());
                let mut best = hops[first];
                let mut best_q = load(&self.ports[best as usize]);
                for i in 1..hops.len() {
                    let p = hops[(first + i) % hops.len()];
                    let q = load(&self.ports[p as usize]);
                    if q < best_q {
                        best = p;
                        best_q = q;
                    }
                }
                best
            }
        }
    }
}
