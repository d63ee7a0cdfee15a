//! Collectives broken into point-to-point flows with dependencies, as a collective library
//! schedules them: a flow that forwards data another rank sent waits for that data to arrive.

use super::FlowDef;
use crate::config::{AllReduceAlgorithm, AllToAllAlgorithm};
use crate::tags::{CollectiveKind, CollectiveTag};
use crate::time::SimTime;

/// Bytes of chunk `k` when `size` is split into `n` chunks as evenly as possible.
fn chunk(size: u64, n: usize, k: usize) -> u64 {
    size / n as u64 + u64::from((k as u64) < size % n as u64)
}

/// A flow between two ranks (by position) of a collective.
fn member_flow(
    ranks: &[u32],
    kind: CollectiveKind,
    start: SimTime,
) -> impl Fn(usize, usize, u64, Vec<u32>) -> FlowDef + '_ {
    let tag = Some(CollectiveTag { kind, group_size: ranks.len() as u32, id: 0 });
    move |src, dst, size, after| FlowDef {
        src: ranks[src],
        dst: ranks[dst],
        size,
        start,
        collective: tag,
        after,
        after_compute: Vec::new(),
        stop: None,
    }
}

/// The flows of one all-reduce of `size` bytes per rank among `ranks`.
pub fn all_reduce(ranks: &[u32], size: u64, algorithm: AllReduceAlgorithm, start: SimTime) -> Vec<FlowDef> {
    let n = ranks.len();
    let flow = member_flow(ranks, CollectiveKind::AllReduce, start);
    let mut flows = Vec::new();
    match algorithm {
        AllReduceAlgorithm::Ring => {
            // Step s: rank i sends chunk (i - s) mod n to rank i + 1. Reduce-scatter is steps
            // 0..n-1, all-gather steps n-1..2(n-1); from step 1 on, rank i forwards what rank
            // i - 1 sent it in the step before. Flow id = s * n + i.
            for s in 0..2 * (n - 1) {
                for i in 0..n {
                    let c = (i + n - s % n) % n;
                    let after = if s == 0 { vec![] } else { vec![((s - 1) * n + (i + n - 1) % n) as u32] };
                    flows.push(flow(i, (i + 1) % n, chunk(size, n, c), after));
                }
            }
        }
        AllReduceAlgorithm::Direct => {
            // Reduce-scatter: rank i sends chunk j to rank j. Then rank j, once it holds every
            // contribution to chunk j, sends the reduced chunk to every other rank.
            let mut into = vec![Vec::new(); n];
            for i in 0..n {
                for (j, into_j) in into.iter_mut().enumerate() {
                    if i != j {
                        into_j.push(flows.len() as u32);
                        flows.push(flow(i, j, chunk(size, n, j), vec![]));
                    }
                }
            }
            for (j, into_j) in into.iter().enumerate() {
                for i in 0..n {
                    if i != j {
                        flows.push(flow(j, i, chunk(size, n, j), into_j.clone()));
                    }
                }
            }
        }
    }
    flows
}

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
                        for _ in 0..per_pair {
                            flows.push(flow(i, j, vec![]));
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

    /// Checks the schedule's data flow: a flow carries its sender's own contribution to its
    /// chunk plus what the flows it waited for brought the sender for that chunk; in the end
    /// every rank must hold every chunk with every rank's contribution.
    fn check_all_reduce(flows: &[FlowDef], n: usize, chunk_of: impl Fn(usize) -> usize) {
        let mut carries = vec![0u64; flows.len()];
        for (id, f) in flows.iter().enumerate() {
            let c = chunk_of(id);
            let mut bits = 1u64 << f.src;
            for &d in &f.after {
                let d = d as usize;
                assert!(d < id, "flow {id} listed before its dependency {d}");
                if flows[d].dst == f.src && chunk_of(d) == c {
                    bits |= carries[d];
                }
            }
            carries[id] = bits;
        }
        let all = (1u64 << n) - 1;
        for r in 0..n {
            for c in 0..n {
                let held = flows
                    .iter()
                    .enumerate()
                    .filter(|&(id, f)| f.dst as usize == r && chunk_of(id) == c)
                    .fold(1u64 << r, |acc, (id, _)| acc | carries[id]);
                assert_eq!(held, all, "rank {r} chunk {c} misses contributions");
            }
        }
    }

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

    #[test]
    fn ring_all_reduce_reduces_everything_in_2n_minus_2_steps() {
        let ranks: Vec<u32> = (0..8).collect();
        let flows = all_reduce(&ranks, 8000, AllReduceAlgorithm::Ring, SimTime::ZERO);
        assert_eq!(flows.len(), 2 * 7 * 8);
        assert!(flows.iter().all(|f| f.dst == (f.src + 1) % 8 && f.size == 1000));
        check_all_reduce(&flows, 8, |id| (id % 8 + 8 - (id / 8) % 8) % 8);
        // Each rank sends 2(n-1)/n of its buffer: the ring's bandwidth-optimal volume.
        let sent: u64 = flows.iter().filter(|f| f.src == 3).map(|f| f.size).sum();
        assert_eq!(sent, 2 * 7 * 1000);
    }

    #[test]
    fn direct_all_reduce_reduces_everything_and_splits_uneven_sizes() {
        let ranks: Vec<u32> = vec![4, 5, 6];
        let flows = all_reduce(&ranks, 10, AllReduceAlgorithm::Direct, SimTime::ZERO);
        assert_eq!(flows.len(), 2 * 3 * 2);
        let total: u64 = (0..3).map(|k| chunk(10, 3, k)).sum();
        assert_eq!(total, 10);
        let local: Vec<FlowDef> =
            flows.iter().map(|f| FlowDef { src: f.src - 4, dst: f.dst - 4, ..f.clone() }).collect();
        // Reduce-scatter flows carry their destination's chunk, all-gather flows their source's.
        let chunk_of = |id: usize| if id < 6 { local[id].dst as usize } else { local[id].src as usize };
        check_all_reduce(&local, 3, chunk_of);
    }
}
