//! A port: egress queues, the serialiser, and the link to the peer.
//!
//! When a port starts serialising a packet, the packet's arrival time at the peer is known
//! (end of serialisation plus propagation), so it goes straight onto the wire: a FIFO of packets
//! with one pending `Arrive` event for its head. The port itself needs an event only when it has
//! something more to send: one `PortWake` at the end of the serialisation, or, for a NIC whose
//! queue pairs wait on their pacers, at the earliest pacer time. A hop through an uncongested
//! switch therefore costs one event. A packet is fully received before it is forwarded (store
//! and forward).
//!
//! Every link end is one `Port`: it transmits towards its peer (egress role) and accounts for the
//! bytes that arrived through it and still sit in the switch buffer (ingress role, for PFC).

use crate::config::EcnConfig;
use crate::engine::{Event, Simulation};
use crate::net::packet::{Packet, PacketKind, CONTROL_PRIORITY, NUM_PRIORITIES};
use crate::time::{Bandwidth, SimTime};
use crate::topology::PortInfo;
use std::collections::VecDeque;

/// Fields are laid out by how often the event loop touches them (`repr(C)` keeps the order):
/// the first cache line holds what every arrival and wake-up reads, the second what every
/// transmission reads; statistics come last.
#[repr(C)]
pub struct Port {
    // First cache line.
    /// End of the current serialisation; the port is idle from then on.
    pub busy_until: SimTime,
    /// Time and generation of the pending `PortWake`, if any.
    pub wake_at: Option<SimTime>,
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
    pub bandwidth: Bandwidth,
    pub delay: SimTime,
    /// Egress backlog in bytes over all priorities.
    pub queued: u64,

    // Second cache line.
    /// Packets on the wire with their arrival time at the peer.
    pub wire: VecDeque<(SimTime, Packet)>,
    /// Largest `queued` seen.
    pub max_queued: u64,
    /// ECN thresholds in bytes for this port's speed.
    pub kmin: u64,
    pub kmax: u64,
    /// Position among the node's ports (the port number in outputs).
    pub local: u32,
    /// Frames waiting in `pfc_out` (so that the common case, none, reads no further).
    pub pfc_frames: u32,

    pub queue_bytes: [u64; NUM_PRIORITIES],
    /// Bytes buffered at this switch that arrived through this port, per priority (for PFC).
    pub ingress_bytes: [u64; NUM_PRIORITIES],
    /// PFC frames waiting to go out ahead of everything else.
    pub pfc_out: VecDeque<Packet>,
    pub queues: [VecDeque<Packet>; NUM_PRIORITIES],

    pub stats: PortStats,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct PortStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub pause_sent: u64,
    pub resume_sent: u64,
    pub drops: u64,
    pub ecn_marks: u64,
    /// Time this port spent paused by its peer (any priority), and since when it is paused.
    pub paused_time: SimTime,
    pub paused_since: Option<SimTime>,
}

impl Port {
    pub fn new(info: &PortInfo, local: u32, is_host: bool, ecn: &EcnConfig) -> Port {
        let scale = |k: u64| (k as u128 * info.bandwidth.0 as u128 / ecn.reference_bandwidth.0 as u128) as u64;
        Port {
            node: info.node,
            peer: info.peer,
            local,
            is_host,
            bandwidth: info.bandwidth,
            delay: info.delay,
            kmin: scale(ecn.kmin.0),
            kmax: scale(ecn.kmax.0),
            queued: 0,
            max_queued: 0,
            queues: Default::default(),
            queue_bytes: [0; NUM_PRIORITIES],
            nonempty: 0,
            pfc_out: VecDeque::new(),
            pfc_frames: 0,
            paused: 0,
            busy_until: SimTime::ZERO,
            wake_at: None,
            wake_gen: 0,
            wire: VecDeque::new(),
            ingress_bytes: [0; NUM_PRIORITIES],
            pausing_peer: 0,
            stats: PortStats::default(),
        }
    }

    /// Some queued packet may be sent (PFC frames, or a queue that is not paused).
    #[inline]
    pub fn has_sendable(&self) -> bool {
        self.pfc_frames > 0 || self.nonempty & !(self.paused & !(1 << CONTROL_PRIORITY)) != 0
    }

    #[inline]
    pub fn enqueue(&mut self, pkt: Packet) {
        let prio = pkt.priority;
        self.queue_bytes[prio as usize] += pkt.size as u64;
        self.queued += pkt.size as u64;
        self.max_queued = self.max_queued.max(self.queued);
        self.queues[prio as usize].push_back(pkt);
        self.nonempty |= 1 << prio;
    }

    /// Removes the head of the highest-priority queue that is not paused.
    #[inline]
    pub fn dequeue(&mut self) -> Option<Packet> {
        let eligible = self.nonempty & !(self.paused & !(1 << CONTROL_PRIORITY));
        if eligible == 0 {
            return None;
        }
        let prio = 7 - eligible.leading_zeros() as u8;
        let q = &mut self.queues[prio as usize];
        let pkt = q.pop_front().expect("nonempty bit set on an empty queue");
        if q.is_empty() {
            self.nonempty &= !(1 << prio);
        }
        self.queue_bytes[prio as usize] -= pkt.size as u64;
        self.queued -= pkt.size as u64;
        Some(pkt)
    }
}

impl Simulation {
    /// If the port is idle, starts serialising the next packet it may send; otherwise makes
    /// sure it wakes when the current packet is out.
    #[inline]
    pub(crate) fn kick(&mut self, p: u32) {
        let now = self.now;
        let busy_until = self.ports[p as usize].busy_until;
        if now < busy_until {
            self.wake_port(p, busy_until);
            return;
        }
        let next = if self.ports[p as usize].pfc_frames > 0 {
            let port = &mut self.ports[p as usize];
            port.pfc_frames -= 1;
            port.pfc_out.pop_front()
        } else if self.ports[p as usize].is_host {
            self.host_next_packet(p)
        } else {
            self.switch_dequeue(p)
        };
        let Some(pkt) = next else { return };
        let size = pkt.size as u64;
        let port = &mut self.ports[p as usize];
        debug_assert!(now >= port.busy_until, "port {p} started two packets at once");
        let done = now + port.bandwidth.tx_time(size);
        port.busy_until = done;
        port.stats.tx_packets += 1;
        port.stats.tx_bytes += size;
        self.counters.packet_hops += 1;
        let arrival = done + port.delay;
        port.wire.push_back((arrival, pkt));
        if port.wire.len() == 1 {
            self.events.push(arrival, Event::Arrive(p));
        }
        let more = port.has_sendable();
        let host = port.is_host.then_some(port.node);
        if more {
            self.wake_port(p, done);
        } else if let Some(h) = host {
            if let Some(t) = self.host_next_send_time(h) {
                self.wake_port(p, t.max(done));
            }
        }
    }

    /// Schedules a `PortWake` at `t` unless one is already due by then.
    #[inline]
    pub(crate) fn wake_port(&mut self, p: u32, t: SimTime) {
        let port = &mut self.ports[p as usize];
        if port.wake_at.is_none_or(|w| t < w) {
            port.wake_gen = port.wake_gen.wrapping_add(1);
            port.wake_at = Some(t);
            self.events.push(t, Event::PortWake(p, port.wake_gen));
        }
    }

    pub(crate) fn port_woken(&mut self, p: u32, gen: u32) {
        let port = &mut self.ports[p as usize];
        if port.wake_gen == gen {
            port.wake_at = None;
            self.kick(p);
        }
    }

    /// The head of port `p`'s wire reaches the peer port.
    pub(crate) fn arrive(&mut self, p: u32) {
        let port = &mut self.ports[p as usize];
        let (_, pkt) = port.wire.pop_front().expect("arrival from an empty wire");
        if let Some(&(next, _)) = port.wire.front() {
            self.events.push(next, Event::Arrive(p));
        }
        let at = port.peer;
        if pkt.kind == PacketKind::Pfc {
            self.in_network -= 1;
            self.pfc_frame_received(at, pkt.pfc_class, pkt.pfc_pause);
            return;
        }
        if self.ports[at as usize].is_host {
            self.host_receive(at, pkt);
        } else {
            self.switch_receive(at, pkt);
        }
    }

    /// A PFC frame arrived at port `at`: pause or resume its egress for `class`.
    fn pfc_frame_received(&mut self, at: u32, class: u8, pause: bool) {
        let now = self.now;
        let port = &mut self.ports[at as usize];
        let was = port.paused;
        if pause {
            port.paused |= 1 << class;
        } else {
            port.paused &= !(1 << class);
        }
        if was == 0 && port.paused != 0 {
            port.stats.paused_since = Some(now);
        } else if was != 0 && port.paused == 0 {
            if let Some(since) = port.stats.paused_since.take() {
                port.stats.paused_time += now - since;
            }
        }
        if !pause {
            self.kick(at);
        }
    }

    /// Queues a PFC frame on port `p` towards its peer.
    pub(crate) fn send_pfc(&mut self, p: u32, class: u8, pause: bool) {
        let mut pkt = Packet::new(PacketKind::Pfc, CONTROL_PRIORITY, self.params.pause_size);
        pkt.pfc_class = class;
        pkt.pfc_pause = pause;
        self.in_network += 1;
        let port = &mut self.ports[p as usize];
        port.pfc_out.push_back(pkt);
        port.pfc_frames += 1;
        if pause {
            port.stats.pause_sent += 1;
            self.counters.pause_frames += 1;
        } else {
            port.stats.resume_sent += 1;
            self.counters.resume_frames += 1;
        }
        self.kick(p);
    }
}
