//! Choosing among equal-cost next hops, and the seeded hashing behind it.
//!
//! All hashing uses SplitMix64, whose output is fixed by its specification, so a flow takes the
//! same ECMP path on every machine and every Rust release (std's `DefaultHasher` promises neither).

use crate::rng::mix64;

/// The ECMP key of a flow: what a switch would hash from its 5-tuple. Different seeds give
/// different (but repeatable) path assignments.
pub fn flow_key(seed: u64, flow: u32) -> u64 {
    mix64(seed ^ mix64(flow as u64 ^ 0xA5A5_0000_0000_0000))
}

/// Which of `n` equal-cost next hops switch `node` gives a flow. Each switch mixes in its own
/// number, as real switches use per-switch hash seeds, so choices at successive tiers are
/// independent (no polarisation).
#[inline]
pub fn ecmp_pick(flow_key: u64, node: u32, n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    (mix64(flow_key ^ (node as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)) % n as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecmp_spreads_flows_evenly() {
        let mut counts = [0u32; 4];
        for f in 0..40_000 {
            counts[ecmp_pick(flow_key(1, f), 17, 4)] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn seeds_change_paths() {
        let same = (0..1000).filter(|&f| ecmp_pick(flow_key(1, f), 3, 8) == ecmp_pick(flow_key(2, f), 3, 8)).count();
        assert!(same < 250, "{same}");
    }
}
