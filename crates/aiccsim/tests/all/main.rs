//! The core crate's integration tests, one binary: a binary per file cost a link step each
//! (30 of them), which dominated building the tests. Each module tests one mechanism or one
//! part of the run and is named after it, by the chapter it belongs to:
//!
//! - `net_*`: the fabric (`src/engine/net/`): ports and links, buffers, PFC, ECN, routing, link
//!   events; and `trimming`, packet trimming on a lossy fabric, from switch to receiver and back;
//! - `nic_*`: the NIC (`src/engine/nic/`): packets and ACKs, pacing, connections, loss recovery
//!   (go-back-N, selective repeat, the timeout), RTT probes;
//! - `cc_*`: the algorithms on the network, their registry and snapshots;
//! - `workload_*`, `topology_*`: what runs, and where;
//! - `metrics_*`: figures derived from a run's results;
//! - the rest: the run as a whole (stopping, inspecting part-way, determinism, extremes,
//!   warnings, tables, traces, warm-up, the layering of the source).
//!
//! Run one module with `cargo test -p aiccsim --test all net_pfc`.

mod common;

mod cc_barre;
mod cc_external;
mod cc_mcc;
mod cc_nic_events;
mod cc_nscc;
mod cc_nscc_uec;
mod cc_pc4;
mod cc_pc4_connections;
mod cc_pc4_many_flows;
mod cc_registry;
mod cc_snapshots;
mod cc_state;
mod cc_suite;
mod determinism;
mod extremes;
mod fast_forward;
mod fuzz_dictionary;
mod incast;
mod iterations_split;
mod layers;
mod limits;
mod metrics_derived;
mod net_adaptive_routing;
mod net_buffer;
mod net_control_priority;
mod net_credit;
mod net_ecmp_ns3;
mod net_ecn;
mod net_link_events;
mod net_pfc;
mod net_port;
mod net_routing;
mod nic_connection;
mod nic_go_back_n;
mod nic_host;
mod nic_probe;
mod nic_recovery;
mod nic_sack_coalesced;
mod nic_selective;
mod nvlink_fluid;
mod preset;
mod reps;
mod run_until;
mod stops;
mod tables;
mod topology_gpu_servers;
mod trace;
mod trimming;
mod warmup;
mod warnings;
mod workload_chakra;
mod workload_collectives;
mod workload_flows;
mod workload_jobs;
mod workload_parallel_training;
mod workload_registry;
mod workload_training;
