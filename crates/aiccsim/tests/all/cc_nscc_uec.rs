//! NSCC as the UEC's reference simulator (uet-htsim) runs it, on the network: the ACK request
//! (`nic.ack_request`) keeps a window below `nic.ack_every` packets moving; every flow's
//! algorithm is told the network's round trip (the largest among the flows); a NACK says
//! whether its packet was trimmed at the last hop.

use crate::common;
use aiccsim::cc::external::{self, Built, ExternalFactory};
use aiccsim::cc::{Algorithm, Cc, FlowContext, FlowFacts, NicEvent, NicProgram, Programmed};
use aiccsim::{Results, Scenario, Simulation};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One 100 KB flow (100 packets of 1000 B) across the star of 100 Gbps / 1 us links under NSCC
/// whose largest window is 1.5 KB, so that two packets are in flight at most: below the 4
/// packets per ACK of `ack_every`. Selective recovery and a 200 us timeout, with `nic` added.
fn narrow_window(nic: &str) -> Results {
    let extra = format!(
        r#"
[nic]
ack_every = 4
recovery = "selective"
rto = "200us"
{nic}
"#
    );
    // 0.03 x the 52 KB bandwidth-delay product of the star's 4.18 us round trip: 1567 B.
    let cc = "algorithm = \"nscc\"\nmax_window = 0.03";
    common::run(&common::incast_on(1, "100KB", common::FAST, cc, &extra))
}

#[test]
fn the_ack_request_keeps_a_window_below_ack_every_moving() {
    // Without it the receiver waits for four packets, the sender stops at two: every pair waits
    // for the timeout.
    let stalled = narrow_window("");
    assert!(stalled.summary.timeouts >= 10, "{} timeouts", stalled.summary.timeouts);
    // With it the second packet of each window carries AR and is acknowledged at once: two
    // packets per round trip, the round trip being the idle path's (4.18 us) plus the second
    // packet's serialisation behind the first (84 ns). The flow is delivered half a round trip
    // (the last ACK's way back) before its 50th round ends.
    let r = narrow_window("ack_request = true");
    assert_eq!(r.summary.timeouts, 0);
    let analytic_us = 50.0 * (4.18 + 0.084) - 4.18 / 2.0;
    let fct_us = r.flows[0].fct().unwrap().as_us_f64();
    assert!((fct_us - analytic_us).abs() <= 0.05 * analytic_us, "FCT {fct_us} us against {analytic_us} us");
    // The first packet is acknowledged at once (a flow's first packet), which frees a slot in
    // the window while its successor is in flight: from then on every packet refills the window
    // and carries AR, as the reference's rule (`_in_flight + full_pkt_size >= _cwnd`) would set
    // it, so every packet is acknowledged.
    assert_eq!(r.summary.acks, 100);
}

#[test]
fn with_an_open_window_acks_still_come_every_ack_every_packets() {
    // NSCC's default largest window, 1.5 bandwidth-delay products (78 packets): the ACKs of
    // every 4th packet keep about 50 in flight, the window is never full, and AR goes on the last
    // packet only. The first packet, then one per 4 of the other 99 and the last.
    let extra = "[nic]\nack_every = 4\nack_request = true\nrecovery = \"selective\"\n";
    let r = common::run(&common::incast_on(1, "100KB", common::FAST, "algorithm = \"nscc\"", extra));
    assert_eq!(r.summary.timeouts, 0);
    assert!((25..=28).contains(&r.summary.acks), "{} ACKs for 100 packets", r.summary.acks);
}

#[test]
fn the_ack_request_is_off_unless_asked_for_and_the_uec_preset_asks() {
    let plain = common::scenario(&common::incast(2, "10KB", "nscc", ""));
    assert!(!plain.nic.ack_request);
    let uec = common::scenario(&format!("preset = \"uec\"\n{}", common::incast(2, "10KB", "nscc", "")));
    assert!(uec.nic.ack_request);
}

#[test]
fn every_flow_is_told_the_largest_round_trip_among_the_flows() {
    // Two flows in one rack and one across the leaf-spine fabric.
    let toml = r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "nscc"
[workload]
kind = "flows"
flows = [{ src = 0, dst = 1, size = "10KB" }, { src = 1, dst = 0, size = "10KB" }, { src = 0, dst = 2, size = "10KB" }]
"#;
    let sim = Simulation::new(&common::scenario(toml)).unwrap();
    let facts: Vec<FlowFacts> = (0..3).map(|f| sim.flow_facts(f)).collect();
    let longest = facts.iter().map(|f| f.base_rtt).max().unwrap();
    assert!(facts[0].base_rtt < facts[2].base_rtt, "in the rack, two hops; across, four");
    assert_eq!(longest, facts[2].base_rtt);
    assert!(facts.iter().all(|f| f.network_rtt == longest && !f.trimming));
}

/// NACKs of trimmed packets the senders' algorithm heard: at the last hop, and inside the fabric.
static LAST_HOP: AtomicU64 = AtomicU64::new(0);
static IN_FABRIC: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Debug)]
struct HopListener;

impl Algorithm for HopListener {
    fn name(&self) -> &'static str {
        "test_last_hop_listener"
    }
    fn describe(&self) -> &'static str {
        "counts trimmed NACKs by where the trim was"
    }
    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Custom(Box::new(Programmed::new(HopFlow, facts)))
    }
}

struct HopFlow;

impl NicProgram for HopFlow {
    fn on_event(&mut self, event: &NicEvent<'_>, _flow: &mut FlowContext<'_>) {
        if let NicEvent::Nack { trimmed: true, last_hop, .. } = event {
            let counter = if *last_hop { &LAST_HOP } else { &IN_FABRIC };
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}

struct HopFactory;

impl ExternalFactory for HopFactory {
    fn build(&self, params: toml::Table, _folder: &Path) -> Result<Built, (String, String)> {
        Ok((params, Arc::new(HopListener)))
    }
}

#[test]
fn a_nack_says_whether_its_packet_was_trimmed_at_the_last_hop() {
    external::register("test_last_hop_listener", Arc::new(HopFactory));
    // Eight senders at line rate into one receiver, through a trimming switch.
    let lossy = r#"
[switch]
buffer = "400KB"
pfc = { enabled = false }
trimming = { threshold = "100KB" }
[nic]
recovery = "selective"
"#;
    let heard = |toml: &str| {
        let (last, inside) = (LAST_HOP.load(Ordering::Relaxed), IN_FABRIC.load(Ordering::Relaxed));
        let r = Simulation::new(&Scenario::from_toml(toml, "t").unwrap()).unwrap().run(&mut |_| {});
        common::assert_conserved(&r);
        let t = r.summary.trimming.as_ref().unwrap().packets_trimmed;
        assert!(t > 50, "{t} trims");
        (t, LAST_HOP.load(Ordering::Relaxed) - last, IN_FABRIC.load(Ordering::Relaxed) - inside)
    };
    // On a star, the queue that trims is the switch's port to the receiver: the last hop.
    let star = common::incast(8, "100KB", "test_last_hop_listener", lossy);
    let (t, last, inside) = heard(&star);
    assert_eq!((last, inside), (t, 0));
    // Across a dumbbell whose middle link is the bottleneck, it is the left switch's port onto
    // that link: inside the fabric.
    let dumbbell = format!(
        r#"
[topology]
kind = "dumbbell"
left = 8
right = 1
link = {{ bandwidth = "100Gbps", delay = "1us" }}
bottleneck = {{ bandwidth = "50Gbps", delay = "1us" }}
[cc]
algorithm = "test_last_hop_listener"
[workload]
kind = "incast"
senders = "0..=7"
receiver = 8
size = "100KB"
{lossy}"#
    );
    let (t, last, inside) = heard(&dumbbell);
    assert_eq!((last, inside), (0, t));
}

/// An all-to-all of 32 KB among 16 hosts of a 400 Gbps star (1 us links) under the `uec`
/// preset (ACKs every 4 packets, as the reference's, and AR), with `cc` as the `[cc]` body.
fn star_all_to_all(cc: &str) -> Results {
    common::run(&format!(
        r#"
preset = "uec"
[nic]
ack_every = 4
[topology]
kind = "star"
hosts = 16
link = {{ bandwidth = "400Gbps", delay = "1us" }}
[cc]
{cc}
[workload]
kind = "all_to_all"
size = "32KB"
"#
    ))
}

#[test]
fn receiver_credit_comes_back_with_every_packet_whatever_ack_every_says() {
    // Each host serves its 15 flows in turn, so a flow has a packet or two out when the first
    // ACK ends its speculation and drops the credit it had not spent. Its credit then comes
    // only on ACKs; held for `ack_every` = 4 packets, none came for those one or two, and each
    // such flow waited for its 67 ms timeout (57 of them). The reference's pull pacer grants
    // credit whatever the ACKs do: each packet's grant goes back at once.
    for cc in ["algorithm = \"rccc\"", "algorithm = \"nscc\"\nreceiver_credit = true"] {
        let r = star_all_to_all(cc);
        assert_eq!(r.summary.timeouts, 0, "{cc}");
        assert_eq!(r.summary.acks, r.summary.data_packets, "{cc}: one ACK per packet");
        // 15 x 32 KB from each host at 400 Gbps is 9.6 us; 13.2 us with the round trips.
        let t = r.summary.completion_time_ns.expect("finished").as_us_f64();
        assert!(t < 16.0, "{cc}: {t} us");
    }
    // Without receiver credit the ACKs still come every 4 packets.
    let r = star_all_to_all("algorithm = \"nscc\"");
    assert!(r.summary.acks * 2 < r.summary.data_packets, "{} ACKs, {} packets", r.summary.acks, r.summary.data_packets);
}

/// An all-to-all of 128 KB on a k = 6 fat tree of 400 Gbps / 1 us links (54 hosts) under NSCC
/// and the `uec` preset (trimming, lossy), with one aggregation-to-core link (s18-s36) at
/// 100 Gbps, and `nic` added to `[nic]`.
fn slow_link_all_to_all(nic: &str) -> Results {
    common::run(&format!(
        r#"
preset = "uec"
[nic]
{nic}
[topology]
kind = "fat_tree"
k = 6
link = {{ bandwidth = "400Gbps", delay = "1us" }}
[workload]
kind = "all_to_all"
size = "128KB"
[[events]]
action = "slow"
at = "1ns"
link = ["s18", "s36"]
bandwidth = "100Gbps"
"#
    ))
}

#[test]
fn the_uec_presets_90_us_timeout_ends_the_stalls_ack_coalescing_makes() {
    // As the reference: an ACK per 4 packets, so an ACK that shrinks NSCC's window below the two
    // or three packets already out (sent while the window had room, so without AR) leaves them
    // waiting for the timeout, the reference's 90 us.
    let r = slow_link_all_to_all("");
    assert!(r.summary.timeouts >= 1, "{} timeouts", r.summary.timeouts);
    // 53 x 128 KB from each host at 400 Gbps is 136 us; 168 us with the slow link's queues
    // and ACKs per packet (below); a stall or two of 90 us on top.
    let t = r.summary.completion_time_ns.expect("finished").as_us_f64();
    assert!(t < 400.0, "{t} us");
    // With the NIC's default timeout (67 ms) the same stalls last 67 ms.
    let slow = slow_link_all_to_all("rto = \"67108864ns\"");
    let t_slow = slow.summary.completion_time_ns.expect("finished").as_us_f64();
    assert!(t_slow > 60_000.0, "{t_slow} us");
    // An ACK per packet (the variant): nothing waits.
    let per_packet = slow_link_all_to_all("ack_every = 1");
    assert_eq!(per_packet.summary.timeouts, 0);
    let t1 = per_packet.summary.completion_time_ns.expect("finished").as_us_f64();
    assert!(t1 < 200.0, "{t1} us");
}
