//! ECN marking, RED-style (the CP of DCQCN, §3.1; the marking DCTCP and HPCC's baselines use):
//! a data packet is marked with probability 0 while its egress queue (its priority's bytes) is
//! at most Kmin, rising linearly to Pmax at Kmax, and always above Kmax. Kmin and Kmax are given
//! for a reference link speed and scaled to each port's (`switch.ecn.reference_bandwidth`).
//! Marking happens as the packet is admitted or, with `mark_at = "dequeue"`, as it leaves.

use crate::cc::Check;
use crate::config::{fail, SwitchConfig};
use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use crate::topology::Topology;
use rand::RngExt;

/// ECN thresholds scale with each port's speed: a reference speed that puts Kmin above the
/// buffer on every switch port turns marking off without a word, and is refused. (A Kmin above
/// a small buffer as given is the scenario's own choice.)
pub(crate) fn check(sw: &SwitchConfig, topo: &Topology) -> Check {
    if sw.ecn.enabled && sw.ecn.kmin <= sw.buffer {
        let slowest_port = topo.fabric_switch_ports().map(|p| p.bandwidth).min();
        if let Some(bw) = slowest_port {
            let kmin = sw.ecn.scaled(sw.ecn.kmin, bw);
            if kmin > sw.buffer.0 as u128 {
                return fail(
                    "switch.ecn.reference_bandwidth",
                    format!(
                        "scales kmin ({}) above the {} buffer on every switch port ({kmin} B on the slowest, {bw}), so no packet could ever be marked; give the port speed kmin and kmax are meant for (\"100Gbps\" for the HPCC study's 400KB / 1600KB), or ecn = {{ enabled = false }}",
                        sw.ecn.kmin, sw.buffer
                    ),
                );
            }
        }
    }
    Ok(())
}

impl Simulation {
    /// RED: mark packet `id` with probability 0 below Kmin, rising linearly to Pmax at Kmax, 1
    /// above Kmax, judged on the egress queue of the packet's priority.
    pub(super) fn maybe_mark(&mut self, port: u32, sw: usize, id: PacketId) {
        let pt = &self.net.ports[port as usize];
        let q = pt.prio[self.net.packets[id].priority as usize].bytes;
        let (kmin, kmax) = (pt.kmin as u64, pt.kmax as u64);
        let mark = if q <= kmin {
            false
        } else if q > kmax {
            true
        } else {
            let p = self.params.ecn_pmax * (q - kmin) as f64 / (kmax - kmin).max(1) as f64;
            self.net.ecn_rng[sw].random::<f64>() < p
        };
        let pkt = &mut self.net.packets[id];
        if mark && !pkt.ecn {
            pkt.ecn = true;
            self.net.ports[port as usize].stats.ecn_marks += 1;
            self.observe.counters.ecn_marks += 1;
        }
    }
}
