//! Choosing a switch's egress port among the equal-cost next hops to a host, each switch as its
//! tier says (`switch.routing`): ECMP (a hash of the flow's key, the same path for every packet
//! of a flow), per-packet spray (a seeded random pick per packet), round-robin spray (each
//! equal-cost set's packets take its hops in turn), adaptive (the least-loaded port, ties broken
//! from the ECMP pick, or at random: the ideal bound, exact and instant knowledge of the local
//! queues), flowlets (a flow keeps its hop until a gap in its packets, then may move), and the
//! adaptive routings switches implement: DLB (sampled, quantised port quality, `dlb.rs`),
//! spraying past a threshold (a flow leaves its ECMP hop only while that port's queue is above
//! it), and CONGA (path congestion fed back from the destination leaf, `conga.rs`). The next-hop
//! sets themselves are the topology's (`topology/routing.rs`).

use crate::cc::Check;
use crate::config::{fail, FlowletPick, Routing, RoutingConfig, Scenario, Tier};
use crate::engine::net::port::Port;
use crate::engine::Simulation;
use crate::rng::{mix64, SimRng};
use crate::time::SimTime;
use crate::topology::{routing, Topology};
use rand::RngExt;

/// One entry of a switch's flowlet table: the next hop of the flowlet that last used it, and
/// when its last packet arrived.
#[derive(Clone, Copy, Debug)]
struct FlowletSlot {
    last: SimTime,
    port: u32,
}

const EMPTY: FlowletSlot = FlowletSlot { last: SimTime::ZERO, port: u32::MAX };

/// A switch's flowlet table, sized when the run is laid out, as a switch's is in its ASIC: a
/// flow (and direction) is hashed to one entry. There are no tags: flows that hash to the same
/// entry share it, as they do in hardware, so they follow one next hop and either one's packets
/// keep the flowlet alive; where the entry's hop is not among a packet's next hops (a flow to
/// another destination), the packet starts a flowlet and the entry follows it.
#[derive(Default)]
pub struct FlowletTable {
    slots: Vec<FlowletSlot>,
}

impl FlowletTable {
    /// A table of `slots` entries (a power of two).
    pub fn new(slots: u32) -> Self {
        debug_assert!(slots.is_power_of_two());
        FlowletTable { slots: vec![EMPTY; slots as usize] }
    }

    #[inline]
    fn slot(&mut self, key: u64, dst: u32) -> &mut FlowletSlot {
        let h = mix64(key ^ u64::from(dst).wrapping_mul(0x9E37_79B9_7F4A_7C15)) as usize;
        let mask = self.slots.len() - 1;
        &mut self.slots[h & mask]
    }

    /// The hop a packet of flow `key` to `dst` keeps at `now` if its flowlet goes on (see
    /// [`flowlet_continues`]), its entry refreshed.
    #[inline]
    pub(crate) fn keeps(&mut self, key: u64, dst: u32, now: SimTime, gap: SimTime, hops: &[u32]) -> Option<u32> {
        let slot = self.slot(key, dst);
        flowlet_continues(slot, now, gap, hops).then(|| {
            slot.last = now;
            slot.port
        })
    }

    /// A flowlet of flow `key` to `dst` starts at `now` on `port`.
    #[inline]
    pub(crate) fn start(&mut self, key: u64, dst: u32, now: SimTime, port: u32) {
        *self.slot(key, dst) = FlowletSlot { last: now, port };
    }
}

/// The next hop with the fewest bytes ahead of a new packet (`load` of each, as [`load`] counts
/// them), trying them from `first` on (so that ties go to the first in that order).
#[inline]
fn least_loaded(hops: &[u32], first: usize, load: impl Fn(u32) -> u64) -> u32 {
    let mut best = hops[first];
    let mut best_q = load(best);
    for i in 1..hops.len() {
        let p = hops[(first + i) % hops.len()];
        let q = load(p);
        if q < best_q {
            best = p;
            best_q = q;
        }
    }
    best
}

/// The bytes a new packet at port `p` would wait behind: those queued and the rest of the one
/// being serialised (an idle port's rest is 0 without the multiply and divide of `bytes_in`).
///
/// A packet's bytes leave `queued` when its serialisation starts, so a port busy sending its last
/// packet would look as free as an idle one; flows arriving together would then all follow their
/// hashes. The bytes still to serialise count too: the load is what a new packet would wait
/// behind.
#[inline]
fn load(p: &Port, now: SimTime) -> u64 {
    p.queued + if p.busy_until > now { p.bandwidth.bytes_in(p.busy_until - now) } else { 0 }
}

/// The next hop with the fewest bytes ahead of a new packet (`load` of each), drawn at random
/// among those that tie: each of k equals is picked with probability 1/k (reservoir sampling,
/// one pass).
#[inline]
fn least_loaded_at_random(hops: &[u32], load: impl Fn(u32) -> u64, rng: &mut SimRng) -> u32 {
    least_at_random(hops, |_, p| load(p), rng)
}

/// The next hop with the least `metric` (of its place among `hops` and its port), drawn at
/// random among those that tie, as [`least_loaded_at_random`] draws.
#[inline]
pub(crate) fn least_at_random(hops: &[u32], mut metric: impl FnMut(usize, u32) -> u64, rng: &mut SimRng) -> u32 {
    let (mut best, mut best_q, mut ties) = (hops[0], metric(0, hops[0]), 1u32);
    for (i, &p) in hops.iter().enumerate().skip(1) {
        let q = metric(i, p);
        if q < best_q {
            (best, best_q, ties) = (p, q, 1);
        } else if q == best_q {
            ties += 1;
            if rng.random_range(0..ties) == 0 {
                best = p;
            }
        }
    }
    best
}

/// Whether a packet keeps the hop of its flowlet entry at `now`: the entry has one, the flow's
/// last packet came less than `gap` ago, and that hop is still among the packet's `hops`.
#[inline]
fn flowlet_continues(slot: &FlowletSlot, now: SimTime, gap: SimTime, hops: &[u32]) -> bool {
    slot.port != u32::MAX && now - slot.last < gap && hops.contains(&slot.port)
}

/// Routing by tier: a tier the scenario names must have switches.
pub(crate) fn check_tiers(s: &Scenario, topo: &Topology) -> Check {
    if let RoutingConfig::Tiers(named) = &s.switch.routing {
        let tiers = topo.switch_tiers();
        let fabric = &tiers[..topo.fabric_switches as usize];
        for tier in Tier::ALL {
            if named.named(tier).is_some() && !fabric.contains(&tier) {
                let has: Vec<&str> = Tier::ALL.iter().filter(|t| fabric.contains(t)).map(|t| t.name()).collect();
                return fail(
                    format!("switch.routing.{}", tier.name()),
                    format!(
                        "this {} topology has no {} switches (its tiers: {}); remove it, or name one of those",
                        s.topology.kind(),
                        tier.name(),
                        has.join(", ")
                    ),
                );
            }
        }
    }
    Ok(())
}

/// `[switch.ecmp_ns3]` against the fabric: a node id for every host and switch, no two alike
/// (ns-3 numbers its nodes 0, 1, ...).
pub(crate) fn check_ecmp_ns3(s: &Scenario, topo: &Topology) -> Check {
    let Some(c) = s.switch.ecmp_ns3.as_ref().filter(|_| s.switch.routing.uses(Routing::EcmpNs3)) else {
        return Ok(());
    };
    let lists = [
        ("host_ids", &c.host_ids, topo.fabric_hosts, "hosts", "host"),
        ("switch_ids", &c.switch_ids, topo.fabric_switches, "switches", "switch"),
    ];
    for (key, ids, count, what, each) in lists {
        if !ids.is_empty() && ids.len() != count as usize {
            return fail(
                format!("switch.ecmp_ns3.{key}"),
                format!(
                    "{} ids for the {count} {what} of this topology; give one per {each}, or leave it out",
                    ids.len()
                ),
            );
        }
    }
    let host_id = |h: u32| c.host_ids.get(h as usize).copied().unwrap_or(h);
    let switch_id = |j: u32| c.switch_ids.get(j as usize).copied().unwrap_or(topo.fabric_hosts + j);
    let mut seen = std::collections::BTreeMap::new();
    let nodes = (0..topo.fabric_hosts).map(|h| (host_id(h), format!("host {h}")));
    for (id, node) in nodes.chain((0..topo.fabric_switches).map(|j| (switch_id(j), format!("switch {j}")))) {
        if let Some(other) = seen.insert(id, node.clone()) {
            return fail(
                "switch.ecmp_ns3",
                format!("{other} and {node} are both ns-3 node {id}; ns-3 numbers every node once"),
            );
        }
    }
    Ok(())
}

impl Simulation {
    /// The egress port at switch `node` for a packet of `flow` to host `dst` with ECMP hash input
    /// `key`. (A switch always has a way: one that link failures cut off from the hosts has its
    /// packets dropped when they are detected, `failures.rs`, and gets no more.)
    #[inline]
    pub(super) fn route(&mut self, node: u32, sw: usize, dst: u32, key: u64, flow: u32) -> u32 {
        let hops = self.topo.next_hops(node, dst);
        if hops.len() == 1 {
            return hops[0];
        }
        match self.net.switches[sw].routing {
            Routing::Ecmp => hops[routing::ecmp_pick(key, node, hops.len())],
            Routing::Spray => hops[self.net.spray_rng[sw].random_range(0..hops.len())],
            Routing::RoundRobin => {
                let turn = &mut self.net.round_robin[self.topo.route_set(node, dst) as usize];
                // (Kept below the set's size, which a reroute may have changed.)
                let i = *turn as usize % hops.len();
                *turn = ((i + 1) % hops.len()) as u32;
                hops[i]
            }
            Routing::Adaptive => {
                let (ports, now) = (&self.net.ports, self.now);
                least_loaded(hops, routing::ecmp_pick(key, node, hops.len()), |p| load(&ports[p as usize], now))
            }
            Routing::AdaptiveSpray => {
                let (ports, now) = (&self.net.ports, self.now);
                least_loaded_at_random(hops, |p| load(&ports[p as usize], now), &mut self.net.spray_rng[sw])
            }
            Routing::Flowlet => self.flowlet_route(node, sw, dst, key),
            Routing::Dlb => {
                let band = &self.net.dlb.as_deref().expect("a DLB switch has DLB's state").band;
                least_loaded_at_random(hops, |p| u64::from(band[p as usize]), &mut self.net.spray_rng[sw])
            }
            Routing::SprayThreshold => {
                let (ports, now) = (&self.net.ports, self.now);
                let hashed = hops[routing::ecmp_pick(key, node, hops.len())];
                match ports[hashed as usize].queued <= self.params.spray_threshold {
                    true => hashed,
                    false => {
                        least_loaded_at_random(hops, |p| load(&ports[p as usize], now), &mut self.net.spray_rng[sw])
                    }
                }
            }
            Routing::Conga => self.conga_route(node, sw, dst, key),
            Routing::EcmpNs3 => {
                let ns3 = self.net.ecmp_ns3.as_deref().expect("an ecmp_ns3 switch has ns-3's tables");
                ns3.pick(sw as u32, self.topo.tor_number(dst), dst, flow)
            }
        }
    }

    /// Flowlet switching: the flow's entry keeps its hop while the flow's packets come closer
    /// together than the gap; otherwise a new flowlet picks its hop.
    #[inline]
    fn flowlet_route(&mut self, node: u32, sw: usize, dst: u32, key: u64) -> u32 {
        let now = self.now;
        let hops = self.topo.next_hops(node, dst);
        let slot = self.net.flowlets[sw].slot(key, dst);
        if flowlet_continues(slot, now, self.params.flowlet_gap, hops) {
            slot.last = now;
            return slot.port;
        }
        let port = match self.params.flowlet_pick {
            FlowletPick::Random => hops[self.net.spray_rng[sw].random_range(0..hops.len())],
            FlowletPick::Adaptive => {
                let ports = &self.net.ports;
                least_loaded(hops, routing::ecmp_pick(key, node, hops.len()), |p| load(&ports[p as usize], now))
            }
        };
        *slot = FlowletSlot { last: now, port };
        port
    }
}

const _: () = assert!(std::mem::size_of::<FlowletSlot>() == 16, "docs and the estimate count 16 bytes an entry");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Bandwidth;
    use crate::topology::PortInfo;
    use rand::SeedableRng;

    /// A load per port id.
    fn loads(l: &[u64]) -> impl Fn(u32) -> u64 + '_ {
        |p| l[p as usize]
    }

    #[test]
    fn the_least_loaded_hop_wins_and_ties_go_to_the_first_tried() {
        let l = [300, 100, 200, 100];
        let hops = [0, 1, 2, 3];
        assert_eq!(least_loaded(&hops, 0, loads(&l)), 1);
        assert_eq!(least_loaded(&hops, 2, loads(&l)), 3, "from 2 on, 3 comes before 1");
        assert_eq!(least_loaded(&[2, 0], 0, loads(&l)), 2);
        assert_eq!(least_loaded(&[1, 3], 1, loads(&l)), 3, "equal loads: the first tried");
    }

    #[test]
    fn the_least_loaded_choice_never_picks_a_longer_queue() {
        let mut rng = crate::rng::SimRng::seed_from_u64(3);
        for round in 0..2_000u64 {
            let n = 2 + (round % 7) as usize;
            let l: Vec<u64> = (0..n).map(|_| rng.random_range(0..5u64) * 1_000).collect();
            let hops: Vec<u32> = (0..n as u32).collect();
            let min = *l.iter().min().unwrap();
            let first = (round as usize) % n;
            assert_eq!(l[least_loaded(&hops, first, loads(&l)) as usize], min, "{l:?} from {first}");
            assert_eq!(l[least_loaded_at_random(&hops, loads(&l), &mut rng) as usize], min, "{l:?}");
        }
    }

    #[test]
    fn ties_are_broken_evenly_at_random() {
        let l = [50, 10, 10, 10];
        let mut rng = crate::rng::SimRng::seed_from_u64(9);
        let mut picked = [0u32; 4];
        for _ in 0..30_000 {
            picked[least_loaded_at_random(&[0, 1, 2, 3], loads(&l), &mut rng) as usize] += 1;
        }
        assert_eq!(picked[0], 0);
        for &k in &picked[1..] {
            assert!((k as f64 / 10_000.0 - 1.0).abs() < 0.05, "{picked:?}");
        }
    }

    #[test]
    fn a_port_still_sending_counts_the_rest_of_its_packet() {
        let info = PortInfo { node: 0, peer: 1, bandwidth: Bandwidth::from_gbps(100), delay: SimTime::from_us(1) };
        let mut port = Port::new(&info, 0, false, None);
        port.queued = 2_000;
        assert_eq!(load(&port, SimTime::from_us(1)), 2_000, "idle: what is queued");
        port.busy_until = SimTime::from_us(1) + SimTime::from_ns(80);
        assert_eq!(load(&port, SimTime::from_us(1)), 2_000 + 1_000, "80 ns at 100 Gb/s still to send");
        assert_eq!(load(&port, SimTime::from_us(2)), 2_000);
    }

    #[test]
    fn a_flowlet_keeps_its_hop_until_a_gap_or_until_the_hop_is_gone() {
        let gap = SimTime::from_us(10);
        let slot = FlowletSlot { last: SimTime::from_us(100), port: 7 };
        let hops = [5, 7, 9];
        assert!(flowlet_continues(&slot, SimTime::from_us(109), gap, &hops));
        assert!(!flowlet_continues(&slot, SimTime::from_us(110), gap, &hops), "a gap of exactly `gap`");
        assert!(!flowlet_continues(&slot, SimTime::from_us(101), gap, &[5, 9]), "its hop is not a way there");
        assert!(!flowlet_continues(&EMPTY, SimTime::ZERO, gap, &[u32::MAX]), "an empty entry");
    }

    #[test]
    fn a_flow_always_hashes_to_the_same_flowlet_entry() {
        let mut table = FlowletTable::new(1024);
        table.slot(42, 3).port = 11;
        assert_eq!(table.slot(42, 3).port, 11);
        let others = (0..64u64).filter(|&k| table.slot(k, 4).port == 11).count();
        assert!(others <= 1, "another destination lands elsewhere (but for a collision)");
    }
}
