//! Credit-based link-level flow control (`switch.flow_control = "credit"`, InfiniBand-style):
//! lossless without a PAUSE frame, a bottleneck kept busy while the senders wait for credits,
//! a receiver never sent more than its buffer, and a lone flow at line rate while the buffer
//! covers the credit loop's round trip and at buffer / round trip when it does not.

use crate::common::{self, algo, completion_us, incast_on, lone_analytic_us, FAST};
use aiccsim::time::{Bandwidth, SimTime};
use aiccsim::{Results, Simulation};
use proptest::prelude::*;

/// `[switch]` for a credit fabric with `credit` as its `[switch.credit]` body.
fn credit(table: &str) -> String {
    format!("[switch]\nflow_control = \"credit\"\ncredit = {{ {table} }}\n")
}

/// Credit stalls and their time, in us, summed over the senders' NICs (every host but h0).
fn senders_stalled(r: &Results) -> (u64, f64) {
    let nics = r.ports.iter().filter(|p| p.node.starts_with('h') && p.node != "h0");
    nics.fold((0, 0.0), |(n, t), p| (n + p.stats.credit_stalls, t + p.stats.credit_stall_time.as_us_f64()))
}

fn assert_lossless_without_pfc(r: &Results) {
    assert_eq!(r.summary.packets_dropped, 0, "a credit fabric dropped packets");
    assert_eq!((r.summary.pause_frames, r.summary.resume_frames), (0, 0), "a credit fabric sent PFC frames");
    for p in &r.ports {
        assert_eq!((p.stats.drops, p.stats.pause_sent, p.stats.resume_sent), (0, 0, 0), "{}:{}", p.node, p.port);
        assert_eq!(p.stats.paused_time, SimTime::ZERO, "{}:{} was paused", p.node, p.port);
    }
}

#[test]
fn a_credit_fabric_never_drops_and_never_sends_pause() {
    // 8 x 1 MB into one port through 16 KB of buffer per ingress port, with congestion control
    // and without, credits returned per packet and in periodic updates: nothing is lost, nothing
    // is paused, and the senders wait for credits instead.
    for cc in ["none", "dcqcn"] {
        for update in ["0ns", "1us"] {
            let extra = credit(&format!("buffer = \"16KB\", update_interval = \"{update}\""));
            let r = common::run(&incast_on(8, "1MB", FAST, &algo(cc), &extra));
            assert_lossless_without_pfc(&r);
            let credit = r.summary.credit.as_ref().expect("summary.json's credit block");
            let (stalls, _) = senders_stalled(&r);
            assert!(stalls > 0 && credit.stalls >= stalls, "{cc}, update {update}: {credit:?}");
            // The switch holds at most 16 KB from each of the eight senders, ACKs aside.
            assert!(
                r.summary.max_switch_buffer_bytes <= 8 * 16_000 + 8 * 64,
                "{cc}: {}",
                r.summary.max_switch_buffer_bytes
            );
        }
    }
    // Without the key the same incast runs PFC: its summary has no credit block.
    let pfc = common::run(&incast_on(8, "1MB", FAST, &algo("none"), "[switch]\nbuffer = \"1MB\"\n"));
    assert!(pfc.summary.credit.is_none() && pfc.summary.pause_frames > 0);
}

#[test]
fn a_two_to_one_incast_keeps_the_bottleneck_at_line_rate_while_the_senders_wait_for_credits() {
    let r = common::run(&incast_on(2, "2MB", FAST, &algo("none"), &credit("")));
    assert_lossless_without_pfc(&r);
    // 4 MB of payload in 1000-byte packets of 1048 wire bytes, back to back at 100 Gbps, plus
    // the first packet's way in and the last one's way out.
    let line_us = 2.0 * 2000.0 * 1048.0 * 8.0 / 100e3;
    let done = completion_us(&r);
    assert!(done > line_us && done < line_us + 5.0, "completion {done:.2} us, line rate {line_us:.2} us");
    let (stalls, stalled_us) = senders_stalled(&r);
    assert!(stalls > 0 && stalled_us > 0.0, "the senders never waited for credits: {stalls}, {stalled_us} us");
    // Each NIC gets half the bottleneck, so it waits about half the time.
    assert!(stalled_us > 0.5 * line_us, "stalled {stalled_us:.1} us of {line_us:.1}");
    // The switch's egress queue holds what the two ingress buffers (128 KB each) let in.
    assert!(r.summary.max_switch_queue_bytes <= 2 * 128 * 1024, "{}", r.summary.max_switch_queue_bytes);
    let to_h0 = r.ports.iter().find(|p| p.node == "s0" && p.peer == "h0").unwrap();
    assert_eq!(to_h0.stats.credit_stalls, 0, "a switch port towards a host sends without credits");
}

/// When each packet of a lone flow leaves the NIC, on a link whose credits cover `window`
/// full packets: back to back, except that packet k waits for the credits of packet k - window,
/// which come back one serialisation and two link delays after it left.
fn credit_limited_starts(packets: usize, window: usize, ser: SimTime, delay: SimTime) -> Vec<SimTime> {
    let mut starts: Vec<SimTime> = Vec::with_capacity(packets);
    for k in 0..packets {
        let after_previous = if k == 0 { SimTime::ZERO } else { starts[k - 1] + ser };
        let credits_back = if k < window { SimTime::ZERO } else { starts[k - window] + ser + delay + delay };
        starts.push(after_previous.max(credits_back));
    }
    starts
}

#[test]
fn a_lone_flow_runs_at_line_rate_when_the_buffer_covers_the_loop_and_at_buffer_per_round_trip_below() {
    // 128 KB of credits cover 100 Gbps x (2 x 1 us + a packet): the flow runs as on an idle
    // lossless fabric, to the picosecond of a PFC one.
    let lone = |extra: &str, delay: &str| common::run(&incast_on(1, "200KB", ("100Gbps", delay), &algo("none"), extra));
    let (covered, pfc) = (lone(&credit(""), "1us"), lone("", "1us"));
    assert_eq!(covered.flows[0].fct(), pfc.flows[0].fct());
    let analytic = lone_analytic_us(200_000, 1000, 100.0, 2, 1.0);
    assert!((completion_us(&covered) / analytic - 1.0).abs() < 1e-6, "{} vs {analytic}", completion_us(&covered));
    assert_eq!(senders_stalled(&covered).0, 0);

    // 8 KB over 5 us links: 125 blocks of 64 B, 7 packets of 17 blocks (1048 B) per credit round
    // trip of one serialisation and two delays, about 5.8 Gbps instead of 100.
    let limited = lone(&credit("buffer = \"8KB\""), "5us");
    assert_lossless_without_pfc(&limited);
    let (ser, delay) = (Bandwidth::from_gbps(100).tx_time(1048), SimTime::from_us(5));
    let starts = credit_limited_starts(200, 7, ser, delay);
    // The last packet: onto the NIC's link, through the switch, onto the receiver's link.
    let delivered = starts[199] + ser + delay + ser + delay;
    assert_eq!(limited.flows[0].fct(), Some(delivered), "analytic {delivered}");
    let gbps = 200.0 * 1048.0 * 8.0 / delivered.as_ns_f64();
    let bound = 7.0 * 1048.0 * 8.0 / (ser + delay + delay).as_ns_f64();
    assert!((gbps / bound - 1.0).abs() < 0.05, "{gbps:.2} Gbps against buffer / round trip {bound:.2}");
    assert!(senders_stalled(&limited).1 > 0.8 * delivered.as_us_f64(), "{:?}", senders_stalled(&limited));
}

#[test]
fn ecn_marks_the_egress_queue_as_under_pfc() {
    let extra = format!("{}ecn = {{ kmin = \"20KB\", kmax = \"80KB\", pmax = 0.2 }}\n", credit(""));
    let r = common::run(&incast_on(8, "1MB", FAST, &algo("dcqcn"), &extra));
    assert_lossless_without_pfc(&r);
    assert!(r.summary.ecn_marks > 0 && r.summary.cnps > 0, "marks {}, CNPs {}", r.summary.ecn_marks, r.summary.cnps);
    let to_h0 = r.ports.iter().find(|p| p.node == "s0" && p.peer == "h0").unwrap();
    assert_eq!(to_h0.stats.ecn_marks, r.summary.ecn_marks, "only the bottleneck's queue builds");
}

/// Hosts 0..4 of leaf 0 each send `size` to host 4 of leaf 1 and host 1 of leaf 0 sends to
/// host 5 too, over two spines, routed by `routing`, on a credit fabric.
fn leaf_spine(routing: &str, extra: &str) -> String {
    format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = "{routing}"
flow_control = "credit"
credit = {{ buffer = "32KB" }}
[nic]
recovery = "selective"
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [
  {{ src = 0, dst = 4, size = "400KB" }}, {{ src = 1, dst = 4, size = "400KB" }},
  {{ src = 2, dst = 4, size = "400KB" }}, {{ src = 3, dst = 4, size = "400KB" }},
  {{ src = 1, dst = 5, size = "400KB" }},
]
{extra}
"#
    )
}

#[test]
fn every_routing_mode_runs_on_credits_and_stalls_spread_to_the_spines() {
    for routing in ["ecmp", "spray", "round_robin", "adaptive", "adaptive_spray", "flowlet"] {
        let r = common::run(&leaf_spine(routing, ""));
        assert_lossless_without_pfc(&r);
        // The 4-to-1 backs up into leaf 1's ingress buffers, so the spines wait for credits too.
        let spines: u64 =
            r.ports.iter().filter(|p| p.node == "s2" || p.node == "s3").map(|p| p.stats.credit_stalls).sum();
        assert!(spines > 0, "{routing}: no spine port waited for credits");
    }
}

#[test]
fn fast_forward_is_off_on_a_credit_fabric_and_says_why() {
    let r = common::run(&incast_on(
        2,
        "200KB",
        FAST,
        &algo("dcqcn"),
        &format!("{}[simulation]\nfast_forward = true\n", credit("")),
    ));
    let ff = r.summary.fast_forward.as_ref().expect("asked for");
    assert!(ff.off_because.as_deref().is_some_and(|w| w.contains("credit")), "{ff:?}");
}

#[test]
fn the_resolved_scenario_turns_pfc_off_and_shows_the_credit_defaults() {
    let s = common::scenario(&incast_on(2, "10KB", FAST, &algo("none"), "[switch]\nflow_control = \"credit\"\n"));
    assert!(!s.switch.pfc.enabled);
    let c = s.switch.credit.expect("filled in");
    assert_eq!((c.buffer.0, c.block.0, c.update_interval), (131_072, 64, SimTime::ZERO));
    let again = common::scenario(&s.to_toml());
    assert_eq!(again.to_toml(), s.to_toml(), "the resolved scenario reads back as itself");
}

/// A random fabric and traffic for the property test: a leaf-spine (switch-to-switch credit
/// links) or a star, a buffer from one packet to about 48 KB, blocks, update interval, routing.
fn random_scenario(
    (leaf_spine, extra, block, update_ns, routing, seed): (bool, u64, u64, u64, usize, u64),
    flows: Vec<(u32, u32, u64, u64)>,
) -> String {
    let routing = ["ecmp", "spray", "adaptive", "round_robin"][routing];
    // At least the whole blocks of one full data packet (1048 B).
    let buffer = 1_048u64.div_ceil(block) * block + extra;
    let topology = match leaf_spine {
        true => "kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 3",
        false => "kind = \"star\"\nhosts = 6",
    };
    let flows: Vec<String> = (flows.iter())
        .filter(|(s, d, _, _)| s != d)
        .map(|(s, d, kb, at)| format!("{{ src = {s}, dst = {d}, size = \"{kb}KB\", start = \"{at}ns\" }}"))
        .collect();
    let flows = if flows.is_empty() { vec!["{ src = 0, dst = 1, size = \"50KB\" }".to_string()] } else { flows };
    format!(
        r#"
[simulation]
seed = {seed}
[topology]
{topology}
link = {{ bandwidth = "100Gbps", delay = "500ns" }}
[switch]
routing = "{routing}"
flow_control = "credit"
credit = {{ buffer = "{buffer}B", block = "{block}B", update_interval = "{update_ns}ns" }}
[nic]
recovery = "selective"
[cc]
algorithm = "dcqcn"
[workload]
kind = "flows"
flows = [ {} ]
"#,
        flows.join(", ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Event by event: what a sender may still send, what its receiver holds from it, and the
    /// credits on their way back never add up to more than the receiver's buffer (the packets
    /// on the wire are the rest); at the end they add up to it exactly, no packet was dropped or
    /// paused, and every byte arrived.
    #[test]
    fn credits_held_plus_buffered_plus_returning_never_exceed_the_receivers_buffer(
        fabric in (any::<bool>(), 0u64..47_000, prop_oneof![Just(64u64), Just(256)], prop_oneof![Just(0u64), Just(300), Just(2_000)], 0usize..4, 0u64..1000),
        flows in proptest::collection::vec((0u32..6, 0u32..6, 1u64..120, 0u64..5_000), 1..8),
    ) {
        let mut sim = Simulation::new(&common::scenario(&random_scenario(fabric, flows))).unwrap();
        let links = credit_links(&sim);
        prop_assert!(!links.is_empty());
        let mut steps = 0u64;
        while sim.step().is_none() {
            steps += 1;
            for &(sender, receiver) in &links {
                let (s, r) = (sim.port(sender), sim.port(receiver));
                let held = s.credits.held.unwrap();
                for (q, ((h, back), buffered)) in held.iter().zip(r.credits.returning).zip(r.ingress_bytes).enumerate() {
                    prop_assert!(
                        h + back + buffered <= r.credits.buffer,
                        "step {steps}, priority {q}: {h} held + {back} returning + {buffered} buffered > {}",
                        r.credits.buffer
                    );
                }
            }
        }
        // The run ends with the last packet, maybe before the last updates arrive: with no
        // packet left, the credits not back at a sender are exactly those on their way.
        for &(sender, receiver) in &links {
            let (s, r) = (sim.port(sender), sim.port(receiver));
            let home: Vec<u64> = (0..8).map(|q| s.credits.held.unwrap()[q] + r.credits.returning[q]).collect();
            prop_assert_eq!(home, vec![s.credits.buffer; 8], "credits lost or made up");
            prop_assert_eq!(r.ingress_bytes, [0; 8]);
        }
        let results = sim.run(&mut |_| {});
        common::assert_conserved(&results);
        assert_lossless_without_pfc(&results);
    }
}

/// Every (sender port, receiving switch port) pair of a link that carries credits.
fn credit_links(sim: &Simulation) -> Vec<(u32, u32)> {
    let ports = sim.port_count() as u32;
    (0..ports).filter(|&p| sim.port(p).credits.held.is_some()).map(|p| (p, sim.port(p).peer)).collect()
}
