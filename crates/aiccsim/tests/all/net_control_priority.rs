//! `switch.control_priority`: where switches queue ACKs, NACKs and CNPs. At `high` (the
//! default) they pass the data queues; at `data` (the HPCC ns-3 simulator's switches) they wait
//! behind the data of their priority.

use crate::common;

/// Two hosts sending 2 MB to each other through one switch (PFC only, so nothing slows the
/// data down), plus a third host sending to host 1: host 1's port queues data, and the ACKs of
/// host 1's flow to host 0 queue there too when they travel at the data priority.
fn crossing(control: &str) -> aiccsim::Results {
    common::run(&format!(
        r#"
[topology]
kind = "star"
hosts = 3
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
control_priority = "{control}"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [
  {{ src = 0, dst = 1, size = "2MB" }},
  {{ src = 1, dst = 0, size = "2MB" }},
  {{ src = 2, dst = 1, size = "2MB" }},
]
"#
    ))
}

#[test]
fn acks_wait_behind_data_only_at_the_data_priority() {
    let high = crossing("high");
    let data = crossing("data");
    common::assert_conserved(&high);
    common::assert_conserved(&data);
    // Host 0's ACKs for host 1's flow return through the switch port to host 1, where the data
    // of hosts 0 and 2 queues (two senders into one link, held back only by PFC): measured,
    // a mean RTT of 63.3 us with the ACKs first and 91.7 us behind the data, a median of 49.5
    // and 91.8 us.
    let (h, d) = (&high.summary.rtt_ns, &data.summary.rtt_ns);
    assert!(d.mean.0 * 10 > h.mean.0 * 12, "mean RTT behind data {} is not 20% above {}", d.mean, h.mean);
    assert!(d.p50.0 * 10 > h.p50.0 * 12, "median RTT behind data {} is not 20% above {}", d.p50, h.p50);
}

#[test]
fn a_lone_flow_is_the_same_at_either_priority() {
    // Nothing else queues where its ACKs go, so they wait nowhere either way.
    let lone = |control: &str| {
        common::run(&common::incast(1, "1MB", "dcqcn", &format!("[switch]\ncontrol_priority = \"{control}\"")))
    };
    let (high, data) = (lone("high"), lone("data"));
    let finish = |r: &aiccsim::Results| r.flows.iter().map(|f| f.finish).collect::<Vec<_>>();
    assert_eq!(finish(&high), finish(&data));
    assert_eq!(high.summary.rtt_ns.mean, data.summary.rtt_ns.mean);
}
