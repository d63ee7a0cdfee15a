//! ECN marking, RED-style (the CP of DCQCN, §3.1; the marking DCTCP and HPCC's baselines use):
//! a data packet is marked with probability 0 while its egress queue (its priority's bytes) is
//! at most Kmin, rising linearly to Pmax at Kmax, and always above Kmax. Kmin and Kmax are given
//! for a reference link speed and scaled to each port's (`switch.ecn.reference_bandwidth`).
//! Marking happens as the packet is admitted or, with `mark_at = "dequeue"`, as it leaves.

use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use rand::RngExt;

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
