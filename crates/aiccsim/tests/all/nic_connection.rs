//! Persistent connections: consecutive transfers between two ranks ride one queue pair, keeping
//! its congestion-control state and its send order; `nic.connections = "per_transfer"` gives
//! each transfer a fresh queue pair.

use crate::common;

use aiccsim::cc::{Cc, CongestionControl, Receiver};
use aiccsim::metrics::trace::TraceEvent;
use aiccsim::time::SimTime;
use aiccsim::wire::packet::PacketKind;
use aiccsim::Results;
use aiccsim::Simulation;

/// Host 1 sends `competitor` bytes to host 0 from the start; host 2 sends 2 MB to host 0, then
/// a second transfer (`second`: the rest of its flow entry) on the same connection. 1 us rate
/// samples of host 2's transfers.
fn on_one_connection(connections: &str, cc: &str, competitor: &str, second: &str) -> Results {
    common::run(&format!(
        r#"
[topology]
kind = "star"
hosts = 3
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[nic]
connections = "{connections}"
[cc]
algorithm = "{cc}"
[workload]
kind = "flows"
flows = [
  {{ src = 1, dst = 0, size = "{competitor}" }},
  {{ src = 2, dst = 0, size = "2MB", connection = 0 }},
  {{ src = 2, dst = 0, connection = 0, {second} }},
]
[output]
sample_interval = "1us"
rate_flows = [1, 2]
"#
    ))
}

/// Host 1 sends a long flow to host 0 throughout; host 2 sends two 2 MB transfers to host 0 on
/// one connection, the second posted when the first is delivered. DCQCN.
fn two_transfers(connections: &str) -> Results {
    on_one_connection(connections, "dcqcn", "12MB", "size = \"2MB\", after = [1]")
}

/// The sending rate (Gbps) flow `f` was sampled at last, and flow `g` first.
fn rates_across(r: &Results, f: u32, g: u32) -> (f64, f64) {
    let last = r.rates.iter().rfind(|s| s.flow == f).expect("sampled");
    let first = r.rates.iter().find(|s| s.flow == g).expect("sampled");
    (last.rate_bps / 1e9, first.rate_bps / 1e9)
}

#[test]
fn a_persistent_connection_keeps_its_rate_across_transfers() {
    let r = two_transfers("persistent");
    let (end_of_first, start_of_second) = rates_across(&r, 1, 2);
    assert!(end_of_first < 80.0, "the first transfer was slowed down: {end_of_first:.1} Gbps");
    assert!(
        (start_of_second - end_of_first).abs() < 0.02 * end_of_first,
        "the second transfer starts at {start_of_second:.2} Gbps, the first ended at {end_of_first:.2}"
    );
    // Both transfers took the same path and the second started where the first left off.
    assert!(r.flows[2].start >= r.flows[1].finish.unwrap());
}

#[test]
fn an_idle_dcqcn_connection_goes_on_recovering_its_rate() {
    // The second transfer is posted 3 ms after the start, long after the first ended: DCQCN's
    // rate-increase timer went on running on the idle queue pair (as a NIC's rate limiter does),
    // so the second transfer starts back at line rate, not where the first left off.
    let r = on_one_connection("persistent", "dcqcn", "12MB", "size = \"2MB\", start = \"3ms\"");
    assert!(r.flows[1].finish.unwrap() < SimTime::from_us(1_500), "the first transfer ends well before 3 ms");
    let (end_of_first, start_of_second) = rates_across(&r, 1, 2);
    assert!(end_of_first < 80.0, "the first transfer was slowed down: {end_of_first:.1} Gbps");
    assert!(start_of_second > 99.0, "after 2.5 ms idle: {start_of_second:.2} Gbps");
}

#[test]
fn hpcc_on_a_connection_goes_on_committing_once_per_round_trip() {
    // Transfer 2 (1 MB) follows transfer 1 (2 MB) on one connection, alone on the link once
    // transfer 1 and the competing flow are done. HPCC commits its reference window on the
    // first ACK past the last commit's snd_nxt: the algorithm must see the connection's byte
    // numbering, or transfer 2's ACKs (numbered from 0 again) never pass transfer 1's last
    // commit and its window stays where the congestion left it (slowdown 2.1 before the fix).
    let r = on_one_connection("persistent", "hpcc", "2MB", "size = \"1MB\", after = [0, 1]");
    assert!(r.flows[1].slowdown().unwrap() > 1.6, "transfer 1 shared the link");
    let second = r.flows[2].slowdown().unwrap();
    assert!(second < 1.25, "transfer 2, alone on the link, has slowdown {second:.3}");
}

#[test]
fn per_transfer_connections_restart_at_line_rate() {
    let r = two_transfers("per_transfer");
    let (end_of_first, start_of_second) = rates_across(&r, 1, 2);
    assert!(end_of_first < 80.0, "{end_of_first:.1} Gbps");
    assert!(start_of_second > 99.9, "a fresh queue pair starts at line rate, not {start_of_second:.2} Gbps");
}

#[test]
fn transfers_posted_together_on_one_connection_go_one_after_another() {
    // Two 1 MB transfers from host 1 to host 0 posted at once: on one connection the second
    // waits until the first has sent its last byte (its FCT about twice the first's); on two
    // queue pairs they share the link and end together.
    let run = |connection: &str| {
        common::run(&format!(
            "[topology]\nkind = \"star\"\nhosts = 2\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[cc]\nalgorithm = \"none\"\n[workload]\nkind = \"flows\"\nflows = [ {{ src = 1, dst = 0, size = \"1MB\"{connection} }}, {{ src = 1, dst = 0, size = \"1MB\"{connection} }} ]"
        ))
    };
    let fifo = run(", connection = 7");
    let (a, b) = (fifo.flows[0].fct().unwrap().0 as f64, fifo.flows[1].fct().unwrap().0 as f64);
    assert!((b / a - 2.0).abs() < 0.05, "second FCT / first = {:.3}", b / a);
    let shared = run("");
    let (a, b) = (shared.flows[0].fct().unwrap().0 as f64, shared.flows[1].fct().unwrap().0 as f64);
    assert!((b / a - 1.0).abs() < 0.01, "side by side: {:.3}", b / a);
}

/// A window of exactly one packet's payload at line rate: one packet in flight at a time.
struct OnePacket;

impl CongestionControl for OnePacket {
    fn rate(&self) -> f64 {
        100e9
    }
    fn window(&self) -> Option<u64> {
        Some(1000)
    }
}

#[test]
fn the_last_ack_of_a_message_releases_the_next_one_held_back_by_the_window() {
    // The second transfer on the connection can send only once the first one's last packet is
    // acknowledged, and that ACK must wake the NIC at once (before it did, the transfer waited
    // for whatever woke the NIC next, and on a fabric where nothing did, the run stalled).
    let toml = "[topology]\nkind = \"star\"\nhosts = 2\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }\n[workload]\nkind = \"flows\"\nflows = [ { src = 1, dst = 0, size = \"20KB\", connection = 0 }, { src = 1, dst = 0, size = \"20KB\", connection = 0 } ]\n[output.trace]\nnodes = [\"h1\"]";
    let mut sim = Simulation::new(&common::scenario(toml)).unwrap();
    sim.set_flow_algorithm(0, Cc::Custom(Box::new(OnePacket)), Receiver::Echo);
    let r = sim.run(&mut |_| {});
    common::assert_conserved(&r);
    let trace = r.trace.as_ref().expect("traced");
    let last_ack = trace
        .iter()
        .find(|t| t.event == TraceEvent::Arrive && t.kind == PacketKind::Ack && t.flow == Some(0) && t.seq == 20_000)
        .expect("the first transfer's last ACK");
    let first_send = trace
        .iter()
        .find(|t| t.event == TraceEvent::Send && t.kind == PacketKind::Data && t.flow == Some(1))
        .expect("the second transfer's first packet");
    assert_eq!(first_send.time, last_ack.time);
}
