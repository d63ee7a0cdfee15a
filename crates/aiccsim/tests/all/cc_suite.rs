//! The established CC suite on the network: each algorithm's mechanism, measured.

use crate::common;

use crate::common::incast_on;
use crate::common::{algo, completion_us, mean_queuing_us, FAST};
use aiccsim::Results;

/// Mean egress queue (bytes) of switch 0 port 0 (towards host 0) over the samples between the
/// first `skip` fraction of the run and the first flow completion (the steady phase).
fn steady_queue(r: &Results, skip: f64) -> f64 {
    let iv = r.scenario.output.sample_interval.expect("timelines on").0;
    let first_finish = r.flows.iter().filter_map(|f| f.finish).min().unwrap().0;
    let from = (first_finish as f64 * skip) as u64;
    let recorded: std::collections::BTreeMap<u64, u64> =
        r.queues.iter().filter(|q| q.switch == 0 && q.port == 0).map(|q| (q.time.0, q.bytes)).collect();
    let samples: Vec<u64> =
        (from / iv..first_finish / iv).map(|i| recorded.get(&(i * iv)).copied().unwrap_or(0)).collect();
    samples.iter().sum::<u64>() as f64 / samples.len() as f64
}

/// Bits per second the switch port towards host 0 sent, over the whole run.
fn receiver_link_rate(r: &Results) -> f64 {
    let p = r.ports.iter().find(|p| p.node == "s0" && p.port == 0).expect("switch 0 port 0");
    p.stats.tx_bytes as f64 * 8.0 / r.summary.completion_time_ns.unwrap().as_secs_f64()
}

const TIMELINES: &str = r#"
[output]
sample_interval = "2us"
queue_switches = [0]
"#;

#[test]
fn dctcp_holds_the_queue_near_its_marking_threshold() {
    // K = 100 KB, well below the flows' combined line-rate windows (16 x 52 KB), so the window
    // does not cap the queue before marking does.
    let extra = format!(
        r#"
[switch]
ecn = {{ kmin = "100KB", kmax = "100KB", pmax = 1.0 }}
{TIMELINES}"#
    );
    let r = common::run(&common::incast(16, "4MB", "dctcp", &extra));
    let q = steady_queue(&r, 0.3);
    assert!((60e3..160e3).contains(&q), "DCTCP steady queue {q:.0} B, K = 100 KB");
    assert_eq!(r.summary.pause_frames, 0);
    assert!(r.summary.ecn_marks > 0);
    // The queue never drains: the link stays busy.
    let util = receiver_link_rate(&r) / 100e9;
    assert!(util > 0.97, "receiver link utilisation {util:.3}");
}

#[test]
fn hpcc_keeps_the_queue_near_zero_and_the_link_near_eta() {
    let r = common::run(&common::incast(8, "4MB", "hpcc", TIMELINES));
    let q = steady_queue(&r, 0.3);
    assert!(q < 10e3, "HPCC steady queue {q:.0} B should be near zero");
    assert_eq!(r.summary.pause_frames, 0);
    let util = receiver_link_rate(&r) / 100e9;
    assert!((0.90..0.985).contains(&util), "HPCC runs the bottleneck at {util:.3}, eta = 0.95");
    // Every data packet carried INT and every ACK brought it back.
    let s = &r.summary;
    assert_eq!(s.telemetry.kind, "int");
    assert_eq!(s.telemetry.feedback_acks, s.acks);
    // 48 + 42 header bytes per 1000-byte payload.
    assert!((s.telemetry.header_overhead - 90.0 / 1090.0).abs() < 0.002, "{}", s.telemetry.header_overhead);
}

#[test]
fn hpcc_pint_gives_feedback_on_the_configured_fraction_of_packets() {
    for (fraction, extra) in [(1.0 / 16.0, ""), (0.5, "feedback_fraction = 0.5\n")] {
        let toml = common::incast(8, "4MB", "hpcc_pint", TIMELINES)
            .replace("algorithm = \"hpcc_pint\"\n", &format!("algorithm = \"hpcc_pint\"\n{extra}"));
        let r = common::run(&toml);
        let s = &r.summary;
        let got = s.telemetry.feedback_acks as f64 / s.acks as f64;
        assert!((got - fraction).abs() < 0.1 * fraction, "feedback on {got:.4} of ACKs, configured {fraction}");
        // One byte per packet instead of HPCC's 42.
        assert!((s.telemetry.header_overhead - 49.0 / 1049.0).abs() < 0.002);
        let q = steady_queue(&r, 0.3);
        assert!(q < 20e3, "HPCC-PINT steady queue {q:.0} B");
        assert_eq!(s.pause_frames, 0);
    }
}

#[test]
fn swift_holds_the_delay_near_its_target() {
    let r = common::run(&common::incast(16, "4MB", "swift", TIMELINES));
    let q = steady_queue(&r, 0.3);
    // Swift's defaults: 20 us + 3.05 us per hop (one switch), plus flow scaling, which for the
    // ~20-packet windows of 16 flows sharing ~300 packets in flight is a few microseconds.
    let base_rtt_us = 4.3;
    let delay_us = base_rtt_us + q * 8.0 / 100e9 * 1e6;
    let cwnd = (q + 100e9 / 8.0 * base_rtt_us * 1e-6) / 16.0 / 1048.0;
    let alpha = 100.0 / (1.0 / 0.1f64.sqrt() - 0.1);
    let target_us = 23.05 + (alpha / cwnd.sqrt() - alpha / 10.0).clamp(0.0, 100.0);
    assert!(
        (delay_us - target_us).abs() < 0.2 * target_us,
        "Swift RTT {delay_us:.1} us (queue {q:.0} B, cwnd {cwnd:.1}) vs target {target_us:.1} us"
    );
    assert_eq!(r.summary.pause_frames, 0);
}

#[test]
fn a_window_below_one_packet_is_paced_one_packet_per_rtt_over_cwnd() {
    // Swift pinned at 0.01 packets: one packet every 100 round trips.
    let toml = r#"
[topology]
kind = "star"
hosts = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "swift"
min_cwnd = 0.01
max_cwnd = 0.01
[workload]
kind = "flows"
flows = [{ src = 1, dst = 0, size = "10KB" }]
"#;
    let r = common::run(toml);
    let f = &r.flows[0];
    // Base RTT: 2 links each way, 1 us each, plus serialising a 1048-byte packet and a 60-byte
    // ACK at each hop.
    let rtt_ns = 4000.0 + 2.0 * (1048.0 + 60.0) * 8.0 / 100.0;
    // Ten packets: nine gaps of RTT / 0.01, then the last packet's one-way trip.
    let expected = 9.0 * rtt_ns / 0.01;
    let fct = f.fct().unwrap().as_ns_f64();
    assert!((fct - expected).abs() < 0.01 * expected + 3000.0, "FCT {fct:.0} ns, expected ~{expected:.0} ns");
}

#[test]
fn ring_all_reduce_takes_2n_minus_2_chunk_times() {
    // Four ranks, 4 MB each: 6 steps of 1 MB to the next rank. No two flows share a link in the
    // same direction, but each host's uplink carries its own data and the ACKs of the data it
    // receives, which go first: each step takes the ideal 1 MB transfer plus 1000 ACKs' worth
    // of serialisation (60 B at 100 Gbps = 4.8 ns each).
    let toml = r#"
[topology]
kind = "star"
hosts = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "none"
[workload]
kind = "all_reduce"
size = "4MB"
"#;
    let r = common::run(toml);
    assert_eq!(r.flows.len(), 24);
    let c = &r.summary.collectives;
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].name.as_str(), c[0].ranks, c[0].flows), ("all_reduce:0", 4, 24));
    let step = r.flows[0].ideal_fct.as_ns_f64() + 1000.0 * 4.8;
    let got = c[0].duration_ns.unwrap().as_ns_f64();
    assert!((got / (6.0 * step) - 1.0).abs() < 0.01, "all-reduce {got:.0} ns vs 6 x {step:.0} ns");
    // Each step's flows start exactly when the previous step's chunk has arrived.
    for step in 1..6 {
        for rank in 0..4 {
            let f = &r.flows[step * 4 + rank];
            let dep = &r.flows[(step - 1) * 4 + (rank + 3) % 4];
            assert_eq!(Some(f.start), dep.finish, "flow {} waits for flow {}", f.flow_id, dep.flow_id);
        }
    }
}

#[test]
fn cc_algorithm_sets_the_incast_queue() {
    // 8-to-1 incast of 1 MB each into a 4 MB buffer. With no end-to-end control only PFC stops
    // the senders, so the queue sits at the PAUSE thresholds. DCQCN cuts rates once ECN marks
    // reach the senders, but only after the queue passed Kmin (400 KB) plus a feedback delay.
    // HPCC reacts to the queue itself each round trip and drains it to near zero.
    let extra = "[switch]\nbuffer = \"4MB\"\n";
    let run = |cc: &str| common::run(&incast_on(8, "1MB", FAST, &algo(cc), extra));
    let (none, dcqcn, hpcc) = (run("none"), run("dcqcn"), run("hpcc"));
    let q = |r: &Results| (mean_queuing_us(r), r.summary.max_switch_queue_bytes, r.summary.pause_frames);
    let msg = format!(
        "(mean queuing us, max queue B, PAUSEs): none {:?} dcqcn {:?} hpcc {:?}",
        q(&none),
        q(&dcqcn),
        q(&hpcc)
    );
    assert!(mean_queuing_us(&none) > 1.5 * mean_queuing_us(&dcqcn), "{msg}");
    assert!(mean_queuing_us(&hpcc) < 0.1 * mean_queuing_us(&dcqcn), "{msg}");
    assert!(none.summary.max_switch_queue_bytes > dcqcn.summary.max_switch_queue_bytes, "{msg}");
    assert!(hpcc.summary.max_switch_queue_bytes < none.summary.max_switch_queue_bytes / 3, "{msg}");
    assert!(none.summary.pause_frames > 4 * dcqcn.summary.pause_frames.max(1), "{msg}");
    assert_eq!(hpcc.summary.pause_frames, 0, "{msg}");
    // Only DCQCN's receivers answer marks with CNPs.
    assert!(dcqcn.summary.cnps > 0 && none.summary.cnps == 0 && hpcc.summary.cnps == 0, "{msg}");
}

#[test]
fn longer_links_let_a_bigger_queue_build_before_feedback_arrives() {
    let run = |cc: &str, delay: &str| common::run(&incast_on(8, "1MB", ("100Gbps", delay), &algo(cc), ""));
    // DCQCN: the senders keep their rate for a round trip after marking starts (plus the CNP
    // and decrease timers), so the overshoot past Kmin grows with the round trip.
    let (d1, d10) = (run("dcqcn", "1us"), run("dcqcn", "10us"));
    let msg = format!(
        "DCQCN max queue {} B at 1 us links, {} B at 10 us; mean queuing {:.1} us, {:.1} us",
        d1.summary.max_switch_queue_bytes,
        d10.summary.max_switch_queue_bytes,
        mean_queuing_us(&d1),
        mean_queuing_us(&d10)
    );
    assert!(d10.summary.max_switch_queue_bytes > 3 * d1.summary.max_switch_queue_bytes / 2, "{msg}");
    assert!(mean_queuing_us(&d10) > 1.5 * mean_queuing_us(&d1), "{msg}");
    // HPCC starts every flow with a window of one bandwidth-delay product, so the first round
    // trip of n flows leaves (n - 1) windows in the queue: it scales with the round trip.
    for delay_us in [1.0, 10.0] {
        let r = run("hpcc", &format!("{delay_us}us"));
        // Base RTT: four link delays, a 1090 B data packet (INT included) and a 102 B ACK
        // serialised twice each; windows count payload, the queue counts 1090 B per 1000.
        let rtt_us = 4.0 * delay_us + 2.0 * (1090.0 + 102.0) * 8.0 / 100e3;
        let window = 100e3 / 8.0 * rtt_us;
        let expect = 7.0 * window * 1.09;
        let q = r.summary.max_switch_queue_bytes as f64;
        assert!(
            (q / expect - 1.0).abs() < 0.1,
            "HPCC, {delay_us} us links: max queue {q} B vs 7 windows {expect:.0} B"
        );
    }
}

#[test]
fn default_dcqcn_answers_every_marked_packet_with_a_cnp_as_the_hpcc_study() {
    // rdma-hw.cc ReceiveUdp flags the ACK of every marked packet: no interval between CNPs. On a
    // star each data packet crosses one switch, so (nothing dropped) marks and CNPs match one to
    // one; the vendor's 4 us pacing answers only some of them.
    let run = |cc: &str| common::run(&incast_on(8, "1MB", FAST, cc, ""));
    for r in [run(&algo("dcqcn")), run("algorithm = \"dcqcn\"\npreset = \"hpcc_study\"")] {
        let s = &r.summary;
        assert_eq!(s.packets_dropped, 0);
        assert!(s.ecn_marks > 100, "{} marks", s.ecn_marks);
        assert_eq!(s.cnps, s.ecn_marks);
    }
    let paced = run("algorithm = \"dcqcn\"\ncnp_interval = \"4us\"");
    let s = &paced.summary;
    assert!(s.cnps < s.ecn_marks, "{} CNPs for {} marks", s.cnps, s.ecn_marks);
}

#[test]
fn a_longer_cnp_interval_means_fewer_cnps_and_a_bigger_dcqcn_queue() {
    let run = |interval: &str| {
        let cc = format!("algorithm = \"dcqcn\"\ncnp_interval = \"{interval}\"");
        common::run(&incast_on(8, "1MB", FAST, &cc, ""))
    };
    let runs = [(4.0, run("4us")), (20.0, run("20us")), (50.0, run("50us"))];
    let msg: Vec<String> = runs
        .iter()
        .map(|(i, r)| {
            format!(
                "cnp_interval {i} us: {} CNPs, mean queuing {:.1} us, done {:.1} us",
                r.summary.cnps,
                mean_queuing_us(r),
                completion_us(r)
            )
        })
        .collect();
    let msg = msg.join("; ");
    for (interval, r) in &runs {
        // At most one CNP per flow per interval.
        let bound = 8.0 * (completion_us(r) / interval).ceil();
        assert!((r.summary.cnps as f64) <= bound, "{msg}");
    }
    for w in runs.windows(2) {
        assert!(w[1].1.summary.cnps < w[0].1.summary.cnps * 4 / 5, "{msg}");
        assert!(mean_queuing_us(&w[1].1) > 1.2 * mean_queuing_us(&w[0].1), "{msg}");
    }
}
