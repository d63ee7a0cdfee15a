//! The parallel groups of a `training` workload and the collectives a layer runs on them: the
//! layer rows of SimAI and AICB, where each compute phase may end with one collective on every
//! group of one parallel dimension (tensor, data, expert, or the data-parallel ranks of an
//! expert), as Megatron-LM's process groups are laid out.
//!
//! Ranks are numbered in the workload's host order, tensor parallelism innermost: with `tp`
//! ranks per tensor-parallel group and `ep` per expert-parallel group, rank r has tensor index
//! r mod tp and data-parallel index r / tp; expert groups are blocks of `ep` consecutive
//! data-parallel indices with the same tensor index, and the data-parallel ranks of an expert
//! (`dp_ep`) are those of the same tensor index and the same place in their expert group.

use crate::time::ByteSize;
use serde::{Deserialize, Serialize};

/// The collective of a [`LayerComm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CommOp {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
}

impl CommOp {
    pub fn name(self) -> &'static str {
        match self {
            CommOp::AllReduce => "all_reduce",
            CommOp::AllGather => "all_gather",
            CommOp::ReduceScatter => "reduce_scatter",
            CommOp::AllToAll => "all_to_all",
        }
    }

    /// Flows of one such collective among `g` ranks: a ring all-reduce 2g(g-1), a ring
    /// all-gather or reduce-scatter and a direct all-to-all g(g-1).
    pub fn flows(self, g: u64) -> u64 {
        let pairs = g.saturating_mul(g.saturating_sub(1));
        match self {
            CommOp::AllReduce => pairs.saturating_mul(2),
            _ => pairs,
        }
    }

    /// Bytes each of `g` ranks sends: 2(g-1)/g of the buffer for an all-reduce, (g-1)/g for the
    /// others (an all-to-all keeps the rank's own share).
    pub fn bytes_per_rank(self, g: u64, size: u64) -> u128 {
        let (g, size) = (u128::from(g.max(1)), u128::from(size));
        match self {
            CommOp::AllReduce => 2 * (g - 1) * size / g,
            _ => (g - 1) * size / g,
        }
    }
}

/// Which parallel dimension's groups a [`LayerComm`] runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CommGroup {
    /// Tensor parallel: `tp` consecutive ranks.
    Tp,
    /// Data parallel: the ranks with the same tensor index.
    Dp,
    /// Expert parallel: `ep` consecutive data-parallel ranks.
    Ep,
    /// The data-parallel ranks of one expert: same tensor index, same place in their expert group.
    DpEp,
    /// Every rank of the workload.
    All,
}

impl CommGroup {
    pub fn name(self) -> &'static str {
        match self {
            CommGroup::Tp => "tp",
            CommGroup::Dp => "dp",
            CommGroup::Ep => "ep",
            CommGroup::DpEp => "dp_ep",
            CommGroup::All => "all",
        }
    }
}

/// One collective a layer runs at the end of a compute phase, on every group of `group`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerComm {
    pub op: CommOp,
    /// Counted as nccl-tests and SimAI count it: the buffer each rank reduces (all-reduce), the
    /// whole gathered or scattered buffer (all-gather, reduce-scatter), or each rank's whole send
    /// buffer, a 1/g share to each rank of its group (all-to-all, rounded down to whole bytes).
    pub size: ByteSize,
    /// Default: `tp` after a forward or input-gradient compute, `dp` after a weight-gradient
    /// compute, as SimAI reads a row without a group suffix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<CommGroup>,
}

/// The workload's parallel layout: `n` ranks, `tp` per tensor group, `ep` per expert group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Groups {
    pub n: u32,
    pub tp: u32,
    pub ep: u32,
}

impl Groups {
    /// Data-parallel ranks per tensor index.
    pub fn dp(&self) -> u32 {
        self.n / self.tp
    }

    /// Ranks in each group of `group`.
    pub fn size(&self, group: CommGroup) -> u32 {
        match group {
            CommGroup::Tp => self.tp,
            CommGroup::Dp => self.dp(),
            CommGroup::Ep => self.ep,
            CommGroup::DpEp => self.dp() / self.ep,
            CommGroup::All => self.n,
        }
    }

    /// The groups of `group`, each a list of rank positions in the workload's host order; every
    /// rank is in exactly one.
    pub fn of(&self, group: CommGroup) -> Vec<Vec<u32>> {
        let (tp, ep, dp) = (self.tp, self.ep, self.dp());
        let rank = |t: u32, d: u32| d * tp + t;
        match group {
            CommGroup::All => vec![(0..self.n).collect()],
            CommGroup::Tp => (0..dp).map(|d| (0..tp).map(|t| rank(t, d)).collect()).collect(),
            CommGroup::Dp => (0..tp).map(|t| (0..dp).map(|d| rank(t, d)).collect()).collect(),
            CommGroup::Ep => (0..tp)
                .flat_map(|t| (0..dp / ep).map(move |b| (0..ep).map(|j| rank(t, b * ep + j)).collect()))
                .collect(),
            CommGroup::DpEp => (0..tp)
                .flat_map(|t| (0..ep).map(move |e| (0..dp / ep).map(|j| rank(t, j * ep + e)).collect()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dimension_partitions_the_ranks_into_groups_of_its_size() {
        let g = Groups { n: 24, tp: 2, ep: 3 };
        for dim in [CommGroup::Tp, CommGroup::Dp, CommGroup::Ep, CommGroup::DpEp, CommGroup::All] {
            let groups = g.of(dim);
            assert!(groups.iter().all(|m| m.len() as u32 == g.size(dim)), "{dim:?}");
            let mut all: Vec<u32> = groups.concat();
            all.sort_unstable();
            assert_eq!(all, (0..24).collect::<Vec<_>>(), "{dim:?}");
        }
    }

    #[test]
    fn groups_follow_megatron_order() {
        let g = Groups { n: 16, tp: 2, ep: 2 };
        assert_eq!(g.of(CommGroup::Tp)[1], vec![2, 3]);
        assert_eq!(g.of(CommGroup::Dp)[1], vec![1, 3, 5, 7, 9, 11, 13, 15]);
        // Expert groups: pairs of consecutive data-parallel ranks of tensor index 0, then 1.
        assert_eq!(g.of(CommGroup::Ep)[..2], [vec![0, 2], vec![4, 6]]);
        assert_eq!(g.of(CommGroup::Ep)[4], vec![1, 3]);
        // The same expert's data-parallel ranks: every other data-parallel rank.
        assert_eq!(g.of(CommGroup::DpEp)[..2], [vec![0, 4, 8, 12], vec![2, 6, 10, 14]]);
    }

    #[test]
    fn counts_match_the_schedules() {
        use crate::time::SimTime;
        use crate::workload::{all_gather, all_reduce, all_to_all, AllReduceAlgorithm, AllToAllAlgorithm, GatherAlgorithm};
        let ranks: Vec<u32> = (0..5).collect();
        let s = SimTime::ZERO;
        let made = [
            (CommOp::AllReduce, all_reduce::all_reduce(&ranks, 1000, AllReduceAlgorithm::Ring, 1, s)),
            (CommOp::AllGather, all_gather::all_gather(&ranks, 1000, GatherAlgorithm::Ring, s)),
            (CommOp::ReduceScatter, all_gather::reduce_scatter(&ranks, 1000, GatherAlgorithm::Ring, s)),
            (CommOp::AllToAll, all_to_all::all_to_all(&ranks, 200, AllToAllAlgorithm::Direct, 1, 1, 1, s)),
        ];
        for (op, flows) in made {
            assert_eq!(flows.len() as u64, op.flows(5), "{op:?}");
            let sent: u64 = flows.iter().filter(|f| f.src == 0).map(|f| f.size).sum();
            assert_eq!(u128::from(sent), op.bytes_per_rank(5, 1000), "{op:?}");
        }
    }
}
