//! The entropy of each data packet (`nic.load_balancing`): what a sending NIC writes into the
//! header field that switches hash to pick among equal-cost paths (RoCEv2's UDP source port, the
//! entropy value of the Ultra Ethernet transport). Switches routing by `"ecmp"` hash it, so the
//! NIC, not the switch, decides whether a flow's packets share a path.
//!
//! - `flow`: one entropy per connection, its ECMP key (`Flow::ecmp_key`): one path per flow.
//! - `oblivious`: every packet a new entropy among `nic.entropies`, blind to the paths' state;
//!   each round of `entropies` packets takes every one once, in an order that a round's random
//!   mask sets (uet-htsim's `UecMpOblivious`).
//! - `reps`: the entropies of packets that came back unmarked are sent again; fresh ones are
//!   drawn at random among `nic.entropies` (`reps.rs`).
//!
//! An entropy value `e` of a connection becomes the packet's key `mix64(connection key ^ e x
//! an odd constant)`: switches hash the key with their own number (`routing::ecmp_pick`), as
//! uet-htsim's hash the flow and the entropy with a per-switch salt, so each of a connection's
//! entropies is a path drawn independently of its others and of other connections'. ACKs,
//! NACKs and CNPs echo the key of the packet they answer and return on it (`host.rs`), which is
//! how REPS hears which entropy an ACK is about.
//!
//! The draws are a hash of the connection's key and a per-connection count, not a random
//! stream: a connection's entropies do not depend on what other flows do, and a run is the same
//! for the same seed. Everything here is per connection (the key, the count, REPS's ring), as a
//! Ultra Ethernet sender keeps it per packet delivery context; with `connections =
//! "persistent"` the transfers of a connection share it.

use super::reps::Reps;
use crate::config::{LoadBalancing, NicConfig, DEFAULT_ENTROPIES};
use crate::engine::Simulation;
use crate::rng::mix64;
use crate::wire::packet::Packet;

/// What the sender keeps to choose entropies, when it sprays.
pub struct Entropies {
    /// `nic.entropies` - 1 (a power of two less one).
    mask: u64,
    /// Per connection: entropies it drew (oblivious: every packet's; REPS: the fresh ones).
    drawn: Vec<u64>,
    reps: Option<Reps>,
}

impl Entropies {
    /// For `connections` connections (indexed by id); empty under `load_balancing = "flow"`.
    pub fn new(nic: &NicConfig, connections: usize) -> Entropies {
        let spraying = nic.load_balancing != LoadBalancing::Flow;
        Entropies {
            mask: u64::from(nic.entropies.unwrap_or(DEFAULT_ENTROPIES)) - 1,
            drawn: if spraying { vec![0; connections] } else { Vec::new() },
            reps: (nic.load_balancing == LoadBalancing::Reps).then(|| Reps::new(nic.reps.unwrap_or_default())),
        }
    }

    /// The next entropy value of oblivious spraying for a connection of key `conn_key` that has
    /// drawn `n` before: position `n mod entropies` of the round `n / entropies`, whose order is
    /// the positions XORed with the round's random mask (a permutation).
    fn oblivious(&self, conn_key: u64, n: u64) -> u64 {
        let entropies = self.mask + 1;
        let round_mask = mix64(conn_key ^ mix64((n / entropies) ^ 0x6F62_6C69_7669_6F75)) & self.mask;
        (n & self.mask) ^ round_mask
    }

    /// A fresh entropy value, uniform among `entropies`: the `n`th draw of connection `conn_key`.
    fn fresh(&self, conn_key: u64, n: u64) -> u64 {
        mix64(conn_key ^ mix64(n ^ 0x7265_7073_6672_6573)) & self.mask
    }

    /// Connection `c` sends no more (its one transfer is done): its REPS ring goes back to the
    /// pool.
    #[inline]
    pub fn release(&mut self, c: u32) {
        if let Some(reps) = self.reps.as_mut() {
            reps.release(c);
        }
    }

    /// Bytes per connection, for the memory estimate (`estimate.rs`): the count, and REPS's
    /// slot if each connection took one.
    pub fn bytes_per_connection(nic: &NicConfig) -> usize {
        match nic.load_balancing {
            LoadBalancing::Flow => 0,
            LoadBalancing::Oblivious => std::mem::size_of::<u64>(),
            LoadBalancing::Reps => {
                std::mem::size_of::<u64>()
                    + std::mem::size_of::<u32>()
                    + Reps::slot_bytes(nic.reps.unwrap_or_default().buffer)
            }
        }
    }
}

/// The key a packet on entropy value `e` of the connection with key `conn_key` carries.
#[inline]
fn key_of(conn_key: u64, e: u64) -> u64 {
    mix64(conn_key ^ (e + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

impl Simulation {
    /// The ECMP key of flow `f`'s next data packet when the NIC sprays (`load_balancing` is not
    /// `flow`). NVLink transfers, which have one path, keep their connection's.
    #[inline(never)]
    pub(super) fn next_entropy(&mut self, f: u32) -> u64 {
        let flow = &self.nic.flows[f as usize];
        let (c, conn_key) = (flow.conn, flow.ecmp_key);
        if flow.nvlink {
            return conn_key;
        }
        let e = &mut self.nic.entropy;
        if let Some(reps) = e.reps.as_mut() {
            let slot = reps.ensure(c);
            if let Some(key) = reps.next(slot) {
                return key;
            }
        }
        let n = e.drawn[c as usize];
        e.drawn[c as usize] += 1;
        let value = match self.params.load_balancing {
            LoadBalancing::Oblivious => e.oblivious(conn_key, n),
            _ => e.fresh(conn_key, n),
        };
        key_of(conn_key, value)
    }

    /// REPS hears an ACK: an unmarked one gives its entropy back to its connection's ring.
    #[inline(never)]
    pub(super) fn reps_ack(&mut self, ack: &Packet) {
        let now = self.now;
        let c = self.nic.flows[ack.flow as usize].conn;
        let reps = self.nic.entropy.reps.as_mut().expect("REPS keeps rings");
        if let Some(slot) = reps.slot(c) {
            reps.ack(slot, ack.ecmp_key, ack.ecn, now);
        }
    }

    /// Flow `f`'s retransmission timeout fired: REPS freezes its connection's ring.
    pub(super) fn reps_timeout(&mut self, f: u32) {
        let now = self.now;
        let c = self.nic.flows[f as usize].conn;
        if let Some(reps) = self.nic.entropy.reps.as_mut() {
            if let Some(slot) = reps.slot(c) {
                reps.timeout(slot, now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entropies(load_balancing: LoadBalancing, n: u32) -> Entropies {
        let nic = NicConfig { load_balancing, entropies: Some(n), ..NicConfig::default() };
        Entropies::new(&nic, 4)
    }

    #[test]
    fn oblivious_spraying_takes_every_entropy_once_a_round_in_a_new_order() {
        let e = entropies(LoadBalancing::Oblivious, 16);
        let rounds: Vec<Vec<u64>> = (0..4).map(|r| (0..16).map(|i| e.oblivious(77, r * 16 + i)).collect()).collect();
        for round in &rounds {
            let mut sorted = round.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..16).collect::<Vec<u64>>(), "a permutation: {round:?}");
        }
        assert!(rounds.windows(2).any(|w| w[0] != w[1]), "the order changes between rounds");
        assert_ne!(
            (0..16).map(|i| e.oblivious(78, i)).collect::<Vec<_>>(),
            rounds[0],
            "another connection, another order (but for a 1 in 16 chance)"
        );
    }

    #[test]
    fn fresh_entropies_are_uniform_among_the_values() {
        let e = entropies(LoadBalancing::Reps, 8);
        let mut counts = [0u32; 8];
        for n in 0..16_000 {
            counts[e.fresh(5, n) as usize] += 1;
        }
        for c in counts {
            assert!((1_850..2_150).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn each_entropy_is_a_key_of_its_own_and_the_flow_mode_keeps_no_state() {
        let keys: std::collections::BTreeSet<u64> = (0..64).map(|e| key_of(42, e)).collect();
        assert_eq!(keys.len(), 64);
        assert!(!keys.contains(&42), "no entropy is the connection's own key");
        let flow = Entropies::new(&NicConfig::default(), 1_000);
        assert!(flow.drawn.is_empty() && flow.reps.is_none());
    }
}
