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

/// 8 flows from leaf 0 to leaf 1 over one spine, with `links` parallel links between each leaf
/// and the spine, routed adaptively.
fn over_parallel_links(links: u32) -> aiccsim::Results {
    common::leaf_to_leaf_over("adaptive", 1, (1, links), 8, "1MB")
}

#[test]
fn parallel_leaf_spine_links_share_the_load() {
    let one = over_parallel_links(1);
    let four = over_parallel_links(4);
    let uplinks = |r: &aiccsim::Results| -> Vec<u64> {
        r.ports.iter().filter(|p| p.node == "s0" && p.peer == "s2").map(|p| p.stats.tx_bytes).collect()
    };
    assert_eq!(uplinks(&one).len(), 1);
    let four_up = uplinks(&four);
    assert_eq!(four_up.len(), 4, "four parallel links from leaf 0 to the spine");
    // 8 MB of data (with headers) over 4 links: 2 flows on each, so each carries a quarter.
    let total: u64 = four_up.iter().sum();
    for &b in &four_up {
        assert!(b * 4 > total * 9 / 10 && b * 4 < total * 11 / 10, "uneven split {four_up:?}");
    }
    // 8 flows on one 100 Gbps up-link finish at 8x their lone FCT; on four, at 2x.
    let (s1, s4) = (one.summary.slowdown.max, four.summary.slowdown.max);
    assert!((7.6..8.4).contains(&s1), "one link: max slowdown {s1:.3}");
    assert!((1.8..2.3).contains(&s4), "four links: max slowdown {s4:.3}");
}
