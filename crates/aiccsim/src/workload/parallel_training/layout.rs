//! What the results need to describe a `parallel_training` run: where each iteration's compute
//! steps and flows are, what each step is (rank, iteration, microbatch, layer, phase), and what
//! each collective is (its parallel dimension, the pass and layer that issued it). Nothing here
//! is read while the run goes on; `metrics/iterations.rs` measures the iterations from it, and
//! the same records let a later reader split the time by dimension or draw a rank's timeline.

use super::groups::Groups;
use crate::tags::CollectiveKind;
use crate::time::SimTime;
use crate::workload::training::Phase;
use std::ops::Range;

/// A parallel dimension, which each collective belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Tensor parallelism: a layer's all-reduces (or reduce-scatters and all-gathers).
    Tp,
    /// Pipeline parallelism: activations and their gradients between stages.
    Pp,
    /// Data parallelism: gradient buckets (ZeRO: their reduce-scatter and the parameters'
    /// all-gather).
    Dp,
    /// Expert parallelism: a mixture-of-experts layer's dispatch and combine all-to-alls.
    Ep,
}

impl Dim {
    pub fn name(self) -> &'static str {
        match self {
            Dim::Tp => "tp",
            Dim::Pp => "pp",
            Dim::Dp => "dp",
            Dim::Ep => "ep",
        }
    }

    /// The connection number its flows ride: each dimension is a communicator of its own, with
    /// its own queue pairs between two ranks (as NCCL keeps one per communicator), so a
    /// gradient bucket never queues behind an expert all-to-all of the same two ranks.
    pub fn connection(self) -> u32 {
        match self {
            Dim::Tp => 0,
            Dim::Dp => 1,
            Dim::Ep => 2,
            Dim::Pp => 3,
        }
    }
}

/// One compute step: which rank ran it, for what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The rank's position in [`Layout::ranks`].
    pub rank: u32,
    pub iteration: u32,
    pub microbatch: u32,
    /// The layer, counted over the whole model from its input.
    pub layer: u32,
    pub phase: Phase,
}

/// One collective the workload issued. The same collective on every group of a stage (the
/// tensor-parallel all-reduce of a layer on each of the stage's tensor-parallel groups) is one
/// entry and one tag id: the groups run it side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct Issued {
    pub iteration: u32,
    pub dim: Dim,
    pub kind: CollectiveKind,
    /// Its schedule's name (`ring`, `direct`, ...).
    pub algorithm: &'static str,
    /// Bytes of each rank's buffer, as nccl-tests counts them (`CollectiveInfo::size`).
    pub size: u64,
    /// Ranks of each group (2 for a pipeline send).
    pub group: u32,
    /// The stage it ran on (a pipeline send: the sending stage).
    pub stage: u32,
    /// The microbatch whose pass issued it; `None` for a gradient bucket.
    pub microbatch: Option<u32>,
    /// The layer whose step issued it (a bucket: the layer that filled it; a pipeline send: the
    /// layer whose output or input gradient it carries).
    pub layer: u32,
    /// Its collective tag's id: `kind:id` in `flows.csv` and `summary.json`'s `collectives`.
    pub id: u32,
    pub flows: Range<u32>,
}

/// Where each iteration's steps and flows are.
///
/// Steps are made iteration by iteration, and in each iteration pass by pass in an order that
/// respects every dependency, so the steps and flows of iteration k are a contiguous range of
/// ids; `steps[c - first_compute]` says what step c is.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// The job whose training this is (0 for a `[workload]`).
    pub job: u32,
    /// The ranks' hosts, in rank order.
    pub ranks: Vec<u32>,
    pub groups: Groups,
    /// The id of its first compute step.
    pub first_compute: u32,
    pub iterations: u32,
    pub steps: Vec<Step>,
    /// Per iteration and rank (k x ranks + r): the rank's first step of the iteration.
    pub first_steps: Vec<u32>,
    /// Per iteration: its steps and its flows.
    pub iteration_computes: Vec<Range<u32>>,
    pub iteration_flows: Vec<Range<u32>>,
    /// Per iteration: the compute time of its busiest rank (stragglers and jitter make ranks
    /// differ), which bounds the iteration from below.
    pub compute: Vec<SimTime>,
    /// Every collective issued, in the order it was made.
    pub collectives: Vec<Issued>,
}

impl Layout {
    /// What compute step `c` (a run's id) is.
    pub fn step(&self, c: u32) -> Step {
        self.steps[(c - self.first_compute) as usize]
    }

    /// The id of `rank`'s first compute step in `iteration`.
    pub fn first_step(&self, iteration: u32, rank: usize) -> u32 {
        self.first_steps[iteration as usize * self.ranks.len() + rank]
    }

    /// Moves it to where `jobs::lay_out` put its workload: its steps after `computes`, its flows
    /// after `flows`, its collective ids after `collectives`, its ranks onto `hosts`.
    pub fn shift(&mut self, job: u32, computes: u32, flows: u32, collectives: u32, hosts: &[u32]) {
        self.job = job;
        self.first_compute += computes;
        self.first_steps.iter_mut().for_each(|c| *c += computes);
        self.ranks.iter_mut().for_each(|r| *r = hosts[*r as usize]);
        let moved = |r: &Range<u32>, by: u32| r.start + by..r.end + by;
        self.iteration_computes.iter_mut().for_each(|r| *r = moved(r, computes));
        self.iteration_flows.iter_mut().for_each(|r| *r = moved(r, flows));
        for c in &mut self.collectives {
            c.id += collectives;
            c.flows = moved(&c.flows, flows);
        }
    }
}
