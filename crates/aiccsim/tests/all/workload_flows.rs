//! `kind = "flows"`'s two triggers: `after` starts a flow when the flows it waits for are
//! delivered, `after_acked` when their senders hold the ACK of their last byte, one ACK's way
//! back later. What each may name, and that the jobs' renumbering keeps its edges.

use crate::common;

use aiccsim::time::SimTime;
use aiccsim::Results;

/// Host 1 sends 1 MB to host 0 (flow 0), then 200 KB to host 2 (flow 1) once flow 0 is over by
/// `trigger` (`after` or `after_acked`), on a star of 100 Gbps, 1 us links.
fn chain(trigger: &str) -> Results {
    common::run(&common::star(
        3,
        "dcqcn",
        &format!(
            "kind = \"flows\"\nflows = [\n  {{ src = 1, dst = 0, size = \"1MB\" }},\n  {{ src = 1, dst = 2, size = \"200KB\", {trigger} = [0] }},\n]"
        ),
    ))
}

#[test]
fn after_acked_starts_the_next_flow_one_ack_return_after_after() {
    let (delivered, acked) = (chain("after"), chain("after_acked"));
    // Flow 0 is the same run in both: nothing else is on the fabric until it is over.
    let finish = delivered.flows[0].finish.unwrap();
    assert_eq!(acked.flows[0].finish, Some(finish));
    assert_eq!(delivered.flows[1].start, finish, "`after`: at the last byte's delivery");
    // The last packet is ACKed at once; the 60 B ACK crosses the receiver's link and the
    // switch's link to host 1, idle in that direction: 2 x (1 us + 60 x 8 / 100 Gbps).
    let ack_return = SimTime::from_ps(2 * (1_000_000 + 60 * 8 * 1_000 / 100));
    assert_eq!(acked.flows[1].start, finish + ack_return, "`after_acked`: when the last ACK reaches host 1");
    // Flow 1 itself runs alike: only its start moved.
    assert_eq!(acked.flows[1].fct(), delivered.flows[1].fct());
}

#[test]
fn after_and_after_acked_together_wait_for_both() {
    // Flow 2 waits for flow 0's delivery and flow 1's acknowledgement; flow 1 is far the
    // longer, so its ACK, not flow 0's delivery, starts flow 2.
    let r = common::run(&common::star(
        4,
        "dcqcn",
        "kind = \"flows\"\nflows = [\n  { src = 1, dst = 0, size = \"100KB\" },\n  { src = 2, dst = 3, size = \"1MB\" },\n  { src = 3, dst = 0, size = \"100KB\", after = [0], after_acked = [1] },\n]",
    ));
    let one = r.flows[1].finish.unwrap();
    assert!(r.flows[0].finish.unwrap() < one);
    assert_eq!(r.flows[2].start, one + SimTime::from_ps(2_009_600), "when flow 1's last ACK is back at host 2");
}

#[test]
fn after_acked_names_earlier_flows_only_and_not_those_of_after() {
    let scenario = |flows: &str| {
        aiccsim::Scenario::from_toml(&common::star(3, "dcqcn", &format!("kind = \"flows\"\nflows = [{flows}]")), "t")
    };
    let a = "{ src = 1, dst = 0, size = \"1MB\" }";
    assert!(scenario(&format!("{a}, {{ src = 1, dst = 2, size = \"1MB\", after_acked = [0] }}")).is_ok());
    for (second, key, says) in [
        ("after_acked = [1]", "workload.flows[1].after_acked", "flow 1 is not listed before flow 1"),
        ("after_acked = [2]", "workload.flows[1].after_acked", "flow 2 is not listed before flow 1"),
        ("after = [0], after_acked = [0]", "workload.flows[1].after_acked", "flow 0 is in `after` too"),
        ("after_acked = [0], stop = \"5us\"", "workload.flows[1].stop", "not allowed with `after` or `after_acked`"),
    ] {
        let e =
            scenario(&format!("{a}, {{ src = 1, dst = 2, size = \"1MB\", {second} }}")).expect_err(second).to_string();
        assert!(e.contains(key) && e.contains(says), "{second}: {e}");
    }
}

#[test]
fn a_job_keeps_its_after_acked_edges_when_its_flows_are_renumbered() {
    // Two jobs: the second's flows come after the first's, so its `after_acked = [0]` must
    // become flow 1, the job's own first flow, not flow 0 of the other job.
    let r = common::run(
        "[topology]\nkind = \"star\"\nhosts = 4\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }\n\
         [[jobs]]\nname = \"long\"\nhosts = [0, 1]\n[jobs.workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 1, size = \"2MB\" }]\n\
         [[jobs]]\nname = \"chain\"\nhosts = [2, 3]\n[jobs.workload]\nkind = \"flows\"\n\
         flows = [{ src = 0, dst = 1, size = \"100KB\" }, { src = 0, dst = 1, size = \"100KB\", after_acked = [0] }]\n",
    );
    assert_eq!((r.flows[1].src, r.flows[2].src), (2, 2));
    let first = r.flows[1].finish.unwrap();
    assert!(first < r.flows[0].finish.unwrap(), "the chain's first flow ends before the other job's");
    assert_eq!(r.flows[2].start, first + SimTime::from_ps(2_009_600));
}
