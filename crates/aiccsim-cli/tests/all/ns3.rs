//! `aiccsim import-ns3`: the HPCC ns-3 pair in tests/ns3 imports, runs, and its flows are the
//! ones the flow file describes.

use crate::common::aiccsim;

use std::path::{Path, PathBuf};
use std::process::Output;

fn ns3(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/ns3").join(file)
}

fn import(dir: &Path, topology: &Path, flows: &Path, base: Option<&Path>) -> Output {
    let out = dir.join("scenario.toml");
    let mut args = vec!["import-ns3", "--topology", topology.to_str().unwrap(), "--flows", flows.to_str().unwrap()];
    if let Some(b) = base {
        args.extend(["--base", b.to_str().unwrap()]);
    }
    args.extend(["-o", out.to_str().unwrap()]);
    aiccsim(&args)
}

fn run(dir: &Path) -> Vec<Vec<String>> {
    let out = dir.join("out");
    let o = aiccsim(&["run", dir.join("scenario.toml").to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    csv.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect()
}

#[test]
fn imported_flows_match_the_flow_file() {
    let dir = tempfile::tempdir().unwrap();
    let o = import(dir.path(), &ns3("topology.txt"), &ns3("flow.txt"), Some(&ns3("base.toml")));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("4 hosts, 2 switches, 5 links, 4 flows"), "{said}");
    assert!(said.contains("s0 = ns-3 2, s1 = ns-3 5"), "{said}");

    // The mapping, worked out here from the file itself: hosts are the non-switch ids in order.
    let topo = std::fs::read_to_string(ns3("topology.txt")).unwrap();
    let switches: Vec<u32> = topo.lines().nth(1).unwrap().split_whitespace().map(|t| t.parse().unwrap()).collect();
    let nodes: u32 = topo.split_whitespace().next().unwrap().parse().unwrap();
    let hosts: Vec<u32> = (0..nodes).filter(|n| !switches.contains(n)).collect();
    let host = |ns3_id: &str| hosts.iter().position(|&h| h == ns3_id.parse::<u32>().unwrap()).unwrap().to_string();

    let flows = std::fs::read_to_string(ns3("flow.txt")).unwrap();
    let expected: Vec<Vec<&str>> = flows.lines().skip(1).map(|l| l.split_whitespace().collect()).collect();
    let got = run(dir.path());
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g[1], host(e[0]), "src of {g:?}");
        assert_eq!(g[2], host(e[1]), "dst of {g:?}");
        assert_eq!(g[3], e[4], "size of {g:?}");
        let start_ns = (e[5].parse::<f64>().unwrap() * 1e9).round() as u64;
        assert_eq!(g[4], format!("{start_ns}.000"), "start of {g:?}");
        assert!(!g[5].is_empty(), "flow {g:?} unfinished");
    }
    // The last flow starts 1 ms after the others and is alone: 3 packets of 1048 B over 3 hops of
    // 100 Gbps and 1 us each, store-and-forward: (3 + 2) x 83.84 ns + 3 x 1 us.
    let lone = got.last().unwrap();
    assert_eq!(lone[6], "3419.200");
    assert_eq!(lone[6], lone[7], "FCT equals the ideal");
}

#[test]
fn without_a_base_the_defaults_apply_and_text_after_the_flows_is_ignored_as_ns3_does() {
    let dir = tempfile::tempdir().unwrap();
    // ns-3's own mix/flow.txt ends with notes after the announced flows.
    let flows = dir.path().join("flow.txt");
    std::fs::write(&flows, "1\n0 4 3 100 10000 2\n1 3 3 100 10000 2\n\nFirst line: # of flows\n").unwrap();
    let o = import(dir.path(), &ns3("topology.txt"), &flows, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("flow.txt:3: ignored: ns-3 reads only the 1 flows"), "{err}");
    let got = run(dir.path());
    assert_eq!(got.len(), 1);
    assert_eq!((got[0][1].as_str(), got[0][2].as_str()), ("0", "3"));
}

#[test]
fn bad_ns3_inputs_exit_2_naming_file_line_and_field() {
    let topo = std::fs::read_to_string(ns3("topology.txt")).unwrap();
    let flows = std::fs::read_to_string(ns3("flow.txt")).unwrap();
    let cases = [
        (topo.replace("1 2 100Gbps", "1 9 100Gbps"), flows.clone(), "topology.txt:4: dst: node 9 does not exist"),
        (topo.replace("3 5 100Gbps 1us", "3 5 100Gbs 1us"), flows.clone(), "topology.txt:6: rate: '100Gbs'"),
        (
            topo.replace("4 5 100Gbps 0.001ms 0", "4 5 100Gbps 0.001ms 0.01"),
            flows.clone(),
            "topology.txt:7: error_rate",
        ),
        (
            topo.replace("6 2 5", "6 2 6") + "0 5 100Gbps 1us 0\n",
            flows.clone(),
            "topology.txt:8: src: host node 0 has a second link",
        ),
        (topo.clone(), flows.replacen('4', "5", 1), "flow.txt:5: src: the file ends here"),
        (topo.clone(), flows.replace("3 0 3 100", "3 2 3 100"), "flow.txt:4: dst: node 2 is a switch"),
        (topo.clone(), flows.replace("2.000005", "1.5"), "flow.txt:4: start_time"),
    ];
    for (t, f, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (tp, fp) = (dir.path().join("topology.txt"), dir.path().join("flow.txt"));
        std::fs::write(&tp, &t).unwrap();
        std::fs::write(&fp, &f).unwrap();
        let o = import(dir.path(), &tp, &fp, None);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{want}: {err}");
        assert!(err.starts_with("error: ") && err.contains(want), "want {want}, got {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!dir.path().join("scenario.toml").exists(), "nothing written on error");
    }
}

/// The topology file with its first link's rate replaced, and `prefix` written before it.
fn topology_with(dir: &Path, prefix: &str, rate: &str) -> PathBuf {
    let text = std::fs::read_to_string(ns3("topology.txt")).unwrap();
    let (head, rest) = text.split_once("0 2 100Gbps").expect("the first link of topology.txt");
    let path = dir.join("topology.txt");
    std::fs::write(&path, format!("{prefix}{head}0 2 {rate}{rest}")).unwrap();
    path
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_number() {
    let dir = tempfile::tempdir().unwrap();
    let topology = topology_with(dir.path(), "\u{feff}", "100Gbps");
    let o = import(dir.path(), &topology, &ns3("flow.txt"), None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn rates_too_slow_are_blamed_on_their_line_of_the_topology_file() {
    let dir = tempfile::tempdir().unwrap();
    // Below 1 bps: refused as such, not rounded up to 1 bps.
    let topology = topology_with(dir.path(), "", "0.6bps");
    let err = String::from_utf8_lossy(&import(dir.path(), &topology, &ns3("flow.txt"), None).stderr).into_owned();
    assert!(err.contains("topology.txt:3: rate: '0.6bps': below 1 bps"), "{err}");
    // Slower than the algorithm's rate floor: the link's line, not the written scenario's key.
    let topology = topology_with(dir.path(), "", "5bps");
    let err = String::from_utf8_lossy(&import(dir.path(), &topology, &ns3("flow.txt"), None).stderr).into_owned();
    assert!(err.contains("topology.txt:3: rate: 5bps between h0 and s0"), "{err}");
    assert!(err.contains("cc.min_rate") && !err.contains("scenario.toml"), "{err}");
}
