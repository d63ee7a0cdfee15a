//! Adaptive routing as switches do it, each mode's defining behaviour: DLB routes on sampled,
//! quantised port quality (it cannot tell apart two ports in one band, and avoids a worse band);
//! spraying past a threshold keeps a flow on its ECMP path until that port's queue passes the
//! threshold; CONGA learns from the destination leaf of a slow link beyond its own ports, which
//! local adaptive routing cannot see. And all of them repeat themselves for a seed.

use crate::common;
use aiccsim::Results;

/// Packets (all kinds) port `node` -> `peer` sent.
fn packets(r: &Results, node: &str, peer: &str) -> u64 {
    r.ports.iter().filter(|p| p.node == node && p.peer == peer).map(|p| p.stats.tx_packets).sum()
}

/// Two paths from leaf s0 (hosts 0 and 2) to leaf s1 (host 3), over s2 and s3. Host 0 sends
/// 10 MB to host 4, which hangs off s2, at its link's `background` rate (for longer than the
/// flow below lasts): only ever over s0 -> s2.
/// Host 2 sends 2 MB to host 3 at 20 Gb/s from 20 us on, routed by DLB with `dlb` settings.
fn dlb_past_a_loaded_uplink(background: &str, dlb: &str) -> Results {
    common::run(&format!(
        r#"
[topology]
kind = "custom"
hosts = 5
switches = 4
links = [
  {{ a = "h0", b = "s0", bandwidth = "{background}", delay = "1us" }},
  {{ a = "h1", b = "s0", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "h2", b = "s0", bandwidth = "20Gbps", delay = "1us" }},
  {{ a = "h3", b = "s1", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "h4", b = "s2", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s0", b = "s2", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s0", b = "s3", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s1", b = "s2", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s1", b = "s3", bandwidth = "100Gbps", delay = "1us" }},
]
[switch]
routing = "dlb"
dlb = {{ {dlb} }}
[nic]
recovery = "selective"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [
  {{ src = 0, dst = 4, size = "10MB" }},
  {{ src = 2, dst = 3, size = "2MB", start = "20us" }},
]
"#
    ))
}

/// The share of the 20 Gb/s flow's packets that went over s3 (the background's 10 000 packets
/// are the rest of s0 -> s2's).
fn share_over_s3(r: &Results) -> f64 {
    let (s2, s3) = (packets(r, "s0", "s2"), packets(r, "s0", "s3"));
    assert!(s2 >= 10_000, "the background's packets cross s0 -> s2: {s2}");
    s3 as f64 / (s3 + s2 - 10_000) as f64
}

#[test]
fn dlb_cannot_tell_apart_two_ports_in_one_band() {
    // Judged by load alone: s0 -> s2 carries the background's 30% and s0 -> s3 nothing else, so
    // with the flow's 20 Gb/s split they run near 40% and 10%. Two bands (below and above half
    // the line) put both in the best one, and the flow's packets go either way alike.
    let two = dlb_past_a_loaded_uplink("30Gbps", r#"period = "2us", bands = 2, load_weight = 1.0"#);
    let share = share_over_s3(&two);
    assert!((0.45..=0.55).contains(&share), "two bands: {:.3} of the flow over s3", share);
    // Eight bands tell 30-40% from 10-20%: the flow keeps to s3.
    let eight = dlb_past_a_loaded_uplink("30Gbps", r#"period = "2us", bands = 8, load_weight = 1.0"#);
    let share = share_over_s3(&eight);
    assert!(share > 0.95, "eight bands: {:.3} of the flow over s3", share);
}

#[test]
fn dlb_avoids_a_port_in_a_worse_band() {
    // A 90% background puts s0 -> s2 in the upper of two bands: the flow keeps off it.
    let r = dlb_past_a_loaded_uplink("90Gbps", r#"period = "2us", bands = 2, load_weight = 1.0"#);
    let share = share_over_s3(&r);
    assert!(share > 0.99, "{:.4} of the flow over s3", share);
}

/// One 1 MB flow from leaf 0 to leaf 1 over 4 spines, from a host whose link runs at `host`
/// over 100 Gb/s up-links, routed by `routing`, spraying past 20 KB.
fn one_flow_over_four_spines(routing: &str, host: &str) -> Results {
    common::run(&format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 1
link = {{ bandwidth = "{host}", delay = "1us" }}
fabric_link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = "{routing}"
spray_threshold = {{ threshold = "20KB" }}
[nic]
recovery = "selective"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {{ src = 0, dst = 1, size = "1MB" }} ]
"#
    ))
}

/// Leaf 0's (s0) four up-links: packets and largest queue, spine by spine.
fn uplinks(r: &Results) -> Vec<(u64, u64)> {
    (2..6)
        .map(|s| {
            let p = r.ports.iter().find(|p| p.node == "s0" && p.peer == format!("s{s}")).unwrap();
            (p.stats.tx_packets, p.max_queue)
        })
        .collect()
}

#[test]
fn spray_threshold_keeps_a_flow_on_its_path_until_the_queue_passes_the_threshold() {
    // A 100 Gb/s host never queues at its 100 Gb/s up-link: the flow keeps its ECMP path.
    let alone = uplinks(&one_flow_over_four_spines("spray_threshold", "100Gbps"));
    assert_eq!(alone.iter().filter(|u| u.0 > 0).count(), 1, "one path: {alone:?}");
    assert!(alone.iter().all(|u| u.1 < 20_000), "{alone:?}");
    // A 200 Gb/s host fills it at 100 Gb/s: ECMP lets the queue grow to half the flow...
    let ecmp = uplinks(&one_flow_over_four_spines("ecmp", "200Gbps"));
    let hashed = (0..4).max_by_key(|&i| ecmp[i].0).unwrap();
    assert!(ecmp[hashed].1 > 400_000, "ECMP's queue: {ecmp:?}");
    // ... spraying past 20 KB lets it grow to the threshold (and the packet that passes it),
    // then sends the rest around it.
    let sprayed = uplinks(&one_flow_over_four_spines("spray_threshold", "200Gbps"));
    let (sent, queue) = sprayed[hashed];
    assert!((20_000..=20_000 + 2 * 1048).contains(&queue), "queue of the flow's ECMP up-link: {sprayed:?}");
    let total: u64 = sprayed.iter().map(|u| u.0).sum();
    assert!(sent * 2 > total * 9 / 10, "the hashed up-link stays busy, about half: {sprayed:?}");
    assert!(sprayed.iter().filter(|u| u.0 > 0).count() >= 3, "the overflow spreads: {sprayed:?}");
}

/// Leaf s0 (host 0) reaches leaf s1 (host 1) over spine s2 or s3; s3's link down to s1 runs at
/// 25 Gb/s, a quarter of the others. Host 0 sends 2 MB to host 1, routed by `switch`.
fn past_a_slow_downlink(switch: &str, seed: u64) -> Results {
    common::run(&slow_downlink(switch, seed))
}

fn slow_downlink(switch: &str, seed: u64) -> String {
    format!(
        r#"
[simulation]
seed = {seed}
[topology]
kind = "custom"
hosts = 2
switches = 4
links = [
  {{ a = "h0", b = "s0", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "h1", b = "s1", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s0", b = "s2", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s0", b = "s3", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s2", b = "s1", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "s3", b = "s1", bandwidth = "25Gbps", delay = "1us" }},
]
[switch]
{switch}
[nic]
recovery = "selective"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {{ src = 0, dst = 1, size = "2MB" }} ]
"#
    )
}

/// The share of leaf s0's up-link packets that went over s3.
fn share_over_slow_spine(r: &Results) -> f64 {
    let (s2, s3) = (packets(r, "s0", "s2"), packets(r, "s0", "s3"));
    s3 as f64 / (s2 + s3) as f64
}

#[test]
fn conga_avoids_a_slow_link_beyond_the_leaf_that_local_adaptive_routing_cannot_see() {
    // A seed whose ECMP hash puts the flow on s3, the slow path.
    let seed = (1..40)
        .find(|&seed| share_over_slow_spine(&past_a_slow_downlink(r#"routing = "ecmp""#, seed)) == 1.0)
        .expect("a seed hashing onto s3");
    let fct = |r: &Results| r.flows[0].fct().unwrap().as_us_f64();
    let queue = |r: &Results| r.ports.iter().find(|p| p.node == "s3" && p.peer == "s1").unwrap().max_queue;
    // Leaf s0's up-links never queue (the host sends at their speed): local adaptive routing
    // sees two equal ports and keeps to the hash's, behind the 25 Gb/s link: 2 MB take 670 us,
    // and s3 queues half of them (the buffer's PFC threshold is well above).
    let adaptive = past_a_slow_downlink(r#"routing = "adaptive""#, seed);
    // CONGA, deciding per packet: s1 reports s3's path at the top level within a round trip,
    // and s0 moves the flow to s2, keeping on s3 what balances the two paths' utilisation (a
    // fifth: 20 of 25 Gb/s and 80 of 100).
    let conga = past_a_slow_downlink(
        r#"routing = { leaf = "conga", spine = "ecmp" }
conga = { flowlet_gap = "0s" }"#,
        seed,
    );
    let msg = format!(
        "seed {seed}; adaptive: {:.3} of packets over s3, FCT {:.1} us, s3 -> s1 queue {} B; conga: {:.3}, {:.1} us, {} B",
        share_over_slow_spine(&adaptive),
        fct(&adaptive),
        queue(&adaptive),
        share_over_slow_spine(&conga),
        fct(&conga),
        queue(&conga),
    );
    assert_eq!(share_over_slow_spine(&adaptive), 1.0, "{msg}");
    assert!(fct(&adaptive) > 650.0 && queue(&adaptive) > 1_000_000, "{msg}");
    assert!((0.1..0.3).contains(&share_over_slow_spine(&conga)), "{msg}");
    let ideal = conga.flows[0].ideal_fct.as_us_f64();
    assert!(fct(&conga) < 1.3 * ideal, "ideal {ideal:.1} us; {msg}");
    assert!(queue(&conga) * 8 < queue(&adaptive), "{msg}");
}

#[test]
fn conga_moves_flows_only_between_flowlets() {
    // By default CONGA picks per flowlet: a flow sent at line rate never pauses long enough to
    // start another, so it keeps the up-link its first packet took.
    let r = past_a_slow_downlink(r#"routing = "conga""#, 1);
    let used = ["s2", "s3"].iter().filter(|s| packets(&r, "s0", s) > 0).count();
    assert_eq!(used, 1, "one flowlet, one up-link");
    let text = common::scenario(&slow_downlink(r#"routing = "conga""#, 1)).to_toml();
    assert!(
        text.contains("[switch.conga]") && text.contains("flowlet_gap = \"5us\""),
        "the defaults are written out:\n{text}"
    );
}

#[test]
fn each_mode_gives_the_same_bytes_for_the_same_seed() {
    let runs = [
        past_a_slow_downlink("routing = \"conga\"\nconga = { flowlet_gap = \"0s\" }", 3),
        past_a_slow_downlink("routing = \"dlb\"\ndlb = { period = \"1us\" }", 3),
        one_flow_over_four_spines("spray_threshold", "200Gbps"),
    ];
    let again = [
        past_a_slow_downlink("routing = \"conga\"\nconga = { flowlet_gap = \"0s\" }", 3),
        past_a_slow_downlink("routing = \"dlb\"\ndlb = { period = \"1us\" }", 3),
        one_flow_over_four_spines("spray_threshold", "200Gbps"),
    ];
    for (a, b) in runs.iter().zip(&again) {
        let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        a.write_dir(da.path()).unwrap();
        b.write_dir(db.path()).unwrap();
        for table in ["flows.csv", "ports.csv"] {
            let (x, y) = (std::fs::read(da.path().join(table)).unwrap(), std::fs::read(db.path().join(table)).unwrap());
            assert!(x == y, "{table} differs between two runs of one seed");
        }
        assert_eq!(a.deterministic_summary(), b.deterministic_summary());
    }
}

#[test]
fn conga_is_the_leaves_choice() {
    let text = |routing: &str| {
        format!(
            r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 1
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = {routing}
[workload]
kind = "flows"
flows = [ {{ src = 0, dst = 1, size = "10KB" }} ]
"#
        )
    };
    let err = aiccsim::Scenario::from_toml(&text(r#"{ leaf = "conga", spine = "conga" }"#), "t.toml").unwrap_err();
    assert_eq!(err.key, "switch.routing.spine");
    assert!(err.message.contains("is the leaves' choice"), "{err}");
    // `"conga"` for every switch: the spines hash, as CONGA's do (the same run as naming it
    // for the leaves alone).
    let all = common::run(&text(r#""conga""#));
    let leaves = common::run(&text(r#"{ leaf = "conga" }"#));
    assert_eq!(all.flows[0].finish, leaves.flows[0].finish);
}
