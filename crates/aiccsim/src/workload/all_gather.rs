//! `kind = "all_gather"`, and what it shares with `kind = "reduce_scatter"` (`reduce_scatter.rs`):
//! the two halves of an all-reduce. `size` is the whole buffer, as nccl-tests counts it, split
//! into n blocks (block i is rank i's): an all-gather leaves every block on every rank; a
//! reduce-scatter leaves on rank i block i summed over every rank.
//!
//! The two move the same bytes on the same schedules and differ only in what a rank sends: in
//! an all-gather it forwards the blocks it received as they are, in a reduce-scatter it adds its
//! own contribution to the partial sum it received and passes that on.

use super::catalog::info;
use super::collective::{chunk, member_flow, one, pipelined};
use super::kind::{chunks_fit, positive, splits, Ranks, Size, WorkloadKind};
use super::{CollectiveInfo, FlowDef, HostSet, Workload};
use crate::cc::Check;
use crate::tags::CollectiveKind;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]
kind = "all_gather"
size = "1MB"
chunks = 4
"#;

/// An all-gather among `hosts`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub struct AllGatherWorkload(pub GatherWorkload);

/// An all-gather or a reduce-scatter among `hosts`. `size` is the whole buffer, as nccl-tests
/// counts it: an all-gather gathers n blocks of size/n, one from each rank, onto every rank; a
/// reduce-scatter reduces each rank's `size` bytes and leaves block i of the sum on rank i.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GatherWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: GatherAlgorithm,
    #[serde(default)]
    pub start: SimTime,
    /// Split into this many equal chunks, each run through the whole schedule, pipelined: a
    /// chunk's step waits only for the same chunk's step before, and on each connection the
    /// chunks go in order.
    #[serde(default = "one")]
    pub chunks: u32,
}

/// How an all-gather or a reduce-scatter is broken into point-to-point sends.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GatherAlgorithm {
    /// n-1 steps around a ring, size/n to the next rank each, each step waiting for the block
    /// from the previous rank.
    #[default]
    Ring,
    /// Each rank sends size/n to every other rank at once.
    Direct,
}

impl GatherAlgorithm {
    /// Its name in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            GatherAlgorithm::Ring => "ring",
            GatherAlgorithm::Direct => "direct",
        }
    }
}

impl WorkloadKind for AllGatherWorkload {
    fn chunks(&self) -> u32 {
        self.0.chunks
    }
    fn check(&self) -> Check {
        self.0.check()
    }
    fn check_ranks(&self, ranks: &Ranks) -> Check {
        self.0.check_ranks(ranks)
    }
    fn size(&self, ranks: u32) -> Size {
        self.0.size(ranks)
    }
    fn expand(&self, ranks: u32, _seed: u64) -> Workload {
        self.0.expand(ranks, all_gather)
    }
    fn collectives(&self, ranks: u32, _made: &Workload) -> Vec<CollectiveInfo> {
        self.0.collectives(CollectiveKind::AllGather, ranks)
    }
}

/// What an all-gather and a reduce-scatter do alike.
impl GatherWorkload {
    pub(super) fn check(&self) -> Check {
        positive(self.size)?;
        chunks_fit(self.chunks, self.size.0)
    }

    pub(super) fn check_ranks(&self, ranks: &Ranks) -> Check {
        ranks.set("workload.hosts", &self.hosts, 2)?;
        let pieces = self.hosts.len(ranks.n).saturating_mul(u64::from(self.chunks));
        splits(self.size, pieces, "blocks (ranks x chunks)")
    }

    pub(super) fn size(&self, ranks: u32) -> Size {
        let n = self.hosts.len(ranks);
        let flows = n.saturating_mul(n.saturating_sub(1)).saturating_mul(u64::from(self.chunks));
        // Each rank sends (and receives) (n-1)/n of the buffer.
        let n = u128::from(n.max(1));
        let per_rank = (n - 1) * u128::from(self.size.0) / n;
        Size::of_flows(flows, n * per_rank, per_rank, self.start)
    }

    /// Its flows, one chunk's made by `schedule`.
    pub(super) fn expand(&self, ranks: u32, schedule: Schedule) -> Workload {
        let members = self.hosts.expand(ranks);
        Workload::of_flows(pipelined(self.size.0, self.chunks, |bytes| {
            schedule(&members, bytes, self.algorithm, self.start)
        }))
    }

    pub(super) fn collectives(&self, kind: CollectiveKind, ranks: u32) -> Vec<CollectiveInfo> {
        vec![info(kind, 0, self.algorithm.name(), self.size.0, self.hosts.len(ranks))]
    }
}

/// The flows of one all-gather or reduce-scatter of a buffer among ranks.
pub(super) type Schedule = fn(&[u32], u64, GatherAlgorithm, SimTime) -> Vec<FlowDef>;

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
