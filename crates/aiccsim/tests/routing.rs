//! Load balancing across equal-cost paths: ECMP can collide, adaptive routing spreads the load,
//! packet spraying reorders and go-back-N pays for it, and PFC back-pressure crosses hops.

mod common;

/// 8 flows from the 8 hosts of leaf 0 to the 8 hosts of leaf 1 over 2 spines: at best 4 flows per
/// up-link, so the ideal schedule finishes every flow at about 4x its lone-flow FCT.
fn leaf_to_leaf(routing: &str, seed: u64) -> aiccsim::Results {
    common::leaf_to_leaf(routing, seed, 2, 8, "1MB")
}

#[test]
fn adaptive_routing_avoids_ecmp_collisions() {
    // Seed 2 makes ECMP put 5 flows on one spine and 3 on the other.
    let ecmp = leaf_to_leaf("ecmp", 2);
    let adaptive = leaf_to_leaf("adaptive", 2);
    let (e, a) = (ecmp.summary.slowdown.max, adaptive.summary.slowdown.max);
    assert!(e > 5.0, "ECMP should collide with this seed: max slowdown {e:.3}");
    assert!(a < 4.0, "adaptive routing should balance 4 + 4: max slowdown {a:.3}");
    assert_eq!(adaptive.summary.nacks, 0, "least-queued choice on equal paths must not reorder here");
}

#[test]
fn spraying_reorders_and_go_back_n_still_delivers() {
    let spray = leaf_to_leaf("spray", 2);
    // common::run already checked every flow finished and the byte ledger balances.
    assert!(spray.summary.nacks > 0, "sprayed packets arrive out of order");
    assert!(spray.summary.retransmitted_bytes > 0);
    assert_eq!(spray.summary.packets_dropped, 0);
}

#[test]
fn pfc_back_pressure_crosses_hops() {
    // Host 0 (left switch) and host 1 (right switch) both send to host 2 (right switch). The
    // right switch's port to host 2 is the bottleneck: it pauses host 1 and the left switch;
    // the left switch, unable to forward, fills up and pauses host 0 in turn.
    let r = common::run(
        r#"
[topology]
kind = "dumbbell"
left = 1
right = 2
link = { bandwidth = "100Gbps", delay = "1us" }
bottleneck = { bandwidth = "100Gbps", delay = "1us" }
[switch]
buffer = "4MB"
pfc = { xoff = "200KB" }
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ { src = 0, dst = 2, size = "10MB" }, { src = 1, dst = 2, size = "10MB" } ]
"#,
    );
    assert_eq!(r.summary.packets_dropped, 0);
    let port = |node: &str, peer: &str| r.ports.iter().find(|p| p.node == node && p.peer == peer).unwrap();
    assert!(port("s1", "s0").stats.pause_sent > 0, "the right switch pauses the left switch");
    assert!(port("s0", "h0").stats.pause_sent > 0, "the left switch passes the pause on to host 0");
    assert!(port("h0", "s0").stats.paused_time.0 > 0, "host 0 was paused");
    // Lossless and work-conserving: the last byte arrives at 2x the lone-flow ideal, within 2%.
    let last = r.flows.iter().map(|f| f.fct().unwrap().0).max().unwrap() as f64;
    let ideal = r.flows[1].ideal_fct.0 as f64;
    assert!((last / (2.0 * ideal) - 1.0).abs() < 0.02, "last FCT {last} vs 2 x {ideal}");
    // PAUSE frames are packets on the wire: every one sent was serialised on a link.
    let hops: u64 = r.ports.iter().map(|p| p.stats.tx_packets).sum();
    assert_eq!(hops, r.summary.packet_hops);
}
