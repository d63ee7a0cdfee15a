//! `kind = "chakra"`: a Chakra execution trace (MLCommons Chakra, the workload format of
//! ASTRA-sim), one protobuf file per rank, run as its nodes say: compute nodes as compute steps,
//! collective nodes through aiccsim's collective library over their process group, sends and
//! receives as flows, dependencies as dependencies.
//!
//! The trace is read when the scenario is parsed: a scenario that names a missing, damaged or
//! inconsistent trace is refused then, naming the file and the node. The kind keeps what the
//! trace makes (on ranks 0 to n-1) and only moves it onto its hosts when the run is built. The
//! chapters: `chakra/et_def.proto` and `schema.rs` (the messages), `read.rs` (files and their
//! framing), `graph.rs` (checks and matching), `expand.rs` (the engine's graph), `write.rs`
//! (writing traces, for tests and examples).

mod expand;
mod graph;
mod read;
pub mod schema;
pub mod write;

pub use expand::ALGORITHMS;
pub use graph::CtrlDeps;

use super::kind::{fail, Ranks, Size, WorkloadKind};
use super::training::MAX_COMPUTE_STEPS;
use super::{CollectiveInfo, HostSet, Workload};
use crate::cc::Check;
use crate::time::SimTime;
use schema::NodeType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The registry's example: `docs/scenario.md` shows it, and a test runs it. Its trace, four
/// ranks of compute, collectives (one on a process group of two ranks) and a send, is
/// `examples/chakra/` (written by `tests/all/workload_chakra.rs`).
pub const EXAMPLE: &str = r#"[workload]            # a four-rank trace in examples/chakra/
kind = "chakra"
trace = "examples/chakra/tiny"
comm_groups = "examples/chakra/comm_groups.json"
"#;

/// A Chakra trace run on `hosts`: rank r on the r-th host of the set.
#[derive(Clone, Serialize)]
pub struct ChakraWorkload {
    /// The folder of the trace's files (`<prefix>.<rank>.et`), or their prefix; relative to the
    /// scenario file's folder as written, absolute once read (so that `run.json` runs from
    /// anywhere).
    pub trace: PathBuf,
    pub hosts: HostSet,
    /// The ranks of each process group (`pg_name`) other than "0", as ASTRA-sim's
    /// `--comm-group-configuration` JSON file gives them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm_groups: Option<PathBuf>,
    /// Whether nodes wait for their `ctrl_deps` as for their `data_deps`.
    pub ctrl_deps: CtrlDeps,
    #[serde(skip)]
    pub loaded: Arc<Trace>,
}

/// The keys as a scenario writes them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    trace: PathBuf,
    #[serde(default)]
    hosts: HostSet,
    #[serde(default)]
    comm_groups: Option<PathBuf>,
    #[serde(default)]
    ctrl_deps: CtrlDeps,
}

impl<'de> Deserialize<'de> for ChakraWorkload {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let keys = Keys::deserialize(d)?;
        let folder = crate::parse_folder::scenario_folder();
        let resolve = |p: &Path| {
            let joined = folder.join(p);
            std::path::absolute(&joined).unwrap_or(joined)
        };
        let (trace, comm_groups) = (resolve(&keys.trace), keys.comm_groups.as_deref().map(resolve));
        let loaded = Trace::load(&trace, comm_groups.as_deref(), keys.ctrl_deps)
            .map_err(|(key, message)| crate::tagged_enum::at_key::<D::Error>(key, message))?;
        let ctrl_deps = keys.ctrl_deps;
        Ok(ChakraWorkload { trace, hosts: keys.hosts, comm_groups, ctrl_deps, loaded: Arc::new(loaded) })
    }
}

impl std::fmt::Debug for ChakraWorkload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChakraWorkload")
            .field("trace", &self.trace)
            .field("hosts", &self.hosts)
            .field("comm_groups", &self.comm_groups)
            .field("ctrl_deps", &self.ctrl_deps)
            .field("ranks", &self.loaded.files.len())
            .finish_non_exhaustive()
    }
}

/// A trace read from its files, checked, matched and made into the engine's graph on ranks 0
/// to n-1.
#[derive(Debug, Default)]
pub struct Trace {
    /// Rank r's file.
    pub files: Vec<PathBuf>,
    /// The schema its files say they follow (rank 0's metadata: its `schema` attribute, or its
    /// `version`), empty if none.
    pub schema: String,
    /// Nodes of each type over all ranks, in the schema's order of types.
    pub nodes: Vec<(NodeType, u64)>,
    /// The collectives of each kind (transfers as `send_recv`), over all ranks.
    pub collectives: BTreeMap<String, u64>,
    made: expand::Made,
    size: Size,
}

impl Trace {
    /// Reads the trace at `path` (a folder, or the files' prefix), with the process groups of
    /// the JSON file `comm_groups`, taking `ctrl_deps` as `ctrl` says. An error names the key at
    /// fault (`trace`, `comm_groups`), the file, the node, and the fix.
    pub fn load(path: &Path, comm_groups: Option<&Path>, ctrl: CtrlDeps) -> Result<Trace, (&'static str, String)> {
        let groups = match comm_groups {
            Some(p) => read::comm_groups(p).map_err(|e| ("comm_groups", e))?,
            None => BTreeMap::new(),
        };
        let files = read::rank_files(path).map_err(|e| ("trace", e))?;
        if files.len() > u32::MAX as usize / 2 {
            return Err(("trace", format!("{} ranks are more than aiccsim simulates", files.len())));
        }
        let read: Vec<read::RankFile> = files.iter().map(|f| read::read_rank(f)).collect::<Result<_, _>>().map_err(|e| ("trace", e))?;
        let graph = graph::build(&read, &groups, ctrl).map_err(|e| ("trace", e))?;
        let made = expand::expand(&graph).map_err(|e| ("trace", e))?;
        let mut nodes: Vec<(NodeType, u64)> = NodeType::ALL.iter().map(|&t| (t, 0)).collect();
        for t in graph.ranks.iter().flat_map(|r| &r.types) {
            nodes[*t as usize].1 += 1;
        }
        let mut collectives = BTreeMap::new();
        for c in &made.collectives {
            *collectives.entry(c.kind.to_string()).or_default() += 1;
        }
        let size = size_of(&made, files.len());
        let meta = &read[0].metadata;
        let schema = meta.attr.iter().find(|a| a.name == "schema").and_then(|a| a.string());
        let schema = schema.unwrap_or(&meta.version).to_string();
        Ok(Trace { files, schema, nodes, collectives, made, size })
    }

    /// Its number of ranks (files).
    pub fn ranks(&self) -> u32 {
        self.files.len() as u32
    }

    /// Flows and compute steps it makes.
    pub fn size(&self) -> Size {
        self.size
    }
}

/// What the graph holds, counted once.
fn size_of(made: &expand::Made, ranks: usize) -> Size {
    let (mut sent, mut received) = (vec![0u128; ranks], vec![0u128; ranks]);
    for f in &made.flows {
        sent[f.src as usize] += u128::from(f.size);
        received[f.dst as usize] += u128::from(f.size);
    }
    let mut compute = vec![SimTime::ZERO; ranks];
    for c in &made.computes {
        compute[c.host as usize] = SimTime(compute[c.host as usize].0.saturating_add(c.duration.0));
    }
    Size {
        flows: made.flows.len() as u64,
        bytes: sent.iter().sum(),
        busiest_rank_bytes: sent.iter().chain(&received).max().copied().unwrap_or(0),
        latest_start: SimTime::ZERO,
        computes: made.computes.len() as u64,
        compute_time: compute.into_iter().max().unwrap_or(SimTime::ZERO),
        iterations: 0,
    }
}

impl WorkloadKind for ChakraWorkload {
    fn check_ranks(&self, ranks: &Ranks) -> Check {
        ranks.set("workload.hosts", &self.hosts, 1)?;
        let (need, have) = (u64::from(self.loaded.ranks()), self.hosts.len(ranks.n));
        if need > have {
            return fail(
                "workload.hosts",
                format!(
                    "the trace has {need} ranks (one file each, {}), more than the {have} hosts it may run on; give it at least {need} hosts",
                    self.trace.display()
                ),
            );
        }
        let steps = self.loaded.size.computes;
        if steps > MAX_COMPUTE_STEPS {
            return fail(
                "workload.trace",
                format!(
                    "makes {steps} compute steps (one per compute node, and one per communication node something waits for), more than the {MAX_COMPUTE_STEPS} aiccsim runs in one scenario; simulate a shorter trace"
                ),
            );
        }
        Ok(())
    }

    fn size(&self, _ranks: u32) -> Size {
        self.loaded.size
    }

    fn expand(&self, ranks: u32, _seed: u64) -> Workload {
        let hosts = self.hosts.expand(ranks);
        let made = &self.loaded.made;
        let flows = (made.flows.iter())
            .map(|f| super::FlowDef { src: hosts[f.src as usize], dst: hosts[f.dst as usize], ..f.clone() })
            .collect();
        let computes =
            made.computes.iter().map(|c| super::ComputeDef { host: hosts[c.host as usize], ..c.clone() }).collect();
        Workload { flows, computes, ..Workload::default() }
    }

    fn collectives(&self, _ranks: u32, _made: &Workload) -> Vec<CollectiveInfo> {
        self.loaded.made.collectives.clone()
    }

    fn too_many_flows(&self) -> (&'static str, &'static str) {
        ("trace", "simulate a shorter trace, or fewer ranks")
    }
}
