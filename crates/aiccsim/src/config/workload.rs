//! `[workload]`: the traffic, as explicit flows, generators or training iterations.

use crate::tags::CollectiveTag;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

fn one() -> u32 {
    1
}

/// A set of hosts: "all", a range "1..=16" / "0..8", or a list [1, 2, 5].
#[derive(Clone, Debug, PartialEq, Default)]
pub enum HostSet {
    #[default]
    All,
    Range {
        start: u32,
        end: u32,
    },
    List(Vec<u32>),
}

impl HostSet {
    /// The hosts in order; `hosts` is the number of hosts in the topology (for "all").
    pub fn expand(&self, hosts: u32) -> Vec<u32> {
        match self {
            HostSet::All => (0..hosts).collect(),
            HostSet::Range { start, end } => (*start..*end).collect(),
            HostSet::List(v) => v.clone(),
        }
    }

    /// How many hosts `expand` gives, without building the list.
    pub fn len(&self, hosts: u32) -> u64 {
        match self {
            HostSet::All => u64::from(hosts),
            HostSet::Range { start, end } => u64::from(end - start),
            HostSet::List(v) => v.len() as u64,
        }
    }

    /// The largest host number in the set, without building the list.
    pub fn largest(&self, hosts: u32) -> Option<u32> {
        match self {
            HostSet::All => hosts.checked_sub(1),
            HostSet::Range { end, .. } => Some(end - 1),
            HostSet::List(v) => v.iter().copied().max(),
        }
    }

    /// The members, checked against a set of `hosts` numbered from 0: each exists, none is
    /// listed twice. `noun` and `numbered` name them in the error ("host", "the topology has
    /// hosts": "host 9 does not exist (the topology has hosts 0 to 7)").
    pub fn members(&self, hosts: u32, noun: &str, numbered: &str) -> Result<Vec<u32>, String> {
        // Before expanding: "0..4000000000" would be 16 GB of host numbers.
        if let Some(top) = self.largest(hosts).filter(|&t| t >= hosts) {
            return Err(format!("{noun} {top} does not exist ({numbered} 0 to {})", hosts.saturating_sub(1)));
        }
        let v = self.expand(hosts);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("lists a {noun} twice"));
        }
        Ok(v)
    }

    fn parse(s: &str) -> Result<HostSet, String> {
        let s = s.trim();
        if s == "all" {
            return Ok(HostSet::All);
        }
        let bad = || {
            format!("invalid host set '{s}': write \"all\", a range like \"1..=16\" or \"0..8\", or a list [1, 2, 3]")
        };
        let (a, b, inclusive) = if let Some((a, b)) = s.split_once("..=") {
            (a, b, true)
        } else if let Some((a, b)) = s.split_once("..") {
            (a, b, false)
        } else {
            return Err(bad());
        };
        let a: u32 = a.trim().parse().map_err(|_| bad())?;
        let b: u32 = b.trim().parse().map_err(|_| bad())?;
        let end = if inclusive { b.checked_add(1).ok_or_else(bad)? } else { b };
        if end <= a {
            return Err(format!("invalid host set '{s}': the range is empty"));
        }
        Ok(HostSet::Range { start: a, end })
    }
}

impl<'de> Deserialize<'de> for HostSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            S(String),
            L(Vec<u32>),
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom("expected \"all\", a range like \"1..=16\", or a list of host numbers")
        })? {
            Raw::S(s) => HostSet::parse(&s).map_err(serde::de::Error::custom),
            Raw::L(v) => Ok(HostSet::List(v)),
        }
    }
}

impl Serialize for HostSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HostSet::All => s.serialize_str("all"),
            HostSet::Range { start, end } => s.serialize_str(&format!("{start}..{end}")),
            HostSet::List(v) => v.serialize(s),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveTag>,
    /// Flows (by position in the list, earlier ones only) that must be delivered before this one
    /// starts; it then starts at the later of `start` and their last delivery.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<u32>,
    /// The sender stops taking new data at this time: the flow ends with what it has sent by
    /// then (its size in the results), delivered in full. Absent: it sends all of `size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<SimTime>,
    /// Flows with the same `src`, `dst` and `connection` ride one queue pair, one after another
    /// (`nic.connections`). Absent: a queue pair of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<u32>,
}

/// The traffic.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadConfig {
    Flows(FlowList),
    Incast(IncastWorkload),
    AllToAll(AllToAllWorkload),
    Permutation(PermutationWorkload),
    AllReduce(AllReduceWorkload),
    AllGather(GatherWorkload),
    ReduceScatter(GatherWorkload),
    Broadcast(BroadcastWorkload),
    SendRecv(SendRecvWorkload),
    Training(TrainingWorkload),
}

tagged_enum!(WorkloadConfig, "kind", {
    "flows" => Flows(FlowList),
    "incast" => Incast(IncastWorkload),
    "all_to_all" => AllToAll(AllToAllWorkload),
    "permutation" => Permutation(PermutationWorkload),
    "all_reduce" => AllReduce(AllReduceWorkload),
    "all_gather" => AllGather(GatherWorkload),
    "reduce_scatter" => ReduceScatter(GatherWorkload),
    "broadcast" => Broadcast(BroadcastWorkload),
    "send_recv" => SendRecv(SendRecvWorkload),
    "training" => Training(TrainingWorkload),
});

impl WorkloadConfig {
    /// Sets a hierarchical all-reduce's or all-to-all's `local_ranks`, where not given, to `group`: the ranks a
    /// server holds (the topology's GPUs per server for a `[workload]`; for a job, its ranks on
    /// each server when they form whole consecutive groups).
    pub fn fill_local_ranks(&mut self, group: u32) {
        match self {
            WorkloadConfig::AllReduce(w) if w.algorithm == AllReduceAlgorithm::Hierarchical => {
                w.local_ranks.get_or_insert(group);
            }
            WorkloadConfig::AllToAll(w) if w.algorithm == AllToAllAlgorithm::Hierarchical => {
                w.local_ranks.get_or_insert(group);
            }
            WorkloadConfig::Training(w) => {
                let mut reduce = w.layers.iter().flat_map(|l| l.all_reduce);
                let mut a2a = w.layers.iter().flat_map(|l| [l.forward_all_to_all, l.backward_all_to_all]).flatten();
                let hierarchical = reduce.any(|a| a.algorithm == AllReduceAlgorithm::Hierarchical)
                    || a2a.any(|a| a.algorithm == AllToAllAlgorithm::Hierarchical);
                if hierarchical {
                    w.local_ranks.get_or_insert(group);
                }
            }
            _ => {}
        }
    }
}

/// An explicit list of flows.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowList {
    pub flows: Vec<FlowSpec>,
}

/// Every sender sends `flows_per_sender` flows of `size` to `receiver`, all starting at `start`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IncastWorkload {
    pub senders: HostSet,
    pub receiver: u32,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
    #[serde(default = "one")]
    pub flows_per_sender: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveTag>,
}

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
    /// n - 1 rounds; in round k rank i sends to rank i + k, and a rank starts a round once its
    /// send and its receive of the previous round are done (pairwise exchange): every round is
    /// a permutation.
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
}

/// Each host of `hosts` sends one flow of `size` to a distinct other host, chosen by a seeded
/// random permutation without fixed points.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PermutationWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
}

/// How an all-reduce is broken into point-to-point sends.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AllReduceAlgorithm {
    /// Reduce-scatter then all-gather around a ring: 2(n-1) steps of size/n to the next rank,
    /// each step waiting for the chunk from the previous rank.
    #[default]
    Ring,
    /// Reduce-scatter then all-gather, each rank exchanging size/n with every other rank at
    /// once; a rank's all-gather waits for its reduce-scatter chunks.
    Direct,
    /// Recursive halving then recursive doubling (Thakur et al., 2005): log2(n) steps in which
    /// each rank exchanges half of what it holds with a rank ever closer, then log2(n) steps in
    /// which it exchanges all it holds with a rank ever farther. Needs a power-of-two n.
    HalvingDoubling,
    /// Two dimensions (paper 002's "2D"): the ranks form groups of `local_ranks` consecutive
    /// ranks (a server's GPUs); a direct reduce-scatter inside each group, a direct
    /// reduce-scatter among the ranks of the same local index across groups, then the
    /// all-gathers in reverse order. Only 1/local_ranks of the buffer leaves a group.
    Hierarchical,
}

impl AllReduceAlgorithm {
    /// Whether the algorithm runs on `n` ranks (in groups of `local` for `hierarchical`).
    pub fn fits(self, n: u64, local: Option<u32>) -> bool {
        match self {
            AllReduceAlgorithm::HalvingDoubling => n.is_power_of_two(),
            AllReduceAlgorithm::Hierarchical => local.is_some_and(|g| g >= 1 && n.is_multiple_of(u64::from(g))),
            _ => true,
        }
    }
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

/// How a broadcast is broken into point-to-point sends.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BroadcastAlgorithm {
    /// A chain along the ring from the root: each rank forwards the buffer to the next once it
    /// has arrived (n-1 steps).
    #[default]
    Ring,
    /// The root sends the buffer to every other rank at once.
    Direct,
    /// A binomial tree: in step k every rank that holds the buffer sends it to the rank 2^k
    /// places further on (ceil(log2 n) steps).
    BinomialTree,
}

/// A broadcast of `size` bytes from `root` to the other members of `hosts`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BroadcastWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    /// The host that holds the buffer; the first member of `hosts` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<u32>,
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: BroadcastAlgorithm,
    #[serde(default)]
    pub start: SimTime,
    /// Split into this many equal chunks, each run through the whole schedule, pipelined: a
    /// chunk's step waits only for the same chunk's step before, and on each connection the
    /// chunks go in order.
    #[serde(default = "one")]
    pub chunks: u32,
}

/// Point-to-point transfers: `size` bytes from the first host of each pair to the second.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SendRecvWorkload {
    /// `[source, destination]` pairs.
    pub pairs: Vec<[u32; 2]>,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
    /// Split into this many equal chunks, posted in order on each pair's connection.
    #[serde(default = "one")]
    pub chunks: u32,
}

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

/// An all-reduce of `size` bytes per rank among `hosts`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AllReduceWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    /// Bytes each rank contributes (the gradient buffer).
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: AllReduceAlgorithm,
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

/// Training iterations of a model whose ranks are `hosts`: each iteration runs every layer's
/// forward compute (first layer first), then every layer's backward compute (last layer first),
/// with the layers' collectives in between (`workload/training.rs` gives the exact order).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    pub iterations: u32,
    /// When every rank starts the first iteration.
    #[serde(default)]
    pub start: SimTime,
    /// Split into this many equal chunks, each run through the whole schedule, pipelined: a
    /// chunk's step waits only for the same chunk's step before, and on each connection the
    /// chunks go in order.
    #[serde(default = "one")]
    pub chunks: u32,
    /// Ranks per group of `hierarchical` all-reduces and all-to-alls, as for the `all_reduce`
    /// workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_ranks: Option<u32>,
    /// From the model's input to its output.
    pub layers: Vec<LayerConfig>,
}

/// One layer: its compute times (the same on every rank) and its communication.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerConfig {
    pub forward: SimTime,
    /// The whole backward compute; or give it split into `input_grad` and `weight_grad`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backward: Option<SimTime>,
    /// Backward compute of the gradient handed to the layer below (first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_grad: Option<SimTime>,
    /// Backward compute of the layer's own weight gradient (after `input_grad`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_grad: Option<SimTime>,
    /// Data parallel: the weight gradient's all-reduce, issued when it is computed and
    /// overlapping the rest of the backward pass; the next iteration's forward of this layer
    /// waits for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_reduce: Option<LayerAllReduce>,
    /// Model parallel: an all-to-all of the layer's output after its forward compute, which the
    /// next compute waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_all_to_all: Option<LayerAllToAll>,
    /// Model parallel: an all-to-all of the input gradient after `input_grad`, which the
    /// backward compute of the layer below waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backward_all_to_all: Option<LayerAllToAll>,
}

impl LayerConfig {
    /// (input-gradient, weight-gradient) compute; an unsplit `backward` is all input gradient,
    /// so that everything the backward pass issues waits for all of it. `None` when validation
    /// would reject the layer.
    pub fn backward_split(&self) -> Option<(SimTime, SimTime)> {
        match (self.backward, self.input_grad, self.weight_grad) {
            (Some(b), None, None) => Some((b, SimTime::ZERO)),
            (None, Some(i), Some(w)) => Some((i, w)),
            _ => None,
        }
    }
}

/// A layer's weight-gradient all-reduce: `size` bytes per rank; "0B" issues none.
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerAllReduce {
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: AllReduceAlgorithm,
}

/// A layer's all-to-all: `size` bytes from every rank to every other; "0B" issues none.
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerAllToAll {
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: AllToAllAlgorithm,
}
