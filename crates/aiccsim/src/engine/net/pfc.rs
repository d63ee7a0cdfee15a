//! Priority flow control (IEEE 802.1Qbb) as the HPCC ns-3 switch does it.
//!
//! Each switch counts, per ingress port and priority, the bytes that came in through it and are
//! still in its buffer, by pool (`buffer.rs`: reserve, shared, headroom). When the ingress's
//! shared bytes rise above XOFF, or one of its packets finds the shared pool full and goes to
//! its headroom, the switch sends PAUSE for that priority upstream; once its headroom has
//! drained and its shared bytes fall to XOFF - `xon_delta` (or to zero), RESUME.
//! XOFF is static (`switch.pfc.xoff`) or dynamic: alpha x the free shared pool, the
//! Broadcom-style shared-buffer rule. PAUSE and RESUME are 64-byte frames queued ahead of
//! everything on the port facing the upstream; a PAUSE holds until its RESUME (no pause quanta).

use super::buffer::Pools;
use crate::cc::Check;
use crate::config::{fail, PfcConfig, SwitchConfig};
use crate::engine::Simulation;
use crate::topology::{PortInfo, Topology};
use crate::wire::packet::{Packet, PacketKind, CONTROL_PRIORITY};

/// PFC headroom of one switch port (as an ingress): `switch.pfc.headroom`, or by default what
/// the upstream still sends after XOFF leaves: one round trip on the link, plus the packets
/// already being serialised at each end and the PAUSE itself.
pub fn port_headroom(info: &PortInfo, pfc: &PfcConfig, max_packet: u64, pause_size: u64) -> u64 {
    if !pfc.enabled {
        return 0;
    }
    (pfc.headroom.map(|h| h.0)).unwrap_or_else(|| 2 * info.bandwidth.bytes_in(info.delay) + 3 * max_packet + pause_size)
}

/// PFC headroom of all ports of switch `node`.
pub fn total_headroom(topo: &Topology, node: u32, pfc: &PfcConfig, max_packet: u64, pause_size: u64) -> u64 {
    (topo.node_ports[node as usize].iter())
        .map(|&p| port_headroom(&topo.ports[p as usize], pfc, max_packet, pause_size))
        .sum()
}

/// Each switch's headroom and reserves must leave some of its buffer to share (`max_packet`
/// and `pause_size` in bytes size the default headroom).
pub(crate) fn check(sw: &SwitchConfig, topo: &Topology, max_packet: u64, pause_size: u64) -> Check {
    if sw.pfc.enabled {
        for s in 0..topo.fabric_switches {
            let node = topo.num_hosts + s;
            let ports = topo.node_ports[node as usize].len();
            let headroom = total_headroom(topo, node, &sw.pfc, max_packet, pause_size);
            let reserve = sw.pfc.reserve.0.saturating_mul(ports as u64);
            // A shared pool smaller than one packet holds none: every packet past the reserves
            // would be dropped on a fabric that is meant to be lossless.
            let shared = sw.buffer.0.saturating_sub(headroom.saturating_add(reserve));
            if shared < max_packet {
                let key = if reserve >= headroom { "switch.pfc.reserve" } else { "switch.pfc.headroom" };
                let left = match shared {
                    0 => "nothing".to_string(),
                    b => format!("{b} B, less than one {max_packet}-byte packet,"),
                };
                return fail(
                    key,
                    format!(
                        "switch {s} sets apart {} of headroom and {} of reserve over its {ports} ports, leaving {left} of its {} buffer to share; raise switch.buffer or lower switch.pfc.headroom or switch.pfc.reserve",
                        crate::time::format_bytes(headroom),
                        crate::time::format_bytes(reserve),
                        sw.buffer
                    ),
                );
            }
        }
    }
    Ok(())
}

/// The XOFF threshold of a switch whose buffer is counted in `pools`: the static one if the
/// scenario gives it, else alpha x the free shared pool.
#[inline]
pub(crate) fn xoff(static_xoff: Option<u64>, pools: &Pools, alpha: f64) -> u64 {
    match static_xoff {
        Some(x) => x,
        None => pools.dynamic_xoff(alpha),
    }
}

/// A port's pause bits after a PFC frame for `class`, and how its paused time changes: `Some(true)`
/// when it has just become paused (no class was), `Some(false)` when its last class has just
/// resumed.
#[inline]
pub(crate) fn after_frame(paused: u8, class: u8, pause: bool) -> (u8, Option<bool>) {
    let now = if pause { paused | 1 << class } else { paused & !(1 << class) };
    let edge = match (paused, now) {
        (0, n) if n != 0 => Some(true),
        (p, 0) if p != 0 => Some(false),
        _ => None,
    };
    (now, edge)
}

impl Simulation {
    /// XOFF threshold of this switch right now.
    #[inline]
    fn xoff(&self, sw: usize) -> u64 {
        xoff(self.params.pfc_static_xoff, &self.net.switches[sw].pools, self.params.pfc_alpha)
    }

    /// Bytes from `in_port` at priority `prio` were admitted: pause the upstream if its shared
    /// bytes are now above XOFF, or the shared pool had no room for them (`buffer.rs`).
    #[inline]
    pub(super) fn pause_if_due(&mut self, in_port: u32, prio: u8, sw: usize) {
        let port = &self.net.ports[in_port as usize];
        let ingress = port.prio[prio as usize].ingress;
        if port.pausing_peer & (1 << prio) == 0 && ingress.pause_due(self.net.switches[sw].reserve, self.xoff(sw)) {
            self.net.ports[in_port as usize].pausing_peer |= 1 << prio;
            self.send_pfc(in_port, prio, true);
        }
    }

    /// Bytes that came in through `ing`, which has paused its upstream for `prio`, left the
    /// buffer: resume the upstream once its headroom is empty and its shared bytes are down to
    /// XOFF - xon_delta.
    #[inline]
    ///
    /// `sending` is the port whose packet is being dequeued, if that is `ing` (a route that
    /// turns back, which only a link failure makes): the frame then waits behind that packet,
    /// which the caller is about to start, instead of starting first on the same idle port.
    pub(super) fn resume_if_below_xon(&mut self, ing: u32, prio: u8, sw: usize, sending: bool) {
        let left = self.net.ports[ing as usize].prio[prio as usize].ingress;
        if left.below_xon(self.net.switches[sw].reserve, self.xoff(sw), self.params.xon_delta) {
            self.net.ports[ing as usize].pausing_peer &= !(1 << prio);
            self.queue_pfc(ing, prio, false);
            if !sending {
                self.kick(ing);
            }
        }
    }

    /// A PFC frame arrived at port `at`: pause or resume its egress for `class`.
    pub(super) fn pfc_frame_received(&mut self, at: u32, class: u8, pause: bool) {
        let now = self.now;
        let port = &mut self.net.ports[at as usize];
        let edge;
        (port.paused, edge) = after_frame(port.paused, class, pause);
        match edge {
            Some(true) => port.stats.paused_since = Some(now),
            Some(false) => {
                if let Some(since) = port.stats.paused_since.take() {
                    port.stats.paused_time += now - since;
                }
            }
            None => {}
        }
        if !pause {
            self.kick(at);
        }
    }

    /// Queues a PFC frame on port `p` towards its peer and starts it if the port is idle.
    pub(crate) fn send_pfc(&mut self, p: u32, class: u8, pause: bool) {
        self.queue_pfc(p, class, pause);
        self.kick(p);
    }

    /// Queues a PFC frame on port `p` towards its peer, ahead of every data packet.
    fn queue_pfc(&mut self, p: u32, class: u8, pause: bool) {
        let mut pkt = Packet::new(PacketKind::Pfc, CONTROL_PRIORITY, self.params.pause_size);
        pkt.pfc_class = class;
        pkt.flag = pause;
        let id = self.net.packets.alloc(pkt);
        if self.observe.recorder.logs_pauses() {
            self.observe.recorder.pfc_frame(self.now, p, class, pause);
        }
        let port = &mut self.net.ports[p as usize];
        port.pfc_out.push_back(id);
        port.pfc_frames += 1;
        if pause {
            port.stats.pause_sent += 1;
            self.observe.counters.pause_frames += 1;
        } else {
            port.stats.resume_sent += 1;
            self.observe.counters.resume_frames += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Bandwidth, ByteSize, SimTime};

    fn link(gbps: u64, delay_us: u64) -> PortInfo {
        PortInfo { node: 0, peer: 1, bandwidth: Bandwidth::from_gbps(gbps), delay: SimTime::from_us(delay_us) }
    }

    #[test]
    fn default_headroom_covers_a_round_trip_three_packets_and_the_pause() {
        let pfc = PfcConfig::default();
        // 100 Gb/s, 1 us: 12.5 KB each way.
        assert_eq!(port_headroom(&link(100, 1), &pfc, 1_048, 64), 2 * 12_500 + 3 * 1_048 + 64);
        // Twice the delay: the round trip's part doubles, the packets' does not.
        assert_eq!(port_headroom(&link(100, 2), &pfc, 1_048, 64), 2 * 25_000 + 3 * 1_048 + 64);
        let given = PfcConfig { headroom: Some(ByteSize(7_000)), ..PfcConfig::default() };
        assert_eq!(port_headroom(&link(100, 2), &given, 1_048, 64), 7_000, "as configured");
        let off = PfcConfig { enabled: false, ..PfcConfig::default() };
        assert_eq!(port_headroom(&link(100, 1), &off, 1_048, 64), 0, "without PFC, none");
    }

    #[test]
    fn a_static_xoff_holds_and_a_dynamic_one_shrinks_as_the_shared_pool_fills() {
        let mut pools = Pools::new(1_000_000, 0, 200_000);
        assert_eq!(xoff(Some(30_000), &pools, 0.125), 30_000);
        assert_eq!(xoff(None, &pools, 0.125), 100_000, "alpha x (1 MB - 200 KB of headroom)");
        assert!(pools.admit_unowned(400_000));
        assert_eq!(xoff(None, &pools, 0.125), 50_000);
        assert_eq!(xoff(Some(30_000), &pools, 0.125), 30_000, "static: whatever the pool holds");
        assert!(pools.admit_unowned(400_000));
        assert_eq!(xoff(None, &pools, 0.125), 0, "a full pool pauses at once");
        assert_eq!(xoff(None, &Pools::new(1_000_000, 0, 0), 1.0), 1_000_000);
    }

    #[test]
    fn a_port_is_paused_while_any_class_is_and_its_time_counts_from_the_first_to_the_last() {
        assert_eq!(after_frame(0, 3, true), (1 << 3, Some(true)));
        assert_eq!(after_frame(1 << 3, 3, true), (1 << 3, None), "a second PAUSE changes nothing");
        assert_eq!(after_frame(1 << 3, 5, true), (1 << 3 | 1 << 5, None));
        assert_eq!(after_frame(1 << 3 | 1 << 5, 3, false), (1 << 5, None), "class 5 still paused");
        assert_eq!(after_frame(1 << 5, 5, false), (0, Some(false)));
        assert_eq!(after_frame(0, 5, false), (0, None), "a RESUME of what was not paused");
    }
}
