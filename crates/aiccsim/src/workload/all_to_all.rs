//! `kind = "all_to_all"`: every rank sends its own data to every other rank.

use super::catalog::info;
use super::collective::{member_flow, one, pipelined};
use super::kind::{chunks_fit, fail, groups_do_not_fit, positive, Ranks, Size, WorkloadKind};
use super::{CollectiveInfo, FlowDef, HostSet, Workload};
use crate::cc::Check;
use crate::tags::CollectiveKind;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]
kind = "all_to_all"
size = "100KB"
algorithm = "pairwise"
"#;

/// Every host of `hosts` sends `size` to every other.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AllToAllWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: AllToAllAlgorithm,
    /// Parallel flows (tasks) per ordered pair, each of `size` (direct only).
    #[serde(default = "one")]
    pub flows_per_pair: u32,
    /// Peers each rank sends to at once, in rounds (pairwise only): 1 is the pairwise
    /// exchange, more is how a collective library bounds the peers in flight.
    #[serde(default = "one")]
    pub peers_in_flight: u32,
    /// Ranks per group of `hierarchical` (consecutive ranks in `hosts` order); filled in from
    /// the topology's servers (`gpus_per_server`) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_ranks: Option<u32>,
    #[serde(default)]
    pub start: SimTime,
    /// Split into this many equal chunks, each run through the whole schedule, pipelined: a
    /// chunk's step waits only for the same chunk's step before, and on each connection the
    /// chunks go in order.
    #[serde(default = "one")]
    pub chunks: u32,
}

/// How an all-to-all is scheduled.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AllToAllAlgorithm {
    /// Every send posted at once (as NCCL's grouped sends): each NIC shares its rate among
    /// n - 1 queue pairs and each receiver hears from n - 1 senders.
    #[default]
    Direct,
    /// Rounds of `peers_in_flight` peers (1 by default: n - 1 rounds); in round r rank i sends
    /// to ranks i + r·k + 1 to i + (r + 1)·k, and a rank starts a round once its sends and its
    /// receives of the previous round are done (with one peer per round, the pairwise
    /// exchange: every round a permutation).
    Pairwise,
    /// Two phases on groups of `local_ranks` consecutive ranks (a server's GPUs): each rank
    /// first sends every other rank of its group what goes to that rank's local index on every
    /// group (over NVLink), then each rank sends every rank of its own local index on another
    /// group what its group has for that group (one larger transfer per group, through the
    /// NICs, rail-aligned). The NIC bytes are those of the direct algorithm, in fewer transfers.
    Hierarchical,
}

impl AllToAllAlgorithm {
    /// Whether the algorithm runs on `n` ranks (in groups of `local` for `hierarchical`).
    pub fn fits(self, n: u64, local: Option<u32>) -> bool {
        match self {
            AllToAllAlgorithm::Hierarchical => local.is_some_and(|g| g >= 1 && n.is_multiple_of(u64::from(g))),
            _ => true,
        }
    }

    /// Its name in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            AllToAllAlgorithm::Direct => "direct",
            AllToAllAlgorithm::Pairwise => "pairwise",
            AllToAllAlgorithm::Hierarchical => "hierarchical",
        }
    }
}

impl WorkloadKind for AllToAllWorkload {
    fn chunks(&self) -> u32 {
        self.chunks
    }

    fn fill_local_ranks(&mut self, group: u32) {
        if self.algorithm == AllToAllAlgorithm::Hierarchical {
            self.local_ranks.get_or_insert(group);
        }
    }

    fn check(&self) -> Check {
        positive(self.size)?;
        if self.flows_per_pair == 0 {
            return fail("workload.flows_per_pair", "must be at least 1");
        }
        if self.peers_in_flight == 0 {
            return fail("workload.peers_in_flight", "must be at least 1 (1: the pairwise exchange)");
        }
        if self.peers_in_flight > 1 && self.algorithm != AllToAllAlgorithm::Pairwise {
            return fail(
                "workload.peers_in_flight",
                "bounds the rounds of algorithm = \"pairwise\"; the direct algorithm sends to every peer at once",
            );
        }
        if self.flows_per_pair > 1 && self.algorithm != AllToAllAlgorithm::Direct {
            return fail(
                "workload.flows_per_pair",
                "several flows per pair need algorithm = \"direct\" (pairwise rounds carry one flow each)",
            );
        }
        chunks_fit(self.chunks, self.size.0)
    }

    fn check_ranks(&self, ranks: &Ranks) -> Check {
        ranks.set("workload.hosts", &self.hosts, 2)?;
        let n = self.hosts.len(ranks.n);
        if !self.algorithm.fits(n, self.local_ranks) {
            return groups_do_not_fit("workload", n, self.local_ranks);
        }
        Ok(())
    }

    fn size(&self, ranks: u32) -> Size {
        let n = self.hosts.len(ranks);
        let per_chunk = all_to_all_flows(n, self.algorithm, self.local_ranks);
        let flows = per_chunk.saturating_mul(u64::from(self.flows_per_pair)).saturating_mul(u64::from(self.chunks));
        let (n, size, per_pair) = (u128::from(n), u128::from(self.size.0), u128::from(self.flows_per_pair));
        if self.algorithm == AllToAllAlgorithm::Hierarchical {
            // Phase 1 inside the groups (NVLink on GPU servers), phase 2 across: the NIC
            // carries phase 2, (n/g - 1) transfers of g blocks.
            let g = u128::from(self.local_ranks.unwrap_or(1).max(1));
            let groups = n / g;
            let bytes = n * (g - 1) * groups * size + n * groups.saturating_sub(1) * g * size;
            return Size::of_flows(flows, bytes, groups.saturating_sub(1) * g * size, self.start);
        }
        let busiest = n.saturating_sub(1) * per_pair * size;
        Size::of_flows(flows, n * busiest, busiest, self.start)
    }

    fn expand(&self, ranks: u32, _seed: u64) -> Workload {
        let (members, local) = (self.hosts.expand(ranks), self.local_ranks.unwrap_or(1) as usize);
        Workload::of_flows(pipelined(self.size.0, self.chunks, |bytes| {
            let peers = self.peers_in_flight as usize;
            all_to_all(&members, bytes, self.algorithm, self.flows_per_pair, peers, local, self.start)
        }))
    }

    fn collectives(&self, ranks: u32, _made: &Workload) -> Vec<CollectiveInfo> {
        let n = self.hosts.len(ranks);
        let size = self.size.0.saturating_mul(n).saturating_mul(u64::from(self.flows_per_pair));
        vec![info(CollectiveKind::AllToAll, 0, self.algorithm.name(), size, n)]
    }

    fn too_many_flows(&self) -> (&'static str, &'static str) {
        match self.flows_per_pair > 1 {
            true => ("flows_per_pair", "lower flows_per_pair or use fewer hosts"),
            false => ("hosts", "use fewer hosts"),
        }
    }
}

/// Flows of one all-to-all among `ranks` ranks, one per pair, saturating. Direct and pairwise:
/// n(n-1); hierarchical (groups of g): n(g-1) inside the groups and n(n/g-1) across.
pub(super) fn all_to_all_flows(ranks: u64, algorithm: AllToAllAlgorithm, local: Option<u32>) -> u64 {
    match algorithm {
        AllToAllAlgorithm::Hierarchical => {
            let g = u64::from(local.unwrap_or(1).max(1));
            ranks.saturating_mul(g.saturating_sub(1).saturating_add((ranks / g).saturating_sub(1)))
        }
        AllToAllAlgorithm::Direct | AllToAllAlgorithm::Pairwise => ranks.saturating_mul(ranks.saturating_sub(1)),
    }
}

/// The flows of one all-to-all: `size` bytes from every rank to every other, `per_pair` times
/// over (parallel tasks, direct only); `peers` at once per rank (pairwise rounds); `local` ranks
/// per group for `hierarchical`.
pub fn all_to_all(
    ranks: &[u32],
    size: u64,
    algorithm: AllToAllAlgorithm,
    per_pair: u32,
    peers: usize,
    local: usize,
    start: SimTime,
) -> Vec<FlowDef> {
    let n = ranks.len();
    let member = member_flow(ranks, CollectiveKind::AllToAll, start);
    if algorithm == AllToAllAlgorithm::Hierarchical {
        return hierarchical(n, local.max(1), size, &member);
    }
    let flow = |src: usize, dst: usize, after: Vec<u32>| member(src, dst, size, after);
    let mut flows = Vec::with_capacity(n * (n - 1));
    match algorithm {
        AllToAllAlgorithm::Direct => {
            for i in 0..n {
                for j in 0..n {
                    if i != j {
                        for task in 0..per_pair {
                            // Parallel tasks run side by side: a connection each.
                            flows.push(FlowDef { connection: Some(task), ..flow(i, j, vec![]) });
                        }
                    }
                }
            }
        }
        AllToAllAlgorithm::Pairwise => {
            // Rounds of `peers` offsets; the flow of offset o (the j-th of its round) from rank i
            // has id round_start + j·n + i, and waits for rank i's sends of the round before
            // (offsets o') and its receives (from i - o'). One peer per round: round k's flow
            // from i waits for its send to i + k - 1 and its receive from i - (k - 1).
            let offsets: Vec<usize> = (1..n).collect();
            let mut before: Option<(usize, &[usize])> = None;
            for round in offsets.chunks(peers.max(1)) {
                let start = flows.len();
                for &o in round {
                    for i in 0..n {
                        let after = match before {
                            None => vec![],
                            Some((at, prev)) => {
                                let sends = (0..prev.len()).map(|j| at + j * n + i);
                                let receives = prev.iter().enumerate().map(|(j, &p)| at + j * n + (i + n - p) % n);
                                sends.chain(receives).map(|id| id as u32).collect()
                            }
                        };
                        flows.push(flow(i, (i + o) % n, after));
                    }
                }
                before = Some((start, round));
            }
        }
        AllToAllAlgorithm::Hierarchical => unreachable!("made above"),
    }
    flows
}

/// The hierarchical all-to-all of `n` ranks in groups of `g` (rank s·g + l is local rank l of
/// group s; `groups` = n / g). Phase 1, flow id `i·(g-1) + k`: rank i sends local rank l' ≠ l
/// of its group the blocks of every group's local rank l' (groups x `size`). Phase 2, after
/// the g - 1 phase-1 flows into the sender: rank (s, l) sends rank (s', l) of each other group
/// the blocks its group has for (s', l) (g x `size`). With g = 1 it is the direct algorithm;
/// with g = n, phase 1 is.
fn hierarchical(
    n: usize,
    g: usize,
    size: u64,
    member: &dyn Fn(usize, usize, u64, Vec<u32>) -> FlowDef,
) -> Vec<FlowDef> {
    let groups = n / g;
    let mut flows = Vec::with_capacity(n * (g - 1) + n * (groups - 1));
    // Phase-1 flows into each rank, for phase 2 to wait on.
    let mut into = vec![Vec::with_capacity(g - 1); n];
    for i in 0..n {
        let (s, l) = (i / g, i % g);
        for other in (0..g).filter(|&o| o != l) {
            into[s * g + other].push(flows.len() as u32);
            flows.push(member(i, s * g + other, groups as u64 * size, Vec::new()));
        }
    }
    for (i, handed) in into.iter().enumerate() {
        let (s, l) = (i / g, i % g);
        for t in (0..groups).filter(|&t| t != s) {
            flows.push(member(i, t * g + l, g as u64 * size, handed.clone()));
        }
    }
    flows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_to_all_covers_every_pair_once_and_pairwise_rounds_are_permutations() {
        let ranks: Vec<u32> = (10..16).collect();
        for alg in [AllToAllAlgorithm::Direct, AllToAllAlgorithm::Pairwise] {
            let flows = all_to_all(&ranks, 100, alg, 1, 1, 1, SimTime::ZERO);
            let mut pairs: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
            pairs.sort_unstable();
            pairs.dedup();
            assert_eq!(pairs.len(), 30);
            assert!(flows.iter().all(|f| f.src != f.dst && f.collective.unwrap().group_size == 6));
        }
        let flows = all_to_all(&ranks, 100, AllToAllAlgorithm::Pairwise, 1, 1, 1, SimTime::ZERO);
        for round in flows.chunks(6) {
            let mut dsts: Vec<u32> = round.iter().map(|f| f.dst).collect();
            dsts.sort_unstable();
            assert_eq!(dsts, ranks, "each round is a permutation");
        }
        // Round 3, rank 2 (flow 14: 12 -> 15) waits for its own round-2 send (flow 8: 12 -> 14)
        // and for its round-2 receive (flow 6: 10 -> 12).
        assert_eq!((flows[14].src, flows[14].dst), (12, 15));
        assert_eq!(flows[14].after, vec![8, 6]);
        assert_eq!((flows[8].src, flows[8].dst, flows[6].src, flows[6].dst), (12, 14, 10, 12));
    }

    #[test]
    fn rounds_of_several_peers_wait_for_the_rounds_sends_and_receives() {
        // 6 ranks, 2 peers per round: offsets {1, 2}, {3, 4}, {5}.
        let ranks: Vec<u32> = (0..6).collect();
        let flows = all_to_all(&ranks, 100, AllToAllAlgorithm::Pairwise, 1, 2, 1, SimTime::ZERO);
        assert_eq!(flows.len(), 30);
        let mut pairs: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(pairs.len(), 30, "every pair once");
        assert!(flows[..12].iter().all(|f| f.after.is_empty()), "the first round waits for nothing");
        // Round 2, offset 3, rank 1 (flow 12 + 1: 1 -> 4) waits for rank 1's round-1 sends
        // (flows 1 and 7: to 2 and 3) and its receives (flows 0 and 11: from 0 and 5).
        let f = &flows[13];
        assert_eq!((f.src, f.dst), (1, 4));
        assert_eq!(f.after, vec![1, 7, 0, 11]);
        assert_eq!((flows[7].src, flows[7].dst, flows[11].src, flows[11].dst), (1, 3, 5, 1));
        // The last round, offset 5 alone, waits for the four flows of round 2 through its rank.
        assert_eq!(flows[24].after.len(), 4);
        // One peer per round is the pairwise exchange.
        let one = all_to_all(&ranks, 100, AllToAllAlgorithm::Pairwise, 1, 1, 1, SimTime::ZERO);
        assert_eq!(one[14].after, vec![8, 6]);
    }

    #[test]
    fn hierarchical_moves_every_block_once_over_the_group_then_once_across() {
        // 12 ranks in 3 groups of 4: every rank ends with 100 bytes from each of the 11 others.
        let ranks: Vec<u32> = (0..12).collect();
        let flows = all_to_all(&ranks, 100, AllToAllAlgorithm::Hierarchical, 1, 1, 4, SimTime::ZERO);
        assert_eq!(flows.len(), 12 * 3 + 12 * 2);
        let (inside, across): (Vec<&FlowDef>, Vec<&FlowDef>) = flows.iter().partition(|f| f.src / 4 == f.dst / 4);
        assert!(inside.iter().all(|f| f.size == 300 && f.after.is_empty()));
        // Across groups only between ranks of one local index, each waiting for what its
        // group's three others handed it.
        assert!(across.iter().all(|f| f.src % 4 == f.dst % 4 && f.size == 400 && f.after.len() == 3));
        for f in &across {
            assert!(f.after.iter().all(|&a| flows[a as usize].dst == f.src));
        }
        // Bytes leaving each group: those of the direct all-to-all (8 other ranks x 100 per rank).
        let out: u64 = across.iter().filter(|f| f.src / 4 == 0).map(|f| f.size).sum();
        assert_eq!(out, 4 * 8 * 100);
    }
}
