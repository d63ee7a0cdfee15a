//! Runs that cannot finish end with a reason and a diagnosis instead of hanging: a PFC deadlock,
//! an interrupt, a wall-clock budget.

mod common;

use aiccsim::{RunControl, Scenario, Simulation, StopReason};
use common::scenario;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
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
    let r = run_with(&long_incast(), RunControl { interrupt: Some(flag), wall_limit: None });
    let s = &r.summary;
    assert_eq!(s.stop_reason, StopReason::Interrupted);
    assert!(s.partial && s.stall.is_none());
    // Stopped at the first check, 2^16 events in.
    assert_eq!(s.events, 1 << 16);
    assert_eq!(s.flows_finished, 0);
    assert!(r.flows.iter().all(|f| f.finish.is_none()));
    let b = &s.data_bytes;
    assert!(b.sent > 0);
    assert_eq!(b.sent, b.received + b.dropped + b.in_flight);
}

#[test]
fn a_wall_clock_budget_ends_the_run() {
    let r = run_with(&long_incast(), RunControl { interrupt: None, wall_limit: Some(Duration::from_millis(50)) });
    let s = &r.summary;
    assert_eq!(s.stop_reason, StopReason::WallLimit);
    assert!(s.partial);
    assert!(s.performance.wall_seconds < 5.0, "took {} s", s.performance.wall_seconds);
}
