//! The Ultra Ethernet congestion controls on the network: NSCC shares an incast's bottleneck
//! fairly on a lossless (PFC) star and holds its queue near the target delay; RCCC's credit
//! keeps the bottleneck queue at what the senders sent before the receiver's first credit came
//! back; NSCC with receiver credit does both; and NSCC recovers every byte of an incast on a
//! lossy fabric.

use crate::common;

use aiccsim::metrics::jain_index;
use aiccsim::Results;

/// Senders of the incast.
const N: u32 = 8;

/// The star's base RTT at 100 Gbps: 2 x 1 us each way, plus a 1048-byte data packet's
/// serialisation at both hops and the ACK's (4.18 us), as bytes: 52 KB.
const BDP: f64 = 100e9 / 8.0 * 4.18e-6;

/// A full data packet on the wire.
const PACKET: f64 = 1048.0;

/// An 8-to-1 incast of 500 KB per sender on the star of 100 Gbps / 1 us links under the `[cc]`
/// body `cc`, with ECN marking as the UEC reference simulator sets it (`main_uec.cpp`: from 0.2
/// to 0.8 of the bandwidth-delay product, every packet above).
fn incast(cc: &str) -> Results {
    let extra = r#"
[switch]
ecn = { kmin = "10KB", kmax = "42KB", pmax = 1.0 }
[output]
sample_interval = "5us"
"#;
    common::run(&common::incast_on(N, "500KB", common::FAST, cc, extra))
}

/// The flows' slowdowns (FCT over the ideal), lowest and highest.
fn slowdowns(r: &Results) -> (f64, f64) {
    let s: Vec<f64> = r.flows.iter().map(|f| f.slowdown().unwrap()).collect();
    (s.iter().copied().fold(f64::INFINITY, f64::min), s.iter().copied().fold(0.0, f64::max))
}

/// Every flow's mean throughput over the phase in which all send (`steady_throughputs`): its
/// Jain index.
fn steady_jain(r: &Results) -> f64 {
    jain_index(&r.steady_throughputs().expect("timelines on"))
}

#[test]
fn nscc_shares_an_incast_fairly_near_its_target_delay() {
    let r = incast("algorithm = \"nscc\"");
    let s = &r.summary;
    assert_eq!((s.pause_frames, s.packets_dropped), (0, 0), "no pause, no loss");
    let j = steady_jain(&r);
    assert!(j >= 0.95, "Jain's index {j:.4} over the steady phase");
    // Eight flows share the receiver's link: the last one ends after eight flows' bytes went
    // through it back to back, just under 8 ideal FCTs (the ideal has one propagation delay
    // the shared transfer pays once); none much earlier than the others.
    let (first, last) = slowdowns(&r);
    assert!((7.0..=8.5).contains(&last), "the last flow's slowdown {last:.3}");
    assert!(first >= 0.75 * last, "slowdowns {first:.3} to {last:.3}");
    // The target delay is the base RTT (4.2 us); PFC alone queues 35 times that (147 us).
    let target_us = 4.18;
    let q = common::mean_queuing_us(&r);
    assert!(q <= 3.0 * target_us, "mean queuing delay {q} us");
    let none = incast("algorithm = \"none\"");
    assert!(common::mean_queuing_us(&none) > 10.0 * q, "PFC alone {} us", common::mean_queuing_us(&none));
}

#[test]
fn rccc_keeps_the_queue_at_what_was_sent_on_speculation() {
    let r = incast("algorithm = \"rccc\"");
    let s = &r.summary;
    assert_eq!((s.pause_frames, s.packets_dropped), (0, 0), "no pause, no loss");
    // Each sender spends its speculative credit at line rate until the receiver's first credit
    // ACK comes back, one base RTT after its first packet (which met a queue of at most the
    // others' first packets): a bandwidth-delay product and a packet or two each. From then on
    // the credit arrives at 99% of the receiver's line: the queue can only shrink.
    let bound = N as f64 * (BDP + 2.0 * PACKET);
    let q = s.max_switch_queue_bytes as f64;
    assert!(q <= bound, "bottleneck queue {q} B above {bound} B");
    let none = incast("algorithm = \"none\"");
    assert!(
        none.summary.max_switch_queue_bytes as f64 > 5.0 * q,
        "PFC alone {} B",
        none.summary.max_switch_queue_bytes
    );
    // The receiver shares its credit evenly and wastes 1% of its link.
    let j = steady_jain(&r);
    assert!(j >= 0.99, "Jain's index {j:.4} over the steady phase");
    let (first, last) = slowdowns(&r);
    assert!(last <= 8.5 && first >= 0.95 * last, "slowdowns {first:.3} to {last:.3}");
}

#[test]
fn nscc_with_receiver_credit_keeps_both_promises() {
    let r = incast("algorithm = \"nscc\"\nreceiver_credit = true");
    let s = &r.summary;
    assert_eq!((s.pause_frames, s.packets_dropped), (0, 0), "no pause, no loss");
    let bound = N as f64 * (BDP + 2.0 * PACKET);
    assert!((s.max_switch_queue_bytes as f64) <= bound, "bottleneck queue {} B", s.max_switch_queue_bytes);
    let j = steady_jain(&r);
    assert!(j >= 0.95, "Jain's index {j:.4} over the steady phase");
    let q = common::mean_queuing_us(&r);
    assert!(q <= 3.0 * 4.18, "mean queuing delay {q} us");
    let (_, last) = slowdowns(&r);
    assert!(last <= 8.5, "the last flow's slowdown {last:.3}");
}

#[test]
fn nscc_recovers_every_byte_of_an_incast_on_a_lossy_fabric() {
    // 16-to-1 into a 200 KB buffer without PFC: the first windows overflow it. `common::run`
    // checks that every byte arrived and the ledger balances.
    let extra = r#"
[switch]
buffer = "200KB"
pfc = { enabled = false }
ecn = { kmin = "10KB", kmax = "42KB", pmax = 1.0 }
[nic]
rto = "100us"
recovery = "selective"
"#;
    let run = |cc: &str| common::run(&common::incast_on(16, "500KB", common::FAST, cc, extra));
    let (nscc, none) = (run("algorithm = \"nscc\""), run("algorithm = \"none\""));
    let (n, p) = (&nscc.summary, &none.summary);
    assert!(n.packets_dropped > 0, "the first windows overflow the buffer");
    assert!(
        n.packets_dropped * 10 < p.packets_dropped,
        "{} drops vs {} with no control",
        n.packets_dropped,
        p.packets_dropped
    );
    assert!(n.completion_time_ns < p.completion_time_ns);
}
