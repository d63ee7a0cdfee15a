//! Valid scenarios at the edges of the types: times and sizes near what 64 bits hold. Each used
//! to panic on an overflow; now a time past the end of the clock means "never" and the run
//! stops there, reported partial.

use crate::common;

use aiccsim::time::SimTime;

const STAR: &str = r#"
[topology]
kind = "star"
hosts = 2
link = { bandwidth = "100Gbps", delay = "1us" }
"#;

#[test]
fn a_flow_that_outlasts_the_clock_stops_at_its_end() {
    // 10^4 packets of 8 384 s each on a 1 bit/s link: 2.6 years, the clock holds 213 days.
    let r = aiccsim::run(&common::scenario(
        r#"
[topology]
kind = "star"
hosts = 2
link = { bandwidth = "1bps", delay = "1us" }
[nic]
rto = "1000000s"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [{ src = 0, dst = 1, size = "10MB" }]
"#,
    ))
    .unwrap();
    assert!(r.summary.partial);
    assert_eq!(r.flows[0].ideal_fct, SimTime::MAX, "the ideal saturates too");
}

#[test]
fn a_flow_starting_just_before_the_end_of_the_clock_is_cut_there() {
    // 9.5 us before the clock runs out; the megabyte takes 84 us.
    let r = aiccsim::run(&common::scenario(&format!(
        r#"{STAR}
[workload]
kind = "flows"
flows = [{{ src = 0, dst = 1, size = "1MB", start = "18446744.0737s" }}]
"#
    )))
    .unwrap();
    assert!(r.summary.partial);
    assert_eq!(r.summary.flows_finished, 0);
}

#[test]
fn a_timeout_past_the_end_of_the_clock_never_fires() {
    // The deadline is the start (80 ms) plus the RTO, more than 64 bits of picoseconds.
    let r = aiccsim::run(&common::scenario(&format!(
        r#"{STAR}
[simulation]
stop_time = "100ms"
[nic]
rto = "18446744s"
[workload]
kind = "flows"
flows = [{{ src = 0, dst = 1, size = "1MB", start = "80ms" }}]
"#
    )))
    .unwrap();
    assert_eq!(r.summary.flows_finished, 1);
}

/// Byte totals are 64-bit: flows that together fit are counted exactly, flows that do not are
/// refused (the total used to saturate silently at 2^64 - 1).
#[test]
fn exabyte_flows_are_totalled_exactly_or_refused() {
    let flows = |a: &str, b: &str| {
        format!(
            r#"{STAR}
[simulation]
stop_time = "10us"
[workload]
kind = "flows"
flows = [{{ src = 0, dst = 1, size = "{a}" }}, {{ src = 1, dst = 0, size = "{b}" }}]
"#
        )
    };
    let r = aiccsim::run(&common::scenario(&flows("10000000TB", "8446744073709551615B"))).unwrap();
    assert_eq!(r.summary.bytes, u64::MAX, "exactly 2^64 - 1");
    assert!(r.summary.partial);
    let Err(e) = aiccsim::run(&common::scenario(&flows("10000000TB", "10000000TB"))) else {
        panic!("20 EB of flows must be refused")
    };
    assert_eq!(e.key, "workload");
}
