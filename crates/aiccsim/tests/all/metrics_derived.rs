//! The derived figures of `metrics/derived.rs` (the figures of `aiccsim reproduce`'s table that
//! the summary does not hold) on small runs whose answers are known from their setup.

use crate::common;

use aiccsim::metrics::fast_forward::FlowSkip;
use aiccsim::metrics::{jain_index, RateSample, RunView};
use aiccsim::time::SimTime;

/// A long flow from h1 and a short one from h2 joining it at 40 us, both to h0 on one 100 Gbps
/// switch, sampled every microsecond; `extra` is added to the scenario.
fn long_short(cc: &str, extra: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = 3
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
buffer = "4MB"
pfc = {{ enabled = true }}
[cc]
algorithm = "{cc}"
[workload]
kind = "flows"
flows = [{{ src = 1, dst = 0, size = "2MB" }}, {{ src = 2, dst = 0, size = "300KB", start = "40us" }}]
[output]
sample_interval = "1us"
{extra}
"#
    )
}

#[test]
fn the_queue_timeline_fills_the_samples_queues_csv_leaves_out() {
    let r = common::run(&long_short("none", ""));
    let v = r.view();
    let series = v.queue_series(0, 0);
    let iv = r.scenario.output.sample_interval.unwrap();
    assert_eq!(series.len() as u64, r.summary.simulated_time_ns.0 / iv.0 + 1, "a point per sample time");
    let recorded = r.queues.iter().filter(|q| q.switch == 0 && q.port == 0).count();
    assert!(recorded < series.len(), "queues.csv leaves out empty samples: {recorded} of {}", series.len());
    assert!(series.iter().any(|p| p.1 > 0.0), "the two flows queue at the receiver's port");
    let mean = series.iter().map(|p| p.1).sum::<f64>() / series.len() as f64;
    assert_eq!(v.mean_queue_kb(0, 0), Some(mean));
    // The largest sample is no larger than the largest queue the port saw.
    let max = series.iter().map(|p| p.1).fold(0.0, f64::max);
    assert!(max <= r.summary.max_switch_queue_bytes as f64 / 1e3);
}

#[test]
fn without_timelines_the_timeline_figures_are_absent() {
    let r = common::run(&common::incast(2, "100KB", "dcqcn", ""));
    let v = r.view();
    assert!(v.queue_series(0, 0).is_empty());
    assert_eq!(v.mean_queue_kb(0, 0), None);
    assert_eq!(v.recovery_us(0), None);
    assert_eq!(v.jain_steady(), None);
    assert_eq!(v.min_segment_jain(SimTime::from_us(10), SimTime::ZERO), None);
}

#[test]
fn a_flow_without_congestion_control_recovers_at_once_and_pfc_shares_fairly() {
    // Without CC the long flow is back at line rate as soon as the short one has left.
    let r = common::run(&long_short("none", ""));
    let v = r.view();
    let recovery = v.recovery_us(0).expect("flow 0 was alone, shared, and was alone again");
    assert!(recovery.is_finite() && recovery <= 5.0, "recovery {recovery} us");
    // The short flow has no time alone before the long one: nothing to recover to.
    assert_eq!(v.recovery_us(1), None);
    // PFC shares the bottleneck evenly while both run.
    let min_jain = v.min_segment_jain(SimTime::from_us(20), SimTime::from_us(5)).unwrap();
    assert!(min_jain > 0.95, "min segment Jain {min_jain}");
    assert_eq!(v.jain_steady(), v.steady_throughputs().map(|t| jain_index(&t)));
}

/// A span fast-forward skipped for a flow (no samples there) counts in `min_jain` at the rate
/// it was credited: the same rate as the samples it replaces gives the same index; half of it
/// a lower one.
#[test]
fn a_skipped_span_counts_in_the_segment_jain_at_its_credited_rate() {
    let r = common::run(&long_short("none", ""));
    let v = r.view();
    let (len, settle) = (SimTime::from_us(20), SimTime::from_us(5));
    let whole = v.min_segment_jain(len, settle).unwrap();
    // Flow 1's samples over (50, 60] us, as if that span had been skipped.
    let (from, to) = (SimTime::from_us(50), SimTime::from_us(60));
    let inside = |s: &&RateSample| s.flow == 1 && s.time > from && s.time <= to;
    let taken: Vec<RateSample> = r.rates.iter().filter(inside).cloned().collect();
    assert_eq!(taken.len(), 10);
    let rest: Vec<RateSample> = r.rates.iter().filter(|s| !inside(s)).cloned().collect();
    let bits: f64 = taken.iter().map(|s| s.throughput_bps * 1e-6).sum();
    let skip = |bytes: f64| [FlowSkip { flow: 1, from, to, bytes: bytes.round() as u64 }];
    let same = skip(bits / 8.0);
    let with = |skips| RunView { rates: &rest, skips, ..v };
    let replaced = with(&same).min_segment_jain(len, settle).unwrap();
    assert!((replaced - whole).abs() < 1e-6, "{replaced} against {whole}");
    let half = skip(bits / 16.0);
    let slower = with(&half).min_segment_jain(len, settle).unwrap();
    assert!(slower < whole - 0.01, "{slower} against {whole}");
}

#[test]
fn link_utilisation_counts_the_link_at_its_speed_at_the_end() {
    let slowed = "[[events]]\nat = \"5us\"\nlink = [\"s0\", \"h0\"]\naction = \"slow\"\nbandwidth = \"50Gbps\"";
    for (extra, gbps) in [("", 100.0), (slowed, 50.0)] {
        let r = common::run(&long_short("none", extra));
        let v = r.view();
        let i = v.link_index("s0", "h0").expect("the receiver's link");
        assert_eq!(v.link_index("h0", "h1"), None, "no such link");
        let sent = r.ports[i].stats.tx_bytes as f64 * 8.0;
        let end = r.summary.completion_time_ns.unwrap().as_secs_f64();
        let u = v.link_utilisation_pct(i).unwrap();
        assert!((u - sent / (gbps * 1e9 * end) * 100.0).abs() < 1e-9, "{u}");
        // The bottleneck is busy nearly all the time, never more than all of it; slowed, its
        // first 5 us at 100 Gbps count as if at 50, a little over.
        let most = if extra.is_empty() { 100.0 } else { 100.0 * (1.0 + 5e-6 / end) };
        assert!(u > 90.0 && u <= most, "utilisation {u}% at {gbps} Gbps");
    }
}

#[test]
fn a_collectives_bus_bandwidth_stays_under_what_its_host_links_allow() {
    let r = common::run(
        r#"
[topology]
kind = "star"
hosts = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "hpcc"
[workload]
kind = "all_reduce"
size = "1MB"
"#,
    );
    let v = r.view();
    let busbw = v.busbw_bps().unwrap();
    let bound = v.busbw_bound_bps().unwrap();
    assert!(busbw < bound, "busbw {busbw} over its bound {bound}");
    // Each host sends and receives 2 (n - 1) / n of the buffer, in packets of `nic.mtu` bytes
    // and `nic.header` more: the bound is the payload share of 100 Gbps.
    let (mtu, header) = (r.scenario.nic.mtu.0 as f64, r.scenario.nic.header.0 as f64);
    let packets_share = mtu / (mtu + header);
    assert!((bound / (100e9 * packets_share) - 1.0).abs() < 0.01, "bound {bound}");
    assert_eq!(v.mean_busbw_bps(), Some(busbw), "one collective: its mean is its own");
    let line = v.payload_line_rate_bps().unwrap();
    assert_eq!(line, 100e9 * packets_share);
    assert_eq!(v.line_rate_pct(), Some(busbw / line * 100.0));
}

/// Four back-to-back all-reduces in one job (nccl-tests' warm-up and three timed iterations):
/// the warm bus bandwidth counts the three after the first, over the time from the first's end
/// to the last's, and a run of one collective, or a plain `[workload]`, has none.
#[test]
fn the_warm_bus_bandwidth_times_the_repeats_after_the_first() {
    let ar = r#"[[jobs.workload]]
kind = "all_reduce"
size = "1MB"
"#;
    let r = common::run(&format!(
        r#"
[topology]
kind = "star"
hosts = 4
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[cc]
algorithm = "hpcc"
[[jobs]]
hosts = "all"
{ar}{ar}{ar}{ar}"#
    ));
    let v = r.view();
    let warm = v.warm_busbw_bps().expect("a job of four collectives");
    let mut cs: Vec<_> = r.collectives.iter().collect();
    cs.sort_by_key(|c| c.info.id);
    assert_eq!(cs.len(), 4);
    let (first_end, last_end) = (cs[0].finish.unwrap(), cs[3].finish.unwrap());
    // 2 (n - 1) / n of 1 MB per rank, three times.
    let bits = 3.0 * 1e6 * 8.0 * 2.0 * 3.0 / 4.0;
    let expected = bits / (last_end - first_end).as_secs_f64();
    assert!((warm / expected - 1.0).abs() < 1e-9, "{warm} against {expected}");
    // HPCC starts at line rate, so the repeats go as fast as the first, within a few percent,
    // and no faster than the links' payload.
    let first = cs[0].busbw_bps().unwrap();
    assert!((warm / first - 1.0).abs() < 0.05, "{warm} vs the first's {first}");
    assert!(warm < 100e9 * 1000.0 / 1048.0);
    // One collective, in a job or a [workload]: no repeats to time.
    let one = common::run(&common::incast(2, "100KB", "none", ""));
    assert_eq!(one.view().warm_busbw_bps(), None);
}
