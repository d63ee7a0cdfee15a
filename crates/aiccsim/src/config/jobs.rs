//! `[[jobs]]`: several jobs sharing one fabric in one run, each with its own ranks, start time
//! and workload (one, or a sequence run one after another). A scenario has either one
//! `[workload]` (one job on every host) or `[[jobs]]`.

use super::workload::{HostSet, WorkloadConfig};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

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

/// How a job's ranks are placed on the fabric's hosts. Only hosts no earlier job in the list
/// placed or named are used.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The lowest-numbered free hosts: a server's GPUs, then the next server's (the fewest
    /// servers and racks).
    #[default]
    Packed,
    /// One rank per server in turn (GPU 0 of every server with a free GPU, then GPU 1, ...):
    /// the most servers, the least NVLink.
    Spread,
    /// A seeded random choice among the free hosts, in random order.
    Random,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Packed => "packed",
            Placement::Spread => "spread",
            Placement::Random => "random",
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
