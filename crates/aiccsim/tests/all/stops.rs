//! Runs that cannot finish end with a reason and a diagnosis instead of hanging: a PFC deadlock,
//! an interrupt, a wall-clock budget; and builds stopped from outside before their run starts.

use crate::common;

use crate::common::scenario;
use aiccsim::watch::{BuildError, Halt, Phase, Stop, Watch};
use aiccsim::{Fabric, RunControl, Scenario, Simulation, StopReason};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn deadlock() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/pfc-deadlock.toml");
    std::fs::read_to_string(path).unwrap()
}

fn run_with(s: &Scenario, control: RunControl) -> aiccsim::Results {
    let mut sim = Simulation::new(s).unwrap();
    sim.set_control(control);
    sim.run(&mut |_| {})
}

#[test]
fn a_cyclic_pfc_dependency_is_diagnosed_as_a_deadlock() {
    let r = aiccsim::run(&scenario(&deadlock())).unwrap();
    let s = &r.summary;
    assert_eq!(s.stop_reason, StopReason::Stalled);
    assert!(s.partial);
    assert_eq!(s.flows_finished, 0);
    let stall = s.stall.as_ref().expect("a stalled run carries its diagnosis");
    assert_eq!(stall.unfinished_flows, 5);
    // The five clockwise ring ports, each paused by the next switch, wait on each other.
    let mut cycle = stall.pause_cycle.clone();
    cycle.sort();
    assert_eq!(cycle, ["s0:1", "s1:2", "s2:2", "s3:2", "s4:2"], "{}", stall.describe());
    assert_eq!(stall.paused_ports.len(), 5);
    assert!(stall.paused_ports.iter().all(|p| p.queued_bytes > 0 && p.priorities == [3]));
    assert!(stall.describe().contains("PFC deadlock"), "{}", stall.describe());
    // Bytes are still accounted for: sent = received + dropped + stuck in the fabric.
    let b = &s.data_bytes;
    assert_eq!(b.sent, b.received + b.dropped + b.in_flight);
    assert!(b.in_flight > 0);
}

#[test]
fn a_deadlock_with_timelines_on_ends_after_the_stall_timeout() {
    // Sampling keeps events coming forever, so only the stall timeout can end this run.
    let text = deadlock().replace("[cc]", "[output]\nsample_interval = \"10us\"\n\n[cc]");
    let r = aiccsim::run(&scenario(&text)).unwrap();
    let s = &r.summary;
    assert_eq!(s.stop_reason, StopReason::Stalled);
    let stall = s.stall.as_ref().unwrap();
    let ended = s.simulated_time_ns;
    assert!(
        ((ended - stall.last_progress_ns).as_ns_f64() - 100e6).abs() < 1.0,
        "ended at {ended:?}, progress stopped at {:?}, timeout 100 ms",
        stall.last_progress_ns
    );
    assert_eq!(stall.pause_cycle.len(), 5);
}

#[test]
fn the_same_ring_without_the_cycle_completes() {
    // Routes that never go two hops around the ring carry no cyclic dependency: no stall.
    let text = deadlock()
        .replace("{ src = 0, dst = 2", "{ src = 0, dst = 1")
        .replace("{ src = 1, dst = 3", "{ src = 1, dst = 2")
        .replace("{ src = 2, dst = 4", "{ src = 2, dst = 3")
        .replace("{ src = 3, dst = 0", "{ src = 3, dst = 4")
        .replace("{ src = 4, dst = 1", "{ src = 4, dst = 0");
    let r = common::run(&text);
    assert_eq!(r.summary.stop_reason, StopReason::Completed);
    assert!(r.summary.stall.is_none());
}

#[test]
fn idle_time_before_a_late_flow_is_no_stall() {
    let text = r#"
[simulation]
stall_timeout = "100ms"
[nic]
rto = "1ms"
[topology]
kind = "star"
hosts = 3
link = { bandwidth = "100Gbps", delay = "1us" }
[workload]
kind = "flows"
flows = [
  { src = 1, dst = 0, size = "100KB" },
  { src = 2, dst = 0, size = "100KB", start = "2s" },
]
"#;
    let r = common::run(text);
    assert_eq!(r.summary.stop_reason, StopReason::Completed);
    assert!(r.flows[1].finish.unwrap().as_secs_f64() > 2.0);
}

#[test]
fn a_stall_timeout_within_the_retransmission_backoff_is_refused() {
    let text = deadlock().replace("stall_timeout = \"100ms\"", "stall_timeout = \"50ms\"");
    let err = Scenario::from_toml(&text, "s.toml").unwrap_err();
    assert_eq!(err.key, "simulation.stall_timeout");
    assert!(err.message.contains("nic.rto x 64"), "{err}");
}

fn long_incast() -> Scenario {
    // Several seconds of work: far longer than a check interval.
    scenario(&common::incast(16, "100MB", "dcqcn", ""))
}

#[test]
fn an_interrupt_ends_the_run_with_consistent_partial_results() {
    let flag = Arc::new(AtomicBool::new(true));
    let r = run_with(&long_incast(), RunControl { interrupt: Some(flag), ..RunControl::default() });
    let s = &r.summary;
    assert_eq!(s.stop_reason, StopReason::Interrupted);
    assert!(s.partial && s.stall.is_none());
    // Stopped at the first check, 2^10 events in (`watch::Cadence`).
    assert_eq!(s.events, 1 << 10);
    assert_eq!(s.flows_finished, 0);
    assert!(r.flows.iter().all(|f| f.finish.is_none()));
    let b = &s.data_bytes;
    assert!(b.sent > 0);
    assert_eq!(b.sent, b.received + b.dropped + b.in_flight);
}

#[test]
fn a_wall_clock_budget_ends_the_run() {
    let r =
        run_with(&long_incast(), RunControl { wall_limit: Some(Duration::from_millis(50)), ..RunControl::default() });
    let s = &r.summary;
    assert_eq!(s.stop_reason, StopReason::WallLimit);
    assert!(s.partial);
    assert!(s.performance.wall_seconds < 5.0, "took {} s", s.performance.wall_seconds);
}

/// A k = 4 fat tree with an all-to-all: every phase of the build has work to do.
fn fat_tree_all_to_all() -> Scenario {
    scenario(
        r#"
[topology]
kind = "fat_tree"
k = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[workload]
kind = "all_to_all"
size = "20KB"
"#,
    )
}

/// Builds `s` watched by `control`, telling `observe` each phase it reports, then the run.
fn build_watched(s: &Scenario, control: RunControl, observe: &mut dyn FnMut(Phase)) -> Result<Simulation, Stop> {
    let mut seen = |phase, _, _| observe(phase);
    let mut watch = Watch::new(control, &mut seen);
    let fabric = match Fabric::build_watched(s, &mut watch) {
        Ok(fabric) => fabric,
        Err(BuildError::Stopped(stop)) => return Err(stop),
        Err(BuildError::Invalid(e)) => panic!("{e}"),
    };
    Simulation::with_fabric_watched(s, fabric, &mut watch)
}

#[test]
fn a_build_reports_its_phases_in_order_and_stops_in_the_one_it_is_asked_to() {
    let s = fat_tree_all_to_all();
    let mut phases = Vec::new();
    let built = build_watched(&s, RunControl::default(), &mut |p| phases.push(p));
    assert!(built.is_ok());
    phases.dedup();
    assert_eq!(phases, [Phase::Topology, Phase::Routing, Phase::Workload, Phase::Setup]);
    for target in phases {
        // Ctrl-C pressed as the phase reports itself: it goes no further.
        let flag = Arc::new(AtomicBool::new(false));
        let control = RunControl { interrupt: Some(flag.clone()), ..RunControl::default() };
        let stopped = build_watched(&s, control, &mut |p| {
            if p == target {
                flag.store(true, Ordering::Relaxed);
            }
        });
        assert_eq!(stopped.err(), Some(Stop { halt: Halt::Interrupted, phase: target }));
    }
}

#[test]
fn a_watched_build_runs_as_an_unwatched_one() {
    let s = fat_tree_all_to_all();
    let watched = build_watched(&s, RunControl::default(), &mut |_| {}).unwrap_or_else(|e| panic!("{e:?}"));
    let r = watched.run(&mut |_| {});
    let plain = aiccsim::run(&s).unwrap();
    assert_eq!(r.summary.stop_reason, StopReason::Completed);
    assert_eq!(format!("{:?}", r.flows), format!("{:?}", plain.flows));
}

/// The wall-clock budget counts from `since` when given (a command's start), so the time spent
/// before the run counts against it.
#[test]
// The clock only places the budget's start in the past.
#[allow(clippy::disallowed_methods)]
fn a_budget_counts_from_its_start() {
    let long_ago = std::time::Instant::now() - Duration::from_secs(10);
    let control =
        RunControl { wall_limit: Some(Duration::from_secs(5)), since: Some(long_ago), ..RunControl::default() };
    let s = long_incast();
    let stopped = build_watched(&s, control.clone(), &mut |_| {});
    assert_eq!(stopped.err(), Some(Stop { halt: Halt::WallLimit, phase: Phase::Topology }));
    let r = run_with(&s, control);
    assert_eq!(r.summary.stop_reason, StopReason::WallLimit);
    assert_eq!(r.summary.events, 1 << 10, "stopped at the first check");
}
