//! The fabric as plain data: nodes, ports and the links between them, plus shortest-path
//! routing tables. Built once from the scenario, then frozen for the run.
//!
//! Node numbering: hosts are nodes 0..H (host `i` is node `i`), switches follow (switch `j` is
//! node `H + j`). Every link is two ports, one at each end, each the other's `peer`; a port
//! transmits towards its peer. A host has exactly one port: its NIC.
//!
//! GPU servers (`nvlink`): a GPU has two ports, its NIC on the fabric and its NVLink port on its
//! server's NVSwitch, which work independently (the NIC's queue pairs never wait for NVLink
//! copies). So the engine sees each as an endpoint of its own: GPU g's NIC is host g, as
//! without NVLink, and its NVLink port is host F + g (F: the GPUs, the hosts a workload names).
//! The NVSwitches are the last switches; each joins its server's NVLink ports only, an island
//! apart from the fabric. A transfer between GPUs of one server runs between their NVLink ports
//! ([`Topology::endpoints`]) and never touches a NIC.

mod builders;
pub mod ecmp_ns3;
pub mod routing;

use crate::config::{LinkConfig, Tier, TopologyConfig};
use crate::time::{Bandwidth, SimTime};
use crate::watch::{BuildError, Phase, Watch};
use std::collections::HashMap;

/// One end of a link.
#[derive(Clone, Copy, Debug)]
pub struct PortInfo {
    /// The node this port belongs to.
    pub node: u32,
    /// The port at the other end of the link.
    pub peer: u32,
    pub bandwidth: Bandwidth,
    /// One-way propagation delay to the peer.
    pub delay: SimTime,
}

pub struct Topology {
    /// Host nodes: the fabric hosts, then the GPUs' NVLink ports (if any).
    pub num_hosts: u32,
    /// The hosts a workload names (0..fabric_hosts): every host but the NVLink ports.
    pub fabric_hosts: u32,
    /// Switches: the fabric's, then one NVSwitch per GPU server (if any).
    pub num_switches: u32,
    /// Switches of the fabric (0..fabric_switches); the NVSwitches follow.
    pub fabric_switches: u32,
    pub ports: Vec<PortInfo>,
    /// The ports of each node, in the order they were connected.
    pub node_ports: Vec<Vec<u32>>,
    /// Which server each host (NIC) belongs to.
    pub server_of: Vec<u32>,
    /// The switch each host hangs off (its top-of-rack), as a node, and as an index among ToRs.
    tor_node: Vec<u32>,
    tor_index: Vec<u32>,
    /// The ToR's port that leads down to each host.
    down_port: Vec<u32>,
    /// ToRs of fabric hosts: the NVSwitches come after them and route nothing but to their own
    /// hosts, so the table below has rows for fabric switches and columns for these only.
    num_tors: u32,
    /// Those ToRs, as nodes.
    tors: Vec<u32>,
    /// `route_index[switch * num_tors + tor]`: index (into `route_sets`) of the equal-cost egress
    /// ports from `switch` towards ToR `tor`. Every path to a host ends through its ToR, so
    /// routing by ToR instead of by host gives the same paths from a table hosts-per-ToR times
    /// smaller (164 KB instead of 1.3 MB on a k = 16 fat tree), which stays in cache.
    route_index: Vec<u32>,
    /// Each equal-cost set as a range of `route_ports`.
    route_sets: Vec<(u32, u32)>,
    route_ports: Vec<u32>,
}

/// Entries of `route_index` (4 bytes each) we allocate at most: a k = 128 fat tree needs
/// 168 million; the limit turns a fabric that would need tens of gigabytes into an error.
const MAX_ROUTE_ENTRIES: u64 = 1 << 28;

/// How a fabric's hosts group into servers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Servers {
    /// Consecutive hosts per server.
    pub per_server: u32,
    /// Each GPU's link to its server's NVSwitch, if servers have one.
    pub nvlink: Option<LinkConfig>,
}

impl Servers {
    /// Every host a server of its own, without NVLink.
    pub(crate) const NONE: Servers = Servers { per_server: 1, nvlink: None };
}

/// Assembles nodes and links; `finish` wires the NVSwitches and computes the routes.
pub(crate) struct Builder {
    /// All host nodes, and the fabric's hosts among them (the first).
    hosts: u32,
    fabric_hosts: u32,
    switches: u32,
    fabric_switches: u32,
    servers: Servers,
    ports: Vec<PortInfo>,
    node_ports: Vec<Vec<u32>>,
    server_of: Vec<u32>,
}

impl Builder {
    /// A fabric of `hosts` hosts and `switches` switches; with NVLink, the NVLink ports and
    /// NVSwitches are added as nodes after them (`hosts` must be a multiple of the servers' size).
    pub(crate) fn new(hosts: u32, switches: u32, servers: Servers) -> Self {
        let per = servers.per_server.max(1);
        let (all_hosts, all_switches) = match servers.nvlink {
            Some(_) => (2 * hosts, switches + hosts / per),
            None => (hosts, switches),
        };
        Builder {
            hosts: all_hosts,
            fabric_hosts: hosts,
            switches: all_switches,
            fabric_switches: switches,
            servers,
            ports: Vec::new(),
            node_ports: vec![Vec::new(); (all_hosts + all_switches) as usize],
            server_of: (0..all_hosts).map(|h| (h % hosts.max(1)) / per).collect(),
        }
    }

    pub(crate) fn switch_node(&self, s: u32) -> u32 {
        self.hosts + s
    }

    /// Links node `a` and node `b` with a full-duplex link.
    pub(crate) fn connect(&mut self, a: u32, b: u32, link: LinkConfig) {
        let pa = self.ports.len() as u32;
        let pb = pa + 1;
        self.ports.push(PortInfo { node: a, peer: pb, bandwidth: link.bandwidth, delay: link.delay });
        self.ports.push(PortInfo { node: b, peer: pa, bandwidth: link.bandwidth, delay: link.delay });
        self.node_ports[a as usize].push(pa);
        self.node_ports[b as usize].push(pb);
    }

    /// Wires the NVSwitches, then computes shortest-path equal-cost routes; fails if some host
    /// cannot reach another, or stops when `watch` says so.
    pub(crate) fn finish(mut self, watch: &mut Watch) -> Result<Topology, BuildError<String>> {
        let invalid = |m: String| Err(BuildError::Invalid(m));
        if let Some(nvlink) = self.servers.nvlink {
            let per = self.servers.per_server;
            for g in 0..self.fabric_hosts {
                let nvswitch = self.switch_node(self.fabric_switches + g / per);
                self.connect(self.fabric_hosts + g, nvswitch, nvlink);
            }
        }
        let h = self.hosts as usize;
        for host in 0..self.hosts {
            let ports = &self.node_ports[host as usize];
            if ports.len() != 1 {
                return invalid(format!(
                    "host {host} has {} links; every host needs exactly one (its NIC)",
                    ports.len()
                ));
            }
            let peer_node = self.ports[self.ports[ports[0] as usize].peer as usize].node;
            if peer_node < self.hosts {
                return invalid(format!(
                    "host {host} is linked directly to host {peer_node}; connect hosts to switches"
                ));
            }
        }
        // ToRs in order of their first host.
        let mut tor_node = Vec::with_capacity(h);
        let mut down_port = Vec::with_capacity(h);
        let mut tor_of_switch = vec![u32::MAX; self.switches as usize];
        let mut tors: Vec<u32> = Vec::new();
        for host in 0..self.hosts {
            let down = self.ports[self.node_ports[host as usize][0] as usize].peer;
            let tor = self.ports[down as usize].node;
            let slot = &mut tor_of_switch[(tor - self.hosts) as usize];
            if *slot == u32::MAX {
                *slot = tors.len() as u32;
                tors.push(tor);
            }
            tor_node.push(tor);
            down_port.push(down);
        }
        let tor_index: Vec<u32> = tor_node.iter().map(|&t| tor_of_switch[(t - self.hosts) as usize]).collect();
        // The NVSwitches are the ToRs of the NVLink ports, which come last: routes are needed
        // between the ToRs of fabric hosts only, by fabric switches only.
        let num_tors = match self.fabric_hosts {
            0 => 0,
            f => tor_index[..f as usize].iter().max().map_or(0, |&t| t as usize + 1),
        };
        tors.truncate(num_tors);
        let routed = self.fabric_switches;
        let entries = u64::from(routed) * num_tors as u64;
        if entries > MAX_ROUTE_ENTRIES {
            return invalid(format!(
                "the routing tables would need {entries} entries ({routed} switches x {num_tors} top-of-rack switches), more than the {MAX_ROUTE_ENTRIES} aiccsim supports; use fewer switches or put more hosts on each"
            ));
        }
        let routes = compute_routes(
            &RouteGraph {
                ports: &self.ports,
                node_ports: &self.node_ports,
                hosts: self.hosts,
                switches: self.switches,
                routed,
                tors: &tors,
                tor_index: &tor_index,
            },
            None,
            watch,
        )?;
        Ok(Topology {
            num_hosts: self.hosts,
            fabric_hosts: self.fabric_hosts,
            num_switches: self.switches,
            fabric_switches: self.fabric_switches,
            ports: self.ports,
            node_ports: self.node_ports,
            server_of: self.server_of,
            tor_node,
            tor_index,
            down_port,
            num_tors: num_tors as u32,
            tors,
            route_index: routes.route_index,
            route_sets: routes.route_sets,
            route_ports: routes.route_ports,
        })
    }
}

/// What routes are computed over: the fabric's nodes and links, and its top-of-rack switches.
struct RouteGraph<'a> {
    ports: &'a [PortInfo],
    node_ports: &'a [Vec<u32>],
    hosts: u32,
    switches: u32,
    /// Switches that get routes (the fabric's, not the NVSwitches).
    routed: u32,
    /// The ToRs of fabric hosts, as nodes, and each host's ToR as an index among them.
    tors: &'a [u32],
    tor_index: &'a [u32],
}

/// The equal-cost next-hop tables (the fields of [`Topology`] of the same names).
struct Routes {
    route_index: Vec<u32>,
    route_sets: Vec<(u32, u32)>,
    route_ports: Vec<u32>,
}

/// Shortest-path equal-cost routes from every routed switch towards every ToR, over the links
/// whose ports `up` marks (every link without it); fails if some host cannot reach another, or
/// stops when `watch` says so. An entry a switch cannot reach is `u32::MAX`.
fn compute_routes(g: &RouteGraph<'_>, up: Option<&[bool]>, watch: &mut Watch) -> Result<Routes, BuildError<String>> {
    let num_tors = g.tors.len();
    let mut route_index = vec![u32::MAX; g.routed as usize * num_tors];
    let mut route_sets: Vec<(u32, u32)> = Vec::new();
    let mut route_ports: Vec<u32> = Vec::new();
    // The switch-to-switch links as (port, neighbouring switch) per switch, in the order of
    // the switch's ports: the searches below read them thousands of times, and a packed list
    // (without the host ports, and without looking up each port's peer) keeps that in cache.
    let switches = g.switches as usize;
    let mut links_from = Vec::with_capacity(switches + 1);
    let mut links: Vec<(u32, u32)> = Vec::new();
    links_from.push(0);
    for s in 0..g.switches {
        for &p in &g.node_ports[(g.hosts + s) as usize] {
            let other = g.ports[g.ports[p as usize].peer as usize].node;
            if other >= g.hosts && up.is_none_or(|up| up[p as usize]) {
                links.push((p, other - g.hosts));
            }
        }
        links_from.push(links.len());
    }
    let links_of = |s: usize| &links[links_from[s]..links_from[s + 1]];
    // Interning: most (switch, ToR) pairs share a handful of port sets (all up-links), and a
    // switch mostly gives consecutive ToRs the set it gave the one before, so that is tried
    // before the map.
    let mut interned: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut last_set = vec![u32::MAX; g.routed as usize];
    let mut dist = vec![u32::MAX; switches];
    let mut frontier: Vec<u32> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    let mut candidates: Vec<u32> = Vec::new();
    for (t, &tor) in g.tors.iter().enumerate() {
        watch.at(Phase::Routing, t as u64, num_tors as u64)?;
        let tor = tor - g.hosts;
        dist.fill(u32::MAX);
        dist[tor as usize] = 0;
        frontier.clear();
        frontier.push(tor);
        // Breadth-first search outwards from the ToR, over switches only: hosts never forward.
        while !frontier.is_empty() {
            next.clear();
            for &s in &frontier {
                for &(_, other) in links_of(s as usize) {
                    if dist[other as usize] == u32::MAX {
                        dist[other as usize] = dist[s as usize] + 1;
                        next.push(other);
                    }
                }
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        for (u, &other) in g.tors.iter().enumerate() {
            if dist[(other - g.hosts) as usize] == u32::MAX {
                let src = g.tor_index.iter().position(|&x| x as usize == u).unwrap_or(0);
                let dst = g.tor_index.iter().position(|&x| x as usize == t).unwrap_or(0);
                return Err(BuildError::Invalid(format!(
                        "the topology is disconnected: host {src} cannot reach host {dst}; link every switch into one fabric"
                    )));
            }
        }
        for s in 0..g.routed as usize {
            let here = dist[s];
            if s == tor as usize || here == u32::MAX {
                continue; // the ToR delivers directly; a switch no host can reach carries nothing
            }
            candidates.clear();
            candidates.extend(links_of(s).iter().filter(|&&(_, o)| dist[o as usize] + 1 == here).map(|&(p, _)| p));
            let last = last_set[s];
            let same_as_last = last != u32::MAX && {
                let (start, len) = route_sets[last as usize];
                route_ports[start as usize..(start + len) as usize] == candidates[..]
            };
            let id = if same_as_last {
                last
            } else if let Some(&id) = interned.get(&candidates) {
                id
            } else {
                let id = route_sets.len() as u32;
                route_sets.push((route_ports.len() as u32, candidates.len() as u32));
                route_ports.extend_from_slice(&candidates);
                interned.insert(candidates.clone(), id);
                id
            };
            last_set[s] = id;
            route_index[s * num_tors + t] = id;
        }
    }
    Ok(Routes { route_index, route_sets, route_ports })
}

impl Topology {
    /// Builds the topology a scenario describes. Errors are (key, message).
    pub fn build(cfg: &TopologyConfig) -> Result<Topology, (String, String)> {
        builders::build(cfg, &mut Watch::unwatched()).map_err(BuildError::unwatched)
    }

    /// [`Topology::build`], reporting its progress to `watch` and stopping when it says so.
    pub fn build_watched(cfg: &TopologyConfig, watch: &mut Watch) -> Result<Topology, BuildError<(String, String)>> {
        builders::build(cfg, watch)
    }

    pub fn num_nodes(&self) -> u32 {
        self.num_hosts + self.num_switches
    }

    pub fn is_host(&self, node: u32) -> bool {
        node < self.num_hosts
    }

    /// The NIC port of a host.
    pub fn host_port(&self, host: u32) -> u32 {
        self.node_ports[host as usize][0]
    }

    /// Whether the servers' GPUs are joined by NVLink.
    pub fn has_nvlink(&self) -> bool {
        self.num_hosts > self.fabric_hosts
    }

    /// The endpoints a transfer from fabric host `src` to fabric host `dst` runs between: their
    /// NVLink ports when both are GPUs of one server with NVLink, their NICs otherwise.
    pub fn endpoints(&self, src: u32, dst: u32) -> (u32, u32) {
        if self.has_nvlink() && self.server_of[src as usize] == self.server_of[dst as usize] {
            (self.fabric_hosts + src, self.fabric_hosts + dst)
        } else {
            (src, dst)
        }
    }

    /// Whether host node `host` is a GPU's NVLink port.
    pub fn is_nvlink_port(&self, host: u32) -> bool {
        host >= self.fabric_hosts && host < self.num_hosts
    }

    /// The fabric host (GPU) an endpoint belongs to: itself, or the GPU of an NVLink port.
    pub fn gpu_of(&self, host: u32) -> u32 {
        if self.is_nvlink_port(host) {
            host - self.fabric_hosts
        } else {
            host
        }
    }

    /// Whether switch `s` (by switch number) is a server's NVSwitch.
    pub fn is_nvswitch(&self, s: u32) -> bool {
        s >= self.fabric_switches
    }

    /// The ports of the fabric's switches (not hosts, not NVSwitches): those that queue, mark
    /// ECN and send PFC.
    pub fn fabric_switch_ports(&self) -> impl Iterator<Item = &PortInfo> + '_ {
        self.ports.iter().filter(|p| !self.is_host(p.node) && !self.is_nvswitch(p.node - self.num_hosts))
    }

    /// The top-of-rack switches of the fabric's hosts, as nodes, in their numbering (what
    /// [`Topology::tor_number`] gives).
    pub fn tors(&self) -> &[u32] {
        &self.tors
    }

    /// The number of the top-of-rack switch fabric host `host` hangs off, among [`Topology::tors`].
    #[inline]
    pub fn tor_number(&self, host: u32) -> u32 {
        self.tor_index[host as usize]
    }

    /// The equal-cost egress ports of switch node `node` towards host `dst`. (Once per packet
    /// per switch: `always`, because the compiler stopped inlining it into the switch's routing
    /// when that moved to its own file: 681.9 M instructions on S1 without, 677.3 M with.)
    #[inline(always)]
    pub fn next_hops(&self, node: u32, dst: u32) -> &[u32] {
        let d = dst as usize;
        if node == self.tor_node[d] {
            return std::slice::from_ref(&self.down_port[d]);
        }
        let s = (node - self.num_hosts) as usize;
        let id = self.route_index[s * self.num_tors as usize + self.tor_index[d] as usize];
        let (start, len) = self.route_sets[id as usize];
        &self.route_ports[start as usize..(start + len) as usize]
    }

    /// The number of switch `node`'s equal-cost set towards host `dst` (which [`next_hops`]
    /// gives): an index below [`Topology::route_set_count`], unless `node` is `dst`'s ToR, whose
    /// one way down has none (`u32::MAX`).
    ///
    /// [`next_hops`]: Topology::next_hops
    #[inline]
    pub fn route_set(&self, node: u32, dst: u32) -> u32 {
        let d = dst as usize;
        if node == self.tor_node[d] {
            return u32::MAX;
        }
        let s = (node - self.num_hosts) as usize;
        self.route_index[s * self.num_tors as usize + self.tor_index[d] as usize]
    }

    /// How many equal-cost sets the routing tables hold.
    pub fn route_set_count(&self) -> usize {
        self.route_sets.len()
    }

    /// Computes the routes again over the links whose ports `up` marks (both ends of a link
    /// together), as the routing protocol does once a link's failure or return is detected. A
    /// switch the links left cut off from the hosts gets empty sets: it must hold no packet (the
    /// caller drops what is there). Fails, naming two hosts, if the links left do not join every
    /// host.
    pub fn reroute(&mut self, up: &[bool]) -> Result<(), String> {
        let graph = RouteGraph {
            ports: &self.ports,
            node_ports: &self.node_ports,
            hosts: self.num_hosts,
            switches: self.num_switches,
            routed: self.fabric_switches,
            tors: &self.tors,
            tor_index: &self.tor_index,
        };
        let mut routes = compute_routes(&graph, Some(up), &mut Watch::unwatched()).map_err(BuildError::unwatched)?;
        let empty = routes.route_sets.len() as u32;
        routes.route_sets.push((0, 0));
        for id in routes.route_index.iter_mut().filter(|id| **id == u32::MAX) {
            *id = empty;
        }
        self.route_index = routes.route_index;
        self.route_sets = routes.route_sets;
        self.route_ports = routes.route_ports;
        Ok(())
    }

    /// Each switch's tier (by switch number), counted from the hosts: a switch with a host is a
    /// leaf, a switch one link from the nearest leaf a spine, and one further away (or no host's
    /// at all) core.
    pub fn switch_tiers(&self) -> Vec<Tier> {
        let n = self.num_switches as usize;
        let mut dist = vec![u32::MAX; n];
        let mut frontier: Vec<u32> = Vec::new();
        for s in 0..self.num_switches {
            let node = self.num_hosts + s;
            if self.node_ports[node as usize].iter().any(|&p| self.is_host(self.peer_node(p))) {
                dist[s as usize] = 0;
                frontier.push(s);
            }
        }
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &s in &frontier {
                for &p in &self.node_ports[(self.num_hosts + s) as usize] {
                    let other = self.peer_node(p);
                    if !self.is_host(other) && dist[(other - self.num_hosts) as usize] == u32::MAX {
                        dist[(other - self.num_hosts) as usize] = dist[s as usize] + 1;
                        next.push(other - self.num_hosts);
                    }
                }
            }
            frontier = next;
        }
        dist.iter()
            .map(|&d| match d {
                0 => Tier::Leaf,
                1 => Tier::Spine,
                _ => Tier::Core,
            })
            .collect()
    }

    /// The node at the other end of port `p`'s link.
    pub fn peer_node(&self, p: u32) -> u32 {
        self.ports[self.ports[p as usize].peer as usize].node
    }

    /// The ports of node `a` whose links lead to node `b`, in the order they were connected.
    pub fn links_between(&self, a: u32, b: u32) -> Vec<u32> {
        self.node_ports[a as usize].iter().copied().filter(|&p| self.peer_node(p) == b).collect()
    }

    /// Per node, whether it reaches host 0 over the links whose ports `down` does not mark.
    pub fn joined_to_host_0(&self, down: &[bool]) -> Vec<bool> {
        let mut root: Vec<u32> = (0..self.num_nodes()).collect();
        fn find(root: &mut [u32], mut x: u32) -> u32 {
            while root[x as usize] != x {
                root[x as usize] = root[root[x as usize] as usize];
                x = root[x as usize];
            }
            x
        }
        for (p, info) in self.ports.iter().enumerate() {
            if !down[p] {
                let (a, b) = (find(&mut root, info.node), find(&mut root, self.peer_node(p as u32)));
                root[a as usize] = b;
            }
        }
        let first = find(&mut root, 0);
        (0..self.num_nodes()).map(|n| find(&mut root, n) == first).collect()
    }

    /// Whether every fabric host still reaches every other over the links whose ports `down`
    /// does not mark; if not, a host that host 0 cannot reach.
    pub fn hosts_connected(&self, down: &[bool]) -> Result<(), u32> {
        let joined = self.joined_to_host_0(down);
        match (1..self.fabric_hosts).find(|&h| !joined[h as usize]) {
            Some(h) => Err(h),
            None => Ok(()),
        }
    }

    /// The ports a packet of a flow with this ECMP key crosses from `src` to `dst` (first: the
    /// source NIC). Used for ideal FCTs and base RTTs.
    pub fn path(&self, src: u32, dst: u32, flow_key: u64) -> Vec<u32> {
        let mut path = vec![self.host_port(src)];
        let mut node = self.ports[self.ports[path[0] as usize].peer as usize].node;
        while node != dst {
            let hops = self.next_hops(node, dst);
            let p = hops[routing::ecmp_pick(flow_key, node, hops.len())];
            path.push(p);
            node = self.ports[self.ports[p as usize].peer as usize].node;
        }
        path
    }

    /// Sum of propagation delays and one serialisation of `bytes` per hop along `path`.
    pub fn path_latency(&self, path: &[u32], bytes: u64) -> SimTime {
        path.iter().fold(SimTime::ZERO, |t, &p| {
            let info = &self.ports[p as usize];
            t + info.delay + info.bandwidth.tx_time(bytes)
        })
    }

    /// Human-readable node name: "h3" or "s1".
    pub fn node_name(&self, node: u32) -> String {
        self.names().node_name(node)
    }

    /// How this fabric numbers its nodes, without its links and routes.
    pub fn names(&self) -> NodeNames {
        NodeNames { num_hosts: self.num_hosts, fabric_hosts: self.fabric_hosts, num_switches: self.num_switches }
    }
}

/// A fabric's node numbering (hosts first, then switches): all that results need to name nodes,
/// so that they do not keep the routing tables alive.
#[derive(Clone, Copy, Debug)]
pub struct NodeNames {
    pub num_hosts: u32,
    /// Hosts below this are fabric hosts (GPUs' NICs); the rest are GPUs' NVLink ports.
    pub fabric_hosts: u32,
    pub num_switches: u32,
}

impl NodeNames {
    /// Human-readable node name: "h3" (host 3, GPU 3's NIC), "nvl3" (GPU 3's NVLink port) or
    /// "s1" (switch 1).
    pub fn node_name(&self, node: u32) -> String {
        if node < self.fabric_hosts {
            format!("h{node}")
        } else if node < self.num_hosts {
            format!("nvl{}", node - self.fabric_hosts)
        } else {
            format!("s{}", node - self.num_hosts)
        }
    }

    /// The node a name written in a scenario stands for: "h<i>", "nvl<g>" or "s<j>".
    pub fn parse(&self, name: &str) -> Result<u32, String> {
        let nvlink_ports = self.num_hosts - self.fabric_hosts;
        if let Some(g) = name.strip_prefix("nvl").and_then(|g| g.parse::<u32>().ok()) {
            if g < nvlink_ports {
                return Ok(self.fabric_hosts + g);
            }
        }
        let node = crate::config::parse_node(name, self.fabric_hosts, self.num_switches).map_err(|m| {
            if nvlink_ports > 0 {
                format!("{m}, or nvl<g> for GPU g's NVLink port (0 to {})", nvlink_ports - 1)
            } else {
                m
            }
        })?;
        // parse_node numbers switches after the hosts it was told of: past the NVLink ports here.
        Ok(if node >= self.fabric_hosts { node + nvlink_ports } else { node })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FatTreeTopology, LeafSpineTopology, TopologyConfig};

    fn link() -> LinkConfig {
        LinkConfig { bandwidth: Bandwidth::from_gbps(100), delay: SimTime::from_us(1) }
    }

    #[test]
    fn fat_tree_has_the_textbook_shape_and_equal_cost_paths() {
        let t = Topology::build(&TopologyConfig::FatTree(FatTreeTopology {
            k: 4,
            link: link(),
            fabric_link: None,
            nics_per_server: 1,
            nvlink: None,
        }))
        .unwrap();
        assert_eq!(t.num_hosts, 16);
        assert_eq!(t.num_switches, 20);
        // From host 0's edge switch to a host in another pod: k/2 = 2 up-links to choose from.
        let edge = t.ports[t.ports[t.host_port(0) as usize].peer as usize].node;
        assert_eq!(t.next_hops(edge, 15).len(), 2);
        // To a host on the same edge switch there is one way: straight down.
        assert_eq!(t.next_hops(edge, 1).len(), 1);
        // Inter-pod paths cross 6 links (host-edge-agg-core-agg-edge-host).
        assert_eq!(t.path(0, 15, 7).len(), 6);
        assert_eq!(t.path(0, 1, 7).len(), 2);
    }

    #[test]
    fn leaf_spine_without_spines_is_disconnected() {
        let err = Topology::build(&TopologyConfig::LeafSpine(LeafSpineTopology {
            leaves: 2,
            spines: 0,
            hosts_per_leaf: 2,
            link: link(),
            fabric_link: None,
            links_per_spine: 1,
            nics_per_server: 1,
            nvlink: None,
        }))
        .err()
        .expect("a leaf-spine without spines must be rejected");
        assert!(err.1.contains("disconnected"), "{err:?}");
    }
}
