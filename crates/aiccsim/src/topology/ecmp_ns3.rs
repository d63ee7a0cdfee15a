//! ECMP as the switches of the HPCC ns-3 simulator do it (`switch.routing = "ecmp_ns3"`), so
//! that a twin of one of its runs puts every flow on the path ns-3 puts it on. Line numbers are
//! of that simulator (alibaba-edu/High-Precision-Congestion-Control) at 9f4be2a.
//!
//! - **The hash** (`switch-node.cc:62-89`, `EcmpHash` at `:138-174`): 32-bit MurmurHash3 of 12
//!   bytes, the source and destination IPv4 addresses and the source port with the destination
//!   port in the high half (`sport | dport << 16`), seeded with the switch's node id (`m_ecmpSeed
//!   = m_id`, `:47`). An ACK or NACK carries the flow's addresses and ports swapped
//!   (`rdma-hw.cc:340-341`), so it is hashed as a packet of the reverse flow. aiccsim's CNP, a
//!   flag of the ACK in ns-3, goes the ACK's way.
//! - **The addresses and ports** (`scratch/third.cc`): node n's address is `0x0b000001 + (n /
//!   256) << 16 + (n % 256) << 8` (`node_id_to_ip`, `:155`); a flow's source port is 10000 for the
//!   first flow of its (source, destination) pair in the flow file, 10001 for the next, ...
//!   (`portNumder`, `:137` and `:988`, a 16-bit counter); its destination port is the flow
//!   file's.
//! - **The order of the next hops**, which the hash indexes (`nexthops[hash % size]`): a switch
//!   lists them in the order a breadth-first search from the destination reaches them
//!   (`CalculateRoute`, `third.cc:223-268`, filled into `m_rtTable` by `SetRoutingEntries`,
//!   `:278-301`). That search walks each node's neighbours in the order of a
//!   `std::map<Ptr<Node>, ...>` (`nbr2if`, `:107`): by the address of the node object. A
//!   `SwitchNode` holds `m_bytes[257][257][8]` (`switch-node.h:15-16`, 2.1 MB), which glibc's
//!   `malloc` gets from `mmap`, and Linux places successive mappings at falling addresses: the
//!   neighbours come in **descending node id**. (Checked against the peer's own packet trace
//!   on the k = 4 fat tree of `tests/ns3_peer`: all 200 flows' data and ACK paths, 400 of 400;
//!   ascending ids give 18 of 400.) Hosts never forward, so their place in that order changes
//!   nothing. Between two switches joined by several links, ns-3 keeps the last link listed
//!   (the map's entry is overwritten, `third.cc:799-806`), and so does this table.
//!
//! Link failures: ns-3 recomputes its tables with the link down (`TakeDownLink`, `:304-321`);
//! so do we, when aiccsim's switches reroute.

use crate::topology::Topology;

/// The IPv4 address the HPCC ns-3 simulator gives node `id` (`third.cc:155`).
pub fn ns3_ip(id: u32) -> u32 {
    0x0b00_0001u32.wrapping_add((id / 256).wrapping_mul(0x0001_0000)).wrapping_add((id % 256) * 0x0000_0100)
}

/// ns-3's `SwitchNode::EcmpHash` of the 12-byte key `GetOutDev` builds: three 32-bit words (source
/// address, destination address, `sport | dport << 16`), read as the little-endian machine that
/// ran it reads them, so each word is taken as its value.
pub fn ecmp_hash(key: [u32; 3], seed: u32) -> u32 {
    let mut h = seed;
    for word in key {
        let k = word.wrapping_mul(0xcc9e_2d51).rotate_left(15).wrapping_mul(0x1b87_3593);
        h ^= k;
        h = h.rotate_left(13);
        h = h.wrapping_add(h << 2).wrapping_add(0xe654_6b64);
    }
    // Twelve bytes: no tail. The length, then the finaliser.
    h ^= 12;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// The source port ns-3 gives the first flow of each (source, destination) pair (`third.cc:988`).
pub const FIRST_SOURCE_PORT: u16 = 10_000;

/// What ns-3 hashes of a flow: its hosts' addresses and its ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FlowTuple {
    /// aiccsim's destination host: a packet bound there goes the flow's way, one bound elsewhere
    /// (to the source) the way back.
    dst: u32,
    sip: u32,
    dip: u32,
    sport: u16,
    dport: u16,
}

/// ns-3's routing, for every fabric switch: its tables in ns-3's order, its seed, and what it
/// hashes of each flow.
pub struct EcmpNs3 {
    /// ns-3 node id of each fabric switch (by switch number): the neighbour order.
    switch_ids: Vec<u32>,
    /// Each fabric switch's hash seed: its ns-3 node id plus the scenario's offset.
    seeds: Vec<u32>,
    flows: Vec<FlowTuple>,
    num_tors: usize,
    /// `index[switch * num_tors + tor]`: the range of `ports` that lists the switch's next hops
    /// towards that ToR's hosts, in ns-3's order; empty for the ToR itself (its way down is the
    /// topology's) and for a switch cut off from it.
    index: Vec<(u32, u32)>,
    ports: Vec<u32>,
}

/// The ns-3 node ids of a twin's nodes, and the choices that move its paths.
pub struct Ns3Numbering<'a> {
    /// ns-3 node id of each fabric host; empty: host i is ns-3 node i.
    pub host_ids: &'a [u32],
    /// ns-3 node id of each fabric switch; empty: switch j is ns-3 node hosts + j.
    pub switch_ids: &'a [u32],
    /// Added to every switch's seed (0: ns-3's).
    pub seed_offset: u32,
    /// Every flow's destination port.
    pub dport: u16,
}

impl EcmpNs3 {
    /// ns-3's routing on `topo` for `flows` (source and destination host of each, in the flow
    /// file's order), its nodes numbered as `ids` says.
    pub fn new(topo: &Topology, ids: &Ns3Numbering, flows: impl Iterator<Item = (u32, u32)>) -> EcmpNs3 {
        let host_id = |h: u32| ids.host_ids.get(h as usize).copied().unwrap_or(h);
        let switch_ids: Vec<u32> = (0..topo.fabric_switches)
            .map(|s| ids.switch_ids.get(s as usize).copied().unwrap_or(topo.fabric_hosts + s))
            .collect();
        let seeds = switch_ids.iter().map(|&id| id.wrapping_add(ids.seed_offset)).collect();
        let mut next_port = std::collections::BTreeMap::<(u32, u32), u16>::new();
        let flows = flows
            .map(|(src, dst)| {
                let port = next_port.entry((src, dst)).or_insert(FIRST_SOURCE_PORT);
                let sport = *port;
                *port = port.wrapping_add(1);
                FlowTuple { dst, sip: ns3_ip(host_id(src)), dip: ns3_ip(host_id(dst)), sport, dport: ids.dport }
            })
            .collect();
        let mut routes =
            EcmpNs3 { switch_ids, seeds, flows, num_tors: topo.tors().len(), index: Vec::new(), ports: Vec::new() };
        routes.reroute(topo, None);
        routes
    }

    /// Computes the tables again over the links whose ports `up` marks (every link without it),
    /// as `TakeDownLink` does.
    pub fn reroute(&mut self, topo: &Topology, up: Option<&[bool]>) {
        let switches = topo.fabric_switches as usize;
        let node = |s: usize| topo.num_hosts + s as u32;
        // Each switch's switch neighbours, in descending ns-3 id, with the port of the last link
        // listed to each.
        let neighbours: Vec<Vec<(u32, u32)>> = (0..switches)
            .map(|s| {
                let mut by_id = std::collections::BTreeMap::new();
                for &p in &topo.node_ports[node(s) as usize] {
                    let other = topo.peer_node(p);
                    let is_up = up.is_none_or(|up| up[p as usize]);
                    if is_up && other >= topo.num_hosts && ((other - topo.num_hosts) as usize) < switches {
                        let o = other - topo.num_hosts;
                        by_id.insert(std::cmp::Reverse(self.switch_ids[o as usize]), (o, p));
                    }
                }
                by_id.into_values().collect()
            })
            .collect();
        let port_towards = |from: u32, to: u32| {
            neighbours[from as usize].iter().find(|&&(o, _)| o == to).map(|&(_, p)| p).expect("a neighbour both ways")
        };
        self.index = vec![(0, 0); switches * self.num_tors];
        self.ports.clear();
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); switches];
        let mut dist = vec![u32::MAX; switches];
        let mut queue: Vec<u32> = Vec::with_capacity(switches);
        for (t, &tor) in topo.tors().iter().enumerate() {
            let tor = tor - topo.num_hosts;
            lists.iter_mut().for_each(Vec::clear);
            dist.fill(u32::MAX);
            queue.clear();
            dist[tor as usize] = 0;
            queue.push(tor);
            let mut i = 0;
            while i < queue.len() {
                let now = queue[i];
                i += 1;
                for &(next, _) in &neighbours[now as usize] {
                    if dist[next as usize] == u32::MAX {
                        dist[next as usize] = dist[now as usize] + 1;
                        queue.push(next);
                    }
                    if dist[now as usize] + 1 == dist[next as usize] {
                        lists[next as usize].push(port_towards(next, now));
                    }
                }
            }
            for (s, list) in lists.iter().enumerate() {
                self.index[s * self.num_tors + t] = (self.ports.len() as u32, list.len() as u32);
                self.ports.extend_from_slice(list);
            }
        }
    }

    /// The egress port fabric switch `sw` gives a packet of flow `flow` bound for host `dst`
    /// (the flow's destination, or its source for what goes back), whose ToR is `tor`; `dst`
    /// must not hang off `sw`.
    #[inline]
    pub fn pick(&self, sw: u32, tor: u32, dst: u32, flow: u32) -> u32 {
        let f = &self.flows[flow as usize];
        let key = match dst == f.dst {
            true => [f.sip, f.dip, u32::from(f.sport) | u32::from(f.dport) << 16],
            false => [f.dip, f.sip, u32::from(f.dport) | u32::from(f.sport) << 16],
        };
        let (start, len) = self.index[sw as usize * self.num_tors + tor as usize];
        let hash = ecmp_hash(key, self.seeds[sw as usize]);
        self.ports[(start + hash % len) as usize]
    }

    /// The ports a packet of flow `flow` crosses (first: the sending NIC), from its source to
    /// its destination (`back`: from its destination to its source, as its ACKs go).
    pub fn path(&self, topo: &Topology, flow: u32, src: u32, dst: u32) -> Vec<u32> {
        let mut path = vec![topo.host_port(src)];
        let mut node = topo.peer_node(path[0]);
        while node != dst {
            let hops = topo.next_hops(node, dst);
            let p = match hops.len() {
                1 => hops[0],
                _ => self.pick(node - topo.num_hosts, topo.tor_number(dst), dst, flow),
            };
            path.push(p);
            node = topo.peer_node(p);
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;

    /// `tests/ns3_peer/ecmp_hash.sh` compiles ns-3's own `EcmpHash` and prints these.
    #[test]
    fn the_hash_is_ns3s() {
        let key = |src: u32, dst: u32, sport: u32, dport: u32| [ns3_ip(src), ns3_ip(dst), sport | dport << 16];
        assert_eq!(ns3_ip(0), 0x0b00_0001);
        assert_eq!(ns3_ip(300), 0x0b01_2c01);
        assert_eq!(ecmp_hash(key(0, 0, 0, 0), 0), 3_977_411_418);
        assert_eq!(ecmp_hash(key(0, 2, 10_000, 100), 16), 3_144_157_267);
        assert_eq!(ecmp_hash(key(0, 2, 10_000, 100), 24), 1_202_681_540);
        assert_eq!(ecmp_hash(key(2, 0, 100, 10_000), 17), 317_851_608);
        assert_eq!(ecmp_hash(key(7, 300, 10_003, 100), 1035), 2_006_471_087);
        assert_eq!(ecmp_hash(key(15, 5, 10_001, 100), 2035), 3_355_586_601);
        assert_eq!(ecmp_hash([0, 0, 0], 0), 3_644_920_907);
    }

    /// Two ToRs (s0, s1) under two spines (s2, s3); the spines' ns-3 ids set their order.
    fn leaf_spine(switch_ids: &[u32]) -> (Topology, EcmpNs3) {
        let s = Scenario::from_toml(
            r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[workload]
kind = "flows"
flows = [{ src = 0, dst = 2, size = "1KB" }, { src = 0, dst = 2, size = "1KB" }, { src = 1, dst = 3, size = "1KB" }]
"#,
            "test",
        )
        .unwrap();
        let topo = Topology::build(&s.topology).unwrap();
        let ids = Ns3Numbering { host_ids: &[], switch_ids, seed_offset: 0, dport: 100 };
        let routes = EcmpNs3::new(&topo, &ids, [(0, 2), (0, 2), (1, 3)].into_iter());
        (topo, routes)
    }

    #[test]
    fn next_hops_are_listed_by_descending_ns3_id_and_ports_count_per_pair() {
        let (topo, routes) = leaf_spine(&[]);
        let (s0, s2, s3) = (topo.num_hosts, topo.num_hosts + 2, topo.num_hosts + 3);
        let up_to = |spine: u32| topo.links_between(s0, spine)[0];
        let tor1 = topo.tor_number(2);
        let (start, len) = routes.index[tor1 as usize];
        assert_eq!(&routes.ports[start as usize..(start + len) as usize], &[up_to(s3), up_to(s2)]);
        // Numbered the other way round, the spines swap places in the list.
        let (_, swapped) = leaf_spine(&[4, 5, 7, 6]);
        let (start, len) = swapped.index[tor1 as usize];
        assert_eq!(&swapped.ports[start as usize..(start + len) as usize], &[up_to(s2), up_to(s3)]);
        let ports: Vec<u16> = routes.flows.iter().map(|f| f.sport).collect();
        assert_eq!(ports, [10_000, 10_001, 10_000], "a counter per (source, destination) pair");
        // The first flow's path, by hand: s0 (ns-3 node 4) hashes it with seed 4.
        let hash = ecmp_hash([ns3_ip(0), ns3_ip(2), 10_000 | 100 << 16], 4);
        let expected = [up_to(s3), up_to(s2)][(hash % 2) as usize];
        assert_eq!(routes.path(&topo, 0, 0, 2)[1], expected);
    }

    #[test]
    fn a_link_down_leaves_the_other_way() {
        let (topo, mut routes) = leaf_spine(&[]);
        let (s0, s3) = (topo.num_hosts, topo.num_hosts + 3);
        let mut up = vec![true; topo.ports.len()];
        for p in topo.links_between(s0, s3) {
            up[p as usize] = false;
            up[topo.ports[p as usize].peer as usize] = false;
        }
        routes.reroute(&topo, Some(&up));
        let (start, len) = routes.index[topo.tor_number(2) as usize];
        assert_eq!(len, 1);
        assert_eq!(topo.peer_node(routes.ports[start as usize]), topo.num_hosts + 2);
    }
}
