//! `kind = "training"`: iterations of a model's forward and backward pass on every rank, with
//! each layer's collectives between its compute steps. Its settings and checks are here; the
//! loop they make, and the layout `iterations.csv` is measured from, in `training/schedule.rs`.

mod groups;
mod schedule;

pub use groups::{CommGroup, CommOp, Groups, LayerComm};
pub use schedule::{LayerCollective, Layout, Op, Phase};

use super::all_reduce::{all_reduce_flows, bytes_per_rank, fits, AllReduceAlgorithm};
use super::all_to_all::{all_to_all_flows, AllToAllAlgorithm};
use super::catalog::info;
use super::collective::one;
use super::kind::{chunks_fit, fail, groups_do_not_fit, Ranks, Size, WorkloadKind};
use super::{CollectiveInfo, HostSet, Workload};
use crate::cc::Check;
use crate::tags::CollectiveKind;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// Compute steps in one scenario at most (a `training` workload has three per layer, rank and
/// iteration), about a hundred bytes each.
pub const MAX_COMPUTE_STEPS: u64 = 1 << 22;

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]
kind = "training"
iterations = 2
layers = [
  { forward = "10us", backward = "20us", all_reduce = { size = "200KB" } },
  { forward = "5us", input_grad = "5us", weight_grad = "5us", forward_all_to_all = { size = "10KB" } },
]
"#;

/// Training iterations of a model whose ranks are `hosts`: each iteration runs every layer's
/// forward compute (first layer first), then every layer's backward compute (last layer first),
/// with the layers' collectives in between (`training/schedule.rs` gives the exact order).
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
    /// Ranks per tensor-parallel group (consecutive ranks), for the layers' `*_comm`
    /// collectives (`training/groups.rs`).
    #[serde(default = "one")]
    pub tp: u32,
    /// Data-parallel ranks per expert-parallel group.
    #[serde(default = "one")]
    pub ep: u32,
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
    /// A collective on every group of one parallel dimension after the forward compute, which
    /// the next compute waits for (as `forward_all_to_all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_comm: Option<LayerComm>,
    /// One after the input-gradient compute, which the input-gradient compute of the layer
    /// below waits for (as `backward_all_to_all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_grad_comm: Option<LayerComm>,
    /// One after the weight-gradient compute, overlapping the rest of the backward pass; the
    /// next iteration's forward of this layer waits for it (as `all_reduce`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_grad_comm: Option<LayerComm>,
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

    /// Its all-to-alls that are issued (not "0B").
    fn all_to_alls(&self) -> impl Iterator<Item = LayerAllToAll> {
        [self.forward_all_to_all, self.backward_all_to_all].into_iter().flatten().filter(|a| a.size.0 > 0)
    }

    /// Its group collectives that are issued (not "0B"), with their key and resolved group.
    pub fn comms(&self) -> impl Iterator<Item = (&'static str, LayerComm, CommGroup)> {
        let phases = [
            ("forward_comm", self.forward_comm, CommGroup::Tp),
            ("input_grad_comm", self.input_grad_comm, CommGroup::Tp),
            ("weight_grad_comm", self.weight_grad_comm, CommGroup::Dp),
        ];
        (phases.into_iter())
            .filter_map(|(key, c, default)| c.filter(|c| c.size.0 > 0).map(|c| (key, c, c.group.unwrap_or(default))))
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

impl WorkloadKind for TrainingWorkload {
    fn chunks(&self) -> u32 {
        self.chunks
    }

    fn fill_local_ranks(&mut self, group: u32) {
        let mut reduce = self.layers.iter().flat_map(|l| l.all_reduce);
        let mut a2a = self.layers.iter().flat_map(|l| [l.forward_all_to_all, l.backward_all_to_all]).flatten();
        let hierarchical = reduce.any(|a| a.algorithm == AllReduceAlgorithm::Hierarchical)
            || a2a.any(|a| a.algorithm == AllToAllAlgorithm::Hierarchical);
        if hierarchical {
            self.local_ranks.get_or_insert(group);
        }
    }

    fn check(&self) -> Check {
        if self.iterations == 0 {
            return fail("workload.iterations", "must be at least 1");
        }
        if self.layers.is_empty() {
            return fail(
                "workload.layers",
                "the model has no layers; add at least one [[workload.layers]] with forward and backward",
            );
        }
        for (key, value) in [("workload.tp", self.tp), ("workload.ep", self.ep)] {
            if value == 0 {
                return fail(key, "must be at least 1 (1: no such parallelism)");
            }
        }
        for (i, layer) in self.layers.iter().enumerate() {
            backward_given(i, layer)?;
            one_collective_per_phase(i, layer)?;
        }
        chunks_fit(self.chunks, u64::MAX)?;
        // A training loop's collectives have sizes of their own: an all-to-all sends each rank
        // its share in every chunk (as a plain all-to-all's size must cover its chunks); the
        // all-reduces, split among the ranks too, are checked on the ranks.
        for (i, layer) in self.layers.iter().enumerate() {
            for (name, a2a) in [("forward_all_to_all", layer.forward_all_to_all), ("backward_all_to_all", layer.backward_all_to_all)] {
                let Some(a2a) = a2a.filter(|a| a.size.0 > 0) else { continue };
                if a2a.size.0 < u64::from(self.chunks) {
                    return fail(
                        format!("workload.layers[{i}].{name}.size"),
                        format!(
                            "{} cannot be split into workload.chunks = {} chunks of at least 1 byte, which would leave some flows empty; raise the size, lower chunks, or \"0B\" for no all-to-all",
                            a2a.size, self.chunks
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    fn check_ranks(&self, ranks: &Ranks) -> Check {
        ranks.set("workload.hosts", &self.hosts, 2)?;
        let n = self.hosts.len(ranks.n);
        for (i, layer) in self.layers.iter().enumerate() {
            let key = |k: &str| format!("workload.layers[{i}].{k}");
            let pieces = n.saturating_mul(u64::from(self.chunks));
            if let Some(ar) = layer.all_reduce.filter(|a| a.size.0 > 0) {
                if ar.size.0 < pieces {
                    return fail(
                        key("all_reduce.size"),
                        format!(
                            "{} cannot be split into {pieces} pieces (ranks x chunks) of at least 1 byte; raise the size, or \"0B\" for no all-reduce",
                            ar.size
                        ),
                    );
                }
                fits(&key("all_reduce.algorithm"), ar.algorithm, n, self.local_ranks)?;
            }
            if layer.all_to_alls().any(|a| !a.algorithm.fits(n, self.local_ranks)) {
                return groups_do_not_fit("workload", n, self.local_ranks);
            }
        }
        self.groups_fit(n)?;
        let steps = self.size(ranks.n).computes;
        if steps > MAX_COMPUTE_STEPS {
            return fail(
                "workload.iterations",
                format!(
                    "makes {steps} compute steps (3 per layer, rank and iteration), more than the {MAX_COMPUTE_STEPS} aiccsim runs in one scenario; lower iterations or use fewer layers or ranks"
                ),
            );
        }
        Ok(())
    }

    fn size(&self, ranks: u32) -> Size {
        let n = self.hosts.len(ranks);
        let (mut flows, mut per_rank) = (0u64, 0u128);
        let mut compute = SimTime::ZERO;
        for layer in &self.layers {
            for a2a in layer.all_to_alls() {
                flows = flows.saturating_add(all_to_all_flows(n, a2a.algorithm, self.local_ranks));
                per_rank += u128::from(n.saturating_sub(1)) * u128::from(a2a.size.0);
            }
            if let Some(ar) = layer.all_reduce.filter(|a| a.size.0 > 0) {
                flows = flows.saturating_add(all_reduce_flows(n, ar.algorithm, self.local_ranks));
                per_rank += bytes_per_rank(n.max(1), ar.size.0, ar.algorithm, self.local_ranks);
            }
            let groups = self.groups(n);
            for (_, comm, group) in layer.comms() {
                let g = u64::from(groups.size(group));
                if g > 1 {
                    let count = u64::from(groups.n) / g;
                    flows = flows.saturating_add(comm.op.flows(g).saturating_mul(count));
                    per_rank += comm.op.bytes_per_rank(g, comm.size.0);
                }
            }
            let backward = [layer.backward, layer.input_grad, layer.weight_grad];
            compute = backward.into_iter().flatten().fold(compute + layer.forward, |sum, t| sum + t);
        }
        let k = u64::from(self.iterations);
        let per_iteration_steps = (self.layers.len() as u64).saturating_mul(3).saturating_mul(n);
        Size {
            flows: flows.saturating_mul(u64::from(self.chunks)).saturating_mul(k),
            bytes: u128::from(n.max(1)).saturating_mul(per_rank).saturating_mul(u128::from(k)),
            busiest_rank_bytes: per_rank.saturating_mul(u128::from(k)),
            latest_start: self.start,
            computes: per_iteration_steps.saturating_mul(k),
            compute_time: SimTime(compute.0.saturating_mul(k)),
            iterations: k,
        }
    }

    fn expand(&self, ranks: u32, _seed: u64) -> Workload {
        schedule::expand(self, ranks)
    }

    fn collectives(&self, _ranks: u32, made: &Workload) -> Vec<CollectiveInfo> {
        let Some(layout) = made.training.first() else { return Vec::new() };
        let n = layout.ranks.len() as u64;
        let groups = self.groups(n);
        (layout.collectives.iter())
            .map(|c| {
                let layer = &self.layers[c.layer as usize];
                if let Some((_, comm, group)) = layer.comms().find(|(key, ..)| Some(*key) == c.op.comm_key()) {
                    let g = u64::from(groups.size(group));
                    let (kind, algorithm) = match comm.op {
                        CommOp::AllReduce => (CollectiveKind::AllReduce, "ring"),
                        CommOp::AllGather => (CollectiveKind::AllGather, "ring"),
                        CommOp::ReduceScatter => (CollectiveKind::ReduceScatter, "ring"),
                        CommOp::AllToAll => (CollectiveKind::AllToAll, "direct"),
                    };
                    return info(kind, c.id, algorithm, comm.size.0, g);
                }
                let a2a = match c.op {
                    Op::AllReduce => {
                        let ar = layer.all_reduce.expect("an issued all-reduce is configured");
                        return info(CollectiveKind::AllReduce, c.id, ar.algorithm.name(), ar.size.0, n);
                    }
                    Op::ForwardAllToAll => layer.forward_all_to_all,
                    Op::BackwardAllToAll => layer.backward_all_to_all,
                    Op::ForwardComm | Op::InputGradComm | Op::WeightGradComm => None,
                };
                let a = a2a.expect("an issued all-to-all is configured");
                info(CollectiveKind::AllToAll, c.id, a.algorithm.name(), a.size.0.saturating_mul(n), n)
            })
            .collect()
    }

    fn too_many_flows(&self) -> (&'static str, &'static str) {
        ("iterations", "lower iterations or use fewer ranks")
    }
}

impl TrainingWorkload {
    /// The parallel groups on `n` ranks (only meaningful once `groups_fit(n)` passed).
    pub fn groups(&self, n: u64) -> Groups {
        Groups { n: n as u32, tp: self.tp.max(1), ep: self.ep.max(1) }
    }

    /// `tp` and `ep` divide the ranks, and every layer's group collective can be cut into its
    /// pieces on its groups.
    fn groups_fit(&self, n: u64) -> Check {
        let (tp, ep) = (u64::from(self.tp), u64::from(self.ep));
        if !n.is_multiple_of(tp) {
            return fail(
                "workload.tp",
                format!("{tp} does not divide the {n} ranks into tensor-parallel groups; use a divisor of {n}"),
            );
        }
        if !(n / tp).is_multiple_of(ep) {
            return fail(
                "workload.ep",
                format!(
                    "{ep} does not divide the {} data-parallel ranks (ranks / tp) into expert-parallel groups; use a divisor of {}",
                    n / tp,
                    n / tp
                ),
            );
        }
        let groups = self.groups(n);
        for (i, layer) in self.layers.iter().enumerate() {
            for (key, comm, group) in layer.comms() {
                let g = u64::from(groups.size(group));
                let pieces = g.saturating_mul(u64::from(self.chunks));
                if g > 1 && comm.size.0 < pieces {
                    return fail(
                        format!("workload.layers[{i}].{key}.size"),
                        format!(
                            "{} cannot be split into {pieces} pieces ({} ranks of each {} group x chunks) of at least 1 byte; raise the size, or \"0B\" for none",
                            comm.size,
                            g,
                            group.name()
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

/// Layer `i` ends each compute phase with one collective at most: its all-to-all, all-reduce or
/// group collective.
fn one_collective_per_phase(i: usize, layer: &LayerConfig) -> Check {
    let pairs = [
        ("forward_all_to_all", layer.forward_all_to_all.is_some(), "forward_comm", layer.forward_comm.is_some()),
        ("backward_all_to_all", layer.backward_all_to_all.is_some(), "input_grad_comm", layer.input_grad_comm.is_some()),
        ("all_reduce", layer.all_reduce.is_some(), "weight_grad_comm", layer.weight_grad_comm.is_some()),
    ];
    for (old, has_old, comm, has_comm) in pairs {
        if has_old && has_comm {
            return fail(
                format!("workload.layers[{i}].{comm}"),
                format!("the layer has {old} too: give one collective per compute phase (for an all-to-all or all-reduce of every rank, {comm} with group = \"all\")"),
            );
        }
    }
    Ok(())
}

/// Layer `i`'s backward compute is given once: whole, or split in two.
fn backward_given(i: usize, layer: &LayerConfig) -> Check {
    let key = |k: &str| format!("workload.layers[{i}].{k}");
    match (layer.backward, layer.input_grad, layer.weight_grad) {
        (Some(_), None, None) | (None, Some(_), Some(_)) => Ok(()),
        (Some(_), _, _) => {
            fail(key("backward"), "give either backward or its split into input_grad and weight_grad, not both")
        }
        (None, None, None) => fail(
            key("backward"),
            "missing: give the backward compute time (e.g. backward = \"40us\"), or input_grad and weight_grad",
        ),
        (None, Some(_), None) => {
            fail(key("weight_grad"), "input_grad needs weight_grad too (\"0us\" for a layer without weights)")
        }
        (None, None, Some(_)) => fail(key("input_grad"), "weight_grad needs input_grad too (\"0us\" if it takes no time)"),
    }
}
