//! All-to-all: every rank sends its own data to every other rank.

use super::collective::member_flow;
use super::FlowDef;
use crate::config::AllToAllAlgorithm;
use crate::tags::CollectiveKind;
use crate::time::SimTime;

/// The flows of one all-to-all: `size` bytes from every rank to every other, `per_pair` times
/// over (parallel tasks, direct only); `local` ranks per group for `hierarchical`.
pub fn all_to_all(
    ranks: &[u32],
    size: u64,
    algorithm: AllToAllAlgorithm,
    per_pair: u32,
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
            // Round k = 1..n-1, flow id (k-1)·n + i: rank i sends to i + k once it has sent to
            // i + k - 1 and received from i - (k - 1).
            for k in 1..n {
                for i in 0..n {
                    let after = if k == 1 {
                        vec![]
                    } else {
                        let prev = (k - 2) * n;
                        vec![(prev + i) as u32, (prev + (i + n - (k - 1)) % n) as u32]
                    };
                    flows.push(flow(i, (i + k) % n, after));
                }
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
            let flows = all_to_all(&ranks, 100, alg, 1, 1, SimTime::ZERO);
            let mut pairs: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
            pairs.sort_unstable();
            pairs.dedup();
            assert_eq!(pairs.len(), 30);
            assert!(flows.iter().all(|f| f.src != f.dst && f.collective.unwrap().group_size == 6));
        }
        let flows = all_to_all(&ranks, 100, AllToAllAlgorithm::Pairwise, 1, 1, SimTime::ZERO);
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
    fn hierarchical_moves_every_block_once_over_the_group_then_once_across() {
        // 12 ranks in 3 groups of 4: every rank ends with 100 bytes from each of the 11 others.
        let ranks: Vec<u32> = (0..12).collect();
        let flows = all_to_all(&ranks, 100, AllToAllAlgorithm::Hierarchical, 1, 4, SimTime::ZERO);
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
