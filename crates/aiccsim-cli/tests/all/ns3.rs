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

/// `text` as aiccsim reads it, back in TOML: units and key order normalised, defaults filled.
fn normalised(text: &str) -> toml::Value {
    let scenario = aiccsim::config::Scenario::from_toml(text, "t").unwrap_or_else(|e| panic!("{e}\n{text}"));
    toml::Value::try_from(&scenario).unwrap()
}

fn import_with_config(dir: &Path, config: &Path) -> Output {
    import_files(dir, &ns3("topology.txt"), &ns3("flow.txt"), config)
}

fn import_files(dir: &Path, t: &Path, f: &Path, config: &Path) -> Output {
    let out = dir.join("scenario.toml");
    let args = ["import-ns3", "--topology", t.to_str().unwrap(), "--flows", f.to_str().unwrap()];
    aiccsim(&[&args[..], &["--config", config.to_str().unwrap(), "-o", out.to_str().unwrap()]].concat())
}

#[test]
fn a_config_file_gives_the_whole_twin_as_written_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let o = import_with_config(dir.path(), &ns3("config_dcqcn.txt"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every key run.py's DCQCN configuration sets has its aiccsim equivalent: nothing to warn.
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    let imported = std::fs::read_to_string(dir.path().join("scenario.toml")).unwrap();
    // The hand-written twin with the imported topology and flows: the same scenario, key for key.
    let mut by_hand: toml::Table = std::fs::read_to_string(ns3("twin_dcqcn.toml")).unwrap().parse().unwrap();
    let table: toml::Table = imported.parse().unwrap();
    for section in ["topology", "workload"] {
        by_hand.insert(section.into(), table[section].clone());
    }
    assert_eq!(normalised(&imported), normalised(&toml::to_string(&by_hand).unwrap()));
    // And it runs: every flow finishes.
    assert!(run(dir.path()).iter().all(|f| !f[5].is_empty()));
}

#[test]
fn packet_sizes_are_ns3s_whatever_the_base_says() {
    // ns-3's data header is 48 B and its ACK 60 B, or 14 + 20 + 12 + 42 = 88 B with HPCC's INT
    // header (rdma-hw.cc ReceiveUdp), which aiccsim adds to nic.ack_size itself: 46 B + 42 B.
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.toml");
    let hpcc_base = "[nic]\nheader = \"64B\"\nack_size = \"64B\"\n[cc]\nalgorithm = \"hpcc\"\nint_max_hops = 3\n";
    std::fs::write(&base, hpcc_base).unwrap();
    for (config, header, ack) in [("config_hpcc.txt", "48B", "46B"), ("config_dcqcn.txt", "48B", "60B")] {
        let out = dir.path().join("scenario.toml");
        let (t, f, c) = (ns3("topology.txt"), ns3("flow.txt"), ns3(config));
        let args = ["import-ns3", "--topology", t.to_str().unwrap(), "--flows", f.to_str().unwrap()];
        let more = ["--config", c.to_str().unwrap(), "--base", base.to_str().unwrap(), "-o", out.to_str().unwrap()];
        let o = aiccsim(&[&args[..], &more[..]].concat());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let written = normalised(&std::fs::read_to_string(&out).unwrap());
        assert_eq!(written["nic"]["header"].as_str(), Some(header), "{config}");
        assert_eq!(written["nic"]["ack_size"].as_str(), Some(ack), "{config}");
        if config == "config_hpcc.txt" {
            assert_eq!(written["cc"]["int_max_hops"].as_integer(), Some(5), "int-header.h: maxHop = 5");
        }
    }
}

#[test]
fn what_aiccsim_cannot_carry_over_is_one_warning_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = std::fs::read_to_string(ns3("config_hpcc.txt")).unwrap() + "NOT_A_KEY 7\nL2_BACK_TO_ZERO 1\n";
    let path = dir.path().join("config.txt");
    std::fs::write(&path, config).unwrap();
    let o = import_with_config(dir.path(), &path);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let keys: Vec<&str> = err.lines().map(|l| l.split(": ").nth(2).unwrap_or(l)).collect();
    assert_eq!(keys, ["GLOBAL_T", "INT_MULTI", "ACK_HIGH_PRIO", "NOT_A_KEY", "L2_BACK_TO_ZERO"], "{err}");
    assert!(err.lines().all(|l| l.starts_with("warning: ") && l.contains("config.txt:")), "{err}");
    let written: toml::Table = std::fs::read_to_string(dir.path().join("scenario.toml")).unwrap().parse().unwrap();
    let cc = written["cc"].as_table().unwrap();
    assert_eq!(cc["algorithm"].as_str(), Some("hpcc"));
    assert_eq!(cc["eta"].as_float(), Some(0.95));
    assert_eq!(cc["max_stage"].as_integer(), Some(0), "MI_THRESH 0");
    assert_eq!(normalised(&toml::to_string(&written).unwrap())["cc"]["additive_increase"].as_str(), Some("40Mbps"));
}

#[test]
fn a_bad_config_file_names_its_line_and_key() {
    let dcqcn = std::fs::read_to_string(ns3("config_dcqcn.txt")).unwrap();
    let cases = [
        (dcqcn.replace("CC_MODE 1", "CC_MODE 2"), "config.txt:15: CC_MODE: 2: aiccsim imports 1 (DCQCN)"),
        (dcqcn.replace("RP_TIMER 300\n", ""), "config.txt:1: RP_TIMER: missing"),
        (dcqcn.replace("2 100000000000 400 ", "1 "), "KMIN_MAP: no value for 100Gbps"),
        (dcqcn.replace("ERROR_RATE_PER_LINK 0.0000", "ERROR_RATE_PER_LINK 0.01"), "ERROR_RATE_PER_LINK: 0.01"),
        (dcqcn.replace("LINK_DOWN 0 0 0", "LINK_DOWN 10 0 1"), "LINK_DOWN: no link between nodes 0 and 1"),
    ];
    for (text, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.txt");
        std::fs::write(&path, text).unwrap();
        let o = import_with_config(dir.path(), &path);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{want}: {err}");
        assert!(err.contains(want), "want {want}, got {err}");
        assert!(!dir.path().join("scenario.toml").exists());
    }
}

#[test]
fn link_down_fails_the_link_at_two_seconds_plus_its_microseconds() {
    let dir = tempfile::tempdir().unwrap();
    // Hosts 0 and 1 under switches 2 and 3, which 4 also joins: a second path.
    let topology = dir.path().join("topology.txt");
    std::fs::write(
        &topology,
        "5 3 5\n2 3 4\n0 2 100Gbps 1us 0\n1 3 100Gbps 1us 0\n2 3 100Gbps 1us 0\n2 4 100Gbps 1us 0\n4 3 100Gbps 1us 0\n",
    )
    .unwrap();
    let flows = dir.path().join("flow.txt");
    std::fs::write(&flows, "1\n0 1 3 100 1000000 2.0\n").unwrap();
    let config =
        std::fs::read_to_string(ns3("config_dcqcn.txt")).unwrap().replace("LINK_DOWN 0 0 0", "LINK_DOWN 1500 3 2");
    let path = dir.path().join("config.txt");
    std::fs::write(&path, config).unwrap();
    let o = import_files(dir.path(), &topology, &flows, &path);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read_to_string(dir.path().join("scenario.toml")).unwrap();
    let events = &normalised(&written)["events"];
    let e = &events.as_array().unwrap()[0];
    assert_eq!((e["at"].as_str(), e["action"].as_str()), (Some("2001500us"), Some("fail")), "{e}");
    assert_eq!(e["link"].as_array().unwrap(), &[toml::Value::from("s1"), toml::Value::from("s0")]);
}
