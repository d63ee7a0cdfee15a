//! What each collective of a workload is, as a collective library reports it: its kind,
//! algorithm, size and ranks. `collectives.csv` joins this with the flows' times to give each
//! collective's completion time and bandwidths.

use super::training::{Layout, Op};
use crate::config::{GatherAlgorithm, WorkloadConfig};
use crate::tags::CollectiveKind;

/// One collective the workload issues.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveInfo {
    /// Its number in the run (the id of its flows' collective tag).
    pub id: u32,
    /// The job that issued it (empty for a `[workload]`).
    pub job: String,
    pub kind: CollectiveKind,
    /// The schedule's name, as in the scenario (`ring`, `direct`, ...).
    pub algorithm: &'static str,
    /// Bytes of each rank's buffer, as nccl-tests counts a collective's size: the buffer an
    /// all-reduce reduces, the whole gathered buffer of an all-gather or reduce-scatter, all a
    /// rank sends in an all-to-all (its own share included), the broadcast buffer.
    pub size: u64,
    pub ranks: u32,
    /// Pipelined chunks it is split into.
    pub chunks: u32,
}

impl CollectiveInfo {
    /// `kind:id`, the `collective` of its flows in `flows.csv`.
    pub fn name(&self) -> String {
        format!("{}:{}", self.kind, self.id)
    }

    /// nccl-tests' bus-bandwidth factor: bus bandwidth = size / time x this, the bytes a rank
    /// moves on its busiest link per byte of buffer, so that a collective running at link speed
    /// shows the link's speed whatever the rank count.
    pub fn bus_factor(&self) -> f64 {
        let n = f64::from(self.ranks.max(1));
        match self.kind {
            CollectiveKind::AllReduce => 2.0 * (n - 1.0) / n,
            CollectiveKind::AllGather | CollectiveKind::ReduceScatter | CollectiveKind::AllToAll => (n - 1.0) / n,
            CollectiveKind::Broadcast | CollectiveKind::SendRecv | CollectiveKind::Other => 1.0,
        }
    }
}

fn info(kind: CollectiveKind, id: u32, algorithm: &'static str, size: u64, ranks: u64) -> CollectiveInfo {
    CollectiveInfo { id, job: String::new(), kind, algorithm, size, ranks: ranks as u32, chunks: 1 }
}

fn gather(a: GatherAlgorithm) -> &'static str {
    match a {
        GatherAlgorithm::Ring => "ring",
        GatherAlgorithm::Direct => "direct",
    }
}

/// The collectives of a validated workload on `hosts` hosts (`training`: its layout).
pub fn collectives(cfg: &WorkloadConfig, hosts: u32, training: Option<&Layout>) -> Vec<CollectiveInfo> {
    use crate::config::{AllReduceAlgorithm as R, AllToAllAlgorithm as A, BroadcastAlgorithm as B};
    let reduce = |a: R| match a {
        R::Ring => "ring",
        R::Direct => "direct",
        R::HalvingDoubling => "halving_doubling",
        R::Hierarchical => "hierarchical",
    };
    let a2a = |a: A| match a {
        A::Direct => "direct",
        A::Pairwise => "pairwise",
        A::Hierarchical => "hierarchical",
    };
    let chunks = match cfg {
        WorkloadConfig::AllReduce(w) => w.chunks,
        WorkloadConfig::SendRecv(w) => w.chunks,
        WorkloadConfig::AllGather(w) | WorkloadConfig::ReduceScatter(w) => w.chunks,
        WorkloadConfig::AllToAll(w) => w.chunks,
        WorkloadConfig::Broadcast(w) => w.chunks,
        WorkloadConfig::Training(w) => w.chunks,
        _ => 1,
    };
    let mut made = match cfg {
        WorkloadConfig::AllReduce(w) => {
            vec![info(CollectiveKind::AllReduce, 0, reduce(w.algorithm), w.size.0, w.hosts.len(hosts))]
        }
        WorkloadConfig::AllGather(w) => {
            vec![info(CollectiveKind::AllGather, 0, gather(w.algorithm), w.size.0, w.hosts.len(hosts))]
        }
        WorkloadConfig::ReduceScatter(w) => {
            vec![info(CollectiveKind::ReduceScatter, 0, gather(w.algorithm), w.size.0, w.hosts.len(hosts))]
        }
        WorkloadConfig::AllToAll(w) => {
            let n = w.hosts.len(hosts);
            let size = w.size.0.saturating_mul(n).saturating_mul(u64::from(w.flows_per_pair));
            vec![info(CollectiveKind::AllToAll, 0, a2a(w.algorithm), size, n)]
        }
        WorkloadConfig::Broadcast(w) => {
            let algorithm = match w.algorithm {
                B::Ring => "ring",
                B::Direct => "direct",
                B::BinomialTree => "binomial_tree",
            };
            vec![info(CollectiveKind::Broadcast, 0, algorithm, w.size.0, w.hosts.len(hosts))]
        }
        WorkloadConfig::Training(w) => {
            let Some(layout) = training else { return Vec::new() };
            let n = layout.ranks.len() as u64;
            (layout.collectives.iter())
                .map(|c| {
                    let layer = &w.layers[c.layer as usize];
                    match c.op {
                        Op::AllReduce => {
                            let ar = layer.all_reduce.expect("an issued all-reduce is configured");
                            info(CollectiveKind::AllReduce, c.id, reduce(ar.algorithm), ar.size.0, n)
                        }
                        Op::ForwardAllToAll | Op::BackwardAllToAll => {
                            let a = if c.op == Op::ForwardAllToAll {
                                layer.forward_all_to_all
                            } else {
                                layer.backward_all_to_all
                            };
                            let a = a.expect("an issued all-to-all is configured");
                            info(CollectiveKind::AllToAll, c.id, a2a(a.algorithm), a.size.0.saturating_mul(n), n)
                        }
                    }
                })
                .collect()
        }
        WorkloadConfig::SendRecv(w) => {
            // nccl-tests' sendrecv: the bytes each pair moves; its ranks, the hosts in a pair.
            let mut hosts: Vec<u32> = w.pairs.iter().flatten().copied().collect();
            hosts.sort_unstable();
            hosts.dedup();
            vec![info(CollectiveKind::SendRecv, 0, "direct", w.size.0, hosts.len() as u64)]
        }
        WorkloadConfig::Flows(_) | WorkloadConfig::Incast(_) | WorkloadConfig::Permutation(_) => Vec::new(),
    };
    for c in &mut made {
        c.chunks = chunks;
    }
    made
}
