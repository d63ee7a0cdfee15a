//! Running part of the way (`Simulation::run_until`, `Simulation::step`) and reading the state
//! changes nothing: a run paused at many moments, or taken one event at a time, writes the
//! same result files, byte for byte, as one never paused; and a run that ends while paused
//! says why, once and for all.

use crate::common;
use aiccsim::time::SimTime;
use aiccsim::{Results, Simulation, StopReason};
use std::fs;

/// A DCQCN incast over two switches with timelines: timers, marks, CNPs and samples all
/// fall between the pauses.
fn scenario(extra: &str) -> aiccsim::Scenario {
    common::scenario(&format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 3
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
ecn = {{ kmin = "20KB", kmax = "80KB" }}
[cc]
algorithm = "dcqcn"
[workload]
kind = "incast"
senders = "1..=5"
receiver = 0
size = "200KB"
[output]
sample_interval = "2us"
{extra}
"#
    ))
}

/// The result files of `r`, by name (`summary.json` without its wall-clock figures).
fn files(r: &Results) -> Vec<(String, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    r.write_dir(dir.path()).unwrap();
    let mut out = Vec::new();
    for file in ["flows.csv", "ports.csv", "queues.csv", "rates.csv"] {
        out.push((file.to_string(), fs::read(dir.path().join(file)).unwrap()));
    }
    out.push(("summary".into(), r.deterministic_summary().to_string().into_bytes()));
    out
}

fn assert_same(a: &Results, b: &Results, how: &str) {
    for ((name, x), (_, y)) in files(a).iter().zip(files(b)) {
        assert!(!x.is_empty(), "{name} is empty");
        assert!(*x == y, "{name} differs when the run is {how}");
    }
}

#[test]
fn a_run_paused_at_every_microsecond_writes_what_an_unpaused_one_writes() {
    let straight = aiccsim::run(&scenario("")).unwrap();
    let mut sim = Simulation::new(&scenario("")).unwrap();
    let mut t = SimTime::ZERO;
    while sim.run_until(t).is_none() {
        // Reading as a test would, everything there is.
        for p in 0..sim.port_count() as u32 {
            let _ = sim.port(p);
        }
        for f in 0..sim.flow_count() as u32 {
            let _ = sim.flow(f);
        }
        assert_eq!(sim.now(), t);
        t += SimTime::from_ns(700);
    }
    assert_eq!(sim.run_until(t), Some(StopReason::Completed), "an ended run stays ended");
    let paused = sim.run(&mut |_| {});
    common::assert_conserved(&paused);
    assert_same(&straight, &paused, "paused every 700 ns");
}

#[test]
fn a_run_taken_one_event_at_a_time_writes_what_an_unpaused_one_writes() {
    let straight = aiccsim::run(&scenario("")).unwrap();
    let mut sim = Simulation::new(&scenario("")).unwrap();
    let mut events = 0u64;
    while sim.step().is_none() {
        events += 1;
    }
    let stepped = sim.run(&mut |_| {});
    assert_eq!(stepped.summary.events, events + 1, "the last step ended the run");
    assert_same(&straight, &stepped, "taken one event at a time");
}

#[test]
fn the_stop_time_ends_a_paused_run_where_it_ends_an_unpaused_one() {
    let stop = "[simulation]\nstop_time = \"15us\"";
    let straight = aiccsim::run(&scenario(stop)).unwrap();
    assert_eq!(straight.summary.stop_reason, StopReason::StopTime);
    let mut sim = Simulation::new(&scenario(stop)).unwrap();
    assert_eq!(sim.run_until(SimTime::from_us(10)), None);
    let flow = sim.flow(0);
    assert!(flow.started && flow.acked_bytes > 0 && !flow.delivered, "{flow:?}");
    assert_eq!(sim.run_until(SimTime::from_us(20)), Some(StopReason::StopTime));
    assert_eq!(sim.now(), SimTime::from_us(15));
    let paused = sim.run(&mut |_| {});
    assert_same(&straight, &paused, "paused before its stop time");
}
