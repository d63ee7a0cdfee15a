//! What a run measures: per-flow completion, run-wide counters, and opt-in sampled timelines.
//!
//! Metrics is a sink: it owns the record types, and the engine pushes rows into it as the run
//! goes (the [`Recorder`]'s timelines, the per-packet [`trace`]) and when it ends
//! (`engine/finish.rs`). Nothing here reads the engine's state.

pub mod derived;
pub mod experiment;
pub mod fast_forward;
mod histogram;
mod ideal;
pub mod iterations;
pub mod jobs;
pub mod json_time;
mod recorder;
mod records;
pub mod split;
mod summary;
pub mod tables;
pub mod trace;

pub use derived::RunView;
pub use histogram::DurationHistogram;
pub use ideal::ideal_fct;
pub use json_time::TimeDistribution;
pub use recorder::Recorder;
pub use records::{
    CcState, CcStateSample, ComputeStep, Counters, FlowRecord, LinkSample, PauseRow, PauseSample, PausedPort,
    PortRecord, PortStats, QueueSample, RateSample, SpeedChange, StallReport, StopReason, StuckFlow, Warning,
    MAX_PAUSE_ROWS,
};
pub use split::Predecessors;
pub use summary::{
    ByteLedger, CollectiveRecord, CreditSummary, Distribution, Performance, ProbeSummary, RunTotals, Summary,
    TelemetrySummary, TraceSummary, TrimmingSummary,
};

use crate::config::Scenario;
use crate::time::SimTime;
use crate::topology::NodeNames;
use crate::workload::jobs::JobInfo;
use crate::workload::training::Layout;
use crate::workload::CollectiveInfo;

/// Everything a run produced.
pub struct Results {
    pub scenario: Scenario,
    pub flows: Vec<FlowRecord>,
    pub summary: Summary,
    pub queues: Vec<QueueSample>,
    /// Bytes each sampled switch port sent per interval (`links.csv`).
    pub links: Vec<LinkSample>,
    /// Link speeds changed by `[[events]]`, in time order.
    pub speed_changes: Vec<SpeedChange>,
    pub rates: Vec<RateSample>,
    /// The sampled flows' algorithm state (`output.cc_state`).
    pub cc_state: CcState,
    /// PFC frames sent by switches, with node names resolved (timelines only).
    pub pauses: Vec<PauseRow>,
    pub ports: Vec<PortRecord>,
    pub timelines: bool,
    /// The per-packet trace, when the scenario asked for one.
    pub trace: Option<Vec<trace::TraceRow>>,
    /// Every compute step: when it started and ended (empty unless the workload has steps).
    pub computes: Vec<ComputeStep>,
    /// One row per training iteration (`training` workloads only).
    pub iterations: Option<Vec<iterations::IterationRecord>>,
    /// The training workloads' layouts (`steps.csv`, `training_collectives.csv`), and the
    /// name of each job (by number; empty for a `[workload]`).
    pub layouts: Layouts,
    pub job_names: Vec<String>,
    /// One row per collective a generator made (`collectives.csv`).
    pub collectives: Vec<CollectiveRow>,
    /// One row per job of a `[[jobs]]` scenario (`jobs.csv`); empty for a `[workload]`.
    pub jobs: Vec<jobs::JobRow>,
    /// How the fabric the run used numbers its nodes (node names for the trace and pauses).
    pub topology: NodeNames,
}

/// Jain's fairness index of a set of throughputs: 1 when all are equal, 1/n when one takes all.
pub fn jain_index(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if sq == 0.0 {
        return 1.0;
    }
    sum * sum / (x.len() as f64 * sq)
}

/// One row of `collectives.csv`: a collective, what it is and how fast it ran.
#[derive(Clone, Debug)]
pub struct CollectiveRow {
    pub info: CollectiveInfo,
    pub flows: usize,
    pub start: SimTime,
    /// Its last flow's delivery; `None` if one never finished.
    pub finish: Option<SimTime>,
}

impl CollectiveRow {
    /// Each described collective with the span of its flows (a collective without flows, as
    /// one of size 0, has no row).
    fn join(infos: &[CollectiveInfo], flows: &[FlowRecord]) -> Vec<CollectiveRow> {
        // (flows, earliest start, latest finish or None once one is unfinished)
        let mut spans: std::collections::BTreeMap<&str, (usize, SimTime, Option<SimTime>)> = Default::default();
        for f in flows.iter().filter(|f| !f.collective.is_empty()) {
            let span = spans.entry(&f.collective).or_insert((0, f.start, Some(f.start)));
            span.0 += 1;
            span.1 = span.1.min(f.start);
            span.2 = span.2.zip(f.finish).map(|(a, b)| a.max(b));
        }
        (infos.iter())
            .filter_map(|info| {
                let &(count, start, finish) = spans.get(info.name().as_str())?;
                Some(CollectiveRow { info: info.clone(), flows: count, start, finish })
            })
            .collect()
    }

    /// Completion time: from its first flow's start to its last flow's delivery.
    pub fn cct(&self) -> Option<SimTime> {
        self.finish.map(|f| f - self.start)
    }

    /// Algorithm bandwidth (bits/s): the size over the completion time, as nccl-tests.
    pub fn algbw_bps(&self) -> Option<f64> {
        self.cct().filter(|t| t.0 > 0).map(|t| self.info.size as f64 * 8.0 / t.as_secs_f64())
    }

    /// Bus bandwidth (bits/s): the algorithm bandwidth times nccl-tests' factor.
    pub fn busbw_bps(&self) -> Option<f64> {
        self.algbw_bps().map(|a| a * self.info.bus_factor())
    }
}

/// The rows of a finished run, as the engine hands them over.
pub struct RunRecords {
    pub flows: Vec<FlowRecord>,
    pub ports: Vec<PortRecord>,
    pub pauses: Vec<PauseRow>,
    pub queues: Vec<QueueSample>,
    pub links: Vec<LinkSample>,
    pub speed_changes: Vec<SpeedChange>,
    pub rates: Vec<RateSample>,
    pub cc_state: CcState,
    pub trace: Option<Vec<trace::TraceRow>>,
    pub computes: Vec<ComputeStep>,
    /// What each compute step waited for (runs with a training workload only).
    pub predecessors: Option<Predecessors>,
}

/// What the training iterations are measured from: each `training` workload's layout and each
/// `parallel_training` workload's.
#[derive(Default)]
pub struct Layouts {
    pub training: Vec<Layout>,
    pub parallel_training: Vec<crate::workload::parallel_training::Layout>,
}

impl Results {
    /// The results of a run of `scenario`: its records, the training iterations measured from
    /// them (with the workload's `training` layout), and the summary.
    pub fn assemble(
        scenario: Scenario,
        records: RunRecords,
        layouts: Layouts,
        collectives: &[CollectiveInfo],
        jobs_info: &[JobInfo],
        totals: RunTotals,
        topology: NodeNames,
    ) -> Results {
        let jobs = jobs_info;
        let job_name = |j: u32| jobs.get(j as usize).map_or("", |job| job.name.as_str());
        let Layouts { training, parallel_training } = &layouts;
        let preds = records.predecessors.as_ref();
        let loops = (training.iter()).flat_map(|layout| {
            iterations::measure(layout, job_name(layout.job), &records.computes, &records.flows, preds)
        });
        let parallel = (parallel_training.iter()).flat_map(|layout| {
            iterations::measure_parallel(layout, job_name(layout.job), &records.computes, &records.flows, preds)
        });
        let iterations =
            (!training.is_empty() || !parallel_training.is_empty()).then(|| loops.chain(parallel).collect::<Vec<_>>());
        let collectives = CollectiveRow::join(collectives, &records.flows);
        let jobs = match scenario.jobs.is_empty() {
            true => Vec::new(),
            false => {
                let issued = |name: &str| collectives.iter().filter(|c| c.info.job == name).count() as u32;
                let rows = iterations.as_deref().unwrap_or_default();
                jobs::JobRow::measure(jobs, &records.flows, &records.computes, issued, rows)
            }
        };
        let summary = Summary::new(&scenario, &records.flows, iterations.as_deref(), &jobs, totals);
        let timelines = scenario.output.sample_interval.is_some();
        Results {
            scenario,
            flows: records.flows,
            summary,
            queues: records.queues,
            links: records.links,
            speed_changes: records.speed_changes,
            rates: records.rates,
            cc_state: records.cc_state,
            pauses: records.pauses,
            ports: records.ports,
            timelines,
            trace: records.trace,
            computes: records.computes,
            iterations,
            layouts,
            job_names: jobs_info.iter().map(|j| j.name.clone()).collect(),
            collectives,
            jobs,
            topology,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let d = Distribution::of(&v);
        assert_eq!((d.p50, d.p90, d.p99, d.max), (50.0, 90.0, 99.0, 100.0));
        assert_eq!(d.mean, 50.5);
    }
}
