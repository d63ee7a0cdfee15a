//! aiccsim: a packet-level simulator of RoCEv2 fabrics and their congestion control.
//!
//! Layers, bottom to top. A module uses the layers below it and never one above
//! (`tests/all/layers.rs` reads every `use` line and `crate::` path and fails on one that points up):
//!
//! 0. Ground vocabulary: [`time`] (SimTime, Bandwidth, ByteSize and their units), [`rng`] (named
//!    random streams and the crate's hashes), [`tags`] (collective tags), [`watch`] (stopping a
//!    run from outside, and watching its build), the folder of the scenario being parsed
//!    (`parse_folder`), and the `tagged_enum!` macro that reads
//!    `kind`/`algorithm` sections.
//! 1. [`wire`]: what travels in packets (the packet, INT records, the PINT byte).
//! 2. [`cc`]: the congestion-control traits, the registry and one file per algorithm. An
//!    algorithm sees only its flow's facts and its feedback, never the engine.
//! 3. [`workload`]: the workload kinds (the registry, one file per kind: its settings, checks,
//!    size and flows), jobs, and the flows and compute steps to run, with what waits for what.
//! 4. [`config`]: the scenario schema, one file per section (the `[cc]` and `[workload]` settings
//!    come from `cc` and `workload`); parsing, and the checks that need the scenario alone.
//! 5. [`topology`]: nodes, ports, links and shortest-path ECMP routes.
//! 6. [`metrics`]: the record types and the recorder: a sink the engine pushes rows into.
//! 7. [`engine`]: the event loop; `build.rs` (the one assembly: the fabric built once, and the
//!    checks that need it), `net/` (ports, switches, PFC, ECN, routing, telemetry), `nic/`
//!    (host scheduler, queue pairs, loss recovery, pacing, clocks), `finish.rs` (rows into
//!    metrics).
//! 8. [`results`] (the result files) and [`estimate`] (memory and output size from the
//!    scenario alone).
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
mod parse_folder;
pub mod results;
pub mod rng;
pub mod tags;
pub mod time;
pub mod topology;
pub mod watch;
pub mod wire;
pub mod workload;

pub use config::{ConfigError, Scenario};
pub use engine::{Fabric, Progress, RunControl, Simulation};
pub use metrics::{Results, StallReport, StopReason};

/// Builds and runs a scenario with no progress reporting: its fabric is built and checked
/// ([`Fabric::build`]), then the run goes to its end.
pub fn run(scenario: &Scenario) -> Result<Results, ConfigError> {
    Ok(Simulation::new(scenario)?.run(&mut |_| {}))
}
