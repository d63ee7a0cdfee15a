//! ECN marking (`engine/net/ecn.rs`) on the network: lower thresholds and a steeper ramp mark
//! more and hold a smaller DCQCN queue; a run stopped part-way shows the bottleneck queue past
//! Kmin while DCQCN has not yet caught up.

use crate::common;
use crate::common::incast_on as incast;
use crate::common::{algo, mean_queuing_us, FAST};
use aiccsim::time::SimTime;
use aiccsim::{Results, Simulation};

#[test]
fn lower_ecn_thresholds_mark_more_and_hold_a_smaller_dcqcn_queue() {
    let run =
        |ecn: &str| common::run(&incast(8, "1MB", FAST, &algo("dcqcn"), &format!("[switch]\necn = {{ {ecn} }}\n")));
    let default = run(r#"kmin = "400KB", kmax = "1600KB""#);
    let mid = run(r#"kmin = "100KB", kmax = "400KB""#);
    let low = run(r#"kmin = "20KB", kmax = "100KB""#);
    let f = |r: &Results| (mean_queuing_us(r), r.summary.max_switch_queue_bytes, r.summary.ecn_marks, r.summary.cnps);
    let msg = format!(
        "(mean queuing us, max queue B, marks, CNPs): 400/1600 KB {:?}, 100/400 KB {:?}, 20/100 KB {:?}",
        f(&default),
        f(&mid),
        f(&low)
    );
    // The queue DCQCN settles around follows the marking ramp down.
    assert!(mean_queuing_us(&mid) < 0.8 * mean_queuing_us(&default), "{msg}");
    assert!(mean_queuing_us(&low) < 0.8 * mean_queuing_us(&mid), "{msg}");
    assert!(low.summary.max_switch_queue_bytes < mid.summary.max_switch_queue_bytes, "{msg}");
    assert!(mid.summary.max_switch_queue_bytes < default.summary.max_switch_queue_bytes, "{msg}");
    // Marking starts at a queue the incast reaches sooner and stays above longer.
    assert!(low.summary.ecn_marks > 3 * default.summary.ecn_marks / 2, "{msg}");
    assert!(low.summary.cnps > 3 * default.summary.cnps / 2, "{msg}");
}

#[test]
fn a_steeper_marking_ramp_holds_a_smaller_dcqcn_queue() {
    let run = |pmax: f64| {
        let ecn = format!("[switch]\necn = {{ kmin = \"100KB\", kmax = \"400KB\", pmax = {pmax} }}\n");
        common::run(&incast(8, "1MB", FAST, &algo("dcqcn"), &ecn))
    };
    let (gentle, steep) = (run(0.05), run(1.0));
    let msg = format!(
        "pmax 0.05: mean queuing {:.1} us, max queue {} B; pmax 1: {:.1} us, {} B",
        mean_queuing_us(&gentle),
        gentle.summary.max_switch_queue_bytes,
        mean_queuing_us(&steep),
        steep.summary.max_switch_queue_bytes
    );
    assert!(mean_queuing_us(&steep) < 0.8 * mean_queuing_us(&gentle), "{msg}");
    assert!(steep.summary.max_switch_queue_bytes < gentle.summary.max_switch_queue_bytes, "{msg}");
}

#[test]
fn stopped_part_way_an_incast_has_its_bottleneck_queue_past_kmin_before_dcqcn_slows_the_senders() {
    // 8 senders at line rate into one port: its queue grows at 7 x 12.5 bytes a nanosecond from
    // the first arrival (1.08 us), past Kmin (100 KB) by 2.3 us and to 255 KB by 4 us, marking
    // with a probability up to a half by then; the first marks reach the senders as CNPs over a
    // round trip later, and only then does DCQCN cut their rates.
    let toml =
        incast(8, "1MB", FAST, &algo("dcqcn"), "[switch]\necn = { kmin = \"100KB\", kmax = \"400KB\", pmax = 1.0 }\n");
    let mut sim = Simulation::new(&common::scenario(&toml)).unwrap();
    let bottleneck = sim.port_id("s0", 0).expect("the switch's port to the receiver");
    let senders = 0..8u32;

    assert_eq!(sim.run_until(SimTime::from_us(1)), None);
    assert_eq!(sim.port(bottleneck).queued_bytes, 0, "nothing has crossed the first link yet");
    assert!(senders.clone().all(|f| sim.flow(f).rate_bps == 100e9), "no feedback yet");

    assert_eq!(sim.run_until(SimTime::from_us(4)), None);
    let port = sim.port(bottleneck);
    assert_eq!(port.kmin, 100_000, "thresholds given for 100 Gb/s, the port's speed");
    assert!(port.queued_bytes > port.kmin, "{port:?}");
    assert!(port.queued_bytes < port.kmax, "{port:?}");
    assert!(port.stats.ecn_marks > 0, "past Kmin some packets are marked: {port:?}");
    assert!(senders.clone().all(|f| sim.flow(f).rate_bps == 100e9), "the marks are still on their way");

    assert_eq!(sim.run_until(SimTime::from_us(30)), None);
    let rates: Vec<f64> = senders.clone().map(|f| sim.flow(f).rate_bps).collect();
    assert!(rates.iter().all(|&r| r < 100e9), "every sender has heard a CNP: {rates:?}");
    let queued = sim.port(bottleneck).queued_bytes;
    assert!(queued > sim.port(bottleneck).kmax, "the overshoot of a round trip's feedback: {queued} B");
}
