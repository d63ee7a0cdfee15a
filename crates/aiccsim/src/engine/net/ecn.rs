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

/// What RED decides for a data packet, before any coin is tossed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Marking {
    Never,
    Always,
    /// Marked with this probability (one draw from the switch's stream).
    Random(f64),
}

impl Marking {
    /// The probability of a mark.
    #[cfg(test)]
    fn probability(self) -> f64 {
        match self {
            Marking::Never => 0.0,
            Marking::Always => 1.0,
            Marking::Random(p) => p,
        }
    }
}

/// RED's decision for a packet joining (or leaving) an egress queue of `queue` bytes: never at
/// or below Kmin, always above Kmax, and in between with a probability rising linearly from 0
/// at Kmin to `pmax` at Kmax. (Between the two a coin is tossed even where the probability is
/// 0 or 1, so the switch's random stream moves as it always has.)
#[inline]
pub(crate) fn marking(queue: u64, kmin: u64, kmax: u64, pmax: f64) -> Marking {
    if queue <= kmin {
        Marking::Never
    } else if queue > kmax {
        Marking::Always
    } else {
        Marking::Random(pmax * (queue - kmin) as f64 / (kmax - kmin).max(1) as f64)
    }
}

impl Simulation {
    /// RED: mark packet `id` as [`marking`] decides, judged on the egress queue of the packet's
    /// priority.
    pub(super) fn maybe_mark(&mut self, port: u32, sw: usize, id: PacketId) {
        let pt = &self.net.ports[port as usize];
        let q = pt.prio[self.net.packets[id].priority as usize].bytes;
        let mark = match marking(q, pt.kmin as u64, pt.kmax as u64, self.params.ecn_pmax) {
            Marking::Never => false,
            Marking::Always => true,
            Marking::Random(p) => self.net.ecn_rng[sw].random::<f64>() < p,
        };
        let pkt = &mut self.net.packets[id];
        if mark && !pkt.ecn {
            pkt.ecn = true;
            self.net.ports[port as usize].stats.ecn_marks += 1;
            self.observe.counters.ecn_marks += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KMIN: u64 = 100_000;
    const KMAX: u64 = 400_000;

    #[test]
    fn no_mark_at_or_below_kmin_pmax_at_kmax_and_always_above() {
        assert_eq!(marking(0, KMIN, KMAX, 0.2), Marking::Never);
        assert_eq!(marking(KMIN, KMIN, KMAX, 0.2), Marking::Never);
        assert_eq!(marking(KMAX, KMIN, KMAX, 0.2), Marking::Random(0.2));
        assert_eq!(marking(KMAX + 1, KMIN, KMAX, 0.2), Marking::Always);
        assert_eq!(marking(u64::MAX, KMIN, KMAX, 0.2), Marking::Always);
    }

    #[test]
    fn the_probability_rises_linearly_and_never_falls_with_the_queue() {
        let p = |q| marking(q, KMIN, KMAX, 0.5).probability();
        assert_eq!(p(KMIN + 150_000), 0.25, "half way up the ramp, half of pmax");
        assert!((p(KMIN + 1) - 0.5 / 300_000.0).abs() < 1e-15);
        let mut last = 0.0;
        for q in (0..=KMAX + 10_000).step_by(997) {
            assert!(p(q) >= last, "queue {q}: {} after {last}", p(q));
            assert!(p(q) <= 1.0);
            last = p(q);
        }
    }

    #[test]
    fn equal_thresholds_are_a_step_from_never_to_always() {
        assert_eq!(marking(KMIN, KMIN, KMIN, 0.3), Marking::Never);
        assert_eq!(marking(KMIN + 1, KMIN, KMIN, 0.3), Marking::Always);
    }
}
