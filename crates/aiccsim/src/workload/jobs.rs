//! Jobs: the scenario's traffic as one or more jobs on one fabric. A `[workload]` is one job on
//! every host; `[[jobs]]` gives several, each with its ranks, start time and workloads.
//!
//! A job's workloads are made on its ranks (hosts 0 to n-1 of a fabric of n) and then moved
//! onto the job: ranks become the job's hosts, times count from its start, flow and step ids
//! follow those of the workloads before, collective ids are numbered across the run, and its
//! transfers ride connections of its own. A sequence runs in order per rank: a rank starts a
//! workload once its sends and receives and its compute steps of the one before are done (a
//! step of no duration on each rank marks that).

use super::placement::{local_ranks, place, Placement};
use super::{collectives, CollectiveInfo, ComputeDef, HostSet, Ranks, Workload, WorkloadConfig};
use crate::cc::Check;
use crate::rng::mix64;
use crate::time::SimTime;
use crate::watch::{Phase, Stop, Watch};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// One job.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    /// Names the job in the results (`jobs.csv`, the `job` column of `collectives.csv` and
    /// `iterations.csv`); `job<i>` (its place in the list) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The hosts (GPUs) the job runs on: rank i is the i-th. Give these, or `ranks` and a
    /// `placement`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<HostSet>,
    /// How many ranks `placement` places.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// How `ranks` are placed on the hosts no earlier job took (`workload/placement.rs`);
    /// `packed` when absent. Not with `hosts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Seed of the `random` placement; the scenario's seed when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// When the job starts: its workload's times count from here.
    #[serde(default)]
    pub start: SimTime,
    /// What the job runs; its host sets and flow endpoints are ranks of the job (0 to
    /// ranks - 1), not hosts. A list runs one after another: a rank starts the next once its
    /// own sends and receives of the one before are done.
    pub workload: JobWorkloads,
}

impl JobConfig {
    /// The job's name: its own, or `job<i>` for the `i`-th job.
    pub fn name(&self, i: usize) -> String {
        self.name.clone().unwrap_or_else(|| format!("job{i}"))
    }

    /// The key its workload `k` is reported under, as the `i`-th job: `jobs[i].workload`, or
    /// `jobs[i].workload[k]` in a sequence.
    pub fn workload_key(&self, i: usize, k: usize) -> String {
        match self.workload.0.len() {
            1 => format!("jobs[{i}].workload"),
            _ => format!("jobs[{i}].workload[{k}]"),
        }
    }
}

/// A job's workload: one table (`[jobs.workload]`) or a list run in order (`[[jobs.workload]]`).
#[derive(Clone, Debug, Serialize)]
#[serde(transparent)]
pub struct JobWorkloads(pub Vec<WorkloadConfig>);

impl<'de> Deserialize<'de> for JobWorkloads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OneOrMany;
        impl<'de> serde::de::Visitor<'de> for OneOrMany {
            type Value = JobWorkloads;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a workload table, or a list of them run one after another")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<JobWorkloads, A::Error> {
                let one = WorkloadConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(JobWorkloads(vec![one]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<JobWorkloads, A::Error> {
                let many = Vec::<WorkloadConfig>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
                Ok(JobWorkloads(many))
            }
        }
        d.deserialize_any(OneOrMany)
    }
}

/// One job to lay out.
#[derive(Clone, Debug)]
pub struct JobPlan {
    /// Empty for a `[workload]`.
    pub name: String,
    /// Rank i's host.
    pub hosts: Vec<u32>,
    /// How the hosts were chosen: "hosts" (named), "all" (a `[workload]`), or the rule.
    pub placement: &'static str,
    pub start: SimTime,
    /// Its workloads, in order, with the key each is reported under (`workload`,
    /// `jobs[2].workload`, `jobs[2].workload[1]`); hierarchical all-reduces have `local_ranks`.
    pub workloads: Vec<(String, WorkloadConfig)>,
}

/// A laid-out job, for the results.
#[derive(Clone, Debug, PartialEq)]
pub struct JobInfo {
    pub name: String,
    pub hosts: Vec<u32>,
    pub placement: &'static str,
    pub start: SimTime,
    pub flows: Range<u32>,
    pub computes: Range<u32>,
}

/// The jobs of a parsed scenario (its `[workload]`, or its `[[jobs]]`) on a fabric of `hosts`
/// hosts, `per_server` per server; `seed` is the scenario's.
pub fn plan(
    workload: Option<&WorkloadConfig>,
    jobs: &[JobConfig],
    seed: u64,
    hosts: u32,
    per_server: u32,
) -> Result<Vec<JobPlan>, (String, String)> {
    if let Some(w) = workload {
        return Ok(vec![JobPlan {
            name: String::new(),
            hosts: (0..hosts).collect(),
            placement: "all",
            start: SimTime::ZERO,
            workloads: vec![("workload".into(), w.clone())],
        }]);
    }
    let placed = place(jobs, hosts, per_server, seed)?;
    let plans = jobs.iter().zip(placed).enumerate().map(|(i, (job, ranks))| {
        let group = local_ranks(&ranks, per_server);
        let workloads = (job.workload.0.iter().enumerate())
            .map(|(k, w)| {
                let mut w = w.clone();
                if let Some(g) = group {
                    w.fill_local_ranks(g);
                }
                (job.workload_key(i, k), w)
            })
            .collect();
        let placement = if job.hosts.is_some() { "hosts" } else { job.placement.unwrap_or_default().name() };
        JobPlan { name: job.name(i), hosts: ranks, placement, start: job.start, workloads }
    });
    Ok(plans.collect())
}

/// Each job's workloads against its ranks, and the flows they all make together: at most
/// `max_flows`, or the error names the workload that makes the most, at the key its kind blames.
pub fn check(plans: &[JobPlan], max_flows: u64) -> Result<u64, (String, String)> {
    let mut counts = Vec::new();
    for plan in plans {
        let members = match plan.name.as_str() {
            "" => "the topology has hosts".to_string(),
            name => format!("job \"{name}\" has ranks"),
        };
        let noun = if plan.name.is_empty() { "host" } else { "rank" };
        let ranks = Ranks::new(plan.hosts.len() as u32, noun, &members);
        for (key, w) in &plan.workloads {
            moved(key, w.as_kind().check_ranks(&ranks))?;
            counts.push((key, w, w.as_kind().size(ranks.n).flows));
        }
    }
    let flows = counts.iter().fold(0u64, |sum, c| sum.saturating_add(c.2));
    if flows > max_flows {
        let (key, w, _) = counts.iter().max_by_key(|c| c.2).expect("more flows than none");
        let (at, fix) = w.as_kind().too_many_flows();
        return Err((
            format!("{key}.{at}"),
            format!("makes {flows} flows, more than the {max_flows} aiccsim runs in one scenario; {fix}"),
        ));
    }
    Ok(flows)
}

/// A check of a workload written against the key `workload`, reported at `key` (a job's).
pub fn moved(key: &str, check: Check) -> Check {
    check.map_err(|(k, m)| match k.strip_prefix("workload") {
        Some(rest) if key != "workload" => (format!("{key}{rest}"), m),
        _ => (k, m),
    })
}

/// The seed of workload `k` of job `j`: the scenario's own for the first, so that a
/// `[workload]` draws what it always drew.
fn workload_seed(seed: u64, j: usize, k: usize) -> u64 {
    match (j, k) {
        (0, 0) => seed,
        _ => mix64(seed ^ mix64(((j as u64) << 32) | k as u64)),
    }
}

/// Makes every job's flows and steps and moves them onto the fabric (checked plans only),
/// reporting to `watch` by flows made and stopping when it says so.
pub fn lay_out(plans: &[JobPlan], seed: u64, watch: &mut Watch) -> Result<Workload, Stop> {
    let total: u64 = (plans.iter())
        .flat_map(|p| p.workloads.iter().map(|(_, w)| w.as_kind().size(p.hosts.len() as u32).flows))
        .fold(0, u64::saturating_add);
    let mut all = Workload::default();
    for (j, plan) in plans.iter().enumerate() {
        let (first_flow, first_compute) = (all.flows.len() as u32, all.computes.len() as u32);
        let n = plan.hosts.len() as u32;
        // Per rank: what the next workload of the sequence waits for.
        let mut done: Vec<Option<u32>> = vec![None; n as usize];
        for (k, (_, cfg)) in plan.workloads.iter().enumerate() {
            watch.at(Phase::Workload, all.flows.len() as u64, total)?;
            let made = cfg.as_kind().expand(n, workload_seed(seed, j, k));
            // Per rank, for the barrier before the next workload: its flows and steps here.
            let sequenced = k + 1 < plan.workloads.len();
            let mut touched: Vec<(Vec<u32>, Vec<u32>)> =
                vec![Default::default(); if sequenced { n as usize } else { 0 }];
            let infos = collectives(cfg.as_kind(), n, &made);
            let (flow_base, compute_base) = (all.flows.len() as u32, all.computes.len() as u32);
            let collective_base = all.collectives.len() as u32;
            for mut f in made.flows {
                watch.tick(Phase::Workload, all.flows.len() as u64, total)?;
                let fresh = f.after.is_empty() && f.after_acked.is_empty() && f.after_compute.is_empty();
                f.after.iter_mut().for_each(|a| *a += flow_base);
                f.after_acked.iter_mut().for_each(|a| *a += flow_base);
                f.after_compute.iter_mut().for_each(|c| *c += compute_base);
                if let (true, Some(barrier)) = (fresh, done[f.src as usize]) {
                    f.after_compute.push(barrier);
                }
                if sequenced {
                    let id = all.flows.len() as u32;
                    touched[f.src as usize].0.push(id);
                    touched[f.dst as usize].0.push(id);
                }
                (f.src, f.dst) = (plan.hosts[f.src as usize], plan.hosts[f.dst as usize]);
                f.start = plan.start + f.start;
                f.stop = f.stop.map(|t| plan.start + t);
                if let Some(tag) = &mut f.collective {
                    tag.id += collective_base;
                }
                f.job = j as u32;
                all.flows.push(f);
            }
            for mut c in made.computes {
                watch.tick(Phase::Workload, all.flows.len() as u64, total)?;
                let rank = c.host as usize;
                let fresh = c.after_compute.is_empty();
                c.after.iter_mut().for_each(|a| *a += flow_base);
                c.after_compute.iter_mut().for_each(|p| *p += compute_base);
                if let (true, Some(barrier)) = (fresh, done[rank]) {
                    c.after_compute.push(barrier);
                }
                if sequenced {
                    touched[rank].1.push(all.computes.len() as u32);
                }
                c.host = plan.hosts[rank];
                c.start = plan.start + c.start;
                all.computes.push(c);
            }
            for mut layout in made.training {
                layout.job = j as u32;
                layout.first_compute += compute_base;
                layout.ranks.iter_mut().for_each(|r| *r = plan.hosts[*r as usize]);
                layout.iteration_flows.iter_mut().for_each(|f| *f = f.start + flow_base..f.end + flow_base);
                for c in &mut layout.collectives {
                    c.id += collective_base;
                    c.flows = c.flows.start + flow_base..c.flows.end + flow_base;
                }
                all.training.push(layout);
            }
            for mut layout in made.parallel_training {
                layout.shift(j as u32, compute_base, flow_base, collective_base, &plan.hosts);
                all.parallel_training.push(layout);
            }
            all.collectives.extend(infos.into_iter().map(|c| CollectiveInfo {
                id: c.id + collective_base,
                job: plan.name.clone(),
                ..c
            }));
            if sequenced {
                done = barrier(&mut all, plan, touched, &done);
            }
        }
        all.jobs.push(JobInfo {
            name: plan.name.clone(),
            hosts: plan.hosts.clone(),
            placement: plan.placement,
            start: plan.start,
            flows: first_flow..all.flows.len() as u32,
            computes: first_compute..all.computes.len() as u32,
        });
    }
    Ok(all)
}

/// Adds, on each rank of `plan`, a step of no duration after everything the rank did in the
/// workload just made (`touched`: per rank, its flows and its steps), or, if it did nothing
/// there, after its previous barrier; returns their ids.
fn barrier(
    all: &mut Workload,
    plan: &JobPlan,
    touched: Vec<(Vec<u32>, Vec<u32>)>,
    before: &[Option<u32>],
) -> Vec<Option<u32>> {
    let first = all.computes.len() as u32;
    for (r, (after, mut after_compute)) in touched.into_iter().enumerate() {
        after_compute.extend(before[r]);
        all.computes.push(ComputeDef {
            host: plan.hosts[r],
            duration: SimTime::ZERO,
            start: plan.start,
            after,
            after_compute,
        });
    }
    (first..all.computes.len() as u32).map(Some).collect()
}
