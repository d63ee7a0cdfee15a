//! GPU servers: transfers between GPUs of one server go over NVLink and never touch a NIC;
//! the Clos and rail-optimised fabrics of Table I of Khan et al. (HOTI 2022) have the shape they promise.

use crate::common;

use aiccsim::topology::Topology;
use aiccsim::Results;

const NVLINK: &str = "nvlink = { bandwidth = \"200GB/s\", delay = \"25ns\" }";

/// Table I's Clos, scaled down: `racks` racks of 2 servers of 4 GPUs, 200 Gbps / 500 ns links.
fn clos(racks: u32, spines: u32, workload: &str) -> String {
    format!(
        r#"
[topology]
kind = "clos"
racks = {racks}
servers_per_rack = 2
gpus_per_server = 4
spines = {spines}
link = {{ bandwidth = "200Gbps", delay = "500ns" }}
{NVLINK}
[cc]
algorithm = "dcqcn"
[workload]
{workload}
"#
    )
}

/// Bytes sent by the ports of nodes whose name starts with `prefix` ("h": NICs, "nvl": NVLink).
fn sent_by(r: &Results, prefix: &str) -> u64 {
    let named = |n: &str| n.starts_with(prefix) && n[prefix.len()..].chars().all(|c| c.is_ascii_digit());
    r.ports.iter().filter(|p| named(&p.node)).map(|p| p.stats.tx_bytes).sum()
}

#[test]
fn traffic_inside_a_server_never_touches_a_nic() {
    // An all-to-all among the four GPUs of server 1 (hosts 4..8).
    let r = common::run(&clos(2, 2, "kind = \"all_to_all\"\nhosts = \"4..8\"\nsize = \"200KB\""));
    assert!(r.flows.iter().all(|f| f.nvlink), "every transfer stays in the server");
    assert_eq!(sent_by(&r, "h"), 0, "no NIC sent a byte");
    let fabric_switch_bytes: u64 = r
        .ports
        .iter()
        .filter(|p| p.node.starts_with('s') && !p.peer.starts_with("nvl"))
        .map(|p| p.stats.tx_bytes)
        .sum();
    assert_eq!(fabric_switch_bytes, 0, "no fabric switch forwarded a byte");
    assert!(sent_by(&r, "nvl") >= 12 * 200_000, "the NVLink ports carried it all");
    // The workload's hosts are reported, not the NVLink ports' engine numbers.
    assert!(r.flows.iter().all(|f| (4..8).contains(&f.src) && (4..8).contains(&f.dst)));
    assert_eq!(r.summary.pause_frames, 0);
}

#[test]
fn traffic_between_servers_goes_through_the_gpus_own_nics() {
    // GPU 1 (server 0) sends to GPU 6 (server 1), and GPU 2 to GPU 3 (both server 0).
    let flows =
        "kind = \"flows\"\nflows = [ { src = 1, dst = 6, size = \"500KB\" }, { src = 2, dst = 3, size = \"500KB\" } ]";
    let r = common::run(&clos(2, 2, flows));
    assert!(!r.flows[0].nvlink && r.flows[1].nvlink);
    let nic = |name: &str| r.ports.iter().find(|p| p.node == name).expect("port").stats.tx_bytes;
    // GPU 1's NIC sent the data (500 packets of 1048 B); GPU 6's NIC only the ACKs back.
    assert_eq!(nic("h1"), 500 * 1048);
    assert_eq!(nic("h6"), 500 * 60);
    for idle in ["h0", "h2", "h3", "h4", "h5", "h7"] {
        assert_eq!(nic(idle), 0, "{idle} has nothing to send");
    }
    assert_eq!(nic("nvl2"), 500 * 1048);
}

#[test]
fn a_lone_nvlink_transfer_takes_its_analytic_time() {
    // 8 MB at 1600 Gbps over two 25 ns hops: 8000 packets of 1048 B back to back, the last one
    // stored and forwarded once more at the NVSwitch.
    let r = common::run(&clos(1, 1, "kind = \"flows\"\nflows = [ { src = 0, dst = 1, size = \"8MB\" } ]"));
    let packet_ns = 1048.0 * 8.0 / 1600.0;
    let analytic = 8000.0 * packet_ns + packet_ns + 2.0 * 25.0;
    let f = &r.flows[0];
    assert!(f.nvlink);
    let fct = f.fct().unwrap().0 as f64 / 1e3;
    assert!((fct - analytic).abs() / analytic < 0.001, "FCT {fct:.1} ns, analytic {analytic:.1} ns");
    assert!((f.ideal_fct.0 as f64 / 1e3 - analytic).abs() < 1.0);
}

#[test]
fn table_i_clos_is_non_blocking_with_two_links_to_each_spine() {
    // 8 racks of 2 servers of 8 GPUs (128 GPUs), 8 spines, 200 Gbps everywhere: each ToR has
    // 16 NIC links, so 1:1 needs 16 up-links, 2 to each spine.
    let s = common::scenario(
        "[topology]\nkind = \"clos\"\nracks = 8\nservers_per_rack = 2\nspines = 8\nlink = { bandwidth = \"200Gbps\", delay = \"500ns\" }\nnvlink = { bandwidth = \"200GB/s\", delay = \"25ns\" }\n[workload]\nkind = \"permutation\"\nsize = \"1KB\"",
    );
    let t = Topology::build(&s.topology).unwrap();
    assert_eq!((t.fabric_hosts, t.num_hosts), (128, 256));
    assert_eq!((t.fabric_switches, t.num_switches), (16, 32), "8 ToRs, 8 spines, then 16 NVSwitches");
    let tor = |host: u32| t.ports[t.ports[t.host_port(host) as usize].peer as usize].node;
    let tor0 = tor(0);
    let up: usize = t.node_ports[tor0 as usize]
        .iter()
        .filter(|&&p| !t.is_host(t.ports[t.ports[p as usize].peer as usize].node))
        .count();
    assert_eq!(up, 16);
    // Between racks: NIC, ToR, spine, ToR: 4 links; 8 spines x 2 links to choose from.
    assert_eq!(t.path(0, 127, 1).len(), 4);
    assert_eq!(t.next_hops(tor0, 127).len(), 16);
    // Inside a server: NVLink port, NVSwitch: 2 links, no NIC.
    let (a, b) = t.endpoints(0, 7);
    assert!(t.is_nvlink_port(a) && t.is_nvlink_port(b));
    assert_eq!(t.path(a, b, 1).len(), 2);
    assert_eq!(t.endpoints(0, 8), (0, 8), "another server: through the NICs");
}

#[test]
fn an_uneven_spread_over_the_spines_is_refused_with_the_spine_counts_that_work() {
    let text = clos(2, 3, "kind = \"permutation\"\nsize = \"1KB\"");
    let err = aiccsim::Scenario::from_toml(&text, "clos.toml").expect_err("refused");
    assert_eq!(err.key, "topology.spines");
    assert!(err.message.contains("8 up-links") && err.message.contains("(1, 2, 4, 8)"), "{err}");
}

#[test]
fn rail_optimised_keeps_same_index_gpus_on_their_rail() {
    let s = common::scenario(&format!(
        "[topology]\nkind = \"rail\"\nservers = 4\ngpus_per_server = 4\nspines = 2\nlink = {{ bandwidth = \"200Gbps\", delay = \"500ns\" }}\n{NVLINK}\n[workload]\nkind = \"permutation\"\nsize = \"1KB\""
    ));
    let t = Topology::build(&s.topology).unwrap();
    // GPU 1 of server 0 (host 1) and GPU 1 of server 3 (host 13): one rail switch between them.
    assert_eq!(t.path(1, 13, 7).len(), 2);
    // GPU 1 of server 0 to GPU 2 of server 3: rail 1, a spine, rail 2.
    assert_eq!(t.path(1, 14, 7).len(), 4);
    // Rail switch 1 holds GPU 1 of every server.
    let rail = |host: u32| t.ports[t.ports[t.host_port(host) as usize].peer as usize].node;
    assert!([1, 5, 9, 13].iter().all(|&h| rail(h) == rail(1)));
    assert_ne!(rail(1), rail(2));
    // Each rail switch has 4 GPUs below it: 1:1 is 4 up-links, 2 to each spine.
    assert_eq!(t.next_hops(rail(1), 14).len(), 4);
}

#[test]
fn nvlink_needs_servers_of_at_least_two_gpus() {
    let text = format!(
        "[topology]\nkind = \"star\"\nhosts = 4\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n{NVLINK}\n[workload]\nkind = \"permutation\"\nsize = \"1KB\""
    );
    let err = aiccsim::Scenario::from_toml(&text, "star.toml").expect_err("refused");
    assert_eq!(err.key, "topology.nvlink");
    assert!(err.message.contains("gpus_per_server"), "{err}");
}

/// 16 GPUs in 4 servers of 4 on one switch (200 Gbps / 500 ns NICs, NVLink), no congestion
/// control: an all-reduce of 4 MB with `algorithm`, and any further `[workload]` and `[nic]`
/// keys.
fn all_reduce_on_servers_with(algorithm: &str, workload: &str, nic: &str) -> Results {
    common::run(&format!(
        "[topology]\nkind = \"star\"\nhosts = 16\ngpus_per_server = 4\nlink = {{ bandwidth = \"200Gbps\", delay = \"500ns\" }}\n{NVLINK}\n[nic]\n{nic}\n[cc]\nalgorithm = \"none\"\n[workload]\nkind = \"all_reduce\"\nsize = \"4MB\"\nalgorithm = \"{algorithm}\"\n{workload}"
    ))
}

fn all_reduce_on_servers(algorithm: &str) -> Results {
    all_reduce_on_servers_with(algorithm, "", "")
}

/// The idle-fabric time (ns) of the 2D all-reduce's phases on that fabric: inside a server
/// (over NVLink) and across servers (through the NICs). A phase moving `payload` bytes per GPU
/// over a link of `gbps` and `delay_ns` each way takes its data packets with headers, the ACKs
/// of the data coming the other way, two link delays and one store-and-forward at the switch.
fn two_d_phases() -> (f64, f64) {
    let (g, s, size) = (4.0, 4.0, 4e6);
    let phase = |payload: f64, gbps: f64, delay_ns: f64| {
        let wire = payload * (1048.0 + 60.0) / 1000.0;
        wire * 8.0 / gbps + 2.0 * delay_ns + 1048.0 * 8.0 / gbps
    };
    (phase((g - 1.0) / g * size, 1600.0, 25.0), phase((s - 1.0) / s * size / g, 200.0, 500.0))
}

fn assert_close(what: &str, measured: f64, formula: f64) {
    let off = (measured - formula).abs() / formula;
    assert!(off < 0.03, "{what}: {measured:.0} ns, its formula {formula:.0} ns ({:.1}% off)", off * 100.0);
}

#[test]
fn a_2d_all_reduce_takes_the_time_of_its_four_phases() {
    let r = all_reduce_on_servers("hierarchical");
    let (inside, across) = two_d_phases();
    assert_close("2D all-reduce", r.summary.completion_time_ns.unwrap().as_ns_f64(), 2.0 * inside + 2.0 * across);
}

#[test]
fn pipelined_chunks_hide_the_nvlink_phases_behind_the_nic_ones() {
    // With C chunks on persistent connections, the NICs work on chunk k while NVLink works on
    // chunk k+1: the NIC phases take their whole time, the NVLink phases only one chunk's worth
    // at each end, (t_inside_rs + t_inside_ag) / C + t_across_rs + t_across_ag.
    let (inside, across) = two_d_phases();
    for chunks in [2u32, 4] {
        let r = all_reduce_on_servers_with("hierarchical", &format!("chunks = {chunks}"), "");
        let row = &r.collectives[0];
        assert_eq!((row.info.chunks, row.flows), (chunks, 192 * chunks as usize));
        let formula = 2.0 * inside / f64::from(chunks) + 2.0 * across;
        assert_close(&format!("{chunks} chunks"), r.summary.completion_time_ns.unwrap().as_ns_f64(), formula);
    }
    // A fresh queue pair per transfer runs the chunks side by side: no pipeline, the time of
    // the unchunked collective.
    let unchunked = all_reduce_on_servers("hierarchical").summary.completion_time_ns.unwrap().as_ns_f64();
    let fresh = all_reduce_on_servers_with("hierarchical", "chunks = 4", "connections = \"per_transfer\"");
    let t = fresh.summary.completion_time_ns.unwrap().as_ns_f64();
    assert!((t - unchunked).abs() / unchunked < 0.02, "per transfer, 4 chunks: {t:.0} ns against {unchunked:.0}");
}

#[test]
fn a_2d_all_reduce_sends_a_gth_of_the_nic_bytes_of_a_1d_one_and_finishes_first() {
    let one = all_reduce_on_servers("direct");
    let two = all_reduce_on_servers("hierarchical");
    let (nic1, nic2) = (sent_by(&one, "h") as f64, sent_by(&two, "h") as f64);
    let ratio = nic2 / nic1;
    assert!((ratio - 0.25).abs() < 0.01, "2D sends {ratio:.3} of 1D's NIC bytes, 1/G = 0.25");
    let (t1, t2) =
        (one.summary.completion_time_ns.unwrap().as_ns_f64(), two.summary.completion_time_ns.unwrap().as_ns_f64());
    assert!(t2 < 0.5 * t1, "2D {t2:.0} ns against 1D {t1:.0} ns");
}

#[test]
fn a_hierarchical_all_to_all_stays_on_its_rails_and_sends_the_direct_nic_bytes() {
    // 4 servers of 4 GPUs on one group of rail switches: GPU i of every server on rail i.
    let run = |algorithm: &str| {
        common::run(&format!(
            "[topology]\nkind = \"rail\"\nservers = 4\ngpus_per_server = 4\nspines = 2\nlink = {{ bandwidth = \"200Gbps\", delay = \"500ns\" }}\n{NVLINK}\n[workload]\nkind = \"all_to_all\"\nsize = \"64KB\"\nalgorithm = \"{algorithm}\""
        ))
    };
    let (direct, hierarchical) = (run("direct"), run("hierarchical"));
    common::assert_conserved(&hierarchical);
    // Only between same-index GPUs across servers: never through a spine (the last switches
    // before the NVSwitches are the spines: s4 and s5 after rails s0-s3).
    let spine_bytes = |r: &Results| -> u64 {
        r.ports.iter().filter(|p| p.node == "s4" || p.node == "s5").map(|p| p.stats.tx_bytes).sum()
    };
    assert!(spine_bytes(&direct) > 0);
    assert_eq!(spine_bytes(&hierarchical), 0, "hierarchical traffic stays on the rails");
    // The same payload leaves the NICs (12 remote peers x 64 KB per GPU), in 3 transfers of
    // 4 blocks per GPU instead of 12.
    let payload = |r: &Results| -> u64 { r.flows.iter().filter(|f| !f.nvlink).map(|f| f.size_bytes).sum() };
    assert_eq!(payload(&hierarchical), payload(&direct));
    assert_eq!(payload(&direct), 16 * 12 * 64_000);
    assert_eq!(hierarchical.flows.iter().filter(|f| !f.nvlink).count(), 16 * 3);
    assert_eq!(hierarchical.collectives[0].info.algorithm, "hierarchical");
}

/// NVSwitch ports never mark ECN, so their speed says nothing about whether marking can
/// happen: a 4 MB buffer marks on the 200 Gbps fabric ports (Kmin 800 KB) though a 200 GB/s
/// NVLink port would scale Kmin to 6.4 MB. This used to be refused (and would have been
/// warned about) by looking at the fastest port of any switch.
#[test]
fn nvlink_speeds_do_not_decide_whether_ecn_can_mark() {
    let text =
        clos(2, 2, "kind = \"all_to_all\"\nsize = \"200KB\"").replace("[cc]", "[switch]\nbuffer = \"4MB\"\n[cc]");
    let sim = aiccsim::Simulation::new(&common::scenario(&text)).unwrap_or_else(|e| panic!("refused: {e}"));
    assert!(sim.warnings().is_empty(), "{:?}", sim.warnings());
    // Below the fabric ports' Kmin it is refused, naming the slowest port.
    let tiny = text.replace("buffer = \"4MB\"", "buffer = \"4MB\"\necn = { reference_bandwidth = \"10Gbps\" }");
    let e = aiccsim::Simulation::new(&common::scenario(&tiny)).err().expect("refused").to_string();
    assert!(e.contains("switch.ecn.reference_bandwidth") && e.contains("on the slowest, 200Gbps"), "{e}");
}
