//! Helpers shared by the network-level tests.
#![allow(dead_code)]

use aiccsim::{Results, Scenario};

pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml(toml, "test scenario").unwrap_or_else(|e| panic!("{e}"))
}

pub fn run(toml: &str) -> Results {
    let r = aiccsim::run(&scenario(toml)).unwrap();
    assert_conserved(&r);
    r
}

/// Every data byte a NIC sent was received, dropped or cut off by a trimming switch; nothing
/// is left in flight.
pub fn assert_conserved(r: &Results) {
    let b = &r.summary.data_bytes;
    assert_eq!(b.in_flight, 0, "bytes left in flight: {b:?}");
    assert_eq!(b.sent, b.received + b.dropped + b.trimmed.unwrap_or(0), "ledger does not balance: {b:?}");
    assert_eq!(r.summary.flows_finished, r.summary.flows, "unfinished flows");
    for f in &r.flows {
        assert!(f.finish.is_some(), "flow {} did not finish", f.flow_id);
    }
}

/// An n-to-1 incast on a star of 100 Gbps / 1 us links.
pub fn incast(n: u32, size: &str, cc: &str, extra: &str) -> String {
    incast_on(n, size, ("100Gbps", "1us"), &format!("algorithm = \"{cc}\""), extra)
}

/// An n-to-1 incast on a star of `link` = (bandwidth, delay) links (receiver host 0), with the
/// [cc] table body `cc` and any further sections in `extra`.
pub fn incast_on(n: u32, size: &str, link: (&str, &str), cc: &str, extra: &str) -> String {
    let (bandwidth, delay) = link;
    format!(
        r#"
[topology]
kind = "star"
hosts = {hosts}
link = {{ bandwidth = "{bandwidth}", delay = "{delay}" }}
[cc]
{cc}
[workload]
kind = "incast"
senders = "1..={n}"
receiver = 0
size = "{size}"
{extra}
"#,
        hosts = n + 1
    )
}

/// Each host i of leaf 0 sends `size` to host i of leaf 1 over `spines` spines (100 Gbps / 1 us
/// links, no congestion control), routed by `routing`.
pub fn leaf_to_leaf(routing: &str, seed: u64, spines: u32, hosts_per_leaf: u32, size: &str) -> Results {
    leaf_to_leaf_over(routing, seed, (spines, 1), hosts_per_leaf, size)
}

/// [`leaf_to_leaf`] with `links` parallel links between each leaf and each of the `spines`.
pub fn leaf_to_leaf_over(
    routing: &str,
    seed: u64,
    (spines, links): (u32, u32),
    hosts_per_leaf: u32,
    size: &str,
) -> Results {
    let flows: Vec<String> = (0..hosts_per_leaf)
        .map(|i| format!("{{ src = {i}, dst = {}, size = \"{size}\" }}", i + hosts_per_leaf))
        .collect();
    run(&format!(
        r#"
[simulation]
seed = {seed}
[topology]
kind = "leaf_spine"
leaves = 2
spines = {spines}
links_per_spine = {links}
hosts_per_leaf = {hosts_per_leaf}
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = "{routing}"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {} ]
"#,
        flows.join(", ")
    ))
}

/// A star of `hosts` hosts on 100 Gbps / 1 us links under algorithm `cc` (its defaults),
/// running the `[workload]` body `workload`.
pub fn star(hosts: u32, cc: &str, workload: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = {hosts}
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[cc]
algorithm = "{cc}"
[workload]
{workload}
"#
    )
}

/// The link of most tests: 100 Gbps, 1 us.
pub const FAST: (&str, &str) = ("100Gbps", "1us");

/// A `[cc]` body naming algorithm `name` with its defaults.
pub fn algo(name: &str) -> String {
    format!("algorithm = \"{name}\"")
}

/// When the last flow finished, in us.
pub fn completion_us(r: &Results) -> f64 {
    r.summary.completion_time_ns.unwrap().as_us_f64()
}

/// Mean one-way queuing delay of the data packets, in us: on a star, the time they waited in the
/// bottleneck queue, so the packet-weighted mean of that queue over the line rate.
pub fn mean_queuing_us(r: &Results) -> f64 {
    r.summary.queuing_delay_ns.mean.as_us_f64()
}

/// Time the senders' links spent paused by the switch, summed over the senders, in us.
pub fn senders_paused_us(r: &Results) -> f64 {
    r.ports.iter().filter(|p| p.node.starts_with('h') && p.node != "h0").map(|p| p.stats.paused_time.as_us_f64()).sum()
}

/// Lone-flow FCT on an idle path: the wire bytes (48 B of header per packet) at line rate, the
/// propagation of every hop, and one more packet's serialisation per store-and-forward switch.
pub fn lone_analytic_us(size: u64, mtu: u64, gbps: f64, hops: u32, delay_us: f64) -> f64 {
    let packets = size.div_ceil(mtu);
    let ser_us = |bytes: u64| bytes as f64 * 8.0 / (gbps * 1e3);
    ser_us(size + 48 * packets) + hops as f64 * delay_us + (hops - 1) as f64 * ser_us(mtu.min(size) + 48)
}

/// The fuzzer's dictionary as `make fuzz-smoke` composes it (the Makefile's rule for
/// `fuzz/target/scenario.dict`): the kept lines of fuzz/scenario.dict, a line for each key that
/// heads a row of a table in docs/scenario.md, and one for each quoted lowercase word there.
pub fn fuzz_dictionary() -> Vec<String> {
    let docs = read("docs/scenario.md");
    let mut entries: Vec<String> = read("fuzz/scenario.dict").lines().map(str::to_string).collect();
    let is_word = |w: &str, extra: &[char]| {
        w.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && w.chars().all(|c| c.is_ascii_lowercase() || c == '_' || extra.contains(&c))
    };
    for line in docs.lines() {
        if let Some(key) = line.strip_prefix("| `").and_then(|rest| rest.split_once('`')).map(|(key, _)| key) {
            if is_word(key, &['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) {
                entries.push(format!("\"{key}\""));
            }
        }
        for quoted in line.split('"').skip(1).step_by(2) {
            if !quoted.is_empty() && is_word(quoted, &[]) {
                entries.push(format!("\"{quoted}\""));
            }
        }
    }
    entries
}

/// A file of the repository, by its path from the root.
pub fn read(rel: &str) -> String {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
