//! A matched trace as the engine's graph: compute steps and flows with their dependencies, on
//! ranks 0 to n-1 (the kind moves them onto its hosts).
//!
//! - A compute step (COMP_NODE, and the nodes aiccsim runs in no time) waits for its node's
//!   dependencies.
//! - A collective becomes the flows of its collective library's schedule over its process
//!   group's ranks (`all_reduce.rs`, `all_gather.rs`, `reduce_scatter.rs`, `all_to_all.rs`,
//!   `broadcast.rs`); the flows rank r sends wait, besides the schedule's own order, for the
//!   dependencies of rank r's node.
//! - A transfer is one flow from its send's rank to its receive's, waiting for the send node's
//!   dependencies (a receive posted late does not hold the data back: it lands and waits, as
//!   ASTRA-sim and NCCL's buffered protocols do).
//! - What depends on a communication node of rank r waits for the rank's share of it (the flows
//!   r receives; those it sends where it receives none, as a broadcast's root or a send's
//!   rank), and for the node's own dependencies (it cannot finish before it is issued). A step
//!   of no time on rank r stands for that, so that each dependent waits for one thing.
//!
//! Collectives and transfers join nodes of several ranks, so their order must be consistent
//! across ranks: everything is made in one topological order of the whole trace, and a trace
//! whose matching leaves some collectives waiting for each other (rank 0 issues A then B, rank 1
//! B then A, each waiting for the one before) is refused, naming the nodes.

use super::graph::{find_cycle, topological_leftover, Graph, Role};
use crate::tags::{CollectiveKind, CollectiveTag};
use crate::time::SimTime;
use crate::workload::catalog::info;
use crate::workload::{
    all_gather, all_reduce, all_to_all, broadcast, AllReduceAlgorithm, AllToAllAlgorithm, BroadcastAlgorithm,
    CollectiveInfo, ComputeDef, FlowDef, GatherAlgorithm,
};
use std::collections::BTreeSet;

/// What the trace makes, on ranks 0 to n-1.
#[derive(Clone, Debug, Default)]
pub struct Made {
    pub flows: Vec<FlowDef>,
    pub computes: Vec<ComputeDef>,
    /// Every collective and transfer, numbered as their flows' collective tags.
    pub collectives: Vec<CollectiveInfo>,
}

/// What runs as one: a node's step, or a collective or transfer with all its nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Step(u32, u32),
    Collective(u32),
    Transfer(u32),
}

/// The algorithms a trace's collectives run with: the ones collective libraries use by
/// default (ring all-reduce, all-gather and reduce-scatter, broadcast down a ring, all-to-all
/// posted at once).
pub const ALGORITHMS: [(CollectiveKind, &str); 5] = [
    (CollectiveKind::AllReduce, "ring"),
    (CollectiveKind::AllGather, "ring"),
    (CollectiveKind::ReduceScatter, "ring"),
    (CollectiveKind::AllToAll, "direct"),
    (CollectiveKind::Broadcast, "ring"),
];

/// The graph of a matched trace, or why it can never finish.
pub fn expand(g: &Graph) -> Result<Made, String> {
    // Number the units in file order, rank by rank.
    let mut units: Vec<Unit> = Vec::new();
    let mut unit_of: Vec<Vec<u32>> = Vec::with_capacity(g.ranks.len());
    let mut coll_unit = vec![u32::MAX; g.collectives.len()];
    let mut xfer_unit = vec![u32::MAX; g.transfers.len()];
    for (r, rank) in g.ranks.iter().enumerate() {
        let mut of = Vec::with_capacity(rank.roles.len());
        for (i, role) in rank.roles.iter().enumerate() {
            let slot = match *role {
                Role::Step(_) => None,
                Role::Collective(c) => Some(&mut coll_unit[c as usize]),
                Role::Transfer(t) => Some(&mut xfer_unit[t as usize]),
            };
            let unit = match slot {
                Some(u) if *u != u32::MAX => *u,
                _ => {
                    let u = units.len() as u32;
                    units.push(match *role {
                        Role::Step(_) => Unit::Step(r as u32, i as u32),
                        Role::Collective(c) => Unit::Collective(c),
                        Role::Transfer(t) => Unit::Transfer(t),
                    });
                    if let Some(s) = slot {
                        *s = u;
                    }
                    u
                }
            };
            of.push(unit);
        }
        unit_of.push(of);
    }
    // A unit waits for the units of its nodes' dependencies.
    let mut unit_deps: Vec<Vec<u32>> = vec![Vec::new(); units.len()];
    for (r, rank) in g.ranks.iter().enumerate() {
        for (i, deps) in rank.deps.iter().enumerate() {
            let u = unit_of[r][i] as usize;
            unit_deps[u].extend(deps.iter().map(|&j| unit_of[r][j as usize]));
        }
    }
    for d in &mut unit_deps {
        d.sort_unstable();
        d.dedup();
    }
    let order = order(&units, &unit_deps).map_err(|cycle| deadlock(g, &units, &unit_of, &cycle))?;

    let mut has_dependents: Vec<Vec<bool>> = g.ranks.iter().map(|r| vec![false; r.ids.len()]).collect();
    for (r, rank) in g.ranks.iter().enumerate() {
        for &j in rank.deps.iter().flatten() {
            has_dependents[r][j as usize] = true;
        }
    }
    let mut b = Builder { g, done: g.ranks.iter().map(|r| vec![u32::MAX; r.ids.len()]).collect(), has_dependents, made: Made::default() };
    for u in order {
        match units[u] {
            Unit::Step(r, i) => b.step(r, i),
            Unit::Collective(c) => b.collective(c),
            Unit::Transfer(t) => b.transfer(t),
        }
    }
    Ok(b.made)
}

/// The units in an order where each comes after what it waits for (the smallest-numbered
/// ready unit first, so the order is the files' wherever the dependencies allow), or a cycle.
fn order(units: &[Unit], deps: &[Vec<u32>]) -> Result<Vec<usize>, Vec<usize>> {
    let mut waiting_on: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut dependents = vec![Vec::new(); units.len()];
    for (u, d) in deps.iter().enumerate() {
        for &p in d {
            dependents[p as usize].push(u);
        }
    }
    let mut ready: BTreeSet<usize> = (0..units.len()).filter(|&u| waiting_on[u] == 0).collect();
    let mut out = Vec::with_capacity(units.len());
    while let Some(u) = ready.pop_first() {
        out.push(u);
        for &d in &dependents[u] {
            waiting_on[d] -= 1;
            if waiting_on[d] == 0 {
                ready.insert(d);
            }
        }
    }
    if out.len() == units.len() {
        return Ok(out);
    }
    let waiting = topological_leftover(units.len(), deps);
    Err(find_cycle(&waiting, |u| deps[u].iter().map(|&p| p as usize).collect()))
}

/// Why the units of `cycle` (each waiting for the next) never start, node by node.
fn deadlock(g: &Graph, units: &[Unit], unit_of: &[Vec<u32>], cycle: &[usize]) -> String {
    let mut steps = Vec::new();
    for (k, &u) in cycle.iter().enumerate() {
        let next = cycle[(k + 1) % cycle.len()] as u32;
        // A node of unit u that depends on a node of the next unit.
        let witness = (g.ranks.iter().enumerate()).find_map(|(r, rank)| {
            (rank.deps.iter().enumerate()).find_map(|(i, deps)| {
                let j = deps.iter().find(|&&j| unit_of[r][j as usize] == next)?;
                (unit_of[r][i] as usize == u).then_some((r as u32, i as u32, *j))
            })
        });
        let (r, i, j) = witness.expect("a unit waits for the next through a dependency");
        steps.push(format!("{} ({}) waits for node {} ({})", g.at(r, i), what(g, units[u]), g.ranks[r as usize].ids[j as usize], what(g, units[next as usize])));
    }
    let first = steps.remove(0);
    format!(
        "{first}, {}: these collectives and transfers wait for each other and never start. Collectives are matched in file order on each process group and transfers in file order per source, destination and tag, so every rank must issue them in an order consistent with the others'; reorder the nodes or fix the dependencies",
        steps.join(", ")
    )
}

/// A unit in words, for an error.
fn what(g: &Graph, u: Unit) -> String {
    match u {
        Unit::Step(..) => "a compute step".into(),
        Unit::Collective(c) => {
            let c = &g.collectives[c as usize];
            format!("{} on process group {:?}", c.kind, c.group)
        }
        Unit::Transfer(t) => {
            let t = &g.transfers[t as usize];
            format!("the transfer from rank {} to rank {}", t.send.0, t.recv.0)
        }
    }
}

struct Builder<'a> {
    g: &'a Graph,
    /// Per rank and node: the step that marks it done, for the nodes something waits for.
    done: Vec<Vec<u32>>,
    has_dependents: Vec<Vec<bool>>,
    made: Made,
}

impl Builder<'_> {
    /// The steps marking done what node `i` of rank `r` waits for.
    fn waits(&self, r: u32, i: u32) -> Vec<u32> {
        let mut w: Vec<u32> =
            self.g.ranks[r as usize].deps[i as usize].iter().map(|&j| self.done[r as usize][j as usize]).collect();
        debug_assert!(w.iter().all(|&c| c != u32::MAX), "a dependency is made before its dependents");
        w.sort_unstable();
        w.dedup();
        w
    }

    fn push_step(&mut self, host: u32, duration: SimTime, after: Vec<u32>, after_compute: Vec<u32>) -> u32 {
        let id = self.made.computes.len() as u32;
        self.made.computes.push(ComputeDef { host, duration, start: SimTime::ZERO, after, after_compute });
        id
    }

    fn step(&mut self, r: u32, i: u32) {
        let Role::Step(duration) = self.g.ranks[r as usize].roles[i as usize] else { unreachable!("a step unit") };
        let waits = self.waits(r, i);
        self.done[r as usize][i as usize] = self.push_step(r, duration, Vec::new(), waits);
    }

    /// Node `i` of rank `r` is done once `share` is delivered and its own dependencies are done:
    /// a step of no time marks it, if anything waits for it.
    fn mark_done(&mut self, r: u32, i: u32, share: Vec<u32>) {
        if self.has_dependents[r as usize][i as usize] {
            let waits = self.waits(r, i);
            self.done[r as usize][i as usize] = self.push_step(r, SimTime::ZERO, share, waits);
        }
    }

    fn collective(&mut self, c: u32) {
        let coll = &self.g.collectives[c as usize];
        let ranks: Vec<u32> = coll.members.iter().map(|&(r, _)| r).collect();
        let n = ranks.len() as u64;
        let (kind, at) = (coll.kind, SimTime::ZERO);
        // A collective moves at least a byte in each piece its schedule cuts the buffer into.
        let size = coll.size.max(n);
        let schedule = match kind {
            CollectiveKind::AllReduce => all_reduce::all_reduce(&ranks, size, AllReduceAlgorithm::Ring, 1, at),
            CollectiveKind::AllGather => all_gather::all_gather(&ranks, size, GatherAlgorithm::Ring, at),
            CollectiveKind::ReduceScatter => all_gather::reduce_scatter(&ranks, size, GatherAlgorithm::Ring, at),
            // All a rank sends, its own share included: size / n to each peer.
            CollectiveKind::AllToAll => {
                all_to_all::all_to_all(&ranks, size / n, AllToAllAlgorithm::Direct, 1, 1, 1, at)
            }
            CollectiveKind::Broadcast => broadcast::broadcast(&ranks, 0, size, BroadcastAlgorithm::Ring, at),
            CollectiveKind::SendRecv | CollectiveKind::Other => unreachable!("not a trace's collective"),
        };
        let id = self.made.collectives.len() as u32;
        let algorithm = ALGORITHMS.iter().find(|(k, _)| *k == kind).map_or("ring", |(_, a)| a);
        let simulated = if kind == CollectiveKind::AllToAll { size / n * n } else { size };
        self.made.collectives.push(info(kind, id, algorithm, simulated, n));
        let base = self.made.flows.len() as u32;
        let position = |rank: u32| ranks.iter().position(|&x| x == rank).expect("a member");
        for mut f in schedule {
            for a in &mut f.after {
                *a += base;
            }
            if let Some(tag) = &mut f.collective {
                tag.id = id;
            }
            let (r, i) = coll.members[position(f.src)];
            f.after_compute = self.waits(r, i);
            self.made.flows.push(f);
        }
        let end = self.made.flows.len() as u32;
        for &(r, i) in &coll.members {
            let into: Vec<u32> = (base..end).filter(|&f| self.made.flows[f as usize].dst == r).collect();
            let share = if into.is_empty() {
                (base..end).filter(|&f| self.made.flows[f as usize].src == r).collect()
            } else {
                into
            };
            self.mark_done(r, i, share);
        }
    }

    fn transfer(&mut self, t: u32) {
        let x = &self.g.transfers[t as usize];
        let ((src, si), (dst, ri)) = (x.send, x.recv);
        let id = self.made.collectives.len() as u32;
        self.made.collectives.push(info(CollectiveKind::SendRecv, id, "direct", x.size.max(1), 2));
        let flow = self.made.flows.len() as u32;
        let after_compute = self.waits(src, si);
        self.made.flows.push(FlowDef {
            src,
            dst,
            // A flow carries at least a byte: a transfer of none still orders its two ends.
            size: x.size.max(1),
            start: SimTime::ZERO,
            collective: Some(CollectiveTag { kind: CollectiveKind::SendRecv, group_size: 2, id }),
            after: Vec::new(),
            after_acked: Vec::new(),
            after_compute,
            stop: None,
            // The pair's connection, as the collective library's (and `send_recv`'s).
            connection: Some(0),
            job: 0,
        });
        self.mark_done(src, si, vec![flow]);
        self.mark_done(dst, ri, vec![flow]);
    }
}
