//! `[[events]]`: links that fail, come back and slow down during a run. A failed link loses what
//! is on it and what is sent onto it until the switches detect the failure; then every switch
//! routes around it, and go-back-N (NACKs, or the retransmission timeout) recovers what was lost.

use crate::common;

use aiccsim::Results;

/// 4 flows of 1 MB from leaf 0 (s0) to leaf 1 (s1) over spines s2 and s3 (100 Gbps / 1 us, no
/// congestion control), routed by `routing`, timelines every 10 us, and `extra` (events).
fn leaf_to_leaf(routing: &str, extra: &str) -> Results {
    common::run(&format!(
        r#"
[simulation]
seed = 2
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = "{routing}"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [
  {{ src = 0, dst = 4, size = "1MB" }}, {{ src = 1, dst = 5, size = "1MB" }},
  {{ src = 2, dst = 6, size = "1MB" }}, {{ src = 3, dst = 7, size = "1MB" }},
]
[output]
sample_interval = "10us"
{extra}
"#
    ))
}

/// links.csv's rows for the port of `node` towards `peer`: (sample time in ns, bytes).
fn link_rows(r: &Results, node: &str, peer: &str) -> Vec<(u64, u64)> {
    (r.links.iter())
        .filter(|l| r.ports[l.port as usize].node == node && r.ports[l.port as usize].peer == peer)
        .map(|l| (l.time.0 / 1000, l.bytes))
        .collect()
}

const FAIL_S0_S2: &str = r#"
[[events]]
at = "20us"
link = ["s0", "s2"]
action = "fail"
detection = "10us"
"#;

#[test]
fn flows_reroute_after_detection_and_deliver_every_byte() {
    for routing in ["ecmp", "spray", "adaptive"] {
        // common::run checks that every flow finished and the byte ledger balances: what the
        // black hole swallowed was sent again.
        let r = leaf_to_leaf(routing, FAIL_S0_S2);
        assert!(r.summary.packets_dropped > 0, "{routing}: the black hole lost packets");
        assert!(r.summary.retransmitted_bytes > 0, "{routing}: and they were sent again");
        for (node, peer) in [("s0", "s2"), ("s2", "s0")] {
            let rows = link_rows(&r, node, peer);
            // Until detection (30 us) the switch goes on sending onto the dark link ...
            assert!(rows.iter().any(|&(t, b)| t == 30_000 && b > 0), "{routing}, {node}->{peer}: {rows:?}");
            // ... then never again: one row of zero bytes (an idle link writes no more rows).
            let after: Vec<_> = rows.iter().filter(|&&(t, _)| t > 30_000).collect();
            assert_eq!(after, [&(40_000, 0)], "{routing}, {node}->{peer} after detection: {rows:?}");
        }
        // The other spine carries all of it from then on, at line rate.
        let s3 = link_rows(&r, "s0", "s3");
        assert!(s3.iter().filter(|&&(t, _)| (50_000..=300_000).contains(&t)).all(|&(_, b)| b > 120_000), "{s3:?}");
        // Both leaves lost their way over s2: the ports counted the losses.
        let drops = |node: &str, peer: &str| -> u64 {
            r.ports.iter().filter(|p| p.node == node && p.peer == peer).map(|p| p.stats.drops).sum()
        };
        assert!(drops("s0", "s2") > 0, "{routing}");
    }
}

#[test]
fn a_restored_link_carries_traffic_again_after_detection() {
    let events = format!(
        "{FAIL_S0_S2}\n[[events]]\nat = \"100us\"\nlink = [\"s2\", \"s0\"]\naction = \"restore\"\ndetection = \"10us\"\n"
    );
    let r = leaf_to_leaf("round_robin", &events);
    let rows = link_rows(&r, "s0", "s2");
    // Dark from detection (30 us) until the restore is detected (110 us); busy again after.
    assert!(rows.iter().filter(|&&(t, _)| (40_000..=110_000).contains(&t)).all(|&(_, b)| b == 0), "{rows:?}");
    assert!(rows.iter().any(|&(t, b)| t == 130_000 && b > 100_000), "{rows:?}");
}

/// One 50 KB flow from host 0 to host 4 (leaf 0 to leaf 1) from 1 us on, ECMP, with `events`.
fn short_flow(events: &str) -> Results {
    common::run(&format!(
        r#"
[simulation]
seed = 2
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {{ src = 0, dst = 4, size = "50KB", start = "1us" }} ]
{events}
"#
    ))
}

#[test]
fn a_flow_lost_whole_in_the_black_hole_comes_back_on_its_timeout() {
    // The spine ECMP gives the flow.
    let alone = short_flow("");
    let spine = ["s2", "s3"]
        .into_iter()
        .find(|s| alone.ports.iter().any(|p| p.node == "s0" && p.peer == *s && p.stats.tx_bytes > 0))
        .unwrap();
    // Its link fails before it starts, and is detected only after the flow has sent it all
    // (50 packets, 4.2 us at line rate): no packet arrives, so no NACK; its retransmission
    // timeout (the default, 67.1 ms) sends it again, around the failure detected long before.
    let r = short_flow(&format!(
        "[[events]]\nat = \"0us\"\nlink = [\"s0\", \"{spine}\"]\naction = \"fail\"\ndetection = \"100us\"\n"
    ));
    let f = &r.flows[0];
    assert_eq!(f.timeouts, 1, "{f:?}");
    assert_eq!(r.summary.data_bytes.dropped, 50 * 1048);
    let finish = f.finish.unwrap().0;
    let rto = aiccsim::config::DEFAULT_RTO.0;
    assert!(finish > rto && finish < rto + 20_000_000, "delivered after the {rto} ps timeout: {finish} ps");
    assert_eq!(alone.summary.packets_dropped, 0);
}

#[test]
fn a_pause_held_on_a_failed_link_is_lifted_at_detection() {
    // An 8-to-1 incast across the spines with PFC: leaf 1 pauses the spines, and the spines
    // pause leaf 0. The link s2-s1 fails while s2 is paused by s1: s1's RESUME cannot cross
    // any more. Detection clears the pause and drops s2's queue; the restore brings the link
    // back unpaused. Every flow finishes (a pause left in force would stall the run).
    let r = common::run(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
buffer = "2MB"
pfc = { xoff = "100KB" }
[cc]
algorithm = "none"
[workload]
kind = "incast"
senders = "0..8"
receiver = 8
size = "500KB"
[output]
sample_interval = "10us"
[[events]]
at = "30us"
link = ["s2", "s1"]
action = "fail"
detection = "5us"
[[events]]
at = "60us"
link = ["s2", "s1"]
action = "restore"
detection = "5us"
"#,
    );
    let paused_before = r.pauses.iter().any(|p| {
        r.topology.node_name(p.node) == "s1" && r.topology.node_name(p.peer) == "s2" && p.pause && p.time.0 < 30_000_000
    });
    assert!(paused_before, "s1 had paused s2 before the failure");
    let s2 = r.ports.iter().find(|p| p.node == "s2" && p.peer == "s1").unwrap();
    assert!(s2.stats.drops > 0, "s2's queue towards the dead link was dropped at detection");
    let rows = link_rows(&r, "s2", "s1");
    assert!(rows.iter().any(|&(t, b)| t > 70_000 && b > 0), "the restored link carries data: {rows:?}");
    assert_eq!(r.summary.stop_reason, aiccsim::metrics::StopReason::Completed);
}

#[test]
fn a_slowed_link_carries_less() {
    let slow = "[[events]]\nat = \"20us\"\nlink = [\"s0\", \"s2\"]\naction = \"slow\"\nbandwidth = \"25Gbps\"\n";
    let r = leaf_to_leaf("round_robin", slow);
    let rows = link_rows(&r, "s0", "s2");
    // Full speed before (125 000 bytes per 10 us), a quarter after.
    assert!(rows.iter().any(|&(t, b)| t == 20_000 && b > 120_000), "{rows:?}");
    let later: Vec<_> = rows.iter().filter(|&&(t, _)| (40_000..=100_000).contains(&t)).collect();
    assert!(!later.is_empty() && later.iter().all(|&&(_, b)| b <= 32_000), "{rows:?}");
    // links.csv's utilisation is against the speed of the time: a full link, before and after.
    let mut utilisation = Vec::new();
    r.for_each_row(&aiccsim::metrics::tables::LINKS, &mut |cells| {
        use aiccsim::metrics::tables::Value;
        if let [Value::Time(t), Value::Text(node), _, Value::Text(peer), _, Value::Ratio(u)] = cells {
            if node == "s0" && peer == "s2" && (20_000_000..=100_000_000).contains(&t.0) {
                utilisation.push(*u);
            }
        }
    });
    assert!(utilisation.len() >= 8 && utilisation.iter().all(|u| (0.95..1.01).contains(u)), "{utilisation:?}");
    assert_eq!(r.summary.packets_dropped, 0);
}

/// The first error of a scenario with the link events `events`.
fn error(events: &str) -> aiccsim::ConfigError {
    let text = format!(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 1\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[workload]\nkind = \"flows\"\nflows = [ {{ src = 0, dst = 1, size = \"1MB\" }} ]\n{events}"
    );
    match aiccsim::Scenario::from_toml(&text, "e.toml") {
        Err(e) => e,
        Ok(s) => aiccsim::run(&s).err().expect("an error"),
    }
}

#[test]
fn bad_link_events_are_refused_with_the_key_and_the_fix() {
    let one = |at: &str, link: &str, rest: &str| format!("[[events]]\nat = \"{at}\"\nlink = {link}\n{rest}\n");
    let fail = "action = \"fail\"";
    let cases = [
        (one("-1us", "[\"s0\", \"s2\"]", fail), "events[0].at", "must not be negative"),
        (one("1us", "[\"s0\", \"s7\"]", fail), "events[0].link", "'s7' is not a node"),
        (
            one("1us", "[\"s0\", \"s1\"]", fail),
            "events[0].link",
            "s0 and s1 are not linked (s0's links go to h0, s2, s3)",
        ),
        (one("1us", "[\"s0\", \"s0\"]", fail), "events[0].link", "names s0 twice"),
        (one("1us", "[\"h0\", \"s0\"]", fail), "events[0].link", "h0's only link"),
        (one("1us", "[\"s0\", \"s2\"]", "action = \"slow\""), "events[0].bandwidth", "missing"),
        (
            one("1us", "[\"s0\", \"s2\"]", "action = \"fail\"\nbandwidth = \"1Gbps\""),
            "events[0].bandwidth",
            "remove it",
        ),
        (one("1us", "[\"s0\", \"s2\"]", "action = \"restore\""), "events[0].action", "not failed then"),
        (one("1us", "[\"s0\", \"s2\"]", "action = \"fail\"\nindex = 1"), "events[0].index", "index is 0 to 0"),
        (
            one("1us", "[\"s0\", \"s2\"]", fail) + &one("2us", "[\"s0\", \"s3\"]", fail),
            "events[1].link",
            "leaves host 1 unable to reach host 0",
        ),
        (
            one("1us", "[\"s0\", \"s2\"]", fail) + &one("2us", "[\"s2\", \"s0\"]", fail),
            "events[1].action",
            "already failed",
        ),
        (
            // s0-s2 is back at 2 us, but routing leaves it out until 102 us: s0-s3 cannot fail.
            one("1us", "[\"s0\", \"s2\"]", fail)
                + &one("2us", "[\"s0\", \"s2\"]", "action = \"restore\"\ndetection = \"100us\"")
                + &one("10us", "[\"s0\", \"s3\"]", fail),
            "events[2].link",
            "or restored but not yet detected",
        ),
    ];
    for (events, key, message) in cases {
        let e = error(&events);
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(message), "{e}");
    }
}

#[test]
fn switches_cut_off_from_every_host_drop_what_they_hold() {
    // Two 3-hop paths from s0 to s1: over s2 and s4, and over s3 and s5; the flow is sprayed
    // over both. Failing s0-s2 and s4-s1 together leaves s2 and s4 (and the link between them)
    // an island; what is on its way from s2 to s4 when the failure is detected (at once) can
    // never be delivered, and is dropped there.
    let link = |a: &str, b: &str| format!("{{ a = \"{a}\", b = \"{b}\", bandwidth = \"100Gbps\", delay = \"1us\" }}");
    let links: Vec<String> = [
        ("h0", "s0"),
        ("h1", "s1"),
        ("s0", "s2"),
        ("s2", "s4"),
        ("s4", "s1"),
        ("s0", "s3"),
        ("s3", "s5"),
        ("s5", "s1"),
    ]
    .iter()
    .map(|(a, b)| link(a, b))
    .collect();
    let fail = |a: &str, b: &str| {
        format!("[[events]]\nat = \"20us\"\nlink = [\"{a}\", \"{b}\"]\naction = \"fail\"\ndetection = \"0us\"\n")
    };
    let r = common::run(&format!(
        r#"
[topology]
kind = "custom"
hosts = 2
switches = 6
links = [ {} ]
[switch]
routing = "round_robin"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {{ src = 0, dst = 1, size = "1MB" }} ]
{}{}"#,
        links.join(", "),
        fail("s0", "s2"),
        fail("s4", "s1")
    ));
    let drops = |node: &str, peer: &str| r.ports.iter().find(|p| p.node == node && p.peer == peer).unwrap().stats.drops;
    assert!(drops("s2", "s4") > 0, "the packets between s2 and s4 were dropped");
    assert_eq!(r.summary.stop_reason, aiccsim::metrics::StopReason::Completed);
}

#[test]
fn a_fabric_failure_leaves_nvlink_alone() {
    // A ring all-reduce over two GPU servers of 4 GPUs under two ToRs and two spines: the
    // transfers inside a server cross NVLink, those between servers the fabric. A ToR's link to
    // a spine fails and is detected while the ring runs; the NVSwitches, an island of their own
    // by design, lose nothing.
    let r = common::run(
        r#"
[topology]
kind = "clos"
racks = 2
servers_per_rack = 1
gpus_per_server = 4
spines = 2
link = { bandwidth = "200Gbps", delay = "500ns" }
nvlink = { bandwidth = "200GB/s", delay = "25ns" }
[cc]
algorithm = "none"
[workload]
kind = "all_reduce"
size = "4MB"
[[events]]
at = "5us"
link = ["s0", "s2"]
action = "fail"
detection = "2us"
"#,
    );
    let nvlink_drops: u64 =
        r.ports.iter().filter(|p| p.node.starts_with("nvl") || p.peer.starts_with("nvl")).map(|p| p.stats.drops).sum();
    assert_eq!(nvlink_drops, 0);
    assert!(r.flows.iter().any(|f| f.nvlink) && r.flows.iter().any(|f| !f.nvlink));
    assert!(r.summary.packets_dropped > 0, "the fabric link lost what it carried");
}
