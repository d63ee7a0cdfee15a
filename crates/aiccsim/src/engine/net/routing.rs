//! Choosing a switch's egress port among the equal-cost next hops to a host: ECMP (a hash of
//! the flow's key, the same path for every packet of a flow), per-packet spray (a seeded random
//! pick per packet), or adaptive (the least-loaded port, ties broken from the ECMP pick). The
//! next-hop sets themselves are the topology's (`topology/routing.rs`).

use crate::config::Routing;
use crate::engine::net::port::Port;
use crate::engine::Simulation;
use crate::topology::routing;
use rand::RngExt;

impl Simulation {
    /// The egress port at switch `node` for a packet to host `dst` with ECMP hash input `key`.
    #[inline]
    pub(super) fn route(&mut self, node: u32, sw: usize, dst: u32, key: u64) -> u32 {
        let hops = self.topo.next_hops(node, dst);
        if hops.len() == 1 {
            return hops[0];
        }
        match self.params.routing {
            Routing::Ecmp => hops[routing::ecmp_pick(key, node, hops.len())],
            Routing::Spray => hops[self.spray_rng[sw].random_range(0..hops.len())],
            Routing::Adaptive => {
                // A packet's bytes leave `queued` when its serialisation starts, so a port busy
                // sending its last packet would look as free as an idle one; flows arriving
                // together would then all follow their hashes. The bytes still to serialise
                // count too: the load is what a new packet would wait behind.
                let now = self.now;
                // An idle port's rest is 0 without the multiply and divide of `bytes_in`.
                let load =
                    |p: &Port| p.queued + if p.busy_until > now { p.bandwidth.bytes_in(p.busy_until - now) } else { 0 };
                let first = routing::ecmp_pick(key, node, hops.len());
                let mut best = hops[first];
                let mut best_q = load(&self.ports[best as usize]);
                for i in 1..hops.len() {
                    let p = hops[(first + i) % hops.len()];
                    let q = load(&self.ports[p as usize]);
                    if q < best_q {
                        best = p;
                        best_q = q;
                    }
                }
                best
            }
        }
    }
}
