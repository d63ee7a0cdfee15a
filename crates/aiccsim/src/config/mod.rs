//! The scenario schema: what a scenario file may say, with every default written down.
//!
//! Parsing is strict (unknown keys are errors) and every error names the file and the key.
//! After parsing, [`validate`] checks what the types cannot and the scenario alone can tell
//! (thresholds in the wrong order, a flow of zero bytes). What needs the fabric (a flow to a host
//! that does not exist, a disconnected topology, a rate floor above the slowest NIC) is checked
//! when the fabric is built (`engine/build.rs`).

mod clocks;
mod credit;
mod events;
pub mod fast_forward;
mod nic;
pub mod ns3;
mod output;
pub mod preset;
pub mod simai;
mod switch;
mod topology;
mod validate;

pub use clocks::{ClocksConfig, NoiseDistribution};
pub use credit::{CreditConfig, FlowControl};
pub use events::{LinkAction, LinkEvent};
pub use fast_forward::FastForward;
pub use nic::{
    AckOutOfOrder, Connections, LoadBalancing, NicConfig, Recovery, RepsConfig, DEFAULT_ENTROPIES, DEFAULT_RTO,
    MAX_RTO_BACKOFF, MAX_SACK_BITMAP,
};
pub use output::{OutputConfig, TraceConfig};
pub use switch::{
    CongaConfig, ControlPriority, DlbConfig, EcmpNs3Config, EcnConfig, FlowletConfig, FlowletPick, MarkPoint,
    PfcConfig, Routing, RoutingConfig, RoutingTiers, SprayThresholdConfig, SwitchConfig, Tier, TrimmingConfig,
    DEFAULT_FAILURE_DETECTION,
};
pub use topology::{
    parse_node, ClosTopology, CustomLink, CustomTopology, DumbbellTopology, FatTreeTopology, LeafSpineTopology,
    LinkConfig, RailTopology, StarTopology, TopologyConfig,
};
pub use validate::{fail, moved, validate};
// The `[workload]` and `[[jobs]]` sections: each workload kind's settings live in its own file
// of `workload/`, beside what the kind makes, as each algorithm's `[cc]` settings live in `cc/`.
pub use crate::workload::{
    AllGatherWorkload, AllReduceAlgorithm, AllReduceWorkload, AllToAllAlgorithm, AllToAllWorkload, BroadcastAlgorithm,
    BroadcastWorkload, FlowList, FlowSpec, GatherAlgorithm, GatherWorkload, HostSet, IncastWorkload, JobConfig,
    JobWorkloads, LayerAllReduce, LayerAllToAll, LayerConfig, PermutationWorkload, Placement, ReduceScatterWorkload,
    SendRecvWorkload, TrainingWorkload, WorkloadConfig,
};

use crate::cc::CcConfig;
use crate::tagged_enum;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A scenario file, parsed and validated, with every default filled in.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub simulation: SimulationConfig,
    pub topology: TopologyConfig,
    #[serde(default)]
    pub switch: SwitchConfig,
    #[serde(default)]
    pub nic: NicConfig,
    #[serde(default)]
    pub cc: CcConfig,
    #[serde(default)]
    pub clocks: ClocksConfig,
    /// The traffic: one workload on every host, or `jobs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadConfig>,
    /// Several jobs sharing the fabric (`workload/jobs.rs`), instead of `workload`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobConfig>,
    #[serde(default)]
    pub output: OutputConfig,
    /// Timed changes to the fabric's links: slowed, failed, restored (`config/events.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<LinkEvent>,
    /// What the scenario's errors are reported against: its file, or the name its caller gave
    /// it. Checks that need the built fabric (`engine/build.rs`) report against it too.
    #[serde(skip)]
    pub origin: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationConfig {
    /// Root seed; every random stream of the run (ECN marking, spraying, workload generators)
    /// is derived from it, so the same scenario and seed give the same results.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Stop at this simulated time even if flows remain (they are reported unfinished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_time: Option<SimTime>,
    /// End the run as stalled (with a diagnosis of the paused ports) when no flow has moved a
    /// byte for this long while flows remain: a PFC deadlock would otherwise run forever.
    /// Filled in when the scenario is loaded ([`SimulationConfig::default_stall_timeout`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_timeout: Option<SimTime>,
    /// Skip the stretches where every flow of a group of flows is steady, crediting what they
    /// would have sent (`engine/fast_forward/`): off (the default), on (`true`, 1% tolerance),
    /// or on with a tolerance (`0.02`).
    #[serde(default, skip_serializing_if = "FastForward::is_off")]
    pub fast_forward: FastForward,
    /// How transfers between GPUs of one server cross NVLink: packet by packet (the default),
    /// or as rates (`engine/nvlink_fluid.rs`).
    #[serde(default, skip_serializing_if = "NvlinkModel::is_packet")]
    pub nvlink: NvlinkModel,
}

/// How NVLink transfers are simulated (`simulation.nvlink`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NvlinkModel {
    /// Every packet through the server's NVSwitch, as on the fabric.
    #[default]
    Packet,
    /// Max-min fair rates over the GPUs' NVLink ports, recomputed as transfers start and end.
    Fluid,
}

impl NvlinkModel {
    pub fn is_packet(&self) -> bool {
        *self == NvlinkModel::Packet
    }
}

fn default_seed() -> u64 {
    1
}

impl SimulationConfig {
    /// One second, or twice the longest quiet time of a live flow (the retransmission timeout at
    /// its full backoff, 64 ms by default) if that is longer: cheap to simulate, since a stalled
    /// fabric has few events, and never mistaking a flow that waits out its timeout for a stall.
    pub fn default_stall_timeout(nic: &NicConfig) -> SimTime {
        let longest_wait = nic.rto.0.saturating_mul(2 * MAX_RTO_BACKOFF as u64);
        SimTime(longest_wait.max(SimTime::from_ms(1000).0))
    }
}

impl Default for SimulationConfig {
    fn default() -> Self {
        SimulationConfig {
            seed: default_seed(),
            stop_time: None,
            stall_timeout: None,
            fast_forward: FastForward::Off,
            nvlink: NvlinkModel::Packet,
        }
    }
}

/// An error in a scenario: where it is and what to do about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub file: String,
    /// Dotted path of the offending key, e.g. `switch.ecn.kmin` or `workload.flows[3].dst`.
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (file, key, message) = (elide(&self.file), elide(&self.key), elide(&self.message));
        if key.is_empty() {
            write!(f, "{file}: {message}")
        } else {
            write!(f, "{file}: {key}: {message}")
        }
    }
}

/// An error echoes what it was given; given megabytes (a pasted file in a string) it would
/// print megabytes. Text longer than this many characters keeps its start and end.
pub const MAX_ECHO_CHARS: usize = 480;

/// `text` if it is at most [`MAX_ECHO_CHARS`] long, else its first 360 and last 100
/// characters around a note of how many were left out.
pub fn elide(text: &str) -> std::borrow::Cow<'_, str> {
    let chars = text.chars().count();
    if chars <= MAX_ECHO_CHARS {
        return text.into();
    }
    let (head, tail) = (360, 100);
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(chars - tail).collect();
    format!("{start} ... [{} characters left out] ... {end}", chars - head - tail).into()
}

impl std::error::Error for ConfigError {}

impl Scenario {
    /// Parses a scenario from TOML text; `origin` names it in errors (usually the file path).
    /// Relative paths in it (an external algorithm's module folder) are taken against the
    /// working directory.
    pub fn from_toml(text: &str, origin: &str) -> Result<Scenario, ConfigError> {
        Scenario::from_toml_in(text, origin, None)
    }

    /// As [`Scenario::from_toml`], with relative paths taken against `folder` (the scenario
    /// file's, or the base file's for a scenario made from one).
    pub fn from_toml_in(text: &str, origin: &str, folder: Option<&std::path::Path>) -> Result<Scenario, ConfigError> {
        crate::parse_folder::with_folder(folder, || Scenario::parse(text, origin))
    }

    fn parse(text: &str, origin: &str) -> Result<Scenario, ConfigError> {
        let error =
            |key: String, message: &str| ConfigError { file: origin.to_string(), key, message: one_line(message) };
        let syntax = |e: toml::de::Error| error(String::new(), &e.to_string());
        let fields = |e: serde_path_to_error::Error<toml::de::Error>| {
            let outer = e.path().to_string();
            let (key, message) =
                tagged_enum::join_path(if outer == "." { "" } else { &outer }, &e.into_inner().to_string());
            error(key, &message)
        };
        // A scenario that names a preset is read as a table, the preset put under it.
        let with_preset = match text.contains("preset") {
            true => Some(text.parse::<toml::Table>().map_err(syntax)?).filter(|t| t.contains_key("preset")),
            false => None,
        };
        let mut scenario: Scenario = match with_preset {
            Some(mut table) => {
                preset::apply(&mut table).map_err(|(key, message)| error(key, &message))?;
                serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(fields)?
            }
            None => {
                serde_path_to_error::deserialize(toml::Deserializer::parse(text).map_err(syntax)?).map_err(fields)?
            }
        };
        // Defaults that depend on other keys, written out so run.json shows them.
        let stall = SimulationConfig::default_stall_timeout(&scenario.nic);
        scenario.simulation.stall_timeout.get_or_insert(stall);
        scenario.nic.resolve_load_balancing();
        if scenario.switch.routing.uses(Routing::Flowlet) {
            scenario.switch.flowlet.get_or_insert_with(FlowletConfig::default);
        }
        if scenario.switch.routing.uses(Routing::Dlb) {
            scenario.switch.dlb.get_or_insert_with(DlbConfig::default);
        }
        if scenario.switch.routing.uses(Routing::SprayThreshold) {
            scenario.switch.spray_threshold.get_or_insert_with(SprayThresholdConfig::default);
        }
        if scenario.switch.routing.uses(Routing::Conga) {
            scenario.switch.conga.get_or_insert_with(CongaConfig::default);
        }
        if scenario.switch.routing.uses(Routing::EcmpNs3) {
            scenario.switch.ecmp_ns3.get_or_insert_with(EcmpNs3Config::default);
        }
        credit::resolve(&mut scenario.switch, text).map_err(|e| ConfigError {
            file: origin.to_string(),
            key: e.0,
            message: e.1,
        })?;
        if scenario.events.iter().any(|e| e.action != LinkAction::Slow) {
            scenario.switch.failure_detection.get_or_insert(DEFAULT_FAILURE_DETECTION);
        }
        // (A job's groups depend on where its ranks are placed: `workload/jobs.rs` fills them.)
        if let Some(w) = &mut scenario.workload {
            w.fill_local_ranks(scenario.topology.per_server());
        }
        scenario.origin = origin.to_string();
        validate(&scenario).map_err(|e| scenario.error(e))?;
        Ok(scenario)
    }

    /// Reads and parses a scenario file.
    pub fn load(path: &std::path::Path) -> Result<Scenario, ConfigError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: origin.clone(),
            key: String::new(),
            message: format!("cannot read the scenario file: {e}"),
        })?;
        Scenario::from_toml_in(&text, &origin, Some(folder_of(path)))
    }

    /// An error in this scenario, at `key`.
    pub fn error(&self, (key, message): (String, String)) -> ConfigError {
        ConfigError { file: self.origin.clone(), key, message }
    }

    /// The scenario as TOML with every default written out.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# cannot render scenario: {e}"))
    }
}

/// The folder a file is in ("." for a bare file name).
pub fn folder_of(path: &std::path::Path) -> &std::path::Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    }
}

/// toml's messages quote the offending line over several lines; keep the first line and the
/// location so every error prints as one line.
fn one_line(msg: &str) -> String {
    let lines: Vec<&str> = msg.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    match lines.as_slice() {
        [] => String::from("invalid scenario"),
        [only] => only.to_string(),
        [first, rest @ ..] => {
            // toml puts "TOML parse error at line L, column C" first and the reason last.
            let reason = rest.iter().rev().find(|l| !l.starts_with('|') && !l.chars().all(|c| c == '^' || c == ' '));
            match reason {
                Some(r) if first.starts_with("TOML parse error") => format!("{first}: {r}"),
                _ => first.to_string(),
            }
        }
    }
}

#[cfg(test)]
mod elide_tests {
    use super::*;

    #[test]
    fn a_long_echo_keeps_its_ends_and_says_what_it_left_out() {
        assert_eq!(elide("short"), "short");
        let long = format!("invalid time '{}us'", "7".repeat(2_000_000));
        let e = ConfigError { file: "f.toml".into(), key: "nic.rto".into(), message: long };
        let shown = e.to_string();
        assert!(shown.chars().count() < 600, "{} characters", shown.len());
        assert!(shown.starts_with("f.toml: nic.rto: invalid time '777"));
        assert!(shown.ends_with("777us'"));
        assert!(shown.contains("[1999557 characters left out]"), "2 000 017 less 360 + 100");
    }
}
