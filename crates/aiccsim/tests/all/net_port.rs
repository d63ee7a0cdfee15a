//! A flow alone on an idle network finishes in size / line rate (headers included) plus the
//! path latency.

use crate::common;

use crate::common::incast_on;
use crate::common::{algo, completion_us, lone_analytic_us};
use aiccsim::time::SimTime;

fn lone(topology: &str, src: u32, dst: u32, size: u64, cc: &str) -> (SimTime, SimTime) {
    let r = common::run(&format!(
        r#"
{topology}
[cc]
algorithm = "{cc}"
[workload]
kind = "flows"
flows = [ {{ src = {src}, dst = {dst}, size = "{size}B", start = "3us" }} ]
"#
    ));
    let f = &r.flows[0];
    (f.fct().unwrap(), f.ideal_fct)
}

/// size/rate with 48 B of headers per 1000 B payload, plus per-hop delay and one extra
/// serialisation of a packet per store-and-forward hop.
fn analytic(size: u64, gbps: f64, hops: u32, delay_us: f64) -> f64 {
    let packets = size.div_ceil(1000);
    let wire = size + 48 * packets;
    let ser = |b: u64| b as f64 * 8.0 / (gbps * 1e9);
    ser(wire) + hops as f64 * delay_us * 1e-6 + (hops - 1) as f64 * ser(1048)
}

fn assert_within(fct: SimTime, expect_s: f64, tol: f64) {
    let got = fct.as_secs_f64();
    assert!((got - expect_s).abs() <= tol * expect_s, "FCT {got:e} s vs analytic {expect_s:e} s");
}

#[test]
fn star_lone_flow_matches_analytic_fct() {
    let topo = r#"[topology]
kind = "star"
hosts = 4
link = { bandwidth = "100Gbps", delay = "1us" }"#;
    for size in [1_000u64, 64_000, 1_000_000, 10_000_000] {
        for cc in ["none", "dcqcn"] {
            let (fct, ideal) = lone(topo, 1, 2, size, cc);
            assert_within(fct, analytic(size, 100.0, 2, 1.0), 0.01);
            assert_eq!(fct, ideal, "an idle network is the ideal network ({cc}, {size} B)");
        }
    }
}

#[test]
fn fat_tree_lone_flow_crosses_six_links() {
    let topo = r#"[topology]
kind = "fat_tree"
k = 4
link = { bandwidth = "100Gbps", delay = "1us" }"#;
    let (fct, ideal) = lone(topo, 0, 15, 5_000_000, "dcqcn");
    assert_within(fct, analytic(5_000_000, 100.0, 6, 1.0), 0.01);
    assert_eq!(fct, ideal);
}

#[test]
fn slow_bottleneck_sets_the_pace() {
    // 100 Gbps hosts over a 25 Gbps core link: the core link is the bottleneck.
    let topo = r#"[topology]
kind = "dumbbell"
left = 1
right = 1
link = { bandwidth = "100Gbps", delay = "1us" }
bottleneck = { bandwidth = "25Gbps", delay = "2us" }"#;
    let (fct, ideal) = lone(topo, 0, 1, 2_000_000, "none");
    assert_eq!(fct, ideal);
    let wire = 2_000_000.0 + 48.0 * 2000.0;
    let expect = wire * 8.0 / 25e9 + 4e-6 + 1048.0 * 8.0 / 100e9 * 2.0;
    assert_within(fct, expect, 0.01);
}

#[test]
fn stop_time_leaves_a_partial_result() {
    let r = aiccsim::run(&common::scenario(
        r#"
[simulation]
stop_time = "100us"
[topology]
kind = "star"
hosts = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[workload]
kind = "flows"
flows = [ { src = 0, dst = 1, size = "10MB" }, { src = 1, dst = 0, size = "1KB" } ]
"#,
    ))
    .unwrap();
    assert!(r.summary.partial);
    assert_eq!(r.summary.flows_finished, 1, "the 1 KB flow finishes, the 10 MB one cannot in 100 us");
    assert!(r.flows[0].finish.is_none());
    assert_eq!(r.summary.simulated_time_ns, SimTime::from_ns(100_000));
}

#[test]
fn doubling_the_bandwidth_halves_serialisation() {
    let lone = |bw: &str| common::run(&incast_on(1, "1MB", (bw, "1us"), &algo("none"), ""));
    let four = |bw: &str| common::run(&incast_on(4, "1MB", (bw, "1us"), &algo("none"), ""));
    let mut seen = Vec::new();
    for gbps in [25.0, 50.0, 100.0] {
        let bw = format!("{gbps}Gbps");
        let (l, f) = (completion_us(&lone(&bw)), completion_us(&four(&bw)));
        seen.push((gbps, l, f));
        let msg = format!("(Gbps, lone FCT us, 4-to-1 completion us): {seen:?}");
        let expect = lone_analytic_us(1_000_000, 1000, gbps, 2, 1.0);
        assert!((l / expect - 1.0).abs() < 0.005, "lone flow vs analytic {expect:.2} us: {msg}");
        // The receiver link carries 4 MB back to back.
        let expect = 4.0 * 1.048e6 * 8.0 / (gbps * 1e3);
        assert!(f > expect && f < 1.01 * expect + 3.0, "incast vs 4 MB at line rate {expect:.1} us: {msg}");
    }
    // Everything but the 2 us of propagation scales as 1 / bandwidth.
    for w in seen.windows(2) {
        let ((_, l0, f0), (_, l1, f1)) = (w[0], w[1]);
        let ratio = (l0 - 2.0) / (l1 - 2.0);
        assert!((ratio - 2.0).abs() < 0.01, "lone serialisation ratio {ratio:.4}: {seen:?}");
        assert!((f0 / f1 - 2.0).abs() < 0.02, "incast completion ratio {:.4}: {seen:?}", f0 / f1);
    }
}

#[test]
fn longer_links_add_exactly_their_propagation_to_a_lone_flow() {
    let fct = |delay: &str| {
        let r = common::run(&incast_on(1, "1MB", ("100Gbps", delay), &algo("dcqcn"), ""));
        r.flows[0].fct().unwrap()
    };
    let (short, long) = (fct("1us"), fct("10us"));
    // Two links, 9 us more each way, to the picosecond.
    assert_eq!((long - short).0, 18_000_000, "FCT {short:?} at 1 us links, {long:?} at 10 us");
}
