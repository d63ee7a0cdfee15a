//! The iterations of a `training` or `parallel_training` workload, measured after the run from its compute steps and
//! flows: how long each took, and how much of that the ranks spent waiting for communication
//! instead of computing (the exposed communication of Khan et al., HOTI 2022, and ASTRA-sim).
//!
//! Iterations tile the run: iteration k starts when the last rank starts its first forward
//! compute of iteration k, and ends when iteration k + 1 starts. The last iteration ends when
//! its last step has ended and its last flow is delivered (the final gradients are in). A rank
//! computes for `compute` in every iteration, and each of its steps waits for the one before, so
//! a duration is never shorter than the compute: the difference is time spent waiting for flows
//! that compute did not hide.

use super::json_time::{mean, ns, opt_ns};
use super::split::{self, Dimension, FlowDims, Predecessors, Shape, Split, Wait};
use super::ComputeStep;
use super::FlowRecord;
use crate::time::SimTime;
use crate::workload::parallel_training::{self, Dim};
use crate::workload::training::{CommGroup, Layout, Op, Phase};
use serde::Serialize;
use std::ops::Range;

/// One row of `iterations.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationRecord {
    /// The job that ran it (empty for a `[workload]`).
    pub job: String,
    pub iteration: u32,
    /// `None` if not every rank had started the iteration when the run ended.
    pub start: Option<SimTime>,
    /// `None` if the iteration had not ended when the run ended.
    pub end: Option<SimTime>,
    /// Compute time of the iteration on each rank (the layers' compute times).
    pub compute: SimTime,
    /// Flows the iteration's collectives made, and their payload bytes.
    pub flows: u32,
    pub bytes: u64,
    /// What held the iteration up (`metrics/split.rs`); `None` if it did not end.
    pub split: Option<Split>,
}

impl IterationRecord {
    pub fn duration(&self) -> Option<SimTime> {
        Some(self.end? - self.start?)
    }

    /// The part of the duration that was not compute.
    pub fn exposed_comm(&self) -> Option<SimTime> {
        self.duration().map(|d| d - self.compute)
    }

    /// The critical rank's host.
    pub fn rank(&self) -> Option<u32> {
        self.split.as_ref().map(|s| s.rank)
    }

    pub fn bubble(&self) -> Option<SimTime> {
        self.split.as_ref().map(|s| s.bubble)
    }

    /// Exposed communication of `dimension` (tp, pp, dp, ep, other) on the critical rank.
    pub fn exposed(&self, dimension: Dimension) -> Option<SimTime> {
        let i = [Dimension::Tp, Dimension::Pp, Dimension::Dp, Dimension::Ep, Dimension::Other]
            .iter()
            .position(|&d| d == dimension)?;
        self.split.as_ref().map(|s| s.exposed[i])
    }
}

/// The `iterations` block of `summary.json`: means over the finished iterations (`null` when
/// none finished).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct IterationSummary {
    pub count: u32,
    pub finished: u32,
    #[serde(serialize_with = "opt_ns")]
    pub mean_duration_ns: Option<SimTime>,
    #[serde(serialize_with = "opt_ns")]
    pub mean_compute_ns: Option<SimTime>,
    #[serde(serialize_with = "opt_ns")]
    pub mean_exposed_comm_ns: Option<SimTime>,
    /// The finished iteration that took longest (the first of equals), and what held it up.
    pub slowest: Option<Slowest>,
}

/// `summary.json`'s slowest iteration: its row's split, and its critical rank's waits.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Slowest {
    #[serde(skip_serializing_if = "str::is_empty")]
    pub job: String,
    pub iteration: u32,
    /// The critical rank's host.
    pub rank: u32,
    #[serde(serialize_with = "ns")]
    pub duration_ns: SimTime,
    /// The critical rank's compute in the iteration.
    #[serde(serialize_with = "ns")]
    pub rank_compute_ns: SimTime,
    #[serde(serialize_with = "ns")]
    pub bubble_ns: SimTime,
    #[serde(serialize_with = "ns")]
    pub exposed_tp_ns: SimTime,
    #[serde(serialize_with = "ns")]
    pub exposed_pp_ns: SimTime,
    #[serde(serialize_with = "ns")]
    pub exposed_dp_ns: SimTime,
    #[serde(serialize_with = "ns")]
    pub exposed_ep_ns: SimTime,
    #[serde(serialize_with = "ns")]
    pub exposed_other_ns: SimTime,
    /// The critical rank's waits in time order (`metrics/split.rs`).
    pub critical_path: Vec<Wait>,
}

impl Slowest {
    fn of(rows: &[&IterationRecord]) -> Option<Slowest> {
        let row = (rows.iter()).filter(|r| r.split.is_some()).rev().max_by_key(|r| r.duration())?;
        let s = row.split.as_ref()?;
        Some(Slowest {
            job: row.job.clone(),
            iteration: row.iteration,
            rank: s.rank,
            duration_ns: row.duration()?,
            rank_compute_ns: s.compute,
            bubble_ns: s.bubble,
            exposed_tp_ns: s.exposed[0],
            exposed_pp_ns: s.exposed[1],
            exposed_dp_ns: s.exposed[2],
            exposed_ep_ns: s.exposed[3],
            exposed_other_ns: s.exposed[4],
            critical_path: s.path.clone(),
        })
    }
}

impl IterationSummary {
    pub fn of(rows: &[IterationRecord]) -> IterationSummary {
        let finished: Vec<&IterationRecord> = rows.iter().filter(|r| r.end.is_some()).collect();
        let mean = |f: &dyn Fn(&IterationRecord) -> SimTime| mean(finished.iter().map(|r| f(r)));
        IterationSummary {
            count: rows.len() as u32,
            finished: finished.len() as u32,
            mean_duration_ns: mean(&|r| r.duration().unwrap_or_default()),
            mean_compute_ns: mean(&|r| r.compute),
            mean_exposed_comm_ns: mean(&|r| r.exposed_comm().unwrap_or_default()),
            slowest: Slowest::of(&finished),
        }
    }
}

/// Measures every iteration of `layout` from the compute steps and flow records of the run, and
/// splits each finished one by what held it up when `preds` gives the steps' predecessors.
pub fn measure(
    layout: &Layout,
    job: &str,
    computes: &[ComputeStep],
    flows: &[FlowRecord],
    preds: Option<&Predecessors>,
) -> Vec<IterationRecord> {
    let ranks = layout.ranks.len();
    // When every rank had started iteration k: the latest start of its first forward compute.
    let starts: Vec<Option<SimTime>> = (0..layout.iterations)
        .map(|k| {
            let firsts = (0..ranks).map(|r| computes[layout.compute_id(k, 0, Phase::Forward, r) as usize].start);
            firsts.collect::<Option<Vec<SimTime>>>()?.into_iter().max()
        })
        .collect();
    let tiles = Tiles { job, starts, computes: &|k| layout.iteration_computes(k), flows: &layout.iteration_flows };
    let mut rows = tiles.measure(&|_| layout.compute, computes, flows);
    if let Some(preds) = preds {
        split_rows(&mut rows, &TrainingShape::new(layout), computes, flows, preds);
    }
    rows
}

/// Measures every iteration of a `parallel_training` workload. A pipeline fills from its first
/// stage: iteration k starts when the first rank starts it (the earliest start of the ranks'
/// first steps, once every rank has started it), and its compute is its busiest rank's, so
/// that the pipeline's bubble counts with the exposed communication.
pub fn measure_parallel(
    layout: &parallel_training::Layout,
    job: &str,
    computes: &[ComputeStep],
    flows: &[FlowRecord],
    preds: Option<&Predecessors>,
) -> Vec<IterationRecord> {
    let ranks = layout.ranks.len();
    let starts: Vec<Option<SimTime>> = (0..layout.iterations)
        .map(|k| {
            let firsts = (0..ranks).map(|r| computes[layout.first_step(k, r) as usize].start);
            firsts.collect::<Option<Vec<SimTime>>>()?.into_iter().min()
        })
        .collect();
    let steps = |k: u32| layout.iteration_computes[k as usize].clone();
    let tiles = Tiles { job, starts, computes: &steps, flows: &layout.iteration_flows };
    let mut rows = tiles.measure(&|k| layout.compute[k as usize], computes, flows);
    if let Some(preds) = preds {
        split_rows(&mut rows, &ParallelShape::new(layout), computes, flows, preds);
    }
    rows
}

/// Splits every row that ended.
fn split_rows(
    rows: &mut [IterationRecord],
    shape: &dyn Shape,
    computes: &[ComputeStep],
    flows: &[FlowRecord],
    preds: &Predecessors,
) {
    for row in rows {
        if let (Some(start), Some(end)) = (row.start, row.end) {
            row.split = split::split(shape, row.iteration, start, end, computes, flows, preds);
        }
    }
}

/// A step's phase as `steps.csv` and the critical path name it.
pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Forward => "forward",
        Phase::InputGrad => "input_grad",
        Phase::WeightGrad => "weight_grad",
    }
}

/// The dimension of a `training` collective: the all-to-alls of every rank (DLRM's embeddings)
/// and group collectives on all ranks are "other", the layer all-reduce data parallel, a group
/// collective its group's.
pub fn training_dimension(op: Op, group: Option<CommGroup>) -> Dimension {
    match (op, group) {
        (Op::AllReduce, _) => Dimension::Dp,
        (Op::ForwardAllToAll | Op::BackwardAllToAll, _) => Dimension::Other,
        (_, Some(CommGroup::Tp)) => Dimension::Tp,
        (_, Some(CommGroup::Dp | CommGroup::DpEp)) => Dimension::Dp,
        (_, Some(CommGroup::Ep)) => Dimension::Ep,
        (_, Some(CommGroup::All) | None) => Dimension::Other,
    }
}

/// The dimension of a `parallel_training` collective.
pub fn parallel_dimension(dim: Dim) -> Dimension {
    match dim {
        Dim::Tp => Dimension::Tp,
        Dim::Pp => Dimension::Pp,
        Dim::Dp => Dimension::Dp,
        Dim::Ep => Dimension::Ep,
    }
}

/// A `training` layout as the split reads it: step s of iteration k on rank r is
/// `compute_id`'s formula.
struct TrainingShape<'a> {
    layout: &'a Layout,
    dims: FlowDims,
}

impl<'a> TrainingShape<'a> {
    fn new(layout: &'a Layout) -> TrainingShape<'a> {
        let dims = (layout.collectives.iter()).map(|c| (c.flows.clone(), training_dimension(c.op, c.group)));
        TrainingShape { layout, dims: FlowDims::new(dims.collect()) }
    }
}

/// Where step `c` of a `training` layout is: (iteration, rank position, layer, phase).
pub fn training_step(layout: &Layout, c: u32) -> (u32, usize, u32, Phase) {
    let (n, l) = (layout.ranks.len() as u32, layout.layers);
    let i = c - layout.first_compute;
    let (r, step) = (i % n, i / n);
    let (k, s) = (step / (3 * l), step % (3 * l));
    let (layer, phase) = match s.checked_sub(l) {
        None => (s, Phase::Forward),
        Some(b) if b % 2 == 0 => (l - 1 - b / 2, Phase::InputGrad),
        Some(b) => (l - 1 - b / 2, Phase::WeightGrad),
    };
    (k, r as usize, layer, phase)
}

impl Shape for TrainingShape<'_> {
    fn ranks(&self) -> &[u32] {
        &self.layout.ranks
    }
    fn iterations(&self) -> u32 {
        self.layout.iterations
    }
    fn rank_steps(&self, k: u32, r: usize) -> Vec<u32> {
        let n = self.layout.ranks.len() as u32;
        let first = self.layout.compute_id(k, 0, Phase::Forward, r);
        (0..3 * self.layout.layers).map(|s| first + s * n).collect()
    }
    fn first_step(&self, k: u32, r: usize) -> u32 {
        self.layout.compute_id(k, 0, Phase::Forward, r)
    }
    fn iteration_computes(&self, k: u32) -> Range<u32> {
        self.layout.iteration_computes(k)
    }
    fn iteration_flows(&self, k: u32) -> Range<u32> {
        self.layout.iteration_flows[k as usize].clone()
    }
    fn dimension(&self, f: u32) -> Dimension {
        self.dims.of(f)
    }
    fn describe(&self, c: u32) -> String {
        let (_, r, layer, phase) = training_step(self.layout, c);
        format!("rank {} layer {layer} {}", self.layout.ranks[r], phase_name(phase))
    }
}

/// A `parallel_training` layout as the split reads it.
struct ParallelShape<'a> {
    layout: &'a parallel_training::Layout,
    dims: FlowDims,
}

impl<'a> ParallelShape<'a> {
    fn new(layout: &'a parallel_training::Layout) -> ParallelShape<'a> {
        let dims = (layout.collectives.iter()).map(|c| (c.flows.clone(), parallel_dimension(c.dim)));
        ParallelShape { layout, dims: FlowDims::new(dims.collect()) }
    }
}

impl Shape for ParallelShape<'_> {
    fn ranks(&self) -> &[u32] {
        &self.layout.ranks
    }
    fn iterations(&self) -> u32 {
        self.layout.iterations
    }
    fn rank_steps(&self, k: u32, r: usize) -> Vec<u32> {
        let steps = self.layout.iteration_computes[k as usize].clone();
        steps.filter(|&c| self.layout.step(c).rank as usize == r).collect()
    }
    fn first_step(&self, k: u32, r: usize) -> u32 {
        self.layout.first_step(k, r)
    }
    fn iteration_computes(&self, k: u32) -> Range<u32> {
        self.layout.iteration_computes[k as usize].clone()
    }
    fn iteration_flows(&self, k: u32) -> Range<u32> {
        self.layout.iteration_flows[k as usize].clone()
    }
    fn dimension(&self, f: u32) -> Dimension {
        self.dims.of(f)
    }
    fn describe(&self, c: u32) -> String {
        let s = self.layout.step(c);
        let host = self.layout.ranks[s.rank as usize];
        format!("rank {host} layer {} {} microbatch {}", s.layer, phase_name(s.phase), s.microbatch)
    }
}

/// Iterations that tile a run: when each starts, and its steps and flows.
struct Tiles<'a> {
    job: &'a str,
    starts: Vec<Option<SimTime>>,
    computes: &'a dyn Fn(u32) -> Range<u32>,
    flows: &'a [Range<u32>],
}

impl Tiles<'_> {
    /// Iteration k ends when k + 1 starts; the last when its last step has ended and its last
    /// flow is delivered. `compute(k)` is the iteration's compute time.
    fn measure(
        &self,
        compute: &dyn Fn(u32) -> SimTime,
        computes: &[ComputeStep],
        flows: &[FlowRecord],
    ) -> Vec<IterationRecord> {
        let iterations = self.starts.len() as u32;
        (0..iterations)
            .map(|k| {
                let own = self.flows[k as usize].clone();
                let own = &flows[own.start as usize..own.end as usize];
                let end = if k + 1 < iterations {
                    self.starts[k as usize + 1]
                } else {
                    let steps = (self.computes)(k).map(|c| computes[c as usize].end);
                    let ends: Option<Vec<SimTime>> = steps.chain(own.iter().map(|f| f.finish)).collect();
                    ends.and_then(|e| e.into_iter().max())
                };
                IterationRecord {
                    job: self.job.to_string(),
                    iteration: k,
                    start: self.starts[k as usize],
                    end,
                    compute: compute(k),
                    flows: own.len() as u32,
                    bytes: own.iter().fold(0u64, |sum, f| sum.saturating_add(f.size_bytes)),
                    split: None,
                }
            })
            .collect()
    }
}
