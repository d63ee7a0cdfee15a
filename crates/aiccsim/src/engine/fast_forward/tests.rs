//! Fast-forward's own promises, at the engine's level.

use crate::cc::CcConfig;
use crate::config::Scenario;
use crate::engine::Simulation;
use crate::metrics::Results;
use crate::time::SimTime;

/// A 4-to-1 incast of 3 MB each under `algorithm` (with its own section's defaults), and a lone
/// flow elsewhere: congestion, so that every algorithm's state and timers are in play.
fn incast(algorithm: &str, fast_forward: &str) -> Scenario {
    let toml = format!(
        r#"
[simulation]
fast_forward = {fast_forward}
[topology]
kind = "star"
hosts = 7
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[cc]
algorithm = "{algorithm}"
[workload]
kind = "flows"
flows = [
  {{ src = 1, dst = 0, size = "3MB" }}, {{ src = 2, dst = 0, size = "3MB" }},
  {{ src = 3, dst = 0, size = "3MB" }}, {{ src = 4, dst = 0, size = "3MB", start = "7us" }},
  {{ src = 5, dst = 6, size = "2MB" }},
]
"#
    );
    Scenario::from_toml(&toml, "test").unwrap()
}

fn counters(r: &Results) -> Vec<(&'static str, u64)> {
    let s = &r.summary;
    vec![
        ("packet_hops", s.packet_hops),
        ("acks", s.acks),
        ("cnps", s.cnps),
        ("ecn_marks", s.ecn_marks),
        ("pause_frames", s.pause_frames),
        ("timeouts", s.timeouts),
        ("data_packets", s.data_packets),
        ("rtt_mean", s.rtt_ns.mean.0),
        ("rtt_max", s.rtt_ns.max.0),
        ("queuing_mean", s.queuing_delay_ns.mean.0),
    ]
}

#[test]
fn a_run_frozen_and_thawed_goes_on_exactly_as_one_never_frozen_only_later() {
    let (at, by) = (SimTime::from_us(40), SimTime::from_ms(1));
    for cc in CcConfig::all_defaults() {
        let name = cc.name();
        let plain = Simulation::new(&incast(name, "false")).unwrap().run(&mut |_| {});
        let mut sim = Simulation::new(&incast(name, "true")).unwrap();
        sim.ff.as_mut().unwrap().disable_checks();
        assert_eq!(sim.run_until(at), None, "{name}");
        sim.freeze_everything_for(by);
        let frozen = sim.run(&mut |_| {});
        assert_eq!(counters(&frozen), counters(&plain), "{name}: the same run");
        for (a, b) in plain.flows.iter().zip(&frozen.flows) {
            let moved = b.finish.unwrap() - a.finish.unwrap();
            assert_eq!(moved, by, "{name}: flow {} finished {moved} later, not {by}", a.flow_id);
            assert_eq!(b.start, a.start);
        }
    }
}
