//! aiccsim: a packet-level simulator of RoCEv2 fabrics and their congestion control.
//!
//! Layers, top to bottom (data flows one way down this list):
//! - [`config`]: the scenario schema; parsing and validation with errors that name the key.
//! - [`topology`]: nodes, ports, links and shortest-path ECMP routes, built once.
//! - [`workload`]: the flows to run.
//! - [`engine`]: the event loop over [`net`] (ports, links, switches) and [`nic`] (queue pairs,
//!   go-back-N), with [`cc`] algorithms behind one trait.
//! - [`metrics`]: per-flow records, counters and timelines; [`results`] writes them out.
//!
//! Time is integer picoseconds ([`time::SimTime`]); runs are deterministic for a given scenario
//! and seed.

// First: its `tagged_enum!` macro is used by `cc` and `config`.
#[macro_use]
mod tagged_enum;
pub mod cc;
pub mod config;
pub mod engine;
pub mod estimate;
pub mod metrics;
pub mod results;
pub mod rng;
pub mod tags;
pub mod time;
pub mod topology;
pub mod wire;
pub mod workload;

pub use config::{ConfigError, Scenario};
pub use engine::{Fabric, Progress, RunControl, Simulation};
pub use metrics::Results;
pub use metrics::{StallReport, StopReason};

/// Parses, builds and runs a scenario with no progress reporting.
pub fn run(scenario: &Scenario) -> Result<Results, ConfigError> {
    Ok(Simulation::new(scenario)?.run(&mut |_| {}))
}
