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

use super::json_time::{mean, opt_ns};
use super::ComputeStep;
use super::FlowRecord;
use crate::time::SimTime;
use crate::workload::parallel_training;
use crate::workload::training::{Layout, Phase};
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
}

impl IterationRecord {
    pub fn duration(&self) -> Option<SimTime> {
        Some(self.end? - self.start?)
    }

    /// The part of the duration that was not compute.
    pub fn exposed_comm(&self) -> Option<SimTime> {
        self.duration().map(|d| d - self.compute)
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
        }
    }
}

/// Measures every iteration of `layout` from the compute steps and flow records of the run.
pub fn measure(layout: &Layout, job: &str, computes: &[ComputeStep], flows: &[FlowRecord]) -> Vec<IterationRecord> {
    let ranks = layout.ranks.len();
    // When every rank had started iteration k: the latest start of its first forward compute.
    let starts: Vec<Option<SimTime>> = (0..layout.iterations)
        .map(|k| {
            let firsts = (0..ranks).map(|r| computes[layout.compute_id(k, 0, Phase::Forward, r) as usize].start);
            firsts.collect::<Option<Vec<SimTime>>>()?.into_iter().max()
        })
        .collect();
    let tiles = Tiles { job, starts, computes: &|k| layout.iteration_computes(k), flows: &layout.iteration_flows };
    tiles.measure(&|_| layout.compute, computes, flows)
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
    tiles.measure(&|k| layout.compute[k as usize], computes, flows)
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
                }
            })
            .collect()
    }
}
