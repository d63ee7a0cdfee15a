//! All-gather and reduce-scatter, the two halves of an all-reduce. `size` is the whole buffer,
//! as nccl-tests counts it, split into n blocks (block i is rank i's): an all-gather leaves every
//! block on every rank; a reduce-scatter leaves on rank i block i summed over every rank.
//!
//! The two move the same bytes on the same schedules and differ only in what a rank sends: in
//! an all-gather it forwards the blocks it received as they are, in a reduce-scatter it adds its
//! own contribution to the partial sum it received and passes that on.

use super::collective::{chunk, member_flow};
use super::FlowDef;
use crate::config::GatherAlgorithm;
use crate::tags::CollectiveKind;
use crate::time::SimTime;

/// The flows of one all-gather of `size` bytes among `ranks`.
pub fn all_gather(ranks: &[u32], size: u64, algorithm: GatherAlgorithm, start: SimTime) -> Vec<FlowDef> {
    // Ring step s: rank i forwards block (i - s) to rank i + 1 (its own block at step 0).
    schedule(ranks, size, algorithm, start, CollectiveKind::AllGather, |i, s, n| (i + n - s) % n)
}

/// The flows of one reduce-scatter of `size` bytes per rank among `ranks`.
pub fn reduce_scatter(ranks: &[u32], size: u64, algorithm: GatherAlgorithm, start: SimTime) -> Vec<FlowDef> {
    // Ring step s: rank i sends its partial sum of block (i - s - 1) to rank i + 1, so that
    // after n - 1 steps block i ends, complete, on rank i.
    schedule(ranks, size, algorithm, start, CollectiveKind::ReduceScatter, |i, s, n| (i + 2 * n - s - 1) % n)
}

/// The common schedules. `ring_block(i, s, n)` is the block rank i sends at ring step s.
fn schedule(
    ranks: &[u32],
    size: u64,
    algorithm: GatherAlgorithm,
    start: SimTime,
    kind: CollectiveKind,
    ring_block: impl Fn(usize, usize, usize) -> usize,
) -> Vec<FlowDef> {
    let n = ranks.len();
    let flow = member_flow(ranks, kind, start);
    let mut flows = Vec::with_capacity(n * (n - 1));
    match algorithm {
        GatherAlgorithm::Ring => {
            // Flow id s * n + i; from step 1 on, rank i passes on what rank i - 1 sent it in the
            // step before.
            for s in 0..n - 1 {
                for i in 0..n {
                    let after = if s == 0 { vec![] } else { vec![((s - 1) * n + (i + n - 1) % n) as u32] };
                    flows.push(flow(i, (i + 1) % n, chunk(size, n, ring_block(i, s, n)), after));
                }
            }
        }
        GatherAlgorithm::Direct => {
            // All-gather: rank i sends its block to every rank; reduce-scatter: rank i sends its
            // contribution to block j to rank j. Both are one step.
            for i in 0..n {
                for j in (0..n).filter(|&j| j != i) {
                    let block = if kind == CollectiveKind::AllGather { i } else { j };
                    flows.push(flow(i, j, chunk(size, n, block), vec![]));
                }
            }
        }
    }
    flows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which ranks' data each rank ends up holding for each block, following the flows: a flow
    /// of block b carries its sender's own part of b plus what the flows it waited for brought
    /// the sender of b.
    fn holdings(flows: &[FlowDef], n: usize, block_of: impl Fn(usize) -> usize) -> Vec<Vec<u64>> {
        let mut carries = vec![0u64; flows.len()];
        for (id, f) in flows.iter().enumerate() {
            let b = block_of(id);
            carries[id] = f
                .after
                .iter()
                .map(|&d| d as usize)
                .filter(|&d| flows[d].dst == f.src && block_of(d) == b)
                .fold(1 << f.src, |acc, d| acc | carries[d]);
        }
        (0..n)
            .map(|r| {
                (0..n)
                    .map(|b| {
                        let into = flows.iter().enumerate().filter(|&(id, f)| f.dst as usize == r && block_of(id) == b);
                        into.fold(1 << r, |acc, (id, _)| acc | carries[id])
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn ring_reduce_scatter_leaves_each_block_complete_on_its_rank() {
        let ranks: Vec<u32> = (0..6).collect();
        let flows = reduce_scatter(&ranks, 600, GatherAlgorithm::Ring, SimTime::ZERO);
        assert_eq!(flows.len(), 5 * 6);
        assert!(flows.iter().all(|f| f.dst == (f.src + 1) % 6 && f.size == 100));
        let held = holdings(&flows, 6, |id| (id % 6 + 12 - id / 6 - 1) % 6);
        for (r, blocks) in held.iter().enumerate() {
            assert_eq!(blocks[r], 0b111111, "rank {r} lacks contributions to its block");
        }
    }

    #[test]
    fn all_gather_leaves_every_block_on_every_rank() {
        let ranks: Vec<u32> = (0..5).collect();
        for algorithm in [GatherAlgorithm::Ring, GatherAlgorithm::Direct] {
            let flows = all_gather(&ranks, 1003, algorithm, SimTime::ZERO);
            assert_eq!(flows.len(), 5 * 4);
            // A flow's block is found by its size, as the blocks of 1003 B split 201, 201, 201,
            // 200, 200 with their owner's data: follow where each owner's block arrives.
            let block_of = |id: usize| match algorithm {
                GatherAlgorithm::Ring => (id % 5 + 5 - id / 5) % 5,
                GatherAlgorithm::Direct => flows[id].src as usize,
            };
            let reached: Vec<Vec<bool>> = (0..5)
                .map(|r| {
                    (0..5)
                        .map(|b| {
                            b == r || flows.iter().enumerate().any(|(id, f)| f.dst as usize == r && block_of(id) == b)
                        })
                        .collect()
                })
                .collect();
            assert!(reached.iter().flatten().all(|&x| x), "{algorithm:?}: a block misses a rank");
            let sent: u64 = flows.iter().filter(|f| f.src == 2).map(|f| f.size).sum();
            assert!((800..=804).contains(&sent), "each rank sends (n-1)/n of the buffer, got {sent}");
        }
    }
}
