//! The jobs of a `[[jobs]]` scenario, measured after the run: where each ran, when it started
//! and finished, what it moved, and its training iterations (`jobs.csv` and `summary.json`).

use super::iterations::{IterationRecord, IterationSummary};
use super::json_time::{ns, opt_ns};
use super::{ComputeStep, FlowRecord};
use crate::time::SimTime;
use crate::workload::jobs::JobInfo;
use serde::Serialize;

/// One row of `jobs.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    pub name: String,
    /// "hosts" (named), or the placement rule.
    pub placement: &'static str,
    /// Rank i's host.
    pub hosts: Vec<u32>,
    /// When it was to start.
    pub start: SimTime,
    /// When its last flow was delivered and its last step done; `None` if one never was.
    pub finish: Option<SimTime>,
    pub flows: u32,
    pub bytes: u64,
    pub collectives: u32,
    /// Its training iterations (`None` without a `training` workload).
    pub iterations: Option<IterationSummary>,
}

impl JobRow {
    /// From its start to its finish.
    pub fn duration(&self) -> Option<SimTime> {
        self.finish.map(|f| f - self.start)
    }

    /// Each laid-out job with its flows' and steps' times; `collectives` is how many each
    /// issued and `iterations` every training iteration of the run.
    pub fn measure(
        jobs: &[JobInfo],
        flows: &[FlowRecord],
        computes: &[ComputeStep],
        collectives: impl Fn(&str) -> u32,
        iterations: &[IterationRecord],
    ) -> Vec<JobRow> {
        (jobs.iter())
            .map(|job| {
                let own = &flows[job.flows.start as usize..job.flows.end as usize];
                let steps = &computes[job.computes.start as usize..job.computes.end as usize];
                let ends = own.iter().map(|f| f.finish).chain(steps.iter().map(|c| c.end));
                let finish = ends.collect::<Option<Vec<SimTime>>>().map(|e| e.into_iter().max().unwrap_or(job.start));
                let rows: Vec<IterationRecord> = iterations.iter().filter(|r| r.job == job.name).cloned().collect();
                JobRow {
                    name: job.name.clone(),
                    placement: job.placement,
                    hosts: job.hosts.clone(),
                    start: job.start,
                    finish,
                    flows: own.len() as u32,
                    bytes: own.iter().fold(0u64, |sum, f| sum.saturating_add(f.size_bytes)),
                    collectives: collectives(&job.name),
                    iterations: (!rows.is_empty()).then(|| IterationSummary::of(&rows)),
                }
            })
            .collect()
    }

    /// The hosts as ranges: "0-7,16-23".
    pub fn hosts_text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < self.hosts.len() {
            let mut j = i;
            while j + 1 < self.hosts.len() && self.hosts[j + 1] == self.hosts[j] + 1 {
                j += 1;
            }
            parts.push(match j - i {
                0 => self.hosts[i].to_string(),
                _ => format!("{}-{}", self.hosts[i], self.hosts[j]),
            });
            i = j + 1;
        }
        parts.join(",")
    }

    /// Its entry in `summary.json`'s `jobs`.
    pub fn summary(&self) -> JobSummary {
        JobSummary {
            name: self.name.clone(),
            placement: self.placement,
            hosts: self.hosts.clone(),
            start_ns: self.start,
            finish_ns: self.finish,
            duration_ns: self.duration(),
            flows: self.flows,
            bytes: self.bytes,
            collectives: self.collectives,
            iterations: self.iterations.clone(),
        }
    }
}

/// A job in `summary.json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct JobSummary {
    pub name: String,
    pub placement: &'static str,
    pub hosts: Vec<u32>,
    #[serde(serialize_with = "ns")]
    pub start_ns: SimTime,
    #[serde(serialize_with = "opt_ns")]
    pub finish_ns: Option<SimTime>,
    #[serde(serialize_with = "opt_ns")]
    pub duration_ns: Option<SimTime>,
    pub flows: u32,
    pub bytes: u64,
    pub collectives: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<IterationSummary>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_fold_into_ranges() {
        let row = JobRow {
            name: "a".into(),
            placement: "packed",
            hosts: vec![0, 1, 2, 3, 8, 10, 11, 5],
            start: SimTime::ZERO,
            finish: None,
            flows: 0,
            bytes: 0,
            collectives: 0,
            iterations: None,
        };
        assert_eq!(row.hosts_text(), "0-3,8,10-11,5");
    }
}
