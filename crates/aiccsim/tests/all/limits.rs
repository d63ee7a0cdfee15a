//! The limits that protect a user hold where the work is: the wall-clock budget and the
//! interrupt are checked right after an expensive event, the flow limit is checked before the
//! fabric is built, and results cut short by a deadline say so.

use crate::common::scenario;
use aiccsim::watch::{BuildError, Phase, Watch};
use aiccsim::{RunControl, Simulation, StopReason};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// 4 flows of 1 MB from leaf 0 to leaf 1 over two spines, and a link slowed at 20 us: a link
/// event, which on a large fabric recomputes routes (seconds each).
const SLOWED: &str = r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [
  { src = 0, dst = 4, size = "1MB" }, { src = 1, dst = 5, size = "1MB" },
  { src = 2, dst = 6, size = "1MB" }, { src = 3, dst = 7, size = "1MB" },
]
[[events]]
at = "20us"
link = ["s0", "s2"]
action = "slow"
bandwidth = "50Gbps"
"#;

#[test]
fn a_stop_asked_for_is_checked_right_after_a_link_event() {
    // The whole run is a few tens of thousands of events: with a check every 2^16 events only,
    // an interrupt set just before the link event would let the run complete.
    let mut sim = Simulation::new(&scenario(SLOWED)).unwrap();
    assert_eq!(sim.run_until(aiccsim::time::SimTime::from_us(20) - aiccsim::time::SimTime(1)), None);
    let flag = Arc::new(AtomicBool::new(false));
    sim.set_control(RunControl { interrupt: Some(flag.clone()), ..RunControl::default() });
    flag.store(true, Ordering::Relaxed);
    let r = sim.run(&mut |_| {});
    assert_eq!(r.summary.stop_reason, StopReason::Interrupted);
    assert_eq!(r.summary.simulated_time_ns, aiccsim::time::SimTime::from_us(20));
}

/// A fabric whose routes take tens of seconds to compute (4096 top-of-rack switches, each
/// searched from over half a million links), under `workload`.
fn slow_to_build(workload: &str) -> String {
    format!(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 4096\nspines = 128\nhosts_per_leaf = 1\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[switch]\npfc = {{ enabled = false }}\n[workload]\n{workload}\n"
    )
}

#[test]
fn the_flow_limit_is_checked_before_the_fabric_is_built() {
    // 4096 x 4095 x 1000 flows: thousands of times the limit, known from the settings alone.
    let s = scenario(&slow_to_build("kind = \"all_to_all\"\nsize = \"1MB\"\nflows_per_pair = 1000"));
    let mut phases = Vec::new();
    let mut observe = |phase, _, _| phases.push(phase);
    let mut watch = Watch::new(RunControl::default(), &mut observe);
    let err = match aiccsim::Fabric::build_watched(&s, &mut watch) {
        Err(BuildError::Invalid(e)) => e,
        Err(BuildError::Stopped(stop)) => panic!("stopped: {stop:?}"),
        Ok(_) => panic!("accepted"),
    };
    drop(watch);
    assert_eq!(err.key, "workload.flows_per_pair", "{err}");
    assert!(err.message.contains("more than the 4194304"), "{err}");
    assert_eq!(phases, [], "nothing was built before the error");
}

#[test]
fn checking_a_scenario_counts_its_flows_without_making_them() {
    // 2048 x 2047 flows, just under the limit: laying them out takes seconds and gigabytes.
    let s = scenario(
        "[topology]\nkind = \"star\"\nhosts = 2048\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }\n[switch]\nbuffer = \"256MB\"\npfc = { enabled = false }\n[workload]\nkind = \"all_to_all\"\nsize = \"1KB\"\n",
    );
    let mut phases = Vec::new();
    let mut observe = |phase, _, _| phases.push(phase);
    let mut watch = Watch::new(RunControl::default(), &mut observe);
    let flows = aiccsim::Fabric::check_watched(&s, &mut watch).unwrap_or_else(|e| panic!("{e:?}"));
    drop(watch);
    assert_eq!(flows, 2048 * 2047);
    assert!(!phases.contains(&Phase::Workload) && !phases.contains(&Phase::Setup), "{phases:?}");
}

#[test]
fn a_run_into_a_folder_removes_what_a_killed_run_was_writing() {
    let dir = tempfile::tempdir().unwrap();
    let (tmp, other) = (dir.path().join(".trace.csv.tmp"), dir.path().join("notes.txt"));
    std::fs::write(&tmp, "time_ns,event\n1.000,").unwrap();
    std::fs::write(&other, "mine").unwrap();
    aiccsim::results::clear_results(dir.path()).unwrap();
    assert!(!tmp.exists(), "the killed run's half-written trace is gone");
    assert!(other.exists(), "a file no run writes is kept");
}

#[test]
// The clock only sets a deadline already past.
#[allow(clippy::disallowed_methods)]
fn results_written_past_a_deadline_keep_the_flows_and_cut_the_timelines() {
    let text = format!("{SLOWED}\n[output]\nsample_interval = \"1us\"\n");
    let r = aiccsim::run(&scenario(&text)).unwrap();
    assert!(!r.rates.is_empty() && !r.queues.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let cut = r.write_dir_until(dir.path(), Some(std::time::Instant::now())).unwrap();
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert!(cut.contains(&"rates.csv".to_string()) && cut.contains(&"queues.csv".to_string()), "{cut:?}");
    assert!(!cut.contains(&"flows.csv".to_string()));
    // The flows are whole; a cut timeline keeps its header.
    assert_eq!(read("flows.csv").lines().count(), 1 + r.flows.len());
    assert_eq!(read("rates.csv").lines().count(), 1);
    let summary: serde_json::Value = serde_json::from_str(&read("summary.json")).unwrap();
    assert_eq!(summary["partial"], true);
    assert_eq!(summary["results_cut"], serde_json::json!(cut));
    // Without a deadline nothing is cut, and the summary is the plain one.
    let whole = tempfile::tempdir().unwrap();
    assert_eq!(r.write_dir_until(whole.path(), None).unwrap(), Vec::<String>::new());
    assert_eq!(std::fs::read_to_string(whole.path().join("summary.json")).unwrap(), r.summary_json());
    let rates = std::fs::read_to_string(whole.path().join("rates.csv")).unwrap();
    assert_eq!(rates.lines().count(), 1 + r.rates.len());
}
