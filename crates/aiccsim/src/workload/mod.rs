//! The traffic: the workload kinds, one file each, listed once in the registry below, and what
//! they turn into for the engine: flows and compute steps, with the dependencies between them.
//! `jobs.rs` lays one or more workloads out on the fabric's hosts.
//!
//! Each kind's file holds its settings (the `[workload]` table of its `kind`), its checks, its
//! size, its expansion into flows and its collectives, behind the [`WorkloadKind`] trait
//! (`kind.rs`); docs/workloads/adding.md walks through adding one. The settings are the schema's
//! `[workload]` section, as `cc/` holds the `[cc]` section's: `config` reads them from here.

#[macro_use]
mod registry;
mod catalog;
mod collective;
mod hosts;
pub mod jobs;
mod kind;
pub mod layer_cost;
pub mod model;
mod placement;

pub use all_gather::{GatherAlgorithm, GatherWorkload};
pub use all_reduce::AllReduceAlgorithm;
pub use all_to_all::AllToAllAlgorithm;
pub use broadcast::BroadcastAlgorithm;
pub use catalog::{collectives, CollectiveInfo};
pub use flows::FlowSpec;
pub use hosts::HostSet;
pub use jobs::{JobConfig, JobWorkloads};
pub use kind::{Ranks, Size, WorkloadKind};
pub use placement::Placement;
pub use training::{LayerAllReduce, LayerAllToAll, LayerConfig};

use crate::tags::CollectiveTag;
use crate::time::SimTime;

registry! {
    /// An explicit list of flows.
    flows: "flows" => Flows(FlowList),
    /// Many senders to one receiver.
    incast: "incast" => Incast(IncastWorkload),
    /// Every rank to every other.
    all_to_all: "all_to_all" => AllToAll(AllToAllWorkload),
    /// Each host to another, a seeded random pairing.
    permutation: "permutation" => Permutation(PermutationWorkload),
    /// Every rank ends with the sum of every rank's buffer.
    all_reduce: "all_reduce" => AllReduce(AllReduceWorkload),
    /// Every rank ends with every rank's block.
    all_gather: "all_gather" => AllGather(AllGatherWorkload),
    /// Every rank ends with its block summed over every rank.
    reduce_scatter: "reduce_scatter" => ReduceScatter(ReduceScatterWorkload),
    /// The root's buffer onto every other rank.
    broadcast: "broadcast" => Broadcast(BroadcastWorkload),
    /// Point-to-point transfers between listed pairs.
    send_recv: "send_recv" => SendRecv(SendRecvWorkload),
    /// Iterations of a model's forward and backward pass, with its layers' collectives.
    training: "training" => Training(TrainingWorkload),
    /// Iterations of a model split over tensor, pipeline, data and expert parallel ranks.
    parallel_training: "parallel_training" => ParallelTraining(ParallelTrainingWorkload),
    /// A Chakra execution trace, one file per rank.
    chakra: "chakra" => Chakra(ChakraWorkload),
}

impl WorkloadConfig {
    /// Sets `local_ranks`, where the kind groups ranks and the scenario left it out, to `group`:
    /// the ranks a server holds (the topology's GPUs per server for a `[workload]`; for a job,
    /// its ranks on each server when they form whole consecutive groups).
    pub fn fill_local_ranks(&mut self, group: u32) {
        self.as_kind_mut().fill_local_ranks(group);
    }
}

/// Expands a validated workload on `hosts` hosts (ranks 0 to `hosts - 1`).
pub fn expand(cfg: &WorkloadConfig, hosts: u32, seed: u64) -> Workload {
    cfg.as_kind().expand(hosts, seed)
}

/// One flow to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowDef {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: SimTime,
    pub collective: Option<CollectiveTag>,
    /// Flows that must be delivered before this one starts (earlier in the list).
    pub after: Vec<u32>,
    /// Flows whose senders must hold the acknowledgement of every byte before this one starts
    /// (earlier in the list): one ACK's way back later than `after` would start it.
    pub after_acked: Vec<u32>,
    /// Compute steps that must be done before this one starts.
    pub after_compute: Vec<u32>,
    /// The sender stops taking new data at this time (the flow ends with what it has sent).
    pub stop: Option<SimTime>,
    /// Flows with the same source, destination and connection ride one queue pair, one after
    /// another in the order they are posted, keeping its congestion control (as a collective
    /// library's connection between two ranks does; `nic.connections`). `None`: a queue pair of
    /// its own.
    pub connection: Option<u32>,
    /// The job that made it (its place in `[[jobs]]`; 0 for a `[workload]`): connections never
    /// join transfers of two jobs, as two communicators have queue pairs of their own.
    pub job: u32,
}

/// One compute step: `host` works for `duration` once everything it waits for is done (and
/// not before `start`), then releases what waits for it. Steps take their time whatever else
/// their host is doing; a workload that wants a host's steps one after another makes each
/// wait for the one before.
#[derive(Clone, Debug, PartialEq)]
pub struct ComputeDef {
    pub host: u32,
    pub duration: SimTime,
    pub start: SimTime,
    /// Flows that must be delivered first.
    pub after: Vec<u32>,
    /// Compute steps that must be done first (earlier in the list).
    pub after_compute: Vec<u32>,
}

/// An expanded workload: what the engine runs, and what the results need to describe it.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub flows: Vec<FlowDef>,
    /// Compute steps: `training`'s, and the steps that order a job's sequence of workloads.
    pub computes: Vec<ComputeDef>,
    /// Which flows and steps make up which training iteration, per `training` workload.
    pub training: Vec<training::Layout>,
    /// The same for each `parallel_training` workload.
    pub parallel_training: Vec<parallel_training::Layout>,
    /// The collectives issued (`jobs::lay_out` fills this in).
    pub collectives: Vec<CollectiveInfo>,
    /// The jobs (`jobs::lay_out` fills this in).
    pub jobs: Vec<jobs::JobInfo>,
}

impl Workload {
    /// A workload of flows only.
    fn of_flows(flows: Vec<FlowDef>) -> Workload {
        Workload { flows, ..Workload::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ByteSize;

    /// Every kind on varied host sets and algorithms.
    fn varied(set: &HostSet) -> Vec<WorkloadConfig> {
        let (size, start) = (ByteSize(64_000), SimTime::ZERO);
        let n = set.len(8);
        // Groups of two where the ranks pair up.
        let group = if n.is_multiple_of(2) { 2 } else { 1 };
        let mut cfgs = vec![
            WorkloadConfig::Incast(IncastWorkload {
                senders: set.clone(),
                receiver: 9,
                size,
                start,
                flows_per_sender: 3,
                collective: None,
            }),
            WorkloadConfig::Permutation(PermutationWorkload { hosts: set.clone(), size, start }),
        ];
        for algorithm in [AllToAllAlgorithm::Direct, AllToAllAlgorithm::Pairwise, AllToAllAlgorithm::Hierarchical] {
            let flows_per_pair = if algorithm == AllToAllAlgorithm::Direct { 2 } else { 1 };
            let local_ranks = (algorithm == AllToAllAlgorithm::Hierarchical).then_some(group);
            let hosts = set.clone();
            let chunks = 3;
            let peers_in_flight = if algorithm == AllToAllAlgorithm::Pairwise { 2 } else { 1 };
            cfgs.push(WorkloadConfig::AllToAll(AllToAllWorkload {
                hosts,
                size,
                algorithm,
                flows_per_pair,
                peers_in_flight,
                local_ranks,
                start,
                chunks,
            }));
        }
        for algorithm in [
            AllReduceAlgorithm::Ring,
            AllReduceAlgorithm::Direct,
            AllReduceAlgorithm::HalvingDoubling,
            AllReduceAlgorithm::Hierarchical,
        ] {
            let local_ranks = (algorithm == AllReduceAlgorithm::Hierarchical).then_some(group);
            if algorithm.fits(n, local_ranks) {
                let (hosts, chunks) = (set.clone(), 2);
                cfgs.push(WorkloadConfig::AllReduce(AllReduceWorkload {
                    hosts,
                    size,
                    algorithm,
                    local_ranks,
                    start,
                    chunks,
                }));
            }
        }
        for algorithm in [BroadcastAlgorithm::Ring, BroadcastAlgorithm::Direct, BroadcastAlgorithm::BinomialTree] {
            let (hosts, root, chunks) = (set.clone(), None, 4);
            cfgs.push(WorkloadConfig::Broadcast(BroadcastWorkload { hosts, root, size, algorithm, start, chunks }));
        }
        for algorithm in [GatherAlgorithm::Ring, GatherAlgorithm::Direct] {
            let w = GatherWorkload { hosts: set.clone(), size, algorithm, start, chunks: 3 };
            cfgs.push(WorkloadConfig::AllGather(AllGatherWorkload(w.clone())));
            cfgs.push(WorkloadConfig::ReduceScatter(ReduceScatterWorkload(w)));
        }
        let pairs = vec![[1, 2], [2, 1], [1, 2], [5, 0]];
        cfgs.push(WorkloadConfig::SendRecv(SendRecvWorkload { pairs, size, start, chunks: 2 }));
        let layer = |a2a: AllToAllAlgorithm| LayerConfig {
            forward: SimTime::from_us(1),
            backward: Some(SimTime::from_us(2)),
            input_grad: None,
            weight_grad: None,
            all_reduce: Some(LayerAllReduce { size, algorithm: AllReduceAlgorithm::Direct }),
            forward_all_to_all: Some(LayerAllToAll { size, algorithm: a2a }),
            backward_all_to_all: None,
            forward_comm: None,
            input_grad_comm: None,
            weight_grad_comm: None,
        };
        let layers = vec![layer(AllToAllAlgorithm::Pairwise), layer(AllToAllAlgorithm::Hierarchical)];
        let local_ranks = Some(group);
        let hosts = set.clone();
        let training = TrainingWorkload { hosts, iterations: 2, start, chunks: 3, local_ranks, tp: 1, ep: 1, layers };
        cfgs.push(WorkloadConfig::Training(training.clone()));
        // SimAI-style rows: a collective per phase on each group of a dimension.
        let dp = n / u64::from(group);
        let ep = if dp.is_multiple_of(2) { 2 } else { 1 };
        let comm = |op, group| Some(training::LayerComm { op, size, group });
        let mut rows = Vec::new();
        for (op, dim) in [
            (training::CommOp::AllReduce, None),
            (training::CommOp::AllGather, Some(training::CommGroup::Ep)),
            (training::CommOp::ReduceScatter, Some(training::CommGroup::DpEp)),
            (training::CommOp::AllToAll, Some(training::CommGroup::All)),
        ] {
            let mut l = layer(AllToAllAlgorithm::Direct);
            (l.all_reduce, l.forward_all_to_all) = (None, None);
            (l.forward_comm, l.input_grad_comm, l.weight_grad_comm) = (comm(op, dim), comm(op, dim), comm(op, None));
            rows.push(l);
        }
        cfgs.push(WorkloadConfig::Training(TrainingWorkload { tp: group, ep, layers: rows, ..training }));
        cfgs
    }

    #[test]
    fn the_counted_size_is_what_expand_makes() {
        let sets = [HostSet::All, HostSet::Range { start: 2, end: 7 }, HostSet::List(vec![5, 1, 3])];
        for set in sets {
            for cfg in varied(&set) {
                let (size, made) = (cfg.as_kind().size(8), expand(&cfg, 8, 1));
                assert_eq!(size.flows, made.flows.len() as u64, "{cfg:?}");
                assert_eq!(size.computes, made.computes.len() as u64, "{cfg:?}");
                // Pieces are rounded per chunk and rank: the bytes are within a byte per flow.
                let bytes: u64 = made.flows.iter().map(|f| f.size).sum();
                if !matches!(cfg, WorkloadConfig::Training(_)) {
                    assert!(size.bytes.abs_diff(u128::from(bytes)) <= u128::from(size.flows), "{cfg:?}");
                }
            }
        }
    }

    #[test]
    fn all_to_all_makes_n_times_n_minus_one_flows() {
        let cfg = WorkloadConfig::AllToAll(AllToAllWorkload {
            hosts: HostSet::All,
            size: ByteSize(1000),
            algorithm: Default::default(),
            flows_per_pair: 1,
            peers_in_flight: 1,
            local_ranks: None,
            start: SimTime::ZERO,
            chunks: 1,
        });
        let flows = expand(&cfg, 8, 1).flows;
        assert_eq!(flows.len(), 56);
        assert_eq!(cfg.as_kind().size(8).flows, 56);
        assert!(flows.iter().all(|f| f.collective.unwrap().group_size == 8));
    }
}
