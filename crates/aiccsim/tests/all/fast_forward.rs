//! Fast-forward (`simulation.fast_forward`) against the same scenarios run packet by packet: it
//! never changes the bytes delivered, never lets a flow finish before its line-rate bound, gives
//! the same bytes for the same seed, skips nothing where nothing is steady, and errs little
//! where it skips.

use crate::common;
use aiccsim::Results;
use proptest::prelude::*;

/// `toml` with `[simulation] fast_forward = setting` added (the scenario has no `[simulation]`).
fn with_ff(toml: &str, setting: &str) -> String {
    format!("[simulation]\nfast_forward = {setting}\n{toml}")
}

fn skipped_ns(r: &Results) -> f64 {
    r.summary.fast_forward.as_ref().map_or(0.0, |f| f.skipped.as_ns_f64())
}

/// Flows on a star of 100 Gbps / 1 us links under `cc`: `(src, dst, size, start)` each.
fn flows(cc: &str, hosts: u32, flows: &[(u32, u32, &str, &str)]) -> String {
    let list: Vec<String> = (flows.iter())
        .map(|(s, d, size, start)| format!("{{ src = {s}, dst = {d}, size = \"{size}\", start = \"{start}\" }}"))
        .collect();
    common::star(hosts, cc, &format!("kind = \"flows\"\nflows = [{}]", list.join(", ")))
}

/// Every flow of `fast` as in `full`: the same size, every byte delivered, and no earlier than
/// the line rate allows.
fn assert_sound(full: &Results, fast: &Results) {
    common::assert_conserved(fast);
    assert_eq!(full.summary.bytes, fast.summary.bytes);
    for (a, b) in full.flows.iter().zip(&fast.flows) {
        assert_eq!(a.size_bytes, b.size_bytes);
        let fb = b.fct().unwrap().as_ns_f64();
        assert!(fb >= b.ideal_fct.as_ns_f64() * (1.0 - 1e-9), "flow {} beat its line rate: {fb} ns", b.flow_id);
    }
}

/// [`assert_sound`], and every FCT within `within` (a fraction) of `full`'s.
fn assert_close(full: &Results, fast: &Results, within: f64) {
    assert_sound(full, fast);
    for (a, b) in full.flows.iter().zip(&fast.flows) {
        let (fa, fb) = (a.fct().unwrap().as_ns_f64(), b.fct().unwrap().as_ns_f64());
        assert!((fb - fa).abs() <= within * fa, "flow {}: {fb} ns against {fa} ns", b.flow_id);
    }
}

#[test]
fn a_lone_flow_is_skipped_and_finishes_as_the_line_rate_says() {
    let toml = flows("pfc_only", 2, &[(1, 0, "50MB", "0us")]);
    let full = common::run(&toml);
    let fast = common::run(&with_ff(&toml, "true"));
    assert!(skipped_ns(&fast) > 0.9 * full.summary.completion_time_ns.unwrap().as_ns_f64(), "{}", skipped_ns(&fast));
    assert!(
        fast.summary.events * 10 < full.summary.events,
        "{} events against {}",
        fast.summary.events,
        full.summary.events
    );
    assert_close(&full, &fast, 1e-4);
}

#[test]
fn where_nothing_is_steady_nothing_is_skipped_and_the_run_is_the_same() {
    // An incast whose senders join every 4 us, each for less time than the others need to
    // settle: the group changes before it could be judged.
    let list: Vec<(u32, u32, String, String)> =
        (1..=24).map(|i| (i, 0, "60KB".to_string(), format!("{}us", 4 * (i - 1)))).collect();
    let borrowed: Vec<(u32, u32, &str, &str)> =
        list.iter().map(|(s, d, z, t)| (*s, *d, z.as_str(), t.as_str())).collect();
    let toml = flows("dcqcn", 25, &borrowed);
    let full = common::run(&toml);
    let fast = common::run(&with_ff(&toml, "true"));
    assert_eq!(skipped_ns(&fast), 0.0);
    let dir = |r: &Results| {
        let d = tempfile::tempdir().unwrap();
        r.write_dir(d.path()).unwrap();
        d
    };
    let (a, b) = (dir(&full), dir(&fast));
    let read = |d: &tempfile::TempDir| std::fs::read(d.path().join("flows.csv")).unwrap();
    assert_eq!(read(&a), read(&b), "flows.csv differs with nothing skipped");
}

#[test]
fn the_same_seed_gives_the_same_bytes_with_fast_forward() {
    let toml = with_ff(&flows("pfc_only", 4, &[(1, 0, "20MB", "0us"), (2, 3, "9MB", "30us")]), "0.02");
    let (a, b) = (common::run(&toml), common::run(&toml));
    assert!(skipped_ns(&a) > 0.0);
    assert_eq!(a.deterministic_summary(), b.deterministic_summary());
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    a.write_dir(da.path()).unwrap();
    b.write_dir(db.path()).unwrap();
    for file in ["flows.csv", "ports.csv"] {
        assert_eq!(
            std::fs::read(da.path().join(file)).unwrap(),
            std::fs::read(db.path().join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn a_tolerance_out_of_range_is_refused_with_its_key() {
    let toml = with_ff(&flows("pfc_only", 2, &[(1, 0, "1MB", "0us")]), "0.7");
    let err = aiccsim::Scenario::from_toml(&toml, "t.toml").expect_err("refused").to_string();
    assert!(err.contains("simulation.fast_forward") && err.contains("0.2"), "{err}");
}

#[test]
fn spraying_switches_are_not_fast_forwarded_and_the_summary_says_why() {
    let toml = format!("{}\n[switch]\nrouting = \"spray\"\n", flows("pfc_only", 2, &[(1, 0, "2MB", "0us")]));
    let r = common::run(&with_ff(&toml, "true"));
    let ff = r.summary.fast_forward.as_ref().expect("reported");
    assert!(ff.off_because.as_deref().is_some_and(|w| w.contains("ECMP")), "{ff:?}");
    assert_eq!(skipped_ns(&r), 0.0);
}

#[test]
fn ns3s_ecmp_is_not_fast_forwarded_and_the_summary_names_it() {
    // One path per flow, but ns-3's, not the one the contention groups are built from.
    let toml = format!("{}\n[switch]\nrouting = \"ecmp_ns3\"\n", flows("pfc_only", 2, &[(1, 0, "2MB", "0us")]));
    let r = common::run(&with_ff(&toml, "true"));
    let ff = r.summary.fast_forward.as_ref().expect("reported");
    assert!(ff.off_because.as_deref().is_some_and(|w| w.contains("ecmp_ns3")), "{ff:?}");
    assert_eq!(skipped_ns(&r), 0.0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random flows (shared senders and receivers, staggered starts) under random algorithms:
    /// every byte arrives and no flow beats its line rate. (How near the FCTs stay is measured,
    /// not promised, where flows converge slowly: BENCHMARKS.md.)
    #[test]
    fn fast_forward_delivers_every_byte_and_no_flow_beats_its_line_rate(
        specs in prop::collection::vec((1u32..6, 0u32..6, 1u64..12, 0u64..150), 1..5),
        cc in prop::sample::select(vec!["pfc_only", "dcqcn", "dctcp", "hpcc", "timely", "swift"]),
    ) {
        let list: Vec<(u32, u32, String, String)> = specs
            .iter()
            .map(|&(s, d, mb, at)| (s, if d == s { 0 } else { d }, format!("{mb}MB"), format!("{at}us")))
            .filter(|(s, d, _, _)| s != d)
            .collect();
        prop_assume!(!list.is_empty());
        let borrowed: Vec<(u32, u32, &str, &str)> = list.iter().map(|(s, d, z, t)| (*s, *d, z.as_str(), t.as_str())).collect();
        let toml = flows(cc, 6, &borrowed);
        let full = common::run(&toml);
        let fast = common::run(&with_ff(&toml, "true"));
        assert_sound(&full, &fast);
    }
}

#[test]
fn an_incast_of_long_flows_under_pc4_is_skipped_within_the_targets() {
    // 16 senders of 10 MB to one receiver: PC4's receiver-driven shares settle and hold.
    let toml = common::incast(16, "10MB", "pc4", "");
    let full = common::run(&toml);
    let fast = common::run(&with_ff(&toml, "true"));
    assert!(skipped_ns(&fast) > 0.0, "nothing skipped");
    assert!(fast.summary.events < full.summary.events);
    assert_close(&full, &fast, 0.02);
    let (a, b) =
        (full.summary.completion_time_ns.unwrap().as_ns_f64(), fast.summary.completion_time_ns.unwrap().as_ns_f64());
    assert!((b - a).abs() <= 0.01 * a, "completion {b} ns against {a} ns");
}

#[test]
fn a_skip_longer_than_the_stall_timeout_is_not_a_stall() {
    // A 2 GB flow at 100 Gbps: about 168 ms, most of it skipped, against a 100 ms stall timeout
    // (a stall timeout must exceed nic.rto x 64: 1 ms x 64).
    let toml = format!(
        "[simulation]\nfast_forward = true\nstall_timeout = \"100ms\"\n[nic]\nrto = \"1ms\"\n{}",
        flows("pfc_only", 2, &[(1, 0, "2GB", "0us")])
    );
    let r = common::run(&toml);
    assert!(skipped_ns(&r) > 100e6, "{}", skipped_ns(&r));
    assert_eq!(r.summary.stop_reason, aiccsim::StopReason::Completed);
}

/// A connection whose message ends (its sender holds the last ACK) in the very instant its next
/// one starts (`after_acked`), with a check before and after: the connection left and came
/// back between two groupings, its counters started again from nothing, and the group of it
/// alone looked unchanged. Judged against snapshots from before (which subtracted a larger
/// count from a smaller: an overflow, found by barre-fairness and rocecc-single-switch run
/// with fast-forward), it must instead be judged afresh: every byte delivered, each message
/// within the targets of its packet-by-packet run, and both still skipped.
#[test]
fn a_connection_that_leaves_and_comes_back_between_two_checks_is_judged_afresh() {
    let toml = common::star(
        2,
        "pfc_only",
        r#"kind = "flows"
flows = [
  { src = 1, dst = 0, size = "20MB", connection = 0 },
  { src = 1, dst = 0, size = "20MB", connection = 0, after_acked = [0] },
]"#,
    );
    let full = common::run(&toml);
    let fast = common::run(&with_ff(&toml, "true"));
    assert_close(&full, &fast, 0.01);
    let skips = &fast.summary.fast_forward.as_ref().unwrap().skips;
    let second_start = fast.flows[1].start.as_ns_f64();
    assert!(skips.iter().any(|s| s.from.as_ns_f64() < second_start), "{skips:?}");
    assert!(skips.iter().any(|s| s.from.as_ns_f64() > second_start), "{skips:?}");
}

/// With timelines on, what a skip credited is in `skips.csv` (the bytes add up to the summary's,
/// each span is one of its skips), `rates.csv` has no sample inside a span, and the sample after
/// one divides the bytes by the time simulated since the sample before: a lone flow at line
/// rate samples line rate throughout, as packet by packet.
#[test]
fn a_skip_is_listed_per_flow_and_the_samples_around_it_keep_the_flows_rate() {
    let toml = format!("{}\n[output]\nsample_interval = \"7us\"\n", flows("pfc_only", 2, &[(1, 0, "50MB", "0us")]));
    let full = common::run(&toml);
    let fast = common::run(&with_ff(&toml, "true"));
    // Every sample but the first two (at 0, and over the first bytes' way to the receiver) and
    // the last (it ends inside its interval): the payload rate of the line, both ways.
    let steady = |r: &Results| -> Vec<f64> {
        let n = r.rates.len();
        r.rates[2..n - 1].iter().map(|s| s.throughput_bps).collect()
    };
    let line = steady(&full).iter().sum::<f64>() / steady(&full).len() as f64;
    for t in steady(&fast) {
        assert!((t - line).abs() < 0.02 * line, "a sample of {t} bit/s against {line}");
    }
    let ff = fast.summary.fast_forward.as_ref().unwrap();
    assert!(!ff.skips.is_empty());
    assert_eq!(ff.flow_skips.iter().map(|s| s.bytes).sum::<u64>(), ff.bytes_credited);
    for s in &ff.flow_skips {
        assert!(ff.skips.iter().any(|k| (k.from, k.to) == (s.from, s.to)), "{s:?}");
        assert!(!fast.rates.iter().any(|r| r.time > s.from && r.time < s.to), "a sample inside {s:?}");
        assert!((s.rate_bps() - line).abs() < 0.02 * line, "{s:?}: {} bit/s against {line}", s.rate_bps());
    }
}
