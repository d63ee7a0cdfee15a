//! All-to-all: every rank sends its own data to every other rank.

use super::collective::member_flow;
use super::FlowDef;
use crate::config::AllToAllAlgorithm;
use crate::tags::CollectiveKind;
use crate::time::SimTime;

/// The flows of one all-to-all: `size` bytes from every rank to every other, `per_pair` times
/// over (parallel tasks, direct only).
pub fn all_to_all(
    ranks: &[u32],
    size: u64,
    algorithm: AllToAllAlgorithm,
    per_pair: u32,
    start: SimTime,
) -> Vec<FlowDef> {
    let n = ranks.len();
    let member = member_flow(ranks, CollectiveKind::AllToAll, start);
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
            let flows = all_to_all(&ranks, 100, alg, 1, SimTime::ZERO);
            let mut pairs: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
            pairs.sort_unstable();
            pairs.dedup();
            assert_eq!(pairs.len(), 30);
            assert!(flows.iter().all(|f| f.src != f.dst && f.collective.unwrap().group_size == 6));
        }
        let flows = all_to_all(&ranks, 100, AllToAllAlgorithm::Pairwise, 1, SimTime::ZERO);
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
}
