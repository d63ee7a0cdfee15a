//! Contention groups: the flows that share a port, directly or through other flows, with the
//! ports they cross. A group is what fast-forward judges steady and skips as one: nothing outside
//! it sends a packet through its ports, so while it is frozen the rest of the fabric runs on
//! without noticing, and it runs on without noticing the rest (their only contact is the
//! switches' shared buffers, whose occupancy a steady group does not change).
//!
//! A flow crosses both directions of every link of its data path and of its ACKs' path: its
//! ACKs, CNPs and the PAUSE frames its queues cause travel the other way.

use crate::engine::nic::qp::Flow;
use crate::topology::Topology;
use std::collections::BTreeMap;

/// "None" in the per-port and per-flow indexes.
pub(crate) const NONE: u32 = u32::MAX;

/// One contention group: named by its lowest member id, which stays its name while its members
/// stay the same. Its members are senders: connections (`mod.rs`), named by their ids.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Group {
    pub key: u32,
    /// Its members and ports, in increasing order.
    pub conns: Vec<u32>,
    pub ports: Vec<u32>,
}

/// The ports flow `f` crosses, both ways, both directions of each link (sorted, unique).
pub(crate) fn ports_of(topo: &Topology, flow: &Flow) -> Vec<u32> {
    let there = topo.path(flow.src, flow.dst, flow.ecmp_key);
    let back = topo.path(flow.dst, flow.src, flow.ecmp_key);
    let mut ports: Vec<u32> = there.iter().chain(&back).flat_map(|&p| [p, topo.ports[p as usize].peer]).collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// The groups of the senders `active` (each with its ports, `ports_of`; in increasing order of
/// id), in order of their keys.
pub(crate) fn group(active: &[(u32, &[u32])], num_ports: usize) -> Vec<Group> {
    // Union-find over ports, the lower root winning: the result does not depend on the order
    // of the unions.
    let mut parent: Vec<u32> = (0..num_ports as u32).collect();
    let mut used = vec![false; num_ports];
    fn root(parent: &mut [u32], mut p: u32) -> u32 {
        while parent[p as usize] != p {
            // Path halving: each step also shortens the path for the next search.
            let grand = parent[parent[p as usize] as usize];
            parent[p as usize] = grand;
            p = grand;
        }
        p
    }
    for &(_, ports) in active {
        let mut r0 = root(&mut parent, ports[0]);
        for &p in ports {
            used[p as usize] = true;
            let r = root(&mut parent, p);
            if r != r0 {
                let (lo, hi) = if r < r0 { (r, r0) } else { (r0, r) };
                parent[hi as usize] = lo;
                r0 = lo;
            }
        }
    }
    let mut by_root: BTreeMap<u32, Group> = BTreeMap::new();
    for &(f, ports) in active {
        let r = root(&mut parent, ports[0]);
        let g = by_root.entry(r).or_insert_with(|| Group { key: f, conns: Vec::new(), ports: Vec::new() });
        g.key = g.key.min(f);
        g.conns.push(f);
    }
    for p in 0..num_ports as u32 {
        if used[p as usize] {
            let r = root(&mut parent, p);
            by_root.get_mut(&r).expect("a used port belongs to a flow's group").ports.push(p);
        }
    }
    let mut groups: Vec<Group> = by_root.into_values().collect();
    groups.sort_by_key(|g| g.key);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_sharing_a_port_directly_or_through_another_form_one_group() {
        let a: &[u32] = &[1, 2, 3];
        let b: &[u32] = &[3, 4];
        let c: &[u32] = &[4, 9];
        let d: &[u32] = &[5, 6];
        let groups = group(&[(7, a), (2, b), (5, c), (3, d)], 10);
        assert_eq!(groups.len(), 2, "{groups:?}");
        assert_eq!(groups[0], Group { key: 2, conns: vec![7, 2, 5], ports: vec![1, 2, 3, 4, 9] });
        assert_eq!(groups[1], Group { key: 3, conns: vec![3], ports: vec![5, 6] });
    }

    #[test]
    fn the_grouping_does_not_depend_on_the_order_of_the_flows() {
        let sets: Vec<Vec<u32>> = (0..40u32).map(|i| vec![i % 7, 10 + (i * 3) % 11, 30 + i % 5]).collect();
        let fwd: Vec<(u32, &[u32])> = sets.iter().enumerate().map(|(i, s)| (i as u32, s.as_slice())).collect();
        let mut rev = fwd.clone();
        rev.reverse();
        let (mut a, mut b) = (group(&fwd, 64), group(&rev, 64));
        for g in a.iter_mut().chain(b.iter_mut()) {
            g.conns.sort_unstable();
        }
        assert_eq!(a, b);
    }
}
