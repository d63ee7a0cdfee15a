//! Fluid NVLink (`simulation.nvlink = "fluid"`): transfers inside a server as max-min fair rates
//! give the completion times packet-by-packet NVLink gives, to the rounding of packet times where
//! nothing queues, and within 1% for collectives inside and across servers; the fabric's
//! transfers are unchanged in kind; the ports are credited the bytes that crossed them.

use crate::common;

use aiccsim::Results;

/// `racks` racks of 2 servers of 4 GPUs on a Clos (200 Gbps / 500 ns), NVLink 200 GB/s / 25 ns,
/// DCQCN on the fabric; `nvlink` is the model.
fn clos(racks: u32, nvlink: &str, workload: &str) -> String {
    format!(
        r#"
[simulation]
nvlink = "{nvlink}"
[topology]
kind = "clos"
racks = {racks}
servers_per_rack = 2
gpus_per_server = 4
spines = 2
link = {{ bandwidth = "200Gbps", delay = "500ns" }}
nvlink = {{ bandwidth = "200GB/s", delay = "25ns" }}
[cc]
algorithm = "dcqcn"
{workload}
"#
    )
}

fn both(racks: u32, workload: &str) -> (Results, Results) {
    (common::run(&clos(racks, "packet", workload)), common::run(&clos(racks, "fluid", workload)))
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / b
}

fn fct(f: &aiccsim::metrics::FlowRecord) -> u64 {
    (f.finish.expect("finished") - f.start).0
}

fn port_bytes(r: &Results, prefix: &str) -> u64 {
    let named = |n: &str| n.starts_with(prefix) && n[prefix.len()..].chars().all(|c| c.is_ascii_digit());
    r.ports.iter().filter(|p| named(&p.node)).map(|p| p.stats.tx_bytes).sum()
}

#[test]
fn a_lone_transfer_finishes_when_it_would_packet_by_packet() {
    for size in ["1B", "4KB", "1000000B", "8MB", "1234567B"] {
        let w = format!("[workload]\nkind = \"flows\"\nflows = [ {{ src = 0, dst = 1, size = \"{size}\" }} ]");
        let (packet, fluid) = both(1, &w);
        let (p, f) = (&packet.flows[0], &fluid.flows[0]);
        assert!(f.nvlink);
        // Each packet's serialisation rounds up to a picosecond packet by packet; the fluid
        // rounds the whole transfer once.
        let packets = p.size_bytes.div_ceil(1000) as i64;
        let gap = fct(p) as i64 - fct(f) as i64;
        assert!((0..=packets).contains(&gap), "{size}: packet {} fluid {}", fct(p), fct(f));
        assert_eq!(p.size_bytes, f.size_bytes);
        // The same bytes crossed the same ports: data one way, ACKs the other.
        assert_eq!(port_bytes(&packet, "nvl"), port_bytes(&fluid, "nvl"), "{size}");
        assert_eq!(packet.summary.data_bytes.sent, fluid.summary.data_bytes.sent);
    }
}

#[test]
fn an_all_to_all_inside_a_server_matches_packet_by_packet_within_a_percent() {
    let w = "[workload]\nkind = \"all_to_all\"\nhosts = \"0..4\"\nsize = \"4MB\"";
    let (packet, fluid) = both(1, w);
    let err = relative(common::completion_us(&fluid), common::completion_us(&packet));
    assert!(err < 0.01, "completion {} vs {} us", common::completion_us(&fluid), common::completion_us(&packet));
    for (p, f) in packet.flows.iter().zip(&fluid.flows) {
        let err = relative(fct(f) as f64, fct(p) as f64);
        assert!(err < 0.01, "flow {} fct {} vs {}", p.flow_id, fct(f), fct(p));
    }
    common::assert_conserved(&fluid);
    // Nothing crossed a NIC, and the fluid simulated no packet on NVLink.
    assert_eq!(port_bytes(&fluid, "h"), 0);
    assert!(fluid.summary.packet_hops * 100 < packet.summary.packet_hops);
}

#[test]
fn a_transfer_limited_at_its_receiver_leaves_its_senders_port_to_the_others() {
    // GPUs 1 and 2 both send to GPU 0; GPU 1 also sends to GPU 3. Max-min: the two into GPU 0
    // get half of its port each, GPU 1's other transfer the half its port has left.
    let w = r#"[workload]
kind = "flows"
flows = [ { src = 1, dst = 0, size = "2MB" }, { src = 2, dst = 0, size = "2MB" }, { src = 1, dst = 3, size = "2MB" } ]"#;
    let fluid = common::run(&clos(1, "fluid", w));
    let fcts: Vec<f64> = fluid.flows.iter().map(|f| fct(f) as f64).collect();
    // 2 MB at 100 GB/s (with headers: 2,096,000 wire bytes) is 20.96 us.
    for t in &fcts {
        assert!(relative(*t, 20.96e6) < 0.01, "{fcts:?}");
    }
}

#[test]
fn hierarchical_all_reduce_across_servers_matches_packet_by_packet() {
    // Two racks (four servers of four GPUs): reduce-scatter inside each server over NVLink,
    // all-reduce across servers over the fabric, all-gather inside again. Without congestion
    // control on the fabric, whose random ECN marks would make its phase differ by more than the
    // nanoseconds by which the NVLink phase moves its start (DCQCN: 525.3 against 538.8 us, where
    // seeds 1, 2 and 3 packet by packet give 538.8, 245.5 and 515.7 us), the two agree closely.
    let w = "[workload]\nkind = \"all_reduce\"\nsize = \"8MB\"\nalgorithm = \"hierarchical\"";
    let no_cc = |model| common::run(&clos(2, model, w).replace("\"dcqcn\"", "\"none\""));
    let (packet, fluid) = (no_cc("packet"), no_cc("fluid"));
    let (p, f) = (common::completion_us(&packet), common::completion_us(&fluid));
    assert!(relative(f, p) < 0.001, "completion {f} vs {p} us");
    assert!(fluid.flows.iter().any(|f| f.nvlink) && fluid.flows.iter().any(|f| !f.nvlink));
    common::assert_conserved(&fluid);
    // The fabric carried the same bytes.
    assert_eq!(port_bytes(&packet, "h"), port_bytes(&fluid, "h"));
}

#[test]
fn messages_on_one_connection_follow_each_other() {
    // Two all-reduces back to back on the same persistent connections inside one server.
    let w = r#"[[jobs]]
name = "twice"
hosts = "0..4"
[[jobs.workload]]
kind = "all_reduce"
size = "1MB"
[[jobs.workload]]
kind = "all_reduce"
size = "1MB"
"#;
    let (packet, fluid) = both(1, w);
    let (p, f) = (common::completion_us(&packet), common::completion_us(&fluid));
    assert!(relative(f, p) < 0.01, "completion {f} vs {p} us");
    assert_eq!(packet.flows.len(), fluid.flows.len());
    common::assert_conserved(&fluid);
}

#[test]
fn fluid_runs_are_deterministic() {
    let w = "[workload]\nkind = \"all_reduce\"\nsize = \"2MB\"\nalgorithm = \"hierarchical\"";
    let (a, b) = (common::run(&clos(2, "fluid", w)), common::run(&clos(2, "fluid", w)));
    let fcts = |r: &Results| r.flows.iter().map(|f| f.finish).collect::<Vec<_>>();
    assert_eq!(fcts(&a), fcts(&b));
}

#[test]
fn a_link_event_on_nvlink_is_refused_with_fluid_nvlink() {
    let w = "[workload]\nkind = \"all_to_all\"\nhosts = \"0..4\"\nsize = \"1MB\"\n[[events]]\nat = \"1us\"\nlink = [\"nvl0\", \"s3\"]\naction = \"slow\"\nbandwidth = \"100GB/s\"";
    let s = common::scenario(&clos(1, "fluid", w));
    let err = aiccsim::Simulation::new(&s).err().expect("refused");
    assert!(err.to_string().contains("simulation.nvlink"), "{err}");
}
