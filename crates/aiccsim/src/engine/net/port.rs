//! A port: egress queues, the serialiser, and the link to the peer.
//!
//! When a port starts serialising a packet, the packet's arrival time at the peer is known
//! (end of serialisation plus propagation), so its `Arrive` event, which names the packet, is
//! scheduled there and then: the link needs no state of its own, and links deliver in order
//! because their arrival times grow with their send times. The port itself needs an event only
//! when it has something more to send: one `PortWake` at the end of the serialisation, or, for a
//! NIC whose queue pairs wait on their pacers, at the earliest pacer time. A hop through an
//! uncongested switch therefore costs one event. A packet is fully received before it is
//! forwarded (store and forward).
//!
//! Every link end is one `Port`: it transmits towards its peer (egress role) and accounts for the
//! bytes that arrived through it and still sit in the switch buffer (ingress role, for PFC).

use super::buffer::IngressCount;
use super::pfc::port_headroom;
use crate::config::{EcnConfig, SwitchConfig};
use crate::engine::net::pool::{PacketId, PacketPool};
use crate::engine::{Event, Simulation};
use crate::metrics::trace::TraceEvent;
use crate::metrics::PortStats;
use crate::time::{Bandwidth, ByteSize, SimTime};
use crate::topology::{PortInfo, Topology};
use crate::watch::{Phase, Stop, Watch};
use crate::wire::packet::{Packet, PacketKind, CONTROL_PRIORITY, NUM_PRIORITIES};
use std::collections::VecDeque;

/// Fields are laid out by how often the event loop touches them (`repr(C)` keeps the order,
/// `align(64)` puts every port on its own cache lines): the first line holds what every arrival
/// and wake-up reads, the second what every transmission reads, and each priority's queue with
/// its byte counters has a line of its own, so that a packet through a switch touches three
/// lines of its egress port (first, second, its priority's) and one of its ingress port.
/// Statistics and PFC frames come last.
#[repr(C, align(64))]
pub struct Port {
    // First cache line.
    /// End of the current serialisation; the port is idle from then on.
    pub busy_until: SimTime,
    /// Time of the pending `PortWake` (`SimTime::MAX`: none), and its generation.
    pub wake_at: SimTime,
    pub wake_gen: u32,
    pub node: u32,
    pub peer: u32,
    /// Bit p set: egress queue p is not empty.
    pub nonempty: u8,
    /// Bit p set: the peer has paused priority p on this port.
    pub paused: u8,
    /// Bit p set: we have paused the peer for priority p (ingress role).
    pub pausing_peer: u8,
    pub is_host: bool,
    /// Frames waiting in `pfc_out` (so that the common case, none, reads no further).
    pub pfc_frames: u32,
    /// Position among the node's ports (the port number in outputs).
    pub local: u32,
    /// Egress backlog in bytes over all priorities, and the largest seen.
    pub queued: u64,
    pub max_queued: u64,
    pub bandwidth: Bandwidth,

    // Second cache line.
    pub delay: SimTime,
    /// ECN thresholds in bytes for this port's speed.
    pub kmin: u32,
    pub kmax: u32,
    pub tx_packets: u64,
    pub tx_bytes: u64,

    /// One cache line per priority.
    pub prio: [PrioQueue; NUM_PRIORITIES],
    /// PFC frames waiting to go out ahead of everything else.
    pub pfc_out: VecDeque<PacketId>,
    pub stats: PortStats,
    /// PFC headroom of this switch port as an ingress (0: none, or a host's port).
    pub headroom: u64,
}

/// One priority of a port: its egress FIFO and the PFC ingress count of the same priority.
#[repr(C, align(64))]
#[derive(Default)]
pub struct PrioQueue {
    pub packets: VecDeque<PacketId>,
    /// Bytes in `packets`.
    pub bytes: u64,
    /// Bytes buffered at this switch that arrived through this port at this priority, by pool
    /// (PFC; see `buffer.rs`).
    pub ingress: IngressCount,
}

/// Every port of `topo`, in its order, with the switches' ECN thresholds and PFC headroom
/// (`max_packet` and `pause_size` in bytes size the headroom). Ticks `watch` once per port.
pub(crate) fn build_ports(
    topo: &Topology,
    sw: &SwitchConfig,
    max_packet: u64,
    pause_size: u32,
    watch: &mut Watch,
    steps: u64,
) -> Result<Vec<Port>, Stop> {
    // Each port's place among its node's ports, read off the lists in one pass: searching a
    // star switch's million ports for each of them took minutes.
    let mut local_of = vec![0u32; topo.ports.len()];
    for own in &topo.node_ports {
        for (local, &p) in own.iter().enumerate() {
            local_of[p as usize] = local as u32;
        }
    }
    // Filled in place: collecting through a `Result` would grow the vector by doubling, and a
    // million-host fabric's ports are over a gigabyte.
    let mut ports: Vec<Port> = Vec::with_capacity(topo.ports.len());
    for (i, info) in topo.ports.iter().enumerate() {
        watch.tick(Phase::Setup, i as u64, steps)?;
        let host = topo.is_host(info.node);
        let nvswitch = !host && topo.is_nvswitch(info.node - topo.num_hosts);
        let mut port = Port::new(info, local_of[i], host, (!nvswitch).then_some(&sw.ecn));
        if !host && !nvswitch {
            port.headroom = port_headroom(info, &sw.pfc, max_packet, u64::from(pause_size));
        }
        ports.push(port);
    }
    Ok(ports)
}

impl Port {
    /// A port on a link; `ecn` is `None` on a switch that never marks (an NVSwitch).
    pub fn new(info: &PortInfo, local: u32, is_host: bool, ecn: Option<&EcnConfig>) -> Port {
        let scale = |k: fn(&EcnConfig) -> ByteSize| match ecn {
            Some(ecn) => ecn.scaled(k(ecn), info.bandwidth).min(u32::MAX as u128) as u32,
            None => u32::MAX,
        };
        Port {
            busy_until: SimTime::ZERO,
            wake_at: SimTime::MAX,
            wake_gen: 0,
            node: info.node,
            peer: info.peer,
            nonempty: 0,
            paused: 0,
            pausing_peer: 0,
            is_host,
            pfc_frames: 0,
            local,
            queued: 0,
            max_queued: 0,
            bandwidth: info.bandwidth,
            delay: info.delay,
            kmin: scale(|e| e.kmin),
            kmax: scale(|e| e.kmax),
            tx_packets: 0,
            tx_bytes: 0,
            prio: Default::default(),
            pfc_out: VecDeque::new(),
            stats: PortStats::default(),
            headroom: 0,
        }
    }

    /// Some queued packet may be sent (PFC frames, or a queue that is not paused).
    #[inline]
    pub fn has_sendable(&self) -> bool {
        self.pfc_frames > 0 || self.nonempty & !(self.paused & !(1 << CONTROL_PRIORITY)) != 0
    }

    /// Queues packet `id` (`pkt` is its content) behind the others of its priority.
    #[inline]
    pub fn enqueue(&mut self, id: PacketId, pkt: &Packet) {
        let prio = pkt.priority;
        self.queued += pkt.size as u64;
        self.max_queued = self.max_queued.max(self.queued);
        self.nonempty |= 1 << prio;
        let q = &mut self.prio[prio as usize];
        q.bytes += pkt.size as u64;
        q.packets.push_back(id);
    }

    /// Removes the head of the highest-priority queue that is not paused.
    #[inline]
    pub fn dequeue(&mut self, pool: &PacketPool) -> Option<PacketId> {
        let eligible = self.nonempty & !(self.paused & !(1 << CONTROL_PRIORITY));
        if eligible == 0 {
            return None;
        }
        let prio = 7 - eligible.leading_zeros() as u8;
        let q = &mut self.prio[prio as usize];
        let id = q.packets.pop_front().expect("nonempty bit set on an empty queue");
        let size = pool[id].size as u64;
        q.bytes -= size;
        if q.packets.is_empty() {
            self.nonempty &= !(1 << prio);
        }
        self.queued -= size;
        Some(id)
    }

    /// The port's statistics with the transmit counters filled in.
    pub fn final_stats(&self) -> PortStats {
        PortStats { tx_packets: self.tx_packets, tx_bytes: self.tx_bytes, ..self.stats }
    }
}

impl Simulation {
    /// If the port is idle, starts serialising the next packet it may send; otherwise makes
    /// sure it wakes when the current packet is out.
    #[inline]
    pub(crate) fn kick(&mut self, p: u32) {
        let now = self.now;
        let busy_until = self.net.ports[p as usize].busy_until;
        if now < busy_until {
            self.wake_port(p, busy_until);
            return;
        }
        let next = if self.net.ports[p as usize].pfc_frames > 0 {
            let port = &mut self.net.ports[p as usize];
            port.pfc_frames -= 1;
            port.pfc_out.pop_front()
        } else if self.net.ports[p as usize].is_host {
            self.host_next_packet(p)
        } else {
            self.switch_dequeue(p)
        };
        if let Some(pkt) = next {
            self.start_tx(p, pkt);
        }
    }

    /// Serialises packet `id` onto idle port `p`'s link and schedules what follows: its arrival
    /// at the peer and the port's next wake-up.
    #[inline]
    pub(crate) fn start_tx(&mut self, p: u32, id: PacketId) {
        let now = self.now;
        let size = self.net.packets[id].size as u64;
        let port = &mut self.net.ports[p as usize];
        debug_assert!(now >= port.busy_until, "port {p} started two packets at once");
        let done = now + port.bandwidth.tx_time(size);
        port.busy_until = done;
        port.tx_packets += 1;
        port.tx_bytes += size;
        self.observe.counters.packet_hops += 1;
        let arrival = done + port.delay;
        let more = port.has_sendable();
        let host = port.is_host.then_some(port.node);
        if self.params.tx_hooks {
            self.tx_hooks(p, id, arrival);
        } else {
            self.events.push(arrival, Event::Arrive(p, id.0));
        }
        if more {
            self.wake_port(p, done);
        } else if let Some(h) = host {
            if let Some(t) = self.host_next_send_time(h, done) {
                self.wake_port(p, t);
            }
        }
    }

    /// What [`Simulation::start_tx`] does for packet `id` with a trace, link events, CONGA or
    /// credits (out of line: a run without any tests one flag, which it tested for the trace
    /// before): CONGA's estimator and header, its arrival at `arrival`, or its loss if the link
    /// is dark, its credits, its trace row.
    #[cold]
    #[inline(never)]
    fn tx_hooks(&mut self, p: u32, id: PacketId, arrival: SimTime) {
        if self.net.conga.is_some() {
            self.conga_transmit(p, id);
        }
        let dark = self.net.links.as_deref().is_some_and(|l| l.is_failed(p));
        self.events.push(arrival, if dark { Event::Lost(p, id.0) } else { Event::Arrive(p, id.0) });
        if self.params.credit {
            self.credit_sent(p, id);
        }
        if self.params.tracing {
            self.trace_packet(TraceEvent::Send, p, id);
        }
    }

    /// Adds a trace row for packet `id` at port `p`, which is where the event happens (kept out
    /// of line: the hot path only tests whether tracing is on).
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_packet(&mut self, event: TraceEvent, p: u32, id: PacketId) {
        let port = &self.net.ports[p as usize];
        let queue = (event != TraceEvent::Arrive).then_some(port.queued);
        if let Some(t) = self.observe.tracer.as_deref_mut() {
            t.record(self.now, event, port.node, port.local, &self.net.packets[id], queue);
        }
    }

    /// Schedules a `PortWake` at `t` unless one is already due by then.
    #[inline]
    pub(crate) fn wake_port(&mut self, p: u32, t: SimTime) {
        let port = &mut self.net.ports[p as usize];
        if t < port.wake_at {
            port.wake_gen = port.wake_gen.wrapping_add(1);
            port.wake_at = t;
            self.events.push(t, Event::PortWake(p, port.wake_gen));
        }
    }

    pub(crate) fn port_woken(&mut self, p: u32, gen: u32) {
        let port = &mut self.net.ports[p as usize];
        if port.wake_gen == gen {
            port.wake_at = SimTime::MAX;
            self.kick(p);
        }
    }

    /// Packet `id`, sent on port `p`, reaches the peer port.
    pub(crate) fn arrive(&mut self, p: u32, id: PacketId) {
        let at = self.net.ports[p as usize].peer;
        if self.params.tracing {
            self.trace_packet(TraceEvent::Arrive, at, id);
        }
        let pkt = &self.net.packets[id];
        if pkt.kind == PacketKind::Pfc {
            let (class, pause) = (pkt.pfc_class, pkt.flag);
            self.net.packets.take(id);
            self.pfc_frame_received(at, class, pause);
            return;
        }
        if self.net.ports[at as usize].is_host {
            self.host_receive(at, id);
        } else {
            self.switch_receive(at, id);
        }
    }
}

const _: () = assert!(std::mem::size_of::<PrioQueue>() == 64);
const _: () = assert!(std::mem::offset_of!(Port, delay) == 64, "the first line holds 64 bytes");
const _: () = assert!(std::mem::offset_of!(Port, prio) == 128, "the second line holds 64 bytes");
// Twelve cache lines: the credit counters added to `PortStats` took padding, not a line.
const _: () = assert!(std::mem::size_of::<Port>() == 768);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::packet::PacketKind;

    fn port() -> Port {
        let info = PortInfo { node: 0, peer: 1, bandwidth: Bandwidth::from_gbps(100), delay: SimTime::from_us(1) };
        Port::new(&info, 0, false, None)
    }

    fn queue(port: &mut Port, pool: &mut PacketPool, prio: u8, size: u32) -> PacketId {
        let pkt = Packet::new(PacketKind::Data, prio, size);
        let id = pool.alloc(pkt);
        port.enqueue(id, &pkt);
        id
    }

    #[test]
    fn the_highest_priority_goes_first_and_each_priority_in_order() {
        let (mut p, mut pool) = (port(), PacketPool::default());
        let a = queue(&mut p, &mut pool, 3, 1_000);
        let b = queue(&mut p, &mut pool, 3, 500);
        let c = queue(&mut p, &mut pool, 5, 64);
        assert_eq!((p.queued, p.prio[3].bytes, p.max_queued), (1_564, 1_500, 1_564));
        assert_eq!(p.dequeue(&pool), Some(c));
        assert_eq!(p.dequeue(&pool), Some(a));
        assert_eq!((p.queued, p.nonempty), (500, 1 << 3));
        assert_eq!(p.dequeue(&pool), Some(b));
        assert_eq!((p.dequeue(&pool), p.queued, p.nonempty, p.max_queued), (None, 0, 0, 1_564));
    }

    #[test]
    fn a_paused_priority_waits_but_the_control_priority_is_never_paused() {
        let (mut p, mut pool) = (port(), PacketPool::default());
        let data = queue(&mut p, &mut pool, 3, 1_000);
        p.paused = 1 << 3;
        assert!(!p.has_sendable());
        assert_eq!(p.dequeue(&pool), None);
        let ack = queue(&mut p, &mut pool, CONTROL_PRIORITY, 60);
        p.paused |= 1 << CONTROL_PRIORITY;
        assert!(p.has_sendable());
        assert_eq!(p.dequeue(&pool), Some(ack));
        p.paused = 0;
        assert_eq!(p.dequeue(&pool), Some(data));
        p.pfc_frames = 1;
        assert!(p.has_sendable(), "a PFC frame waits");
    }

    #[test]
    fn ecn_thresholds_scale_with_the_port_speed() {
        let ecn = EcnConfig::default();
        let at = |gbps| {
            let info = PortInfo { node: 0, peer: 1, bandwidth: Bandwidth::from_gbps(gbps), delay: SimTime::from_us(1) };
            let p = Port::new(&info, 0, false, Some(&ecn));
            (p.kmin as u64, p.kmax as u64)
        };
        let (k100, k400) = (at(100), at(400));
        assert_eq!(k400, (4 * k100.0, 4 * k100.1), "{k100:?} at 100 Gb/s, {k400:?} at 400");
        assert!(k100.0 < k100.1);
        assert_eq!(port().kmin, u32::MAX, "a switch that never marks");
    }
}
