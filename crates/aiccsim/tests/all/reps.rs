//! Load balancing at the sending NIC (`nic.load_balancing`): oblivious spraying and REPS choose
//! an entropy per packet, and switches that route by `"ecmp"` hash it, so a flow's packets
//! spread over every equal-cost path; REPS recycles the entropies whose ACKs came back unmarked,
//! which steers a flow off a path whose queue marks. Selective recovery takes the reordering:
//! `common::run` checks that every byte arrives and the ledger balances.

use crate::common::{self, completion_us};

use aiccsim::Results;
use std::fs;

const FLOW_WIRE: u64 = 500 * 1048;

/// The `[nic]` body of a spraying NIC: `load_balancing` with selective recovery.
fn nic(load_balancing: &str) -> String {
    format!("load_balancing = \"{load_balancing}\"\nrecovery = \"selective\"")
}

/// `flows` (the `[workload]` list's entries) on a leaf-spine of 2 leaves, `spines` spines and
/// `hosts` hosts a leaf (100 Gbps / 1 us, ECMP switches marking from 20 KB, no congestion
/// control), with `[nic]` body `nic`.
fn leaf_spine(seed: u64, spines: u32, hosts: u32, nic: &str, flows: &[String]) -> String {
    format!(
        r#"
[simulation]
seed = {seed}
[topology]
kind = "leaf_spine"
leaves = 2
spines = {spines}
hosts_per_leaf = {hosts}
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = "ecmp"
ecn = {{ kmin = "20KB", kmax = "80KB", pmax = 1.0 }}
[nic]
{nic}
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {} ]
"#,
        flows.join(", ")
    )
}

/// Each host i of leaf 0 sends `size` to host i of leaf 1.
fn leaf_to_leaf(hosts: u32, size: &str) -> Vec<String> {
    (0..hosts).map(|i| format!("{{ src = {i}, dst = {}, size = \"{size}\" }}", i + hosts)).collect()
}

/// Packets leaf 0 (s0) sent up to each spine (s2, s3, ...), from ports.csv's counters.
fn uplink_packets(r: &Results, spines: u32) -> Vec<u64> {
    (2..2 + spines)
        .map(|s| {
            let spine = format!("s{s}");
            r.ports.iter().filter(|p| p.node == "s0" && p.peer == spine).map(|p| p.stats.tx_packets).sum()
        })
        .collect()
}

/// Bytes leaf 0 sent up to each spine.
fn uplink_bytes(r: &Results, spines: u32) -> Vec<u64> {
    (2..2 + spines)
        .map(|s| {
            let spine = format!("s{s}");
            r.ports.iter().filter(|p| p.node == "s0" && p.peer == spine).map(|p| p.stats.tx_bytes).sum()
        })
        .collect()
}

#[test]
fn a_spraying_nic_spreads_one_flow_over_every_spine() {
    // One 1 MB flow (1000 packets) from leaf 0 to leaf 1 over 4 spines: leaf 0's up-links carry
    // nothing else (the ACKs come down to it).
    let one = |lb: &str| common::run(&leaf_spine(1, 4, 1, &nic(lb), &leaf_to_leaf(1, "1MB")));
    let flow = one("flow");
    let up = uplink_packets(&flow, 4);
    assert_eq!(up.iter().filter(|&&n| n > 0).count(), 1, "one entropy, one path: {up:?}");
    for lb in ["oblivious", "reps"] {
        let r = one(lb);
        let up = uplink_packets(&r, 4);
        let resent = r.summary.retransmitted_bytes / 1000;
        assert_eq!(up.iter().sum::<u64>(), 1000 + resent, "{lb}: {up:?}");
        // 64 entropies hashed onto 4 spines: each gets a share, none all of it.
        assert!(up.iter().all(|&n| n >= 100), "{lb} leaves a spine (nearly) unused: {up:?}");
    }
}

#[test]
fn spraying_nics_undo_an_ecmp_collision_and_reps_does_no_worse_than_one_path_per_flow() {
    // Seed 5 hashes three of the four flows onto one spine (`net_routing.rs`), which then
    // serialises them back to back.
    let run = |lb: &str| common::run(&leaf_spine(5, 4, 4, &nic(lb), &leaf_to_leaf(4, "500KB")));
    let (flow, oblivious, reps) = (run("flow"), run("oblivious"), run("reps"));
    let f = |r: &Results| format!("uplinks {:?} B, done {:.1} us", uplink_bytes(r, 4), completion_us(r));
    let msg = format!("flow: {}; oblivious: {}; reps: {}", f(&flow), f(&oblivious), f(&reps));
    let up = uplink_bytes(&flow, 4);
    assert_eq!(*up.iter().max().unwrap(), 3 * FLOW_WIRE, "the seed must collide: {msg}");
    for r in [&oblivious, &reps] {
        let up = uplink_bytes(r, 4);
        let (lo, hi) = (*up.iter().min().unwrap(), *up.iter().max().unwrap());
        assert!(hi < 2 * FLOW_WIRE && lo > FLOW_WIRE / 2, "every spine carries a share: {msg}");
        assert!(completion_us(r) < 0.8 * completion_us(&flow), "{msg}");
    }
    assert!(completion_us(&reps) <= completion_us(&flow), "{msg}");
}

/// A fabric with a congested path (as `net_routing.rs` builds it): leaf s0 (hosts 0-2) reaches
/// leaf s1 (host 3) over spine s2 or spine s3; host 4 hangs off spine s2, so hosts 0 and 1
/// sending to it fill s0's link to s2 with twice what it carries. Host 2 sends 1 MB to host 3
/// from 20 us on, when that queue has built and marks.
fn past_a_congested_spine(lb: &str) -> Results {
    common::run(&format!(
        r#"
[simulation]
seed = 3
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
routing = "ecmp"
ecn = {{ kmin = "20KB", kmax = "80KB", pmax = 1.0 }}
[nic]
{}
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [
  {{ src = 0, dst = 4, size = "2MB" }},
  {{ src = 1, dst = 4, size = "2MB" }},
  {{ src = 2, dst = 3, size = "1MB", start = "20us" }},
]
"#,
        nic(lb)
    ))
}

#[test]
fn reps_steers_a_flow_off_the_path_that_marks() {
    // The background crosses s0 -> s2 alone, 2 x 2000 packets: what else crosses it is flow 2's.
    let on_busy = |r: &Results| {
        let busy: u64 = r.ports.iter().filter(|p| p.node == "s0" && p.peer == "s2").map(|p| p.stats.tx_packets).sum();
        busy - 4000
    };
    let (oblivious, reps) = (past_a_congested_spine("oblivious"), past_a_congested_spine("reps"));
    let msg = format!(
        "flow 2's packets over the busy spine: oblivious {} (slowdown {:.2}), reps {} (slowdown {:.2})",
        on_busy(&oblivious),
        oblivious.flows[2].slowdown().unwrap(),
        on_busy(&reps),
        reps.flows[2].slowdown().unwrap()
    );
    // Oblivious: about half of its 1000 packets, whatever the queue.
    assert!((300..=700).contains(&on_busy(&oblivious)), "{msg}");
    // REPS: the marked entropies are dropped and the unmarked ones reused, so few packets go
    // the busy way after the first round trip.
    assert!(on_busy(&reps) * 3 < on_busy(&oblivious), "{msg}");
    assert!(reps.flows[2].slowdown().unwrap() < oblivious.flows[2].slowdown().unwrap(), "{msg}");
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_other_paths() {
    let toml = |seed| leaf_spine(seed, 4, 4, &nic("reps"), &leaf_to_leaf(4, "200KB"));
    let write = |seed| {
        let r = common::run(&toml(seed));
        let dir = tempfile::tempdir().unwrap();
        r.write_dir(dir.path()).unwrap();
        dir
    };
    let (a, b, c) = (write(2), write(2), write(3));
    for file in ["flows.csv", "ports.csv"] {
        let x = fs::read(a.path().join(file)).unwrap();
        assert!(x == fs::read(b.path().join(file)).unwrap(), "{file} differs between two runs of one seed");
    }
    assert!(
        fs::read(a.path().join("ports.csv")).unwrap() != fs::read(c.path().join("ports.csv")).unwrap(),
        "another seed, other entropies"
    );
}

#[test]
fn spraying_nics_are_not_fast_forwarded_and_the_summary_says_why() {
    let toml = leaf_spine(1, 2, 1, &nic("oblivious"), &leaf_to_leaf(1, "500KB"));
    let r = common::run(&format!("{}\n", toml.replacen("[simulation]\n", "[simulation]\nfast_forward = true\n", 1)));
    let ff = r.summary.fast_forward.as_ref().expect("reported");
    let why = ff.off_because.as_deref().unwrap_or_default();
    assert!(why.contains("nic.load_balancing") && why.contains("oblivious"), "{ff:?}");
}

#[test]
fn go_back_n_takes_the_reordering_at_a_price() {
    // Allowed, as under spraying switches: four flows sprayed over four spines meet queues of
    // different depths, and every overtaken packet costs a go-back, which selective recovery
    // does not pay.
    let run = |nic: &str| common::run(&leaf_spine(5, 4, 4, nic, &leaf_to_leaf(4, "300KB")));
    let go_back = run("load_balancing = \"oblivious\"");
    let selective = run(&nic("oblivious"));
    let msg = format!(
        "go-back-N: {} NACKs, {} B resent; selective: {} B resent",
        go_back.summary.nacks, go_back.summary.retransmitted_bytes, selective.summary.retransmitted_bytes
    );
    assert!(go_back.summary.nacks > 0, "{msg}");
    assert!(go_back.summary.retransmitted_bytes > selective.summary.retransmitted_bytes, "{msg}");
}

#[test]
fn the_entropies_and_the_reps_settings_are_checked() {
    let refused = |nic: &str| {
        let toml = leaf_spine(1, 2, 1, nic, &leaf_to_leaf(1, "10KB"));
        aiccsim::Scenario::from_toml(&toml, "t.toml").expect_err("refused").to_string()
    };
    let err = refused("load_balancing = \"oblivious\"\nentropies = 48");
    assert!(err.contains("nic.entropies") && err.contains("power of two"), "{err}");
    let err = refused("load_balancing = \"reps\"\nreps = { buffer = 0 }");
    assert!(err.contains("nic.reps.buffer"), "{err}");
    // The defaults are written out where they apply, and left out where they do not.
    let resolved = |nic: &str| common::scenario(&leaf_spine(1, 2, 1, nic, &leaf_to_leaf(1, "10KB"))).nic;
    let reps = resolved("load_balancing = \"reps\"");
    assert_eq!((reps.entropies, reps.reps.map(|r| r.buffer)), (Some(64), Some(8)));
    let flow = resolved("");
    assert_eq!((flow.entropies, flow.reps.is_none()), (None, true));
}
