//! Coalesced SACKs (`nic.ack_out_of_order = "coalesced"`): a selective receiver acknowledges a
//! packet that arrived after a gap by the rules of an in-order one, as the UEC's reference
//! simulator does (uet-htsim `UecSink::processData`), and every ACK names all the packets it
//! holds. `"at_once"` (IRN's receiver, the default) acknowledges each such packet by itself,
//! which is the contrast that shows each test can fail.

use crate::common;
use aiccsim::{Results, Simulation};

/// 8 flows of 1 MB from leaf 0's hosts to leaf 1's, sprayed packet by packet over 4 spines:
/// the up-links carry twice their line, queues of different depths reorder every flow. No
/// congestion control and no ECN, so that an ACK is sent only by the receiver's own rules.
fn sprayed(nic: &str) -> Results {
    let flows: Vec<String> = (0..8).map(|i| format!("{{ src = {i}, dst = {}, size = \"1MB\" }}", i + 8)).collect();
    let toml = format!(
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
ecn = {{ enabled = false }}
[nic]
recovery = "selective"
ack_every = 4
ack_request = true
{nic}
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {} ]
"#,
        flows.join(", ")
    );
    let r = common::run(&toml);
    common::assert_conserved(&r);
    r
}

#[test]
fn out_of_order_packets_count_towards_ack_every_instead_of_each_bringing_an_ack() {
    let at_once = sprayed("");
    let coalesced = sprayed("ack_out_of_order = \"coalesced\"");
    for r in [&at_once, &coalesced] {
        let s = &r.summary;
        // Reordered, not lost: delivered whole, nothing resent, no timeout.
        assert_eq!((s.data_packets, s.retransmitted_bytes, s.nacks, s.timeouts), (8000, 0, 0, 0));
        assert!(s.out_of_order_packets.unwrap() > 2000, "{:?} packets out of order", s.out_of_order_packets);
    }
    // At once: an ACK for every packet that arrived out of order, besides those in order.
    let (acks, ooo) = (at_once.summary.acks, at_once.summary.out_of_order_packets.unwrap());
    assert!(acks >= ooo, "{acks} ACKs for {ooo} packets out of order");
    // Coalesced: one per 4 packets, in order or not, plus each flow's first and last (AR) and
    // the packets that fill a hole: 2000 and a few.
    let acks = coalesced.summary.acks;
    assert!((2000..2100).contains(&acks), "{acks} ACKs for 8000 packets, 4 per ACK");
}

/// One flow of 500 packets (1000 B) across a star of 100 Gbps / 1 us links under NSCC (a window
/// of 1.5 bandwidth-delay products, 78 packets), its 11th packet lost: no later packet is in
/// order until the timeout (200 us) resends it, and the receiver tolerates the reordering
/// (`reorder_window` 1023), so it never NACKs. Only SACKs let the window move past the hole.
fn hole(nic: &str) -> Results {
    let toml = format!(
        r#"
[topology]
kind = "star"
hosts = 2
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[nic]
recovery = "selective"
reorder_window = 1023
ack_every = 4
ack_request = true
rto = "200us"
{nic}
[cc]
algorithm = "nscc"
[workload]
kind = "flows"
flows = [{{ src = 0, dst = 1, size = "500KB" }}]
"#
    );
    let scenario = common::scenario(&toml);
    let mut sim = Simulation::new(&scenario).unwrap();
    sim.lose_packet(0, 10_000);
    let r = sim.run(&mut |_| {});
    common::assert_conserved(&r);
    r
}

#[test]
fn a_coalesced_ack_names_every_packet_held_so_the_window_moves_past_a_hole() {
    for nic in ["", "ack_out_of_order = \"coalesced\""] {
        let r = hole(nic);
        let (s, f) = (&r.summary, &r.flows[0]);
        // Every packet after the hole was acknowledged selectively before the timeout, however
        // far past the hole (489 packets, past any 64-packet window), so the window let all
        // of them out, and the timeout resends the lost packet alone.
        assert_eq!((s.timeouts, f.retransmitted_bytes, s.data_packets), (1, 1000, 501), "{nic:?}");
        let fct = f.fct().unwrap().as_us_f64();
        assert!((200.0..215.0).contains(&fct), "{nic:?}: FCT {fct} us, the timeout's 200 and a round trip");
    }
    // The ACKs: at once, one per packet held (489) and the in-order ones; coalesced, one per 4.
    let (at_once, coalesced) = (hole("").summary.acks, hole("ack_out_of_order = \"coalesced\"").summary.acks);
    assert!(at_once > 480, "{at_once} ACKs");
    assert!((120..140).contains(&coalesced), "{coalesced} ACKs for 501 packets");
}

#[test]
fn coalescing_needs_a_selective_receiver_and_is_left_out_when_off() {
    let toml = |nic: &str| {
        format!(
            "[topology]\nkind = \"star\"\nhosts = 2\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[nic]\n{nic}\n[workload]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 1, size = \"10KB\" }}]\n"
        )
    };
    let err = aiccsim::Scenario::from_toml(&toml("ack_out_of_order = \"coalesced\""), "t.toml")
        .expect_err("go-back-N keeps nothing to acknowledge")
        .to_string();
    assert!(err.contains("nic.ack_out_of_order") && err.contains("selective"), "{err}");
    // A resolved scenario names it only when it is on, so that other runs read as before.
    let resolved = |nic: &str| {
        let s = common::scenario(&toml(nic));
        toml::to_string(&s).unwrap()
    };
    assert!(!resolved("recovery = \"selective\"").contains("ack_out_of_order"));
    assert!(resolved("recovery = \"selective\"\nack_out_of_order = \"coalesced\"")
        .contains("ack_out_of_order = \"coalesced\""));
}
