//! A switch: the shared buffer a packet occupies from admission until it starts leaving.
//!
//! Buffer accounting follows the HPCC ns-3 switch MMU: a packet holds buffer from the moment it
//! is admitted until it starts leaving the egress port; the bytes are charged to the egress queue
//! (for ECN, `ecn.rs`) and to the ingress port and priority it came from, in one of three pools
//! (`buffer.rs`; for PFC, `pfc.rs`). Without PFC an egress queue may be limited to a fraction of
//! the free buffer (`switch.egress_alpha`, drop-tail), and a data packet with no room may be cut
//! to its header instead of dropped (`trimming.rs`).
//! The egress port is chosen on arrival (`routing.rs`); telemetry is stamped as the packet
//! leaves (`telemetry.rs`).

use super::buffer::Pools;
use super::port::Port;
use crate::cc::Telemetry;
use crate::config::{FlowControl, Routing, SwitchConfig};
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
    /// What came in through its ports returns credits upstream (`credit.rs`); not an NVSwitch.
    pub credit: bool,
    /// It trims data packets it has no room for (`trimming.rs`); not an NVSwitch.
    pub trims: bool,
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
        let credit = sw.flow_control == FlowControl::Credit;
        // Under credits each ingress has its own buffer, which its upstream never overfills
        // (`credit.rs`): the pools only count what is held.
        let capacity = if credit { u64::MAX } else { sw.buffer.0 };
        let pools = Pools::new(capacity, reserve.saturating_mul(own.len() as u64), headroom);
        let (pfc, trims) = (sw.pfc.enabled, sw.trims().is_some());
        SwitchState { pools, max_used: 0, max_headroom: 0, reserve, pfc, ecn: sw.ecn.enabled, credit, trims, routing }
    }

    /// A server's NVSwitch: NVLink's credit-based flow control never loses a packet, which we
    /// model as a buffer that never fills (senders on NVLink are held back by nothing else, so
    /// what queues here is what credits would have held in the GPUs); no PFC, no ECN, no
    /// trimming.
    pub fn nvswitch() -> Self {
        let pools = Pools::new(u64::MAX, 0, 0);
        let routing = Routing::Ecmp;
        let (pfc, ecn, credit, trims) = (false, false, false, false);
        SwitchState { pools, max_used: 0, max_headroom: 0, reserve: 0, pfc, ecn, credit, trims, routing }
    }
}

/// Drop-tail's limit on one egress queue (`switch.egress_alpha`, without PFC): a packet of `size`
/// bytes may join a queue of `queue` bytes while the queue stays within alpha x the free part of
/// the buffer (`pools`).
#[inline]
pub(crate) fn within_egress_share(queue: u64, size: u64, pools: &Pools, alpha: f64) -> bool {
    let free = pools.capacity.saturating_sub(pools.used);
    queue + size <= (free as f64 * alpha) as u64
}

/// The priority a switch queues a control packet at under `switch.control_priority = "data"`:
/// ACKs, NACKs and CNPs (which the HPCC ns-3 simulator carries as a flag of its ACKs) wait
/// behind the data; RTT probe replies, which that simulator does not have, keep the top
/// priority.
pub(crate) fn control_class(kind: PacketKind, data_priority: u8) -> u8 {
    match kind {
        PacketKind::Ack | PacketKind::Nack | PacketKind::Cnp => data_priority,
        _ => CONTROL_PRIORITY,
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
        if self.params.control_at_data && pkt.priority == CONTROL_PRIORITY {
            pkt.priority = control_class(pkt.kind, self.params.data_priority);
        }
        let (size, prio, kind) = (pkt.size as u64, pkt.priority, pkt.kind);
        let (dst, ecmp_key, flow) = (pkt.dst, pkt.ecmp_key, pkt.flow);
        let out = self.route(node, sw, dst, ecmp_key, flow);

        let s = &self.net.switches[sw];
        let (pfc, ecn, credit) = (s.pfc, s.ecn, s.credit);
        if !self.admit(sw, in_port, out, prio, size, kind) {
            if self.net.switches[sw].trims {
                // A data packet is trimmed and goes on as its header (`trimming.rs`).
                self.trim_or_drop(sw, in_port, out, id);
                return;
            }
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
            self.nic.sack.forget_ack_map(&dropped);
            return;
        }
        if ecn && !self.params.ecn_at_dequeue && kind == PacketKind::Data {
            self.maybe_mark(out, sw, id);
        }

        if pfc && prio != CONTROL_PRIORITY {
            self.pause_if_due(in_port, prio, sw);
        }
        let credited = !credit || self.credit_fits(out, prio, size);
        let port = &mut self.net.ports[out as usize];
        let paused = port.paused & !(1 << CONTROL_PRIORITY) & (1 << prio) != 0;
        if self.now >= port.busy_until && port.nonempty == 0 && port.pfc_frames == 0 && !paused && credited {
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
    /// run's totals, and taken out of the network. A trimmed packet's bytes are data bytes, as
    /// they were sent.
    #[cold]
    #[inline(never)]
    pub(crate) fn drop_packet(&mut self, p: u32, id: PacketId) {
        if self.observe.tracer.is_some() {
            self.trace_packet(TraceEvent::Drop, p, id);
        }
        let (kind, size) = (self.net.packets[id].kind, self.net.packets[id].size as u64);
        self.net.ports[p as usize].stats.drops += 1;
        self.observe.counters.packets_dropped += 1;
        match kind {
            PacketKind::Data => self.observe.counters.data_bytes_dropped += size,
            PacketKind::Trimmed => {
                self.observe.counters.data_bytes_dropped += size;
                self.observe.counters.headers_dropped += 1;
            }
            _ => {}
        }
        let dropped = self.net.packets.take(id);
        self.net.int_pool.release(dropped.int);
        self.nic.sack.forget_ack_map(&dropped);
    }

    /// Charges a packet of `size` bytes and `kind` from `in_port` at `prio`, bound for egress
    /// `out`, to the switch's buffer; false if it has no room there (the packet is dropped, or
    /// trimmed), or if it is a data packet that trimming's threshold sends to be trimmed.
    #[inline]
    pub(super) fn admit(&mut self, sw: usize, in_port: u32, out: u32, prio: u8, size: u64, kind: PacketKind) -> bool {
        let s = &mut self.net.switches[sw];
        if !s.pfc {
            // Drop-tail: the buffer, and the egress queue's share of its free part.
            if let Some(alpha) = self.params.egress_alpha {
                if !within_egress_share(self.net.ports[out as usize].prio[prio as usize].bytes, size, &s.pools, alpha) {
                    return false;
                }
            }
            // Trimming (only on a lossy fabric, not at an NVSwitch): a data packet that would
            // take its queue past the threshold is trimmed although the buffer has room.
            if s.trims
                && kind == PacketKind::Data
                && self.net.ports[out as usize].prio[prio as usize].bytes + size > self.params.trim_above
            {
                return false;
            }
        }
        let admitted = if prio == CONTROL_PRIORITY {
            s.pools.admit_unowned(size)
        } else {
            let port = &mut self.net.ports[in_port as usize];
            let paused = port.pausing_peer & (1 << prio) != 0;
            let (headroom, ingress) = (port.headroom, &mut port.prio[prio as usize].ingress);
            let ok = ingress.admit(size, s.reserve, headroom, paused, &mut s.pools);
            s.max_headroom = s.max_headroom.max(ingress.headroom);
            ok
        };
        s.max_used = s.max_used.max(s.pools.used);
        admitted
    }

    /// Picks the next packet for switch port `p` and releases its buffer.
    pub(crate) fn switch_dequeue(&mut self, p: u32) -> Option<PacketId> {
        let id = match self.params.credit {
            false => self.net.ports[p as usize].dequeue(&self.net.packets)?,
            true => self.credit_dequeue(p)?,
        };
        self.leave_buffer(p, id);
        Some(id)
    }

    /// Packet `id` leaves the buffer through egress port `p`: its bytes are released (maybe
    /// resuming the upstream), and it is marked and stamped as it goes.
    #[inline]
    pub(super) fn leave_buffer(&mut self, p: u32, id: PacketId) {
        let pkt = &self.net.packets[id];
        let (prio, size, kind, ingress) = (pkt.priority, pkt.size as u64, pkt.kind, pkt.ingress);
        let sw = self.switch_index(self.net.ports[p as usize].node);
        let s = &mut self.net.switches[sw];
        let (pfc, ecn, credit) = (s.pfc, s.ecn, s.credit);
        if prio == CONTROL_PRIORITY {
            s.pools.release_unowned(size);
        } else {
            let ing = ingress as usize;
            self.net.ports[ing].prio[prio as usize].ingress.release(size, s.reserve, &mut s.pools);
            if pfc && self.net.ports[ing].pausing_peer & (1 << prio) != 0 {
                self.resume_if_below_xon(ing as u32, prio, sw, ing as u32 == p);
            } else if credit {
                self.credit_freed(ingress, prio, size);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use crate::time::{ByteSize, SimTime};

    #[test]
    fn one_egress_queue_may_take_alpha_of_the_free_buffer_and_less_as_it_fills() {
        let mut pools = Pools::new(1_000_000, 0, 0);
        assert!(within_egress_share(499_000, 1_000, &pools, 0.5), "up to half of 1 MB free");
        assert!(!within_egress_share(499_001, 1_000, &pools, 0.5));
        assert!(pools.admit_unowned(600_000));
        assert!(within_egress_share(199_000, 1_000, &pools, 0.5), "400 KB free: 200 KB");
        assert!(!within_egress_share(199_001, 1_000, &pools, 0.5));
        assert!(!within_egress_share(0, 1, &Pools::new(100, 0, 0), 0.0), "alpha 0 admits nothing");
    }

    fn star(pfc: bool) -> (Topology, SwitchConfig, Vec<Port>) {
        let toml = format!(
            r#"
[topology]
kind = "star"
hosts = 4
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
buffer = "1MB"
pfc = {{ enabled = {pfc}, reserve = "10KB", headroom = "20KB" }}
[workload]
kind = "incast"
senders = "1..=3"
receiver = 0
size = "10KB"
"#
        );
        let s = Scenario::from_toml(&toml, "test").unwrap();
        let topo = Topology::build(&s.topology).unwrap();
        let info = &topo.ports;
        let ports: Vec<Port> = (0..info.len())
            .map(|p| {
                let mut port = Port::new(&info[p], 0, topo.is_host(info[p].node), Some(&s.switch.ecn));
                port.headroom = if pfc && !port.is_host { 20_000 } else { 0 };
                port
            })
            .collect();
        (topo, s.switch, ports)
    }

    #[test]
    fn a_switch_sets_apart_a_reserve_and_a_headroom_per_port_only_with_pfc() {
        let (topo, sw, ports) = star(true);
        let s = SwitchState::new(&topo, topo.num_hosts, &sw, &ports, Routing::Ecmp);
        assert_eq!((s.reserve, s.pools.reserve_total, s.pools.headroom_total), (10_000, 40_000, 80_000));
        assert_eq!(s.pools.shared_capacity(), 1_000_000 - 40_000 - 80_000);
        let (topo, sw, ports) = star(false);
        let s = SwitchState::new(&topo, topo.num_hosts, &sw, &ports, Routing::Ecmp);
        assert_eq!((s.reserve, s.pools.shared_capacity()), (0, 1_000_000), "one shared pool");
        assert_eq!(sw.buffer, ByteSize(1_000_000));
    }

    #[test]
    fn an_nvswitch_never_runs_out_of_buffer() {
        let mut s = SwitchState::nvswitch();
        assert!(!s.pfc && !s.ecn && !s.trims);
        assert!(s.pools.admit_unowned(u64::MAX / 2));
        assert!(within_egress_share(SimTime::from_ms(1).0, 1_000_000, &s.pools, 1.0));
    }
}
