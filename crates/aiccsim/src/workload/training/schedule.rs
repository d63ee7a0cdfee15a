//! The `training` workload's schedule: iterations of a model's forward and backward pass on
//! every rank, as compute steps, with each layer's collectives as flows between them.
//!
//! Every rank runs the same chain of compute steps (the ASTRA-sim training loop, which Khan et al., HOTI 2022,
//! used): in each iteration, the forward compute of layers 0, 1, ..., L-1, then, for layers
//! L-1 down to 0, the layer's input-gradient compute and its weight-gradient compute. Each step
//! starts when the rank's previous step is done and, besides:
//!
//! - a layer's forward compute waits for the rank's share of that layer's weight-gradient
//!   all-reduce of the iteration before (the weights it uses must be updated);
//! - the step after a blocking collective waits for the flows the rank receives of it: the
//!   all-to-all of a forward compute blocks the next forward compute (or the first backward
//!   step), and the all-to-all of an input-gradient compute blocks the input-gradient compute
//!   of the layer below (or, for layer 0, the next iteration's first step). The weight-gradient
//!   compute in between runs while that all-to-all is under way, as in ASTRA-sim.
//!
//! A collective's flows are sent once the sender's step that issues it is done: a layer's
//! forward all-to-all after its forward compute, its backward all-to-all after its
//! input-gradient compute, its all-reduce after its weight-gradient compute. The all-reduce
//! blocks nothing in its own iteration: it overlaps the rest of the backward pass and whatever
//! of the next forward pass comes before its layer.

use super::{CommGroup, CommOp, LayerComm, TrainingWorkload};
use crate::workload::collective::pipelined;
use crate::workload::{all_gather, all_reduce, all_to_all, ComputeDef, FlowDef, Workload};
use crate::workload::{AllReduceAlgorithm, AllToAllAlgorithm, GatherAlgorithm};
use crate::time::SimTime;
use std::ops::Range;

/// A layer's compute steps: its forward compute, and in the backward pass its input-gradient
/// compute, then its weight-gradient compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Forward,
    InputGrad,
    WeightGrad,
}

/// Which collective of a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    ForwardAllToAll,
    BackwardAllToAll,
    AllReduce,
    /// The layer's group collectives (`forward_comm`, `input_grad_comm`, `weight_grad_comm`),
    /// one per group of their dimension.
    ForwardComm,
    InputGradComm,
    WeightGradComm,
}

impl Op {
    /// The layer key of a group collective.
    pub fn comm_key(self) -> Option<&'static str> {
        match self {
            Op::ForwardComm => Some("forward_comm"),
            Op::InputGradComm => Some("input_grad_comm"),
            Op::WeightGradComm => Some("weight_grad_comm"),
            _ => None,
        }
    }
}

/// One collective the workload issued.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerCollective {
    pub iteration: u32,
    pub layer: u32,
    pub op: Op,
    /// The group a group collective (`forward_comm`, `input_grad_comm`, `weight_grad_comm`)
    /// ran on, as resolved; `None` for the other ops.
    pub group: Option<CommGroup>,
    /// Its collective tag's id: its flows are `all_reduce:<id>` or `all_to_all:<id>` in
    /// `flows.csv` and in `summary.json`'s `collectives`.
    pub id: u32,
    pub flows: Range<u32>,
}

/// Where each iteration's steps and flows are, to measure the iterations after the run.
///
/// Compute steps are numbered in the order a rank runs them, all ranks at each step: step s of
/// iteration k on rank r (r counts the ranks in set order) is `first_compute + (k * 3L + s) * n + r`, with s
/// from 0 to L-1 for the forward computes and L + 2(L-1-l) and L + 2(L-1-l) + 1 for layer l's
/// input- and weight-gradient computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// The job whose training this is (0 for a `[workload]`).
    pub job: u32,
    /// The ranks' hosts, in set order.
    pub ranks: Vec<u32>,
    /// The id of its first compute step (its steps follow those of the workloads before it).
    pub first_compute: u32,
    pub layers: u32,
    pub iterations: u32,
    /// Compute time of one iteration on one rank: every layer's forward and backward.
    pub compute: SimTime,
    /// The flows of each iteration (the workload makes them iteration by iteration).
    pub iteration_flows: Vec<Range<u32>>,
    /// Every collective issued, in the order it was made.
    pub collectives: Vec<LayerCollective>,
}

impl Layout {
    /// The id of `rank`'s (by position) step `phase` of `layer` in `iteration`.
    pub fn compute_id(&self, iteration: u32, layer: u32, phase: Phase, rank: usize) -> u32 {
        let l = self.layers;
        let step = match phase {
            Phase::Forward => layer,
            Phase::InputGrad => l + 2 * (l - 1 - layer),
            Phase::WeightGrad => l + 2 * (l - 1 - layer) + 1,
        };
        self.first_compute + (iteration * 3 * l + step) * self.ranks.len() as u32 + rank as u32
    }

    /// The compute steps of `iteration`, all ranks.
    pub fn iteration_computes(&self, iteration: u32) -> Range<u32> {
        let per_iteration = 3 * self.layers * self.ranks.len() as u32;
        self.first_compute + iteration * per_iteration..self.first_compute + (iteration + 1) * per_iteration
    }
}

/// Expands a validated `training` workload.
pub(super) fn expand(w: &TrainingWorkload, hosts: u32) -> Workload {
    let ranks = w.hosts.expand(hosts);
    let n = ranks.len();
    let layers = w.layers.len() as u32;
    let backward: Vec<(SimTime, SimTime)> =
        w.layers.iter().map(|l| l.backward_split().expect("validation checked the backward times")).collect();
    let compute = w.layers.iter().zip(&backward).fold(SimTime::ZERO, |sum, (l, &(ig, wg))| sum + l.forward + ig + wg);
    let mut layout = Layout {
        job: 0,
        ranks: ranks.clone(),
        first_compute: 0,
        layers,
        iterations: w.iterations,
        compute,
        iteration_flows: Vec::new(),
        collectives: Vec::new(),
    };
    let mut b = Builder {
        ranks: &ranks,
        rank_of: rank_index(&ranks, hosts),
        start: w.start,
        flows: Vec::new(),
        computes: Vec::new(),
        previous: None,
        blocking: vec![Vec::new(); n],
        reduced: vec![vec![Vec::new(); n]; layers as usize],
    };
    let local = w.local_ranks.unwrap_or(1) as usize;
    for k in 0..w.iterations {
        let first_flow = b.flows.len() as u32;
        let mut issue = |b: &mut Builder, layer: u32, op: Op, made: Vec<FlowDef>| {
            let id = layout.collectives.len() as u32;
            let into = match op {
                Op::AllReduce | Op::WeightGradComm => Target::Reduced(layer),
                Op::ForwardAllToAll | Op::BackwardAllToAll | Op::ForwardComm | Op::InputGradComm => Target::Blocking,
            };
            let flows = b.issue(made, id, into);
            let comms = || w.layers[layer as usize].comms();
            let group = op.comm_key().and_then(|key| comms().find(|c| c.0 == key)).map(|c| c.2);
            layout.collectives.push(LayerCollective { iteration: k, layer, op, group, id, flows });
        };
        for (l, layer) in w.layers.iter().enumerate() {
            let l = l as u32;
            b.step(layer.forward, Waits::BlockingAndAllReduce(l));
            if let Some(a2a) = layer.forward_all_to_all.filter(|c| c.size.0 > 0) {
                let made = pipelined(a2a.size.0, w.chunks, |bytes| {
                    all_to_all::all_to_all(&ranks, bytes, a2a.algorithm, 1, 1, local, w.start)
                });
                issue(&mut b, l, Op::ForwardAllToAll, made);
            }
            for made in group_comm(w, &ranks, layer.forward_comm, CommGroup::Tp) {
                issue(&mut b, l, Op::ForwardComm, made);
            }
        }
        for (l, layer) in w.layers.iter().enumerate().rev() {
            let (input_grad, weight_grad) = backward[l];
            let l = l as u32;
            b.step(input_grad, Waits::Blocking);
            if let Some(a2a) = layer.backward_all_to_all.filter(|c| c.size.0 > 0) {
                let made = pipelined(a2a.size.0, w.chunks, |bytes| {
                    all_to_all::all_to_all(&ranks, bytes, a2a.algorithm, 1, 1, local, w.start)
                });
                issue(&mut b, l, Op::BackwardAllToAll, made);
            }
            for made in group_comm(w, &ranks, layer.input_grad_comm, CommGroup::Tp) {
                issue(&mut b, l, Op::InputGradComm, made);
            }
            // Runs while the backward all-to-all just issued is under way.
            b.step(weight_grad, Waits::Previous);
            if let Some(ar) = layer.all_reduce.filter(|c| c.size.0 > 0) {
                let made = pipelined(ar.size.0, w.chunks, |bytes| {
                    all_reduce::all_reduce(&ranks, bytes, ar.algorithm, local, w.start)
                });
                issue(&mut b, l, Op::AllReduce, made);
            }
            for made in group_comm(w, &ranks, layer.weight_grad_comm, CommGroup::Dp) {
                issue(&mut b, l, Op::WeightGradComm, made);
            }
        }
        layout.iteration_flows.push(first_flow..b.flows.len() as u32);
    }
    Workload { flows: b.flows, computes: b.computes, training: vec![layout], ..Workload::default() }
}

/// The flows of a layer's group collective, one list per group of its dimension (`default`
/// when it names none) with more than one rank, in group order; none for "0B".
fn group_comm(w: &TrainingWorkload, ranks: &[u32], comm: Option<LayerComm>, default: CommGroup) -> Vec<Vec<FlowDef>> {
    let Some(comm) = comm.filter(|c| c.size.0 > 0) else { return Vec::new() };
    let groups = w.groups(ranks.len() as u64);
    let members = groups.of(comm.group.unwrap_or(default));
    (members.into_iter().filter(|m| m.len() > 1))
        .map(|m| {
            let hosts: Vec<u32> = m.iter().map(|&r| ranks[r as usize]).collect();
            pipelined(comm.size.0, w.chunks, |bytes| match comm.op {
                CommOp::AllReduce => all_reduce::all_reduce(&hosts, bytes, AllReduceAlgorithm::Ring, 1, w.start),
                CommOp::AllGather => all_gather::all_gather(&hosts, bytes, GatherAlgorithm::Ring, w.start),
                CommOp::ReduceScatter => all_gather::reduce_scatter(&hosts, bytes, GatherAlgorithm::Ring, w.start),
                CommOp::AllToAll => {
                    let share = bytes / hosts.len() as u64;
                    all_to_all::all_to_all(&hosts, share, AllToAllAlgorithm::Direct, 1, 1, 1, w.start)
                }
            })
        })
        .collect()
}

/// Position in the rank list of each host that is a rank.
fn rank_index(ranks: &[u32], hosts: u32) -> Vec<u32> {
    let mut rank_of = vec![u32::MAX; hosts as usize];
    for (i, &h) in ranks.iter().enumerate() {
        rank_of[h as usize] = i as u32;
    }
    rank_of
}

/// What a step waits for besides the rank's step before it.
enum Waits {
    Previous,
    /// The blocking collective the rank issued last.
    Blocking,
    /// That, and the rank's share of the layer's latest all-reduce (a forward compute).
    BlockingAndAllReduce(u32),
}

/// Where a collective's flows into each rank go: what the rank's next step waits for, or what
/// the layer's next forward compute waits for.
enum Target {
    Blocking,
    Reduced(u32),
}

/// The workload as it is made, one step of all ranks at a time.
struct Builder<'a> {
    ranks: &'a [u32],
    rank_of: Vec<u32>,
    start: SimTime,
    flows: Vec<FlowDef>,
    computes: Vec<ComputeDef>,
    /// The id of rank 0's most recent step (rank r's is this + r).
    previous: Option<u32>,
    /// Per rank: the flows into it of the blocking collective it issued last.
    blocking: Vec<Vec<u32>>,
    /// Per layer and rank: the flows into the rank of the layer's latest all-reduce.
    reduced: Vec<Vec<Vec<u32>>>,
}

impl Builder<'_> {
    /// Adds one step of `duration` on every rank, after the rank's previous step and what
    /// `waits` says the rank must have received first.
    fn step(&mut self, duration: SimTime, waits: Waits) {
        let first = self.computes.len() as u32;
        for r in 0..self.ranks.len() {
            let mut after = Vec::new();
            if let Waits::Blocking | Waits::BlockingAndAllReduce(_) = waits {
                after.append(&mut self.blocking[r]);
            }
            if let Waits::BlockingAndAllReduce(l) = waits {
                after.append(&mut self.reduced[l as usize][r]);
            }
            after.sort_unstable();
            self.computes.push(ComputeDef {
                host: self.ranks[r],
                duration,
                start: self.start,
                after,
                after_compute: self.previous.map(|p| vec![p + r as u32]).unwrap_or_default(),
            });
        }
        self.previous = Some(first);
    }

    /// Appends a collective's flows (made with ids from 0): each also waits for its sender's
    /// step just made, and the flows into each rank go to `into`. Returns their ids.
    fn issue(&mut self, made: Vec<FlowDef>, id: u32, into: Target) -> Range<u32> {
        let base = self.flows.len() as u32;
        let issuer = self.previous.expect("a collective is issued after a compute step");
        for (i, mut f) in made.into_iter().enumerate() {
            for a in &mut f.after {
                *a += base;
            }
            if let Some(tag) = &mut f.collective {
                tag.id = id;
            }
            let (src, dst) = (self.rank_of[f.src as usize], self.rank_of[f.dst as usize] as usize);
            f.after_compute = vec![issuer + src];
            let flow = base + i as u32;
            match into {
                Target::Blocking => self.blocking[dst].push(flow),
                Target::Reduced(l) => self.reduced[l as usize][dst].push(flow),
            }
            self.flows.push(f);
        }
        base..self.flows.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::training::{LayerAllReduce, LayerAllToAll, LayerConfig};
    use crate::workload::{HostSet, WorkloadKind};

    fn layer(forward: u64, backward: u64) -> LayerConfig {
        LayerConfig {
            forward: SimTime::from_us(forward),
            backward: Some(SimTime::from_us(backward)),
            input_grad: None,
            weight_grad: None,
            all_reduce: None,
            forward_all_to_all: None,
            backward_all_to_all: None,
            forward_comm: None,
            input_grad_comm: None,
            weight_grad_comm: None,
        }
    }

    fn workload(layers: Vec<LayerConfig>, iterations: u32) -> TrainingWorkload {
        TrainingWorkload {
            hosts: HostSet::List(vec![5, 2, 7]),
            iterations,
            start: SimTime::ZERO,
            local_ranks: None,
            chunks: 1,
            tp: 1,
            ep: 1,
            layers,
        }
    }

    #[test]
    fn steps_are_numbered_as_the_layout_says_and_chain_per_rank() {
        let mut l1 = layer(1, 2);
        (l1.backward, l1.input_grad, l1.weight_grad) = (None, Some(SimTime::from_us(3)), Some(SimTime::from_us(4)));
        let w = workload(vec![layer(5, 6), l1], 2);
        let out = expand(&w, 8);
        let layout = &out.training[0];
        assert_eq!(out.computes.len() as u64, w.size(8).computes);
        assert_eq!(layout.compute, SimTime::from_us(5 + 6 + 1 + 3 + 4));
        // Forward 0, forward 1, input-grad 1, weight-grad 1, input-grad 0, weight-grad 0 (0 us).
        let order = [(0, Phase::Forward, 5), (1, Phase::Forward, 1), (1, Phase::InputGrad, 3)];
        let order = order.into_iter().chain([(1, Phase::WeightGrad, 4), (0, Phase::InputGrad, 6)]);
        for (step, (l, phase, us)) in order.chain([(0, Phase::WeightGrad, 0)]).enumerate() {
            for r in 0..3 {
                let id = layout.compute_id(1, l, phase, r);
                assert_eq!(id as usize, (6 + step) * 3 + r);
                let c = &out.computes[id as usize];
                assert_eq!((c.host, c.duration), ([5, 2, 7][r], SimTime::from_us(us)));
                // Each step waits for the rank's step before it, across the iteration boundary too.
                assert_eq!(c.after_compute, vec![id - 3]);
            }
        }
        assert!(out.computes[..3].iter().all(|c| c.after_compute.is_empty()));
        assert_eq!(layout.iteration_computes(1), 18..36);
    }

    #[test]
    fn collectives_wait_for_their_issuer_and_block_the_right_steps() {
        let mut l0 = layer(1, 1);
        l0.all_reduce = Some(LayerAllReduce { size: crate::time::ByteSize(300), algorithm: Default::default() });
        l0.backward_all_to_all = Some(LayerAllToAll { size: crate::time::ByteSize(0), algorithm: Default::default() });
        let mut l1 = layer(1, 1);
        l1.forward_all_to_all = Some(LayerAllToAll { size: crate::time::ByteSize(10), algorithm: Default::default() });
        let w = workload(vec![l0, l1], 2);
        let out = expand(&w, 8);
        let layout = &out.training[0];
        assert_eq!(out.flows.len() as u64, w.size(8).flows);
        // Per iteration: the all-to-all (6 flows) then the ring all-reduce (12); the "0B"
        // all-to-all is not issued.
        assert_eq!(layout.iteration_flows, vec![0..18, 18..36]);
        let ops: Vec<(u32, Op, u32)> = layout.collectives.iter().map(|c| (c.iteration, c.op, c.id)).collect();
        let expected = [(0, Op::ForwardAllToAll, 0), (0, Op::AllReduce, 1), (1, Op::ForwardAllToAll, 2)];
        assert_eq!(ops, [&expected[..], &[(1, Op::AllReduce, 3)]].concat());
        for c in &layout.collectives {
            let issuer_phase = if c.op == Op::AllReduce { Phase::WeightGrad } else { Phase::Forward };
            for f in &out.flows[c.flows.start as usize..c.flows.end as usize] {
                let src = layout.ranks.iter().position(|&h| h == f.src).unwrap();
                assert_eq!(f.after_compute, vec![layout.compute_id(c.iteration, c.layer, issuer_phase, src)]);
                assert_eq!(f.collective.unwrap().id, c.id);
                assert!(f.after.iter().all(|&a| c.flows.contains(&a)), "dependencies stay inside the collective");
            }
        }
        let into = |flows: &Range<u32>, host: u32| -> Vec<u32> {
            flows.clone().filter(|&f| out.flows[f as usize].dst == host).collect()
        };
        for (r, &host) in layout.ranks.iter().enumerate() {
            // The forward all-to-all of layer 1 blocks the first backward step.
            let ig1 = &out.computes[layout.compute_id(0, 1, Phase::InputGrad, r) as usize];
            assert_eq!(ig1.after, into(&layout.collectives[0].flows, host));
            // Layer 0's all-reduce holds back layer 0's next forward compute, and nothing else.
            let f0 = &out.computes[layout.compute_id(1, 0, Phase::Forward, r) as usize];
            assert_eq!(f0.after, into(&layout.collectives[1].flows, host));
            assert_eq!(f0.after.len(), 4, "a ring all-reduce brings each rank 2(n-1) chunks");
            for s in layout.iteration_computes(1) {
                if s != layout.compute_id(1, 0, Phase::Forward, r) && out.computes[s as usize].host == host {
                    assert!(out.computes[s as usize].after.iter().all(|&f| !f0.after.contains(&f)));
                }
            }
        }
    }
}
