//! Priority flow control (IEEE 802.1Qbb) as the HPCC ns-3 switch does it.
//!
//! Each switch counts, per ingress port and priority, the bytes that came in through it and are
//! still in its buffer, by pool (`buffer.rs`: reserve, shared, headroom). When the ingress's
//! shared bytes rise above XOFF the switch sends PAUSE for that priority upstream; once its
//! headroom has drained and its shared bytes fall to XOFF - `xon_delta` (or to zero), RESUME.
//! XOFF is static (`switch.pfc.xoff`) or dynamic: alpha x the free shared pool, the
//! Broadcom-style shared-buffer rule. PAUSE and RESUME are 64-byte frames queued ahead of
//! everything on the port facing the upstream; a PAUSE holds until its RESUME (no pause quanta).

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

impl Simulation {
    /// XOFF threshold of this switch right now.
    #[inline]
    fn xoff(&self, sw: usize) -> u64 {
        match self.params.pfc_static_xoff {
            Some(x) => x,
            None => self.net.switches[sw].pools.dynamic_xoff(self.params.pfc_alpha),
        }
    }

    /// Bytes from `in_port` at priority `prio` were admitted: pause the upstream if its shared
    /// bytes are now above XOFF.
    #[inline]
    pub(super) fn pause_if_above_xoff(&mut self, in_port: u32, prio: u8, sw: usize) {
        let port = &self.net.ports[in_port as usize];
        let ingress = port.prio[prio as usize].ingress;
        if port.pausing_peer & (1 << prio) == 0 && ingress.above_xoff(self.net.switches[sw].reserve, self.xoff(sw)) {
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

    /// Queues a PFC frame on port `p` towards its peer and starts it if the port is idle.
    pub(crate) fn send_pfc(&mut self, p: u32, class: u8, pause: bool) {
        self.queue_pfc(p, class, pause);
        self.kick(p);
    }

    /// Queues a PFC frame on port `p` towards its peer, ahead of every data packet.
    fn queue_pfc(&mut self, p: u32, class: u8, pause: bool) {
        let mut pkt = Packet::new(PacketKind::Pfc, CONTROL_PRIORITY, self.params.pause_size);
        pkt.pfc_class = class;
        pkt.pfc_pause = pause;
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
