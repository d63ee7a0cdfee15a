//! MCC on the network: it keeps a lone transfer at line rate, and it reins in congestion on
//! every path a flow has (ECMP collisions), where its late messages' samples all queued. (Its
//! holding on one congested path of several: experiments/mcc-spray-partial and its test.)

use crate::common::run;

/// Collective `workload` on a star of `hosts` hosts (100 Gbps / 1 us links) under `cc`.
fn star(hosts: u32, cc: &str, workload: &str) -> aiccsim::Results {
    run(&crate::common::star(hosts, cc, workload))
}

#[test]
fn a_lone_all_reduce_in_64kb_messages_runs_at_line_rate() {
    let workload = r#"kind = "all_reduce"
hosts = [0, 1]
size = "64MB"
chunks = 500"#;
    let (mcc, none) = (star(2, "mcc", workload), star(2, "none", workload));
    let (t, ideal) = (mcc.summary.completion_time_ns.unwrap(), none.summary.completion_time_ns.unwrap());
    assert!(t.as_secs_f64() <= ideal.as_secs_f64() * 1.01, "MCC {t:?} vs line rate {ideal:?}");
}

/// mcc-spray's toy at 16 MB, ECMP: the hash puts two groups' connections on one spine, whose
/// link is then the bottleneck of every packet they send (every path they have).
fn ecmp_collisions(cc: &str) -> aiccsim::Results {
    let jobs: String = (0..4)
        .map(|g| {
            format!(
                "[[jobs]]\nname = \"g{g}\"\nhosts = [{g}, {}]\nworkload = [{{ kind = \"all_reduce\", size = \"16MB\", chunks = 125 }}]\n",
                g + 4
            )
        })
        .collect();
    run(&format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 4
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[cc]
algorithm = "{cc}"
{jobs}"#
    ))
}

#[test]
fn congestion_on_every_path_of_a_flow_is_cut_down_without_pauses() {
    let (mcc, none) = (ecmp_collisions("mcc"), ecmp_collisions("none"));
    let (m, n) = (&mcc.summary, &none.summary);
    assert!(n.pause_frames > 0, "PFC only pauses");
    assert_eq!(m.pause_frames, 0, "MCC keeps the queues under the pause threshold");
    assert!(
        m.max_switch_queue_bytes * 10 < n.max_switch_queue_bytes,
        "{} vs {}",
        m.max_switch_queue_bytes,
        n.max_switch_queue_bytes
    );
    let (t, ideal) = (m.completion_time_ns.unwrap().as_secs_f64(), n.completion_time_ns.unwrap().as_secs_f64());
    assert!(t <= ideal * 1.05, "MCC {t} s vs PFC only {ideal} s");
}
