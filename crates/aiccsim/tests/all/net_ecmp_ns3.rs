//! `switch.routing = "ecmp_ns3"`: a twin imported from the HPCC ns-3 simulator's files puts every
//! flow, and its ACKs, on the path ns-3 put them on. The peer's paths were read from its own
//! packet trace of the k = 4 fat tree (`tests/ns3_peer/record_paths.sh`,
//! `peer_results/fattree.paths.csv`).

use crate::common;

use aiccsim::metrics::trace::TraceEvent;
use aiccsim::wire::packet::PacketKind;
use std::collections::BTreeMap;

const INPUTS: &str = "tests/ns3_peer/inputs/fattree_dcqcn";

/// The fat tree's twin as `aiccsim import-ns3 --config` writes it, with `edit` applied to its
/// TOML, every flow cut to one packet (ns-3's path depends on a flow's hosts and ports, not on
/// its size) and every packet of the fabric's switches traced.
fn twin(edit: impl Fn(&mut toml::Table)) -> aiccsim::Results {
    let file = |name: &str| common::read(&format!("{INPUTS}/{name}"));
    let mut import = aiccsim::config::ns3::import(&file("topology.txt"), "topology.txt", &file("flow.txt"), "flow.txt")
        .unwrap_or_else(|e| panic!("{e}"));
    import.configure(&file("config.txt"), "config.txt").unwrap_or_else(|e| panic!("{e}"));
    let mut table: toml::Table = import.scenario_toml("", "base").unwrap().parse().unwrap();
    let flows = table["workload"]["flows"].as_array().unwrap().len();
    for f in table["workload"].as_table_mut().unwrap()["flows"].as_array_mut().unwrap() {
        f.as_table_mut().unwrap().insert("size".into(), "1000B".into());
    }
    let mut output = toml::Table::new();
    output.insert("trace".into(), toml::Value::Table(toml::Table::new()));
    table.insert("output".into(), toml::Value::Table(output));
    edit(&mut table);
    let r = aiccsim::run(&common::scenario(&toml::to_string(&table).unwrap())).unwrap();
    assert_eq!(r.flows.len(), flows);
    r
}

/// Per flow, the switch hops of its data and of its ACKs, as "node:device" in ns-3's numbering
/// (hosts first here, so switch s is ns-3 node hosts + s; aiccsim's port i of a node is ns-3's
/// device i + 1, as the import keeps the topology file's link order).
fn hops(r: &aiccsim::Results) -> BTreeMap<u32, [String; 2]> {
    let mut seen: BTreeMap<(u32, bool), Vec<String>> = BTreeMap::new();
    for t in r.trace.as_ref().unwrap() {
        let is_data = match t.kind {
            PacketKind::Data => true,
            PacketKind::Ack => false,
            _ => continue,
        };
        if t.event != TraceEvent::Send || t.node < r.topology.num_hosts {
            continue;
        }
        let hop = format!("{}:{}", t.node, t.port + 1);
        let list = seen.entry((t.flow.unwrap(), is_data)).or_default();
        if !list.contains(&hop) {
            list.push(hop);
        }
    }
    let mut out = BTreeMap::new();
    for ((flow, is_data), list) in seen {
        let entry: &mut [String; 2] = out.entry(flow).or_default();
        entry[usize::from(!is_data)] = list.join(" ");
    }
    out
}

fn ns3_paths() -> BTreeMap<u32, [String; 2]> {
    let text = common::read("tests/ns3_peer/peer_results/fattree.paths.csv");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("flow,src,dst,sport,dport,data_hops,ack_hops"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), [f[5].to_string(), f[6].to_string()])
        })
        .collect()
}

#[test]
fn an_imported_fat_tree_takes_ns3s_paths_and_aiccsims_hash_does_not() {
    let peer = ns3_paths();
    assert_eq!(peer.len(), 200);
    let ours = hops(&twin(|_| {}));
    assert_eq!(ours.len(), 200, "every flow's data and ACKs crossed a switch");
    for (flow, [data, ack]) in &peer {
        assert_eq!(&ours[flow][0], data, "flow {flow}'s data");
        assert_eq!(&ours[flow][1], ack, "flow {flow}'s ACKs");
    }
    // aiccsim's own hash puts many flows elsewhere: what the twin matched is not a given.
    let hashed = hops(&twin(|t| {
        t["switch"].as_table_mut().unwrap().insert("routing".into(), "ecmp".into());
    }));
    let differ = peer.iter().filter(|(f, p)| hashed[f][0] != p[0]).count();
    assert!(differ >= 60, "only {differ} of 200 flows elsewhere with aiccsim's hash");
}

#[test]
fn a_seed_offset_draws_other_paths_and_node_ids_are_checked() {
    let peer = ns3_paths();
    let salted = hops(&twin(|t| {
        let sw = t["switch"].as_table_mut().unwrap();
        sw["ecmp_ns3"].as_table_mut().unwrap().insert("seed_offset".into(), 1000.into());
    }));
    let differ = peer.iter().filter(|(f, p)| salted[f][0] != p[0]).count();
    assert!(differ >= 60, "only {differ} of 200 flows elsewhere with other seeds");

    let error = |ecmp_ns3: &str| {
        let text = format!(
            r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = "ecmp_ns3"
ecmp_ns3 = {ecmp_ns3}
[workload]
kind = "flows"
flows = [{{ src = 0, dst = 2, size = "1KB" }}]
"#
        );
        aiccsim::run(&common::scenario(&text)).err().map(|e| e.to_string()).unwrap_or_default()
    };
    let short = error("{ host_ids = [0] }");
    assert!(short.contains("switch.ecmp_ns3.host_ids") && short.contains("1 ids for the 4 hosts"), "{short}");
    let twice = error("{ switch_ids = [4, 5, 6, 3] }");
    assert!(twice.contains("host 3 and switch 3 are both ns-3 node 3"), "{twice}");
    assert_eq!(error("{ switch_ids = [7, 6, 5, 4], dport = 4791 }"), "", "another numbering runs");
}
