//! Turns the `[workload]` section into what the engine runs: flows, and compute steps, with the
//! dependencies between them.

mod all_gather;
mod all_reduce;
mod all_to_all;
mod broadcast;
mod catalog;
mod collective;
pub mod jobs;
mod placement;
mod send_recv;
pub mod training;

use crate::config::{
    AllReduceAlgorithm, AllReduceWorkload, AllToAllAlgorithm, AllToAllWorkload, FlowList, IncastWorkload,
    PermutationWorkload, WorkloadConfig,
};
use crate::rng;
use crate::tags::CollectiveTag;
use crate::time::SimTime;
pub use catalog::{collectives, CollectiveInfo};
use collective::pipelined;
use rand::RngExt;

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
    /// The collectives issued (`jobs::lay_out` fills this in).
    pub collectives: Vec<CollectiveInfo>,
    /// The jobs (`jobs::lay_out` fills this in).
    pub jobs: Vec<jobs::JobInfo>,
}

impl Workload {
    fn of_flows(flows: Vec<FlowDef>) -> Workload {
        Workload { flows, ..Workload::default() }
    }
}

/// The number of flows `expand` makes, computed without making them (validation bounds it
/// before anything is allocated). Saturates instead of overflowing.
pub fn count(cfg: &WorkloadConfig, hosts: u32) -> u64 {
    match cfg {
        WorkloadConfig::Flows(FlowList { flows }) => flows.len() as u64,
        WorkloadConfig::Incast(w) => w.senders.len(hosts).saturating_mul(u64::from(w.flows_per_sender)),
        WorkloadConfig::AllToAll(w) => {
            let n = w.hosts.len(hosts);
            let per_chunk = all_to_all_flows(n, w.algorithm, w.local_ranks).saturating_mul(u64::from(w.flows_per_pair));
            per_chunk.saturating_mul(u64::from(w.chunks))
        }
        WorkloadConfig::Permutation(w) => w.hosts.len(hosts),
        WorkloadConfig::AllReduce(w) => {
            all_reduce_flows(w.hosts.len(hosts), w.algorithm, w.local_ranks).saturating_mul(u64::from(w.chunks))
        }
        WorkloadConfig::AllGather(w) | WorkloadConfig::ReduceScatter(w) => {
            let n = w.hosts.len(hosts);
            n.saturating_mul(n.saturating_sub(1)).saturating_mul(u64::from(w.chunks))
        }
        WorkloadConfig::Broadcast(w) => w.hosts.len(hosts).saturating_sub(1).saturating_mul(u64::from(w.chunks)),
        WorkloadConfig::SendRecv(w) => (w.pairs.len() as u64).saturating_mul(u64::from(w.chunks)),
        WorkloadConfig::Training(w) => training::count_flows(w, hosts),
    }
}

/// Direct and pairwise: n(n-1); hierarchical (groups of g): n(g-1) inside the groups and
/// n(n/g-1) across.
pub(crate) fn all_to_all_flows(ranks: u64, algorithm: AllToAllAlgorithm, local: Option<u32>) -> u64 {
    match algorithm {
        AllToAllAlgorithm::Hierarchical => {
            let g = u64::from(local.unwrap_or(1).max(1));
            ranks.saturating_mul(g.saturating_sub(1).saturating_add((ranks / g).saturating_sub(1)))
        }
        AllToAllAlgorithm::Direct | AllToAllAlgorithm::Pairwise => ranks.saturating_mul(ranks.saturating_sub(1)),
    }
}

/// Ring: 2(n-1) steps of n flows; direct: n(n-1) reduce-scatter and as many all-gather;
/// halving-doubling: 2 log2(n) steps of n flows; hierarchical (groups of g): 2n(g-1) inside
/// the groups and 2n(n/g-1) across.
pub(crate) fn all_reduce_flows(ranks: u64, algorithm: AllReduceAlgorithm, local: Option<u32>) -> u64 {
    match algorithm {
        AllReduceAlgorithm::Hierarchical => {
            let g = u64::from(local.unwrap_or(1).max(1));
            let inside = g.saturating_sub(1);
            let across = (ranks / g).saturating_sub(1);
            ranks.saturating_mul(2).saturating_mul(inside.saturating_add(across))
        }
        AllReduceAlgorithm::Ring | AllReduceAlgorithm::Direct => {
            ranks.saturating_mul(ranks.saturating_sub(1)).saturating_mul(2)
        }
        AllReduceAlgorithm::HalvingDoubling => {
            ranks.saturating_mul(2 * u64::from(ranks.max(1).next_power_of_two().trailing_zeros()))
        }
    }
}

/// Expands a validated workload. `hosts` is the number of hosts in the topology.
pub fn expand(cfg: &WorkloadConfig, hosts: u32, seed: u64) -> Workload {
    match cfg {
        WorkloadConfig::Training(w) => training::expand(w, hosts),
        other => Workload::of_flows(expand_flows(other, hosts, seed)),
    }
}

/// The flows of a workload made of flows only.
fn expand_flows(cfg: &WorkloadConfig, hosts: u32, seed: u64) -> Vec<FlowDef> {
    match cfg {
        WorkloadConfig::Training(_) => unreachable!("training is expanded with its compute steps"),
        WorkloadConfig::Flows(FlowList { flows }) => flows
            .iter()
            .map(|f| FlowDef {
                src: f.src,
                dst: f.dst,
                size: f.size.0,
                start: f.start,
                collective: f.collective,
                after: f.after.clone(),
                after_compute: Vec::new(),
                stop: f.stop,
                connection: f.connection,
                job: 0,
            })
            .collect(),
        WorkloadConfig::Incast(IncastWorkload { senders, receiver, size, start, flows_per_sender, collective }) => {
            let senders = senders.expand(hosts);
            let mut flows = Vec::with_capacity(senders.len() * *flows_per_sender as usize);
            for &s in &senders {
                for _ in 0..*flows_per_sender {
                    flows.push(FlowDef {
                        src: s,
                        dst: *receiver,
                        size: size.0,
                        start: *start,
                        collective: *collective,
                        after: Vec::new(),
                        after_compute: Vec::new(),
                        stop: None,
                        connection: None,
                        job: 0,
                    });
                }
            }
            flows
        }
        WorkloadConfig::AllToAll(AllToAllWorkload {
            hosts: set,
            size,
            algorithm,
            flows_per_pair,
            local_ranks,
            start,
            chunks,
        }) => {
            let (ranks, local) = (set.expand(hosts), local_ranks.unwrap_or(1) as usize);
            pipelined(size.0, *chunks, |bytes| {
                all_to_all::all_to_all(&ranks, bytes, *algorithm, *flows_per_pair, local, *start)
            })
        }
        WorkloadConfig::Permutation(PermutationWorkload { hosts: set, size, start }) => {
            let members = set.expand(hosts);
            let mut rng = rng::stream(seed, "workload.permutation", 0);
            // Sattolo's algorithm: a uniformly random single cycle, so nobody sends to itself.
            let mut target = members.clone();
            for i in (1..target.len()).rev() {
                let j = rng.random_range(0..i);
                target.swap(i, j);
            }
            members
                .iter()
                .zip(&target)
                .map(|(&src, &dst)| FlowDef {
                    src,
                    dst,
                    size: size.0,
                    start: *start,
                    collective: None,
                    after: Vec::new(),
                    after_compute: Vec::new(),
                    stop: None,
                    connection: None,
                    job: 0,
                })
                .collect()
        }
        WorkloadConfig::AllReduce(AllReduceWorkload { hosts: set, size, algorithm, local_ranks, start, chunks }) => {
            let (ranks, local) = (set.expand(hosts), local_ranks.unwrap_or(1) as usize);
            pipelined(size.0, *chunks, |bytes| all_reduce::all_reduce(&ranks, bytes, *algorithm, local, *start))
        }
        WorkloadConfig::AllGather(w) => {
            let ranks = w.hosts.expand(hosts);
            pipelined(w.size.0, w.chunks, |bytes| all_gather::all_gather(&ranks, bytes, w.algorithm, w.start))
        }
        WorkloadConfig::ReduceScatter(w) => {
            let ranks = w.hosts.expand(hosts);
            pipelined(w.size.0, w.chunks, |bytes| all_gather::reduce_scatter(&ranks, bytes, w.algorithm, w.start))
        }
        WorkloadConfig::Broadcast(w) => {
            let ranks = w.hosts.expand(hosts);
            let root = w.root.and_then(|r| ranks.iter().position(|&h| h == r)).unwrap_or(0);
            pipelined(w.size.0, w.chunks, |bytes| broadcast::broadcast(&ranks, root, bytes, w.algorithm, w.start))
        }
        WorkloadConfig::SendRecv(w) => {
            pipelined(w.size.0, w.chunks, |bytes| send_recv::send_recv(&w.pairs, bytes, w.start))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{
        AllToAllAlgorithm, BroadcastAlgorithm, BroadcastWorkload, GatherAlgorithm, GatherWorkload, HostSet,
    };
    use crate::time::ByteSize;

    #[test]
    fn count_agrees_with_expand() {
        let size = ByteSize(64_000);
        let start = SimTime::ZERO;
        let sets = [HostSet::All, HostSet::Range { start: 2, end: 7 }, HostSet::List(vec![5, 1, 3])];
        for set in sets {
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
                let n = set.len(8);
                let local_ranks =
                    (algorithm == AllToAllAlgorithm::Hierarchical).then_some(if n % 2 == 0 { 2 } else { 1 });
                cfgs.push(WorkloadConfig::AllToAll(AllToAllWorkload {
                    hosts: set.clone(),
                    size,
                    algorithm,
                    flows_per_pair,
                    local_ranks,
                    start,
                    chunks: 3,
                }));
            }
            for algorithm in [
                AllReduceAlgorithm::Ring,
                AllReduceAlgorithm::Direct,
                AllReduceAlgorithm::HalvingDoubling,
                AllReduceAlgorithm::Hierarchical,
            ] {
                let n = set.len(8);
                let local_ranks =
                    (algorithm == AllReduceAlgorithm::Hierarchical).then_some(if n % 2 == 0 { 2 } else { 1 });
                if algorithm.fits(n, local_ranks) {
                    cfgs.push(WorkloadConfig::AllReduce(AllReduceWorkload {
                        hosts: set.clone(),
                        size,
                        algorithm,
                        local_ranks,
                        start,
                        chunks: 2,
                    }));
                }
            }
            for algorithm in [BroadcastAlgorithm::Ring, BroadcastAlgorithm::Direct, BroadcastAlgorithm::BinomialTree] {
                cfgs.push(WorkloadConfig::Broadcast(BroadcastWorkload {
                    hosts: set.clone(),
                    root: None,
                    size,
                    algorithm,
                    start,
                    chunks: 4,
                }));
            }
            for algorithm in [GatherAlgorithm::Ring, GatherAlgorithm::Direct] {
                let w = GatherWorkload { hosts: set.clone(), size, algorithm, start, chunks: 3 };
                cfgs.push(WorkloadConfig::AllGather(w.clone()));
                cfgs.push(WorkloadConfig::ReduceScatter(w));
            }
            for cfg in cfgs {
                assert_eq!(count(&cfg, 8), expand(&cfg, 8, 1).flows.len() as u64, "{cfg:?}");
            }
        }
    }

    #[test]
    fn permutation_has_no_fixed_points_and_covers_everyone() {
        let cfg = WorkloadConfig::Permutation(PermutationWorkload {
            hosts: HostSet::All,
            size: ByteSize(1000),
            start: SimTime::ZERO,
        });
        let flows = expand(&cfg, 64, 3).flows;
        assert_eq!(flows.len(), 64);
        let mut dsts: Vec<u32> = flows.iter().map(|f| f.dst).collect();
        assert!(flows.iter().all(|f| f.src != f.dst));
        dsts.sort_unstable();
        assert_eq!(dsts, (0..64).collect::<Vec<_>>());
        assert_eq!(flows, expand(&cfg, 64, 3).flows, "same seed, same permutation");
        assert_ne!(flows, expand(&cfg, 64, 4).flows, "another seed, another permutation");
    }

    #[test]
    fn all_to_all_makes_n_times_n_minus_one_flows() {
        let cfg = WorkloadConfig::AllToAll(AllToAllWorkload {
            hosts: HostSet::All,
            size: ByteSize(1000),
            algorithm: Default::default(),
            flows_per_pair: 1,
            local_ranks: None,
            start: SimTime::ZERO,
            chunks: 1,
        });
        let flows = expand(&cfg, 8, 1).flows;
        assert_eq!(flows.len(), 56);
        assert_eq!(count(&cfg, 8), 56);
        assert!(flows.iter().all(|f| f.collective.unwrap().group_size == 8));
    }
}
