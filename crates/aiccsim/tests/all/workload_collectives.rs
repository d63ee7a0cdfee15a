//! Collectives on an idle fabric take the time their textbook formulas give, within 3%: S bytes,
//! N ranks on one switch, links of bandwidth B; a step that moves m bytes per rank takes m/B
//! plus one step latency L (the links' delays both ways to the switch and one packet's
//! store-and-forward there). m/B is counted on the wire: each data packet's headers, and the ACK
//! the rank sends for each data packet coming the other way, which shares its link (in these
//! schedules every rank receives as much as it sends). PFC only: nothing but the schedule and
//! the links sets the pace.

use crate::common;

use aiccsim::Scenario;

const N: u64 = 8;
const GBPS: f64 = 100.0;

fn text(workload: &str) -> String {
    format!(
        "[topology]\nkind = \"star\"\nhosts = {N}\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[cc]\nalgorithm = \"none\"\n[workload]\n{workload}\n"
    )
}

fn scenario(workload: &str) -> Scenario {
    common::scenario(&text(workload))
}

/// Completion time in microseconds.
fn cct_us(workload: &str) -> f64 {
    let r = common::run(&text(workload));
    assert_eq!(r.summary.flows_finished, r.summary.flows);
    r.summary.completion_time_ns.expect("finished").as_us_f64()
}

/// Microseconds to put `bytes` of payload on a link, headers and the ACKs of data coming the
/// other way included, and one step latency.
fn rates(s: &Scenario) -> (impl Fn(f64) -> f64, f64) {
    let (wire, latency, ack) = rates_without_acks(s);
    let mtu = s.nic.mtu.0 as f64;
    (move |payload: f64| wire(payload) + payload / mtu * ack * 8.0 / (GBPS * 1e3), latency)
}

/// `rates` for a schedule in which no rank sends while it receives (a broadcast); and the
/// ACK's size.
fn rates_without_acks(s: &Scenario) -> (impl Fn(f64) -> f64, f64, f64) {
    let (mtu, header, ack) = (s.nic.mtu.0 as f64, s.nic.header.0 as f64, s.nic.ack_size.0 as f64);
    let wire = move |payload: f64| payload * (mtu + header) / mtu * 8.0 / (GBPS * 1e3);
    let latency = 2.0 + (mtu + header) * 8.0 / (GBPS * 1e3);
    (wire, latency, ack)
}

fn assert_close(what: &str, measured: f64, formula: f64) {
    let off = (measured - formula).abs() / formula;
    assert!(off <= 0.03, "{what}: {measured:.2} us against the formula's {formula:.2} us ({:.1}% off)", off * 100.0);
}

#[test]
fn all_reduce_takes_its_formula_time() {
    let size = 2_000_000.0;
    let n = N as f64;
    let (wire, l) = rates(&scenario("kind = \"all_reduce\"\nsize = \"1KB\""));
    let volume = wire(2.0 * (n - 1.0) / n * size);
    let cases = [
        ("ring", volume + 2.0 * (n - 1.0) * l),
        ("halving_doubling", volume + 2.0 * n.log2() * l),
        ("direct", volume + 2.0 * l),
    ];
    let mut measured = Vec::new();
    for (algorithm, formula) in cases {
        let t = cct_us(&format!("kind = \"all_reduce\"\nsize = \"2MB\"\nalgorithm = \"{algorithm}\""));
        assert_close(&format!("{algorithm} all-reduce"), t, formula);
        measured.push(t);
    }
    // Fewer steps, less latency: halving-doubling beats the ring on the same bytes.
    assert!(measured[1] < measured[0], "{measured:?}");
}

#[test]
fn all_gather_and_reduce_scatter_take_their_formula_time() {
    let size = 2_000_000.0;
    let n = N as f64;
    let (wire, l) = rates(&scenario("kind = \"all_reduce\"\nsize = \"1KB\""));
    let volume = wire((n - 1.0) / n * size);
    for kind in ["all_gather", "reduce_scatter"] {
        for (algorithm, formula) in [("ring", volume + (n - 1.0) * l), ("direct", volume + l)] {
            let t = cct_us(&format!("kind = \"{kind}\"\nsize = \"2MB\"\nalgorithm = \"{algorithm}\""));
            assert_close(&format!("{algorithm} {kind}"), t, formula);
        }
    }
}

#[test]
fn broadcast_takes_its_formula_time() {
    let n = N as f64;
    let (wire, l, _) = rates_without_acks(&scenario("kind = \"all_reduce\"\nsize = \"1KB\""));
    let copy = wire(2_000_000.0);
    for (algorithm, formula) in [
        ("ring", (n - 1.0) * (copy + l)),
        ("direct", (n - 1.0) * copy + l),
        ("binomial_tree", n.log2().ceil() * (copy + l)),
    ] {
        let t = cct_us(&format!("kind = \"broadcast\"\nroot = 3\nsize = \"2MB\"\nalgorithm = \"{algorithm}\""));
        assert_close(&format!("{algorithm} broadcast"), t, formula);
    }
}

#[test]
fn halving_doubling_needs_a_power_of_two() {
    let mut s = scenario("kind = \"all_reduce\"\nhosts = \"0..6\"\nsize = \"1MB\"\nalgorithm = \"halving_doubling\"");
    s.origin = "hd.toml".into();
    let err = aiccsim::Fabric::build(&s).err().expect("refused");
    assert_eq!(err.key, "workload.algorithm");
    assert!(err.message.contains("power-of-two") && err.message.contains("use 4 or 8 ranks"), "{err}");
}

#[test]
fn bus_bandwidth_is_the_links_payload_rate_when_a_collective_keeps_them_busy() {
    // A direct all-gather of 2 MB on 8 ranks keeps every link busy both ways: its bus bandwidth
    // (nccl-tests: algbw x (n-1)/n) is the payload rate a link carries beside the ACKs coming
    // the other way, less the one step latency.
    let r = common::run(&text("kind = \"all_gather\"\nsize = \"2MB\"\nalgorithm = \"direct\""));
    let row = &r.collectives[0];
    assert_eq!(
        (row.info.name().as_str(), row.info.size, row.info.ranks, row.flows),
        ("all_gather:0", 2_000_000, 8, 56)
    );
    let cct_s = row.cct().unwrap().as_secs_f64();
    let algbw = row.algbw_bps().unwrap();
    assert!((algbw - 2e6 * 8.0 / cct_s).abs() < 1.0);
    let busbw = row.busbw_bps().unwrap() / 1e9;
    let s = scenario("kind = \"all_reduce\"\nsize = \"1KB\"");
    let payload_rate = GBPS * s.nic.mtu.0 as f64 / (s.nic.mtu.0 + s.nic.header.0 + s.nic.ack_size.0) as f64;
    assert!(
        busbw < payload_rate && busbw > 0.95 * payload_rate,
        "busbw {busbw:.2} Gbps, payload rate {payload_rate:.2}"
    );
    // An all-reduce's factor is twice an all-gather's: the same link speed, twice the bytes.
    let r = common::run(&text("kind = \"all_reduce\"\nsize = \"2MB\"\nalgorithm = \"direct\""));
    let ar = r.collectives[0].busbw_bps().unwrap() / 1e9;
    assert!((ar - busbw).abs() / busbw < 0.03, "all-reduce busbw {ar:.2} against all-gather {busbw:.2}");
}

#[test]
fn send_recv_takes_its_formula_time_chunked_or_not() {
    // A pipeline of sends 0 -> 1 -> 2 -> 3 posted at once: ranks 1 and 2 send while they
    // receive (their ACKs share the link), so each transfer takes one copy time with the ACKs
    // plus one step latency, whatever the chunks (they go one after another on the pair's
    // connection). Its bus bandwidth is the algorithm bandwidth.
    let (wire, l) = rates(&scenario("kind = \"all_reduce\"\nsize = \"1KB\""));
    let formula = wire(2_000_000.0) + l;
    for chunks in [1, 4] {
        let w = format!("kind = \"send_recv\"\npairs = [[0, 1], [1, 2], [2, 3]]\nsize = \"2MB\"\nchunks = {chunks}");
        assert_close(&format!("send_recv, {chunks} chunks"), cct_us(&w), formula);
        let r = common::run(&text(&w));
        let row = &r.collectives[0];
        assert_eq!((row.info.kind.to_string().as_str(), row.info.ranks, row.flows), ("send_recv", 4, 3 * chunks));
        assert_eq!(row.busbw_bps(), row.algbw_bps());
    }
}
