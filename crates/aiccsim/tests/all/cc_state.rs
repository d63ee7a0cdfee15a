//! `output.cc_state`: each algorithm's own state (`CongestionControl::metrics`) reaches
//! `cc_state.csv` beside `rates.csv`, for the same flows and samples, without changing any other
//! table; what it reports agrees with the rate the algorithm sets.

use crate::common;

use aiccsim::metrics::tables::{CC_STATE, RATES};
use aiccsim::Results;
use std::collections::BTreeMap;

/// An n-to-1 incast of `cc` sampled every `interval`, with the state asked for or not.
fn incast(n: u32, size: &str, cc: &str, interval: &str, cc_state: bool) -> Results {
    common::run(&common::incast(
        n,
        size,
        cc,
        &format!("[output]\nsample_interval = \"{interval}\"\ncc_state = {cc_state}"),
    ))
}

/// A table's rows as text, cell by cell (what its CSV file holds).
fn rows(r: &Results, table: &aiccsim::metrics::tables::Table) -> Vec<String> {
    let mut out = Vec::new();
    r.for_each_row(table, &mut |cells| out.push(format!("{cells:?}")));
    out
}

/// Each (sample time in ps, flow) with its values by name.
fn state(r: &Results) -> BTreeMap<(u64, u32), BTreeMap<String, f64>> {
    let mut out: BTreeMap<(u64, u32), BTreeMap<String, f64>> = BTreeMap::new();
    for s in &r.cc_state.samples {
        out.entry((s.time.0, s.flow)).or_default().insert(r.cc_state.names[s.name as usize].clone(), s.value);
    }
    out
}

#[test]
fn asking_for_the_state_adds_its_table_and_changes_no_other() {
    let without = incast(8, "1MB", "dcqcn", "5us", false);
    let with = incast(8, "1MB", "dcqcn", "5us", true);
    assert!(!without.has_table(&CC_STATE) && without.cc_state.samples.is_empty());
    assert!(with.has_table(&CC_STATE));
    assert_eq!(rows(&with, &RATES), rows(&without, &RATES));
    let flows = |r: &Results| r.flows.iter().map(|f| (f.flow_id, f.finish)).collect::<Vec<_>>();
    assert_eq!(flows(&with), flows(&without));
    // Without timelines there is nothing to sample, asked or not.
    let untimed = common::run(&common::incast(4, "100KB", "dcqcn", "[output]\ncc_state = true"));
    assert!(!untimed.has_table(&CC_STATE));
}

#[test]
fn dcqcn_reports_alpha_and_its_target_at_every_rate_sample() {
    let r = incast(8, "1MB", "dcqcn", "5us", true);
    let state = state(&r);
    assert_eq!(state.len(), r.rates.len(), "one set of values per rates.csv row");
    for rate in &r.rates {
        let values = &state[&(rate.time.0, rate.flow)];
        assert_eq!(values.keys().collect::<Vec<_>>(), ["alpha", "target_gbps"]);
        assert!((0.0..=1.0).contains(&values["alpha"]), "{values:?}");
        // The rate climbs towards the target: never above it.
        assert!(rate.rate_bps / 1e9 <= values["target_gbps"] + 1e-9, "{rate:?} {values:?}");
    }
    // The incast marks packets: alpha moves off its start.
    assert!(state.values().any(|v| v["alpha"] < 1.0));
}

#[test]
fn barres_rate_is_its_nominal_rate_quartered_while_restricted() {
    // The incast of tests/barre.rs in which the inflight monitor engages, sampled finely
    // enough to catch it.
    let r = incast(16, "500KB", "barre", "1us", true);
    let state = state(&r);
    let mut restricted = 0;
    for rate in &r.rates {
        let values = &state[&(rate.time.0, rate.flow)];
        assert_eq!(values.keys().collect::<Vec<_>>(), ["nominal_gbps", "restricted", "rtt_ns"]);
        let quarter = match values["restricted"] {
            0.0 => 1.0,
            1.0 => 4.0,
            other => panic!("restricted is {other}"),
        };
        restricted += (quarter > 1.0) as u32;
        // Barre's floor (`min_rate`) and the line rate clamp what the NIC uses.
        let floor = aiccsim::cc::BarreConfig::default().min_rate.as_f64() / 1e9;
        let sending = (values["nominal_gbps"] / quarter).clamp(floor, 100.0);
        assert!((rate.rate_bps / 1e9 - sending).abs() < 1e-6, "{rate:?} {values:?}");
        assert!(values["rtt_ns"] > 0.0);
    }
    assert!(restricted > 0, "no sample caught the inflight monitor's restriction");
}

#[test]
fn algorithms_without_state_write_the_header_only() {
    let r = incast(4, "100KB", "timely", "5us", true);
    assert!(r.has_table(&CC_STATE));
    assert!(rows(&r, &CC_STATE).is_empty());
    assert!(!r.rates.is_empty());
}
