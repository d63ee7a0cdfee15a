//! Go-back-N corner cases: reordering with coalesced ACKs, timeouts on time, CC reacting inside
//! the NIC's packet choice. These run with debug assertions and overflow checks on, so a
//! transport counter that would wrap (bytes in flight below zero) or a port that would start two
//! packets at once fails the test.

use crate::common;

#[test]
fn spraying_with_coalesced_acks_keeps_the_sender_consistent() {
    // A NACK for a byte beyond the sender's rewound position must move it forward, not leave
    // snd_nxt behind snd_una.
    let r = common::run(
        r#"
[simulation]
seed = 2
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 8
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
routing = "spray"
buffer = "4MB"
ecn = { kmin = "20KB", kmax = "100KB" }
[nic]
ack_every = 4
[cc]
algorithm = "dcqcn"
[workload]
kind = "all_to_all"
size = "200KB"
"#,
    );
    assert!(r.summary.nacks > 0);
    for f in &r.flows {
        assert!(f.retransmitted_bytes < 100 * f.size_bytes, "flow {}: {} B resent", f.flow_id, f.retransmitted_bytes);
    }
}

#[test]
fn a_lost_tail_times_out_one_rto_after_the_last_progress() {
    // Spraying reorders a flow's last packets; the receiver discards them and nothing later
    // reveals the gap, so only the timeout recovers. It must fire rto after the last ACK
    // progress, not rto after the timer happened to be re-checked.
    let r = common::run(
        r#"
[simulation]
seed = 5
[topology]
kind = "fat_tree"
k = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
buffer = "400KB"
routing = "spray"
[nic]
ack_every = 4
rto = "1ms"
[cc]
algorithm = "none"
[workload]
kind = "all_to_all"
size = "50KB"
"#,
    );
    let timed_out: Vec<_> = r.flows.iter().filter(|f| f.timeouts > 0).collect();
    assert!(!timed_out.is_empty(), "this seed produces a tail timeout");
    for f in timed_out {
        let fct_us = f.fct().unwrap().as_us_f64();
        assert!(fct_us < 1_200.0, "flow {} finished at {fct_us} us: the 1 ms timeout fired late", f.flow_id);
    }
}

#[test]
fn byte_counter_rate_increases_never_double_book_the_nic() {
    // DCQCN's byte counter raises the rate inside `on_send`, while the NIC is choosing its next
    // packet among four queue pairs; the rate change must not start a second transmission.
    let r = common::run(
        r#"
[topology]
kind = "star"
hosts = 5
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
ecn = { kmin = "20KB", kmax = "100KB" }
[cc]
algorithm = "dcqcn"
byte_counter = "100KB"
[workload]
kind = "incast"
senders = "1..=4"
receiver = 0
size = "2MB"
flows_per_sender = 4
"#,
    );
    // Each sender's NIC never exceeds line rate: its bytes fit in the run time.
    let end = r.summary.simulated_time_ns.as_secs_f64();
    for p in r.ports.iter().filter(|p| p.node.starts_with('h') && p.node != "h0") {
        let busy = p.stats.tx_bytes as f64 * 8.0 / 100e9;
        assert!(busy <= end, "{} sent {} B in {end} s", p.node, p.stats.tx_bytes);
    }
}

#[test]
fn drops_with_coalesced_acks_still_deliver_everything() {
    let extra = r#"
[switch]
buffer = "150KB"
pfc = { enabled = false }
[nic]
ack_every = 8
rto = "50us"
"#;
    let r = common::run(&common::incast(8, "300KB", "none", extra));
    assert!(r.summary.packets_dropped > 0);
    assert!(r.summary.timeouts < 200, "{} timeouts", r.summary.timeouts);
}

#[test]
fn a_stopped_flow_ends_with_what_it_sent_and_delivers_all_of_it() {
    // 100 MB would take 8.4 ms at line rate; the sender stops taking data at 1 ms.
    let toml = r#"
[topology]
kind = "star"
hosts = 3
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [{ src = 1, dst = 0, size = "100MB", stop = "1ms" }, { src = 2, dst = 0, size = "100KB", stop = "1ms" }]
"#;
    let r = common::run(toml);
    let long = &r.flows[0];
    // It sent for 1 ms while sharing the receiver's link with the small flow for its first
    // ~16 us: about 1 ms x 100 Gbps x 1000/1048 of payload, whole packets.
    assert_eq!(long.size_bytes % 1000, 0);
    let expected = 1e-3 * 100e9 / 8.0 * 1000.0 / 1048.0;
    assert!((long.size_bytes as f64 / expected - 1.0).abs() < 0.02, "{} bytes", long.size_bytes);
    // Delivered soon after the stop: the data already on its way, behind the standing queue the
    // small flow left (100 KB, 8.4 us at line rate: the long flow never lets it drain).
    let fct = long.fct().unwrap().as_us_f64();
    assert!(fct > 1000.0 && fct < 1015.0, "FCT {fct} us");
    // The ideal is that of the size it ended with.
    assert!((long.slowdown().unwrap() - 1.0).abs() < 0.02);
    // The small flow finished long before its stop: untouched.
    assert_eq!(r.flows[1].size_bytes, 100_000);
}
