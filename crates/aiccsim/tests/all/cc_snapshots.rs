//! Snapshot of each built-in algorithm's rate and window trace on one small incast: a change of
//! any algorithm's behaviour, however small, fails the test with a diff of its trace against
//! `tests/all/snapshots/all__cc_snapshots__<name>.snap` (the first algorithm that differs stops
//! it). A deliberate change is accepted with `INSTA_UPDATE=always cargo test -p aiccsim --test
//! all cc_snapshots`, which rewrites every snapshot, and a review of the `.snap` diffs before
//! they are committed. A new algorithm in `CcConfig::all_defaults()` needs one; in CI
//! (`CI=true`) insta writes none, so a missing or different snapshot fails. (The file names
//! carry the module path, `all::cc_snapshots`.)

use crate::common;

use aiccsim::cc::CcConfig;
use aiccsim::Results;
use std::fmt::Write;

/// 4-to-1 incast of 500 KB per sender on a star of 100 Gbps / 1 us links, every flow's rate and
/// window sampled every 10 us. ECN marks from 40 KB (the default 400 KB is never reached by
/// DCTCP's four BDP-sized windows, which would leave its trace flat).
fn scenario(cc: &CcConfig) -> aiccsim::Scenario {
    let extra = r#"
[switch]
ecn = { kmin = "40KB", kmax = "160KB", pmax = 0.2 }
[output]
sample_interval = "10us"
"#;
    let mut scenario = common::scenario(&common::incast(4, "500KB", "none", extra));
    scenario.cc = cc.clone();
    scenario
}

/// `time_ns flow rate_gbps window_bytes` per sample, rates to 1 Mb/s; `-` for no window.
fn trace(r: &Results) -> String {
    let mut out = String::from("time_ns flow rate_gbps window_bytes\n");
    for s in &r.rates {
        let window = s.window_bytes.map_or("-".to_string(), |w| w.to_string());
        writeln!(out, "{} {} {:.3} {window}", s.time.0 / 1000, s.flow, s.rate_bps / 1e9).unwrap();
    }
    out
}

#[test]
fn every_algorithm_traces_as_its_snapshot() {
    for cc in CcConfig::all_defaults() {
        let r = aiccsim::run(&scenario(&cc)).unwrap_or_else(|e| panic!("{}: {e}", cc.name()));
        common::assert_conserved(&r);
        assert!(!r.rates.is_empty(), "{}: no rate samples", cc.name());
        insta::assert_snapshot!(cc.name(), trace(&r));
    }
}
