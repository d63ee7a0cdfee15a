//! Load balancing across equal-cost paths: ECMP can collide, adaptive routing spreads the load,
//! packet spraying reorders and go-back-N pays for it, and PFC back-pressure crosses hops.

use crate::common;
use crate::common::completion_us;
use aiccsim::Results;

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

/// Bytes (wire, all packets) each port of `node` sent towards `peer`, from ports.csv's counters,
/// in port order.
fn sent(r: &aiccsim::Results, node: &str, peer: &str) -> Vec<u64> {
    r.ports.iter().filter(|p| p.node == node && p.peer == peer).map(|p| p.stats.tx_bytes).collect()
}

/// Packets each up-link of leaf 0 (s0) sent, spine by spine.
fn uplink_packets(r: &aiccsim::Results, spines: u32) -> Vec<u64> {
    (2..2 + spines)
        .map(|s| {
            let spine = format!("s{s}");
            r.ports.iter().filter(|p| p.node == "s0" && p.peer == spine).map(|p| p.stats.tx_packets).sum()
        })
        .collect()
}

/// One 1 MB flow from leaf 0 to leaf 1 over 4 spines (100 Gbps / 1 us, no congestion control),
/// with `[switch]` body `switch`, timelines every 10 us.
fn one_flow_over_four_spines(switch: &str, seed: u64) -> aiccsim::Results {
    common::run(&format!(
        r#"
[simulation]
seed = {seed}
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 1
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
{switch}
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {{ src = 0, dst = 1, size = "1MB" }} ]
[output]
sample_interval = "10us"
"#
    ))
}

#[test]
fn spraying_spreads_one_flow_over_every_equal_cost_path() {
    // 1000 data packets; leaf 0's up-links carry nothing else (the ACKs come down to it).
    let rr = one_flow_over_four_spines("routing = \"round_robin\"", 1);
    assert_eq!(uplink_packets(&rr, 4), [250, 250, 250, 250], "round-robin takes the up-links in turn");
    // links.csv shows it as it goes: in every sample, the four up-links sent within a packet of
    // each other.
    let mut per_sample: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
    for l in &rr.links {
        let port = &rr.ports[l.port as usize];
        if port.node == "s0" && port.peer.starts_with('s') {
            per_sample.entry(l.time.0).or_default().push(l.bytes);
        }
    }
    assert!(per_sample.len() >= 5, "{per_sample:?}");
    for (t, bytes) in &per_sample {
        let (lo, hi) = (bytes.iter().min().unwrap(), bytes.iter().max().unwrap());
        assert!(bytes.len() == 4 && hi - lo <= 1048, "at {t} ps the up-links sent {bytes:?}");
    }
    // Random spraying: every path, each within a fifth of an even share (250 +- 50: 3.6 sigma).
    let spray = one_flow_over_four_spines("routing = \"spray\"", 1);
    let up = uplink_packets(&spray, 4);
    assert_eq!(up.iter().sum::<u64>(), 1000 + spray.summary.retransmitted_bytes / 1000, "{up:?}");
    assert!(up.iter().all(|&n| (200..=300).contains(&n)), "random spraying spread {up:?}");
    // ECMP keeps the flow on one up-link.
    let ecmp = one_flow_over_four_spines("routing = \"ecmp\"", 1);
    let up = uplink_packets(&ecmp, 4);
    assert_eq!(up.iter().filter(|&&n| n > 0).count(), 1, "ECMP: one path per flow, got {up:?}");
}

/// A fabric with a congested path: leaf s0 (hosts 0-2) reaches leaf s1 (host 3) over spine s2 or
/// spine s3; host 4 hangs off spine s2, so hosts 0 and 1 sending to it fill s0's link to s2 with
/// twice what it carries. Host 2 sends 1 MB to host 3 from 20 us on, when that queue has built.
fn past_a_congested_spine(routing: &str, seed: u64) -> aiccsim::Results {
    common::run(&format!(
        r#"
[simulation]
seed = {seed}
[topology]
kind = "custom"
hosts = 5
switches = 4
links = [
  {{ a = "h0", b = "s0", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "h1", b = "s0", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "h2", b = "s0", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "h3", b = "s1", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "h4", b = "s2", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s0", b = "s2", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s0", b = "s3", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s1", b = "s2", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s1", b = "s3", bandwidth = "100Gbps", delay = "1us" }},
]
[switch]
routing = "{routing}"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [
  {{ src = 0, dst = 4, size = "2MB" }},
  {{ src = 1, dst = 4, size = "2MB" }},
  {{ src = 2, dst = 3, size = "1MB", start = "20us" }},
]
"#
    ))
}

#[test]
fn adaptive_routing_avoids_a_congested_spine() {
    // The background only ever crosses s0 -> s2: its bytes there, and none towards s3.
    let adaptive = past_a_congested_spine("adaptive", 3);
    let (to_s2, to_s3) = (sent(&adaptive, "s0", "s2")[0], sent(&adaptive, "s0", "s3")[0]);
    // 1000 packets of 1048 bytes: all of the flow goes the idle way.
    assert_eq!(to_s3, 1_048_000, "adaptive routing sends the flow past the idle spine");
    assert_eq!(to_s2, 2 * 2_096_000, "only the background crosses the busy link");
    let fast = adaptive.flows[2].slowdown().unwrap();
    assert!(fast < 1.05, "the flow runs at line rate: slowdown {fast:.3}");
    // ECMP with this seed hashes the flow onto the busy link, behind its queue.
    let ecmp = past_a_congested_spine("ecmp", 3);
    assert_eq!(sent(&ecmp, "s0", "s3")[0], 0, "this seed's hash picks s2");
    let slow = ecmp.flows[2].slowdown().unwrap();
    assert!(slow > 2.0, "behind the queue and sharing the link three ways: slowdown {slow:.3}");
}

/// One 1 MB flow from leaf 0 to leaf 1 over 4 spines, routed by flowlets of `gap`, from a
/// 10 Gbps NIC (its packets reach the leaf 838.4 ns apart) over 100 Gbps up-links.
fn flowlets(gap: &str) -> aiccsim::Results {
    common::run(&format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 1
link = {{ bandwidth = "10Gbps", delay = "1us" }}
fabric_link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = "flowlet"
flowlet = {{ gap = "{gap}" }}
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {{ src = 0, dst = 1, size = "1MB" }} ]
"#
    ))
}

#[test]
fn flowlets_move_only_after_a_gap() {
    // Packets 838.4 ns apart, closer than a 1 us gap: one flowlet, one path.
    let one = uplink_packets(&flowlets("1us"), 4);
    assert_eq!(one.iter().filter(|&&n| n > 0).collect::<Vec<_>>(), [&1000], "one flowlet: {one:?}");
    // Gaps of 838.4 ns are longer than 800 ns: every packet starts a flowlet, at a random spine.
    let many = uplink_packets(&flowlets("800ns"), 4);
    assert_eq!(many.iter().sum::<u64>(), 1000);
    assert!(many.iter().all(|&n| (200..=300).contains(&n)), "every packet a flowlet: {many:?}");
}

/// Leaf-spine with two parallel links between each leaf and each spine: spines choose too.
fn over_parallel_spine_links(routing: &str) -> aiccsim::Results {
    common::run(&format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
links_per_spine = 2
hosts_per_leaf = 1
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = {routing}
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {{ src = 0, dst = 1, size = "1MB" }} ]
"#
    ))
}

#[test]
fn routing_is_chosen_per_tier() {
    // Down-links of the spines (s2, s3) to leaf 1 (s1) that carried the flow.
    let used = |r: &aiccsim::Results| -> usize {
        ["s2", "s3"].iter().flat_map(|s| sent(r, s, "s1")).filter(|&b| b > 0).count()
    };
    let all_spray = over_parallel_spine_links("\"spray\"");
    assert_eq!(used(&all_spray), 4, "every spine sprays over both its links down");
    let leaves_only = over_parallel_spine_links("{ leaf = \"spray\", spine = \"ecmp\" }");
    assert_eq!(used(&leaves_only), 2, "the leaf sprays over both spines, each spine hashes the flow onto one link");
    // Both leaf up-link groups are used in both runs.
    for r in [&all_spray, &leaves_only] {
        assert!(["s2", "s3"].iter().all(|s| sent(r, "s0", s).iter().sum::<u64>() > 0));
    }
    // A tier not named takes `default`, then ECMP.
    let by_default = over_parallel_spine_links("{ leaf = \"spray\" }");
    assert_eq!(by_default.flows[0].finish, leaves_only.flows[0].finish);
    let everywhere = over_parallel_spine_links("{ default = \"spray\" }");
    assert_eq!(everywhere.flows[0].finish, all_spray.flows[0].finish);
    assert_eq!(used(&everywhere), 4);
}

#[test]
fn a_tier_the_topology_lacks_is_an_error() {
    let text = r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 1
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
routing = { leaf = "spray", core = "adaptive" }
[workload]
kind = "flows"
flows = [ { src = 0, dst = 1, size = "1MB" } ]
"#;
    let err = aiccsim::run(&common::scenario(text)).err().expect("no core tier on a leaf-spine");
    assert_eq!(err.key, "switch.routing.core");
    assert!(err.message.contains("no core switches (its tiers: leaf, spine)"), "{err}");
    let err = aiccsim::Scenario::from_toml(&text.replace("core", "cores"), "t.toml").unwrap_err();
    assert_eq!(err.key, "switch.routing.cores");
    assert!(err.message.contains("unknown field `cores`, expected one of `default`, `leaf`, `spine`, `core`"), "{err}");
}

#[test]
fn the_one_value_form_is_written_back_as_it_was() {
    // Old scenarios: run.json and `aiccsim validate` show `routing = "spray"` as before, and no
    // key of the new features.
    let s = common::scenario(&common::incast(2, "10KB", "dcqcn", "[switch]\nrouting = \"spray\""));
    let text = s.to_toml();
    assert!(text.contains("routing = \"spray\""), "{text}");
    for new in ["flowlet", "failure_detection", "events", "leaf"] {
        assert!(!text.contains(new), "{new} in\n{text}");
    }
}

/// Four flows from the four hosts of leaf 0 to the four of leaf 1, over four spines: one flow
/// per spine is possible, and then each flow runs alone at line rate.
fn four_by_four(routing: &str, seed: u64) -> Results {
    common::leaf_to_leaf(routing, seed, 4, 4, "500KB")
}

/// Bytes leaf 0 sent up to each spine (its ports 4 to 7).
fn uplink_bytes(r: &Results) -> Vec<u64> {
    r.ports.iter().filter(|p| p.node == "s0" && p.port >= 4).map(|p| p.stats.tx_bytes).collect()
}

#[test]
fn load_balancing_decides_how_the_spines_share_the_flows() {
    const FLOW_WIRE: u64 = 500 * 1048;
    // Seed 5 hashes three of the four flows onto one spine.
    let (ecmp, spray, adaptive) = (four_by_four("ecmp", 5), four_by_four("spray", 5), four_by_four("adaptive", 5));
    let f = |r: &Results| {
        format!(
            "uplinks {:?} B, done {:.1} us, {} NACKs, {} B resent",
            uplink_bytes(r),
            completion_us(r),
            r.summary.nacks,
            r.summary.retransmitted_bytes
        )
    };
    let msg = format!("ecmp: {}; spray: {}; adaptive: {}", f(&ecmp), f(&spray), f(&adaptive));
    let ideal_us = ecmp.flows[0].ideal_fct.as_us_f64();
    let ser_us = FLOW_WIRE as f64 * 8.0 / 100e3;

    // ECMP: whole flows per spine; the busiest spine link serialises its k flows back to back.
    let up = uplink_bytes(&ecmp);
    assert!(up.iter().all(|b| b % FLOW_WIRE == 0), "{msg}");
    let k = (up.iter().max().unwrap() / FLOW_WIRE) as f64;
    assert_eq!(k, 3.0, "the seed must collide: {msg}");
    let expect = ideal_us + (k - 1.0) * ser_us;
    assert!((completion_us(&ecmp) / expect - 1.0).abs() < 0.02, "ECMP vs {k} flows on one link, {expect:.1} us: {msg}");
    assert_eq!(ecmp.summary.nacks, 0, "{msg}");

    // Adaptive: one flow per spine, each at line rate, in order.
    assert!(uplink_bytes(&adaptive).iter().all(|&b| b.abs_diff(FLOW_WIRE) <= 2 * 1048), "{msg}");
    assert!(completion_us(&adaptive) < 1.01 * ideal_us, "{msg}");
    assert_eq!(adaptive.summary.nacks, 0, "{msg}");

    // Spraying spreads the bytes evenly too, but reorders every flow, and go-back-N resends
    // everything behind each gap: more than the whole transfer, and slower than ECMP.
    let up = uplink_bytes(&spray);
    let (lo, hi) = (*up.iter().min().unwrap() as f64, *up.iter().max().unwrap() as f64);
    assert!(hi < 1.1 * lo, "{msg}");
    assert!(spray.summary.nacks > 0, "{msg}");
    assert!(spray.summary.retransmitted_bytes > 4 * 500_000, "{msg}");
    assert!(completion_us(&spray) > completion_us(&ecmp), "{msg}");
}

#[test]
fn adaptive_routing_never_does_worse_than_ecmp() {
    // Flows that start together reach leaf 0 at the same instant, so adaptive routing must see
    // the spine link a packet has just started on as taken, or it follows the hash like ECMP.
    for seed in 1..=6 {
        let (ecmp, adaptive) = (four_by_four("ecmp", seed), four_by_four("adaptive", seed));
        let ideal_us = ecmp.flows[0].ideal_fct.as_us_f64();
        let msg = format!(
            "seed {seed}: ideal {ideal_us:.1} us; ECMP uplinks {:?} B, done {:.1} us; adaptive uplinks {:?} B, done {:.1} us, {} NACKs",
            uplink_bytes(&ecmp),
            completion_us(&ecmp),
            uplink_bytes(&adaptive),
            completion_us(&adaptive),
            adaptive.summary.nacks
        );
        assert!(completion_us(&adaptive) < 1.01 * ideal_us, "{msg}");
        assert!(completion_us(&adaptive) <= completion_us(&ecmp), "{msg}");
        assert_eq!(adaptive.summary.nacks, 0, "{msg}");
    }
}
