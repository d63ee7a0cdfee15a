//! Named random streams derived from the run's root seed.
//!
//! Each consumer (a switch's ECN marker, a switch's sprayer, a workload generator) gets its own
//! stream, keyed by a name and an index, so adding a consumer never shifts anyone else's numbers.
//! The crate's hashes live here too: SplitMix64 ([`mix64`]) for ECMP keys and packet choices, and
//! FNV-1a for stream names, both fixed by their specifications (std's hasher is not).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub type SimRng = ChaCha8Rng;

/// SplitMix64 finaliser: a fast, well-mixed 64-bit hash of a 64-bit value.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, 64 bits: fixed by specification, unlike std's hasher, so what it names (a random
/// stream here, a sweep point's folder in the CLI) stays the same across Rust versions and
/// platforms.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3))
}

pub fn stream(seed: u64, name: &str, index: u64) -> SimRng {
    ChaCha8Rng::seed_from_u64(mix64(seed ^ fnv1a(name.as_bytes())) ^ mix64(index.wrapping_add(0x1234_5678)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn fnv1a_is_the_specified_function() {
        // The specification's test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn streams_are_repeatable_and_distinct() {
        let a: u64 = stream(1, "ecn", 0).random();
        let b: u64 = stream(1, "ecn", 0).random();
        let c: u64 = stream(1, "ecn", 1).random();
        let d: u64 = stream(1, "spray", 0).random();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
