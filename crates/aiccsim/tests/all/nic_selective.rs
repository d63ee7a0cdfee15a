//! Selective recovery (`nic.recovery = "selective"`): a receiver that keeps packets after a gap
//! makes packet spraying work, resends only what was lost, and recovers a lost tail by the
//! timeout. Go-back-N on the same runs is the contrast that shows each test can fail. Run with
//! debug assertions on (`cargo test`), a byte counter of the scoreboard that would go below
//! zero fails the test.

use crate::common;

use aiccsim::cc::CcConfig;
use aiccsim::{Results, Scenario, Simulation};

/// 8 flows of `size` from the 8 hosts of leaf 0 to the 8 of leaf 1, sprayed over 4 spines: the
/// leaf's 4 up-links carry twice what they can, so queues build at different depths on the
/// 4 paths and every flow's packets overtake each other.
fn sprayed(recovery: &str, size: &str, extra: &str) -> String {
    let flows: Vec<String> = (0..8).map(|i| format!("{{ src = {i}, dst = {}, size = \"{size}\" }}", i + 8)).collect();
    format!(
        r#"
[simulation]
seed = 3
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 8
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = "spray"
[nic]
recovery = "{recovery}"
{extra}
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {} ]
"#,
        flows.join(", ")
    )
}

/// Runs `toml` after losing each (flow, byte) of `losses`; checks the byte ledger.
fn run_losing(toml: &str, losses: &[(u32, u64)]) -> Results {
    let scenario = common::scenario(toml);
    let mut sim = Simulation::new(&scenario).unwrap();
    for &(f, seq) in losses {
        sim.lose_packet(f, seq);
    }
    let r = sim.run(&mut |_| {});
    common::assert_conserved(&r);
    r
}

/// One flow of `size` from host 0 to host 1 of a star (one path: nothing reorders).
fn lone_flow(recovery: &str, size: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = 2
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[nic]
recovery = "{recovery}"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [{{ src = 0, dst = 1, size = "{size}" }}]
"#
    )
}

#[test]
fn a_sprayed_flow_is_delivered_whole_without_resending() {
    let r = common::run(&sprayed("selective", "1MB", ""));
    let s = &r.summary;
    let reordered = s.out_of_order_packets.expect("reported with selective recovery");
    // 8000 packets; a large share of them overtook another of their flow.
    assert!(reordered > 1000, "only {reordered} packets arrived out of order");
    for f in &r.flows {
        assert!(f.retransmitted_bytes * 100 < f.size_bytes, "flow {}: {} B resent", f.flow_id, f.retransmitted_bytes);
    }
    // Reordered, not lost: nothing resent, nothing declared lost, no timeout.
    assert_eq!((s.retransmitted_bytes, s.nacks, s.timeouts, s.packets_dropped), (0, 0, 0, 0));
    // Every payload byte went out once.
    assert_eq!(s.data_packets, 8 * 1000);

    // Go-back-N discards every packet that overtook another and resends from there.
    let gbn = common::run(&sprayed("go_back_n", "1MB", ""));
    assert!(gbn.summary.out_of_order_packets.is_none());
    assert!(
        gbn.summary.retransmitted_bytes > 8_000_000,
        "go-back-N resent only {} B of 8 MB",
        gbn.summary.retransmitted_bytes
    );
    let (sel, gbn) = (r.summary.completion_time_ns.unwrap(), gbn.summary.completion_time_ns.unwrap());
    assert!(sel.0 * 10 < gbn.0, "selective {sel} vs go-back-N {gbn}");
}

#[test]
fn a_reorder_window_below_the_reordering_resends_what_was_only_late() {
    // The same reordering, tolerated only 8 packets deep: packets are declared lost that were
    // only late, and resent, each once per NACK; they and their resends still all arrive.
    let r = common::run(&sprayed("selective", "1MB", "reorder_window = 8"));
    let s = &r.summary;
    assert!(s.nacks > 0 && s.retransmitted_bytes > 0);
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.data_packets, 8 * 1000 + s.retransmitted_bytes / 1000);
}

#[test]
fn one_lost_packet_is_resent_alone() {
    // Packet 100 of a 1 MB flow (bytes 100000..101000) is lost.
    let r = run_losing(&lone_flow("selective", "1MB"), &[(0, 100_000)]);
    let (s, f) = (&r.summary, &r.flows[0]);
    assert_eq!(s.packets_dropped, 1);
    assert_eq!(f.retransmitted_bytes, 1000, "one packet's payload");
    assert_eq!((s.nacks, s.timeouts), (1, 0));
    // The 256 packets after it that declared it lost arrived before its resend, and those sent
    // while the NACK and the resend made their round trip.
    let held = s.out_of_order_packets.unwrap();
    assert!((256..320).contains(&held), "{held} packets held");
    assert_eq!(s.data_packets, 1001);

    // Go-back-N resends everything sent after it.
    let gbn = run_losing(&lone_flow("go_back_n", "1MB"), &[(0, 100_000)]);
    assert!(gbn.flows[0].retransmitted_bytes > 10_000, "{} B", gbn.flows[0].retransmitted_bytes);
}

#[test]
fn losses_among_reordered_packets_are_resent_alone() {
    // Three packets of one sprayed flow and one of another are lost; everything else arrives
    // out of order but whole.
    let losses = [(2, 10_000), (2, 11_000), (2, 500_000), (5, 999_000)];
    let r = run_losing(&sprayed("selective", "1MB", ""), &losses);
    let s = &r.summary;
    assert_eq!(s.packets_dropped, 4);
    assert_eq!(s.retransmitted_bytes, 4000, "the lost packets, once each");
    let resent: Vec<u64> = r.flows.iter().map(|f| f.retransmitted_bytes).collect();
    assert_eq!(resent, [0, 0, 3000, 0, 0, 1000, 0, 0]);
    // Flow 5's loss is its last packet: nothing comes after it to reveal it but the timeout.
    assert_eq!((r.flows[5].timeouts, s.timeouts), (1, 1));
    assert!(r.flows[5].fct().unwrap().as_us_f64() > 1000.0);
}

#[test]
fn a_lost_last_packet_is_recovered_by_the_timeout() {
    let r = run_losing(&lone_flow("selective", "100KB"), &[(0, 99_999)]);
    let (s, f) = (&r.summary, &r.flows[0]);
    assert_eq!((s.timeouts, s.nacks), (1, 0));
    assert_eq!(f.retransmitted_bytes, 1000);
    // It arrives one rto (the default, 67.1 ms) after the ACK of the packet before it, not
    // earlier.
    let (fct, rto) = (f.fct().unwrap().as_us_f64(), aiccsim::config::DEFAULT_RTO.as_us_f64());
    assert!((rto..rto + 20.0).contains(&fct), "FCT {fct} us");
}

#[test]
fn a_lost_resend_is_asked_for_again() {
    // Packet 100 and then its resend are lost: the receiver repeats its NACK after
    // nack_interval, while the packets after it keep coming.
    let toml = lone_flow("selective", "4MB").replace("[nic]\n", "[nic]\nnack_interval = \"20us\"\n");
    let r = run_losing(&toml, &[(0, 100_000), (0, 100_000)]);
    let (s, f) = (&r.summary, &r.flows[0]);
    assert_eq!(s.packets_dropped, 2);
    assert_eq!(f.retransmitted_bytes, 2000, "twice the lost packet");
    assert_eq!((s.nacks, s.timeouts), (2, 0));
}

#[test]
fn every_algorithm_recovers_selectively_under_spraying_and_loss() {
    // Every built-in algorithm, with its window and its reactions to a NACK, on the sprayed
    // fabric with a few losses: all bytes delivered, only the lost packets resent.
    // (Each early enough in its 400-packet flow for the 256-packet reorder window to reveal it.)
    let losses = [(0, 50_000), (3, 100_000), (7, 1_000)];
    for cc in CcConfig::all_defaults() {
        let mut scenario: Scenario = common::scenario(&sprayed("selective", "400KB", ""));
        scenario.cc = cc.clone();
        let mut sim = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{}: {e}", cc.name()));
        for &(f, seq) in &losses {
            sim.lose_packet(f, seq);
        }
        let r = sim.run(&mut |_| {});
        common::assert_conserved(&r);
        let s = &r.summary;
        assert_eq!(s.retransmitted_bytes, 3000, "{}: resent {} B", cc.name(), s.retransmitted_bytes);
        assert_eq!(s.timeouts, 0, "{}", cc.name());
    }
}

#[test]
fn messages_on_one_connection_recover_selectively() {
    // Each host of leaf 0 posts 4 messages of 250 KB on one connection, sprayed; a reorder
    // window of 4 declares many late packets lost. A message resends them after it has handed
    // its last new byte to the NIC and the next message has taken the connection: the
    // connection's bytes in flight (checked in debug builds) and its send queue must stay
    // right.
    let flows: Vec<String> = (0..8)
        .flat_map(|i| {
            (0..4).map(move |_| format!("{{ src = {i}, dst = {}, size = \"250KB\", connection = 0 }}", i + 8))
        })
        .collect();
    let toml = sprayed("selective", "1MB", "reorder_window = 4").split("flows = [").next().unwrap().to_string()
        + &format!("flows = [ {} ]\n", flows.join(", "));
    let r = common::run(&toml);
    let s = &r.summary;
    assert!(s.out_of_order_packets.unwrap() > 1000);
    assert!(s.nacks > 0 && s.retransmitted_bytes > 0, "a reorder window of 4 declares late packets lost");
    // Every byte went out once, and once more for each packet declared lost.
    assert_eq!(s.data_packets, 8000 + s.retransmitted_bytes / 1000);
}

#[test]
fn drops_without_pfc_are_recovered_with_coalesced_acks() {
    // A buffer too small for the incast, no PFC, no congestion control: over half the packets,
    // resends included, are dropped. A star does not reorder, so a short reorder window is
    // safe.
    let extra = r#"
[switch]
buffer = "150KB"
pfc = { enabled = false }
[nic]
recovery = "selective"
reorder_window = 8
ack_every = 8
rto = "50us"
"#;
    let r = common::run(&common::incast(8, "300KB", "none", extra));
    let s = &r.summary;
    assert!(s.packets_dropped > 2000, "{} drops", s.packets_dropped);
    assert!(s.timeouts < 50, "{} timeouts", s.timeouts);
    // What reaches the receiver is the 2400 packets and few copies: a resend replaces a drop.
    let packets = |r: &Results| r.summary.data_bytes.received / 1048;
    assert!(packets(&r) < 2400 * 105 / 100, "{} packets arrived for 2400", packets(&r));
    // Go-back-N's receiver discards what comes after each drop, which was sent for nothing.
    let gbn = common::run(&common::incast(8, "300KB", "none", &extra.replace("selective", "go_back_n")));
    assert!(packets(&gbn) > 2400 * 120 / 100, "go-back-N: {} packets arrived for 2400", packets(&gbn));
}

#[test]
fn the_sender_stays_within_the_receivers_bitmap() {
    // The bitmap bounds the packets outstanding past the first unacknowledged one. Over 4 us
    // links a round trip is ~16.2 us, ~190 packets at 100 Gbps: 1024 packets let the flow run at
    // line rate, 64 at a third of it.
    let run = |bitmap: u32| {
        let toml = lone_flow("selective", "1MB")
            .replace("[nic]\n", &format!("[nic]\nsack_bitmap = {bitmap}\nreorder_window = 8\n"))
            .replace("delay = \"1us\"", "delay = \"4us\"");
        common::run(&toml)
    };
    let (wide, narrow) = (run(1024), run(64));
    let fct = |r: &Results| r.flows[0].fct().unwrap().as_us_f64();
    assert!(
        fct(&narrow) > 2.5 * fct(&wide),
        "a 64-packet bitmap should throttle: {} us vs {} us",
        fct(&narrow),
        fct(&wide)
    );
    // And the run says so before it starts.
    assert!(wide.summary.warnings.is_empty());
    let w = &narrow.summary.warnings;
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].key, "nic.sack_bitmap");
    assert!(w[0].message.starts_with("64 packets is less than the 193 packets a round trip holds"), "{}", w[0].message);
}
