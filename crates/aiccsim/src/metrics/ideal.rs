//! The ideal FCT: the flow alone on an idle network, sent back to back at line rate, headers
//! included, store-and-forward at every hop. The slowdown of a flow is its FCT over this.
//!
//! For identical packets through a chain of store-and-forward hops, packet i (from 1) finishes
//! leaving hop h at S_h + (i-1)·M_h, where S_h is the first packet's finish time there (its
//! serialisation at hops 0..=h plus the propagation in between) and M_h the largest per-packet
//! serialisation time among hops 0..=h: the queue builds behind the slowest hop so far. The last
//! packet may be shorter, so it is followed hop by hop. Exact, and O(hops) for any flow size.

use crate::time::SimTime;
use crate::topology::Topology;

pub fn ideal_fct(topo: &Topology, path: &[u32], size: u64, mtu: u64, header: u64) -> SimTime {
    let full_packets = size / mtu;
    let tail = size % mtu;
    let (identical, last_payload) = if tail == 0 { (full_packets - 1, mtu) } else { (full_packets, tail) };
    let full = mtu + header;
    let last = last_payload + header;

    let mut first_done = SimTime::ZERO; // S_h for the identical packets
    let mut slowest = SimTime::ZERO; // M_h
    let mut last_done = SimTime::ZERO; // finish of the last packet at hop h
    let mut prev_delay = SimTime::ZERO;
    for (h, &p) in path.iter().enumerate() {
        let info = &topo.ports[p as usize];
        let tx_full = info.bandwidth.tx_time(full);
        let tx_last = info.bandwidth.tx_time(last);
        first_done = if h == 0 { tx_full } else { first_done + prev_delay + tx_full };
        slowest = slowest.max(tx_full);
        let identical_done =
            if identical == 0 { SimTime::ZERO } else { first_done + SimTime(slowest.0.saturating_mul(identical - 1)) };
        let arrive = if h == 0 { SimTime::ZERO } else { last_done + prev_delay };
        last_done = arrive.max(identical_done) + tx_last;
        prev_delay = info.delay;
    }
    last_done + prev_delay
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DumbbellTopology, LinkConfig, TopologyConfig};
    use crate::time::Bandwidth;

    fn dumbbell(edge_gbps: u64, core_gbps: u64) -> Topology {
        let l = |g| LinkConfig { bandwidth: Bandwidth::from_gbps(g), delay: SimTime::from_us(1) };
        Topology::build(&TopologyConfig::Dumbbell(DumbbellTopology {
            left: 1,
            right: 1,
            link: l(edge_gbps),
            bottleneck: l(core_gbps),
        }))
        .unwrap()
    }

    /// Packet-by-packet reference: departure = max(arrival, previous departure) + tx.
    fn reference(topo: &Topology, path: &[u32], size: u64, mtu: u64, header: u64) -> SimTime {
        let mut sizes = vec![mtu + header; (size / mtu) as usize];
        if !size.is_multiple_of(mtu) {
            sizes.push(size % mtu + header);
        }
        let mut ready: Vec<SimTime> = vec![SimTime::ZERO; sizes.len()];
        for &p in path {
            let info = &topo.ports[p as usize];
            let mut free = SimTime::ZERO;
            for (i, &s) in sizes.iter().enumerate() {
                free = free.max(ready[i]) + info.bandwidth.tx_time(s);
                ready[i] = free + info.delay;
            }
        }
        *ready.last().unwrap()
    }

    #[test]
    fn matches_packet_by_packet_reference() {
        for (edge, core) in [(100, 100), (100, 25), (25, 100), (400, 100)] {
            let t = dumbbell(edge, core);
            let path = t.path(0, 1, 0);
            for size in [1, 999, 1000, 1001, 5_500, 1_000_000, 1_234_567] {
                assert_eq!(
                    ideal_fct(&t, &path, size, 1000, 48),
                    reference(&t, &path, size, 1000, 48),
                    "{edge}/{core} {size}"
                );
            }
        }
    }

    #[test]
    fn a_flow_longer_than_the_clock_saturates() {
        let t = dumbbell(100, 100);
        let path = t.path(0, 1, 0);
        // 18 EB in 1-byte packets: more picoseconds than 64 bits hold.
        assert_eq!(ideal_fct(&t, &path, 18_000_000_000_000_000_000, 1, 48), SimTime::MAX);
    }

    #[test]
    fn long_flow_is_size_over_rate_plus_latency() {
        let t = dumbbell(100, 100);
        let path = t.path(0, 1, 0);
        let ideal = ideal_fct(&t, &path, 10_000_000, 1000, 48);
        // 10^4 packets of 1048 B at 100 Gbps, plus two more serialisations and three delays.
        let expect = SimTime(10_000 * 83_840 + 2 * 83_840 + 3 * 1_000_000);
        assert_eq!(ideal, expect);
    }
}
