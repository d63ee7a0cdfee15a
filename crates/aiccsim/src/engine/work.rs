//! The workload's progress: what waits for what, how far the flows are, and what the results
//! need to describe the workload (its collectives, training iterations and jobs).

use super::Dependencies;
use crate::metrics::StopReason;
use crate::time::SimTime;
use crate::workload::{self, Workload};

pub(crate) struct WorkProgress {
    /// What waits for what (flows and compute steps), and the compute steps' progress.
    pub(crate) deps: Dependencies,
    /// Which steps and flows make up which training iteration, per `training` workload.
    pub(crate) training: Vec<workload::training::Layout>,
    pub(crate) parallel_training: Vec<workload::parallel_training::Layout>,
    /// What each collective of the workload is (for `collectives.csv`).
    pub(crate) collectives: Vec<workload::CollectiveInfo>,
    /// The jobs (for `jobs.csv`).
    pub(crate) jobs: Vec<workload::jobs::JobInfo>,
    pub(crate) flows_done: usize,
    pub(crate) flows_started: usize,
    /// Payload delivered in order, over all flows (for [`super::Progress`]), and the flows'
    /// sizes.
    pub(crate) bytes_delivered: u64,
    pub(crate) bytes_total: u64,
    /// The last time a flow moved (started, or had a byte delivered or acknowledged in order):
    /// what stall detection measures from.
    pub(crate) progress_at: SimTime,
    /// Why the run ended, once it has, when it was run in steps (`Simulation::run_until`).
    pub(crate) ended: Option<StopReason>,
}

impl WorkProgress {
    /// Nothing done yet of `work`, whose flows and compute steps wait as `deps` says. Takes the
    /// descriptions the results need out of `work`.
    pub(crate) fn new(work: &mut Workload, deps: Dependencies) -> WorkProgress {
        WorkProgress {
            deps,
            training: std::mem::take(&mut work.training),
            parallel_training: std::mem::take(&mut work.parallel_training),
            collectives: std::mem::take(&mut work.collectives),
            jobs: std::mem::take(&mut work.jobs),
            flows_done: 0,
            flows_started: 0,
            bytes_delivered: 0,
            // Fabric::build refused a workload whose sizes overflow this.
            bytes_total: work.flows.iter().map(|d| d.size).sum(),
            progress_at: SimTime::ZERO,
            ended: None,
        }
    }
}
