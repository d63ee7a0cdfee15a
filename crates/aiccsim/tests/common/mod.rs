//! Helpers shared by the network-level tests.
#![allow(dead_code)]

use aiccsim::{Results, Scenario};

pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml(toml, "test scenario").unwrap_or_else(|e| panic!("{e}"))
}

pub fn run(toml: &str) -> Results {
    let r = aiccsim::run(&scenario(toml)).unwrap();
    assert_conserved(&r);
    r
}

/// Every data byte a NIC sent was received or dropped; nothing is left in flight.
pub fn assert_conserved(r: &Results) {
    let b = &r.summary.data_bytes;
    assert_eq!(b.in_flight, 0, "bytes left in flight: {b:?}");
    assert_eq!(b.sent, b.received + b.dropped, "ledger does not balance: {b:?}");
    assert_eq!(r.summary.flows_finished, r.summary.flows, "unfinished flows");
    for f in &r.flows {
        assert!(f.finish.is_some(), "flow {} did not finish", f.flow_id);
    }
}

/// An n-to-1 incast on a star of 100 Gbps / 1 us links.
pub fn incast(n: u32, size: &str, cc: &str, extra: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = {hosts}
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[cc]
algorithm = "{cc}"
[workload]
kind = "incast"
senders = "1..={n}"
receiver = 0
size = "{size}"
{extra}
"#,
        hosts = n + 1
    )
}
