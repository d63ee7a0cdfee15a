//! Packet trimming (`[switch.trimming]`, `src/engine/net/trimming.rs`) on a lossy fabric: a
//! switch with no room for a data packet cuts it to its header and forwards that at the control
//! priority; the receiver NACKs exactly that packet and the sender sends it again. And the lossy
//! fabric without trimming, where the same packets are dropped and selective recovery finds them.

use crate::common;
use aiccsim::cc::external::{self, Built, ExternalFactory};
use aiccsim::cc::{Algorithm, Cc, FlowContext, FlowFacts, NicEvent, NicProgram, Programmed};
use aiccsim::metrics::trace::TraceEvent;
use aiccsim::wire::packet::PacketKind;
use aiccsim::{Results, Scenario, Simulation};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Senders of the incast, and the packets each sends (50 KB of 1000-byte payloads).
const SENDERS: u64 = 16;
const PACKETS: u64 = 50;
/// Payload and wire bytes of a full data packet (`nic.mtu`, `nic.header` at their defaults),
/// and a trimmed packet's (`trimming.header`'s default).
const MTU: u64 = 1_000;
const PACKET: u64 = 1_048;
const HEADER: u64 = 64;

/// A 16-to-1 incast of 50 KB each into a 200 KB drop-tail switch, the senders' algorithm `cc`
/// (its name), selective recovery whose receivers declare a packet lost as soon as one packet past it has
/// arrived (so that the NACK of a trimmed packet is followed by the loss frontier's, unless the
/// receiver remembers it NACKed it), with `trimming` among the `[switch]` keys.
fn lossy_incast(cc: &str, trimming: &str) -> String {
    let extra = format!(
        r#"
[switch]
buffer = "200KB"
pfc = {{ enabled = false }}
{trimming}
[nic]
recovery = "selective"
reorder_window = 1
"#
    );
    common::incast(SENDERS as u32, "50KB", cc, &extra)
}

/// Trimming with the data queue held to half the buffer: the trimmed headers always find room.
const TRIM: &str = r#"trimming = { threshold = "100KB" }"#;

fn port_trims(r: &Results) -> u64 {
    r.ports.iter().map(|p| p.trims).sum()
}

#[test]
fn a_lossy_incast_with_trimming_delivers_every_byte_and_drops_nothing() {
    let r = common::run(&lossy_incast("none", TRIM)); // every byte, the ledger balanced
    let s = &r.summary;
    let t = s.trimming.as_ref().expect("reported with trimming on");
    assert!(t.packets_trimmed > 100, "{t:?}");
    assert_eq!((s.packets_dropped, t.headers_dropped, s.timeouts), (0, 0, 0));
    assert_eq!(s.data_bytes.trimmed, Some(t.bytes_cut));
    assert_eq!(t.bytes_cut, t.packets_trimmed * (PACKET - HEADER), "each trim cuts a full packet to 64 B");
    // All at the receiver's switch port, and each reached the receiver, which NACKed it once:
    // the loss frontier, one packet behind, did not NACK it again.
    let trimmed_at: Vec<_> = r.ports.iter().filter(|p| p.trims > 0).map(|p| (&*p.node, &*p.peer)).collect();
    assert_eq!(trimmed_at, [("s0", "h0")]);
    assert_eq!(port_trims(&r), t.packets_trimmed);
    assert_eq!((t.received, s.nacks), (t.packets_trimmed, t.packets_trimmed));
    // Each trimmed packet was sent again, once; what reached the receiver whole is each packet
    // exactly once: a trimmed packet delivered nothing, and its resend all of it.
    assert_eq!(s.retransmitted_bytes, t.packets_trimmed * MTU);
    assert_eq!(s.data_packets, SENDERS * PACKETS + t.packets_trimmed);
    assert_eq!(s.data_bytes.received, SENDERS * PACKETS * PACKET + t.packets_trimmed * HEADER);
    assert_eq!(s.data_bytes.sent, s.data_bytes.received + t.bytes_cut);
}

#[test]
fn without_trimming_the_same_incast_drops_and_selective_recovery_still_delivers_it_later() {
    let trimmed = common::run(&lossy_incast("none", TRIM));
    let dropped = common::run(&lossy_incast("none", "")); // every byte, the ledger balanced
    let s = &dropped.summary;
    assert!(s.packets_dropped > 100, "{} drops", s.packets_dropped);
    assert!(s.trimming.is_none() && s.data_bytes.trimmed.is_none(), "no trimming, nothing reported");
    assert_eq!(port_trims(&dropped), 0);
    assert_eq!(s.data_bytes.dropped, s.packets_dropped * PACKET, "only data packets were dropped");
    assert_eq!(s.retransmitted_bytes, s.packets_dropped * MTU, "each drop was sent again, once");
    // The drops are found only once the next packet of the flow arrives, or by the timeout; a
    // trim is NACKed as soon as its header arrives, ahead of the queue.
    let done = |r: &Results| r.summary.completion_time_ns.unwrap();
    assert!(done(&dropped) > done(&trimmed), "dropping {:?}, trimming {:?}", done(&dropped), done(&trimmed));
}

#[test]
fn a_trimmed_packet_is_delivered_only_by_its_resend() {
    // The trace of the receiver's switch and of the receiver: every trimmed packet arrives as a
    // header, and its data arrives whole only later (the resend); the flow finishes only after
    // its last whole arrival.
    let toml = lossy_incast("none", TRIM) + "[output.trace]\nnodes = [\"s0\", \"h0\"]\n";
    let r = common::run(&toml);
    let trace = r.trace.as_ref().expect("traced");
    let mut trims = BTreeMap::new();
    let mut whole = BTreeMap::<(u32, u64), Vec<_>>::new();
    let mut headers = 0;
    for row in trace {
        let key = (row.flow.unwrap_or(u32::MAX), row.seq);
        match (row.event, row.kind) {
            (TraceEvent::Trim, kind) => {
                assert_eq!((kind, row.size, row.priority), (PacketKind::Trimmed, HEADER as u32, 7));
                trims.entry(key).or_insert_with(Vec::new).push(row.time);
            }
            (TraceEvent::Arrive, PacketKind::Data) if row.node == 0 => whole.entry(key).or_default().push(row.time),
            (TraceEvent::Arrive, PacketKind::Trimmed) if row.node == 0 => headers += 1,
            (TraceEvent::Drop, _) => panic!("a drop: {row:?}"),
            _ => {}
        }
    }
    let trimmed = r.summary.trimming.as_ref().unwrap().packets_trimmed;
    assert_eq!(trims.values().map(Vec::len).sum::<usize>() as u64, trimmed);
    assert_eq!(headers, trimmed, "every trimmed packet reached the receiver as a header");
    for (key, at) in &trims {
        let arrivals = &whole[key];
        assert_eq!(arrivals.len(), 1, "{key:?} arrived whole once");
        assert!(arrivals[0] > *at.iter().max().unwrap(), "{key:?} arrived whole before its last trim");
    }
    for f in &r.flows {
        let last = whole.iter().filter(|((flow, _), _)| *flow == f.flow_id).map(|(_, t)| t[0]).max().unwrap();
        assert!(f.finish.unwrap() >= last, "flow {} finished before its last packet arrived whole", f.flow_id);
    }
}

#[test]
fn trims_among_sprayed_packets_are_each_resent_and_the_receivers_bitmaps_come_back_clear() {
    // Eight hosts of one leaf send to one host of the other over two spines, sprayed: packets
    // arrive out of order, some trimmed at the last hop, some declared lost by the frontier
    // (8 packets), and the receiver must tell them apart. Debug builds check that every flow
    // gives its bitmaps back clear (`Scoreboards::release`).
    let flows: Vec<String> = (0..8).map(|i| format!("{{ src = {i}, dst = 8, size = \"60KB\" }}")).collect();
    let toml = format!(
        r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
routing = "spray"
buffer = "200KB"
pfc = {{ enabled = false }}
trimming = {{ threshold = "40KB" }}
[nic]
recovery = "selective"
reorder_window = 8
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ {} ]
"#,
        flows.join(", ")
    );
    let r = common::run(&toml); // every byte, the ledger balanced
    let s = &r.summary;
    let t = s.trimming.as_ref().unwrap();
    assert!(t.packets_trimmed > 50 && s.out_of_order_packets.unwrap() > 0, "{t:?}");
    assert_eq!((s.packets_dropped, s.timeouts), (0, 0));
    // Every trimmed packet is resent; the frontier may resend a packet that was only late.
    assert!(s.retransmitted_bytes >= t.packets_trimmed * MTU);
    assert_eq!(port_trims(&r), t.packets_trimmed);
}

#[test]
fn a_servers_nvswitch_never_trims() {
    // Three GPUs of a server send to the fourth over NVLink, through the server's NVSwitch,
    // whose queue passes the threshold: NVLink is lossless, and its switch neither drops nor
    // trims. (The fabric's switch would.)
    let toml = r#"
[topology]
kind = "star"
hosts = 8
nics_per_server = 4
link = { bandwidth = "100Gbps", delay = "1us" }
nvlink = { bandwidth = "200GB/s", delay = "25ns" }
[switch]
buffer = "200KB"
pfc = { enabled = false }
trimming = { threshold = "10KB" }
[nic]
recovery = "selective"
[cc]
algorithm = "none"
[workload]
kind = "incast"
senders = "1..=3"
receiver = 0
size = "200KB"
"#;
    let r = common::run(toml);
    assert!(r.flows.iter().all(|f| f.nvlink), "the incast stays inside the server");
    assert!(r.summary.max_switch_queue_bytes > 10_000, "the NVSwitch's queue passed the threshold");
    let t = r.summary.trimming.as_ref().unwrap();
    assert_eq!((t.packets_trimmed, r.summary.packets_dropped, r.summary.nacks), (0, 0, 0));
}

#[test]
fn a_header_with_no_room_is_dropped_and_counted_and_recovered() {
    // No threshold and no egress_alpha: the data queue may fill the whole buffer, so a trimmed
    // header finds room only where the data leaves a gap of 64 bytes; the others are dropped.
    let r = common::run(&lossy_incast("none", "trimming = {}"));
    let s = &r.summary;
    let t = s.trimming.as_ref().unwrap();
    assert!(t.packets_trimmed > 0 && t.headers_dropped > 0, "{t:?}");
    assert!(s.packets_dropped >= t.headers_dropped, "a header dropped is a packet dropped");
    assert_eq!(r.ports.iter().map(|p| p.stats.drops).sum::<u64>(), s.packets_dropped);
    // Both the data packets whose header found no room (whole) and the headers dropped further
    // on are lost data bytes; the ledger (checked by `run`) balances with them.
    assert!(s.data_bytes.dropped >= t.headers_dropped * HEADER);
}

#[test]
fn trimming_keeps_the_data_queue_at_its_threshold_and_the_headers_within_the_buffer() {
    let r = common::run(&lossy_incast("none", TRIM));
    let queue = r.ports.iter().find(|p| p.node == "s0" && p.peer == "h0").unwrap().max_queue;
    // The data queue stays at or under 100 KB; the headers queue beside it.
    assert!(queue > 100_000 - PACKET && queue < 200_000, "{queue} B");
    assert!(r.summary.max_switch_buffer_bytes <= 200_000);
}

#[test]
fn trimming_that_leaves_the_headers_no_room_is_warned_about() {
    let warned = |toml: &str| -> Vec<String> {
        let sim = Simulation::new(&common::scenario(toml)).unwrap_or_else(|e| panic!("{e}"));
        sim.warnings().iter().map(|w| w.key.clone()).collect()
    };
    assert_eq!(warned(&lossy_incast("none", "trimming = {}")), ["switch.trimming.threshold"]);
    assert!(warned(&lossy_incast("none", TRIM)).is_empty());
    assert!(warned(&lossy_incast("none", "egress_alpha = 0.5\ntrimming = {}")).is_empty());
}

/// Counts the NACKs the senders' algorithm hears, trimmed and not (a test algorithm at line rate
/// that only listens).
static TRIMMED_NACKS: AtomicU64 = AtomicU64::new(0);
static OTHER_NACKS: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Debug)]
struct Listener;

impl Algorithm for Listener {
    fn name(&self) -> &'static str {
        "test_trim_listener"
    }
    fn describe(&self) -> &'static str {
        "counts trimmed NACKs"
    }
    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Custom(Box::new(Programmed::new(ListenerFlow, facts)))
    }
}

struct ListenerFlow;

impl NicProgram for ListenerFlow {
    fn on_event(&mut self, event: &NicEvent<'_>, _flow: &mut FlowContext<'_>) {
        if let NicEvent::Nack { trimmed, .. } = event {
            let counter = if *trimmed { &TRIMMED_NACKS } else { &OTHER_NACKS };
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}

struct ListenerFactory;

impl ExternalFactory for ListenerFactory {
    fn build(&self, params: toml::Table, _folder: &Path) -> Result<Built, (String, String)> {
        Ok((params, Arc::new(Listener)))
    }
}

#[test]
fn the_algorithm_hears_a_trimmed_packets_nack_as_a_trim() {
    external::register("test_trim_listener", Arc::new(ListenerFactory));
    let cc = "test_trim_listener";
    let run = |toml: &str| {
        let (trimmed, other) = (TRIMMED_NACKS.load(Ordering::Relaxed), OTHER_NACKS.load(Ordering::Relaxed));
        let r = Simulation::new(&Scenario::from_toml(toml, "t").unwrap()).unwrap().run(&mut |_| {});
        common::assert_conserved(&r);
        let heard = (TRIMMED_NACKS.load(Ordering::Relaxed) - trimmed, OTHER_NACKS.load(Ordering::Relaxed) - other);
        (r, heard)
    };
    let (r, heard) = run(&lossy_incast(cc, TRIM));
    assert!(r.summary.nacks > 0);
    assert_eq!(heard, (r.summary.nacks, 0), "every NACK answered a trim");
    let (r, heard) = run(&lossy_incast(cc, ""));
    assert!(r.summary.nacks > 0);
    assert_eq!(heard, (0, r.summary.nacks), "without trimming every NACK is the loss frontier's");
}

/// The error a scenario gets, as (key, message).
fn rejected(toml: &str) -> (String, String) {
    let e = Scenario::from_toml(toml, "t").expect_err("accepted");
    (e.key, e.message)
}

#[test]
fn trimming_needs_a_lossy_fabric_and_selective_recovery() {
    let ok = lossy_incast("none", TRIM);
    Scenario::from_toml(&ok, "t").unwrap();
    let (key, message) = rejected(&ok.replace("recovery = \"selective\"", "recovery = \"go_back_n\""));
    assert_eq!(key, "switch.trimming");
    assert!(message.contains("nic.recovery = \"selective\""), "{message}");
    let (key, message) = rejected(&ok.replace("pfc = { enabled = false }", ""));
    assert_eq!(key, "switch.trimming");
    assert!(message.contains("enabled = false"), "{message}");
    let credit = ok.replace("pfc = { enabled = false }", "flow_control = \"credit\"");
    assert_eq!(rejected(&credit).0, "switch.trimming");
    // Turned off, it asks nothing.
    let off = ok
        .replace(TRIM, "trimming = { enabled = false }")
        .replace("recovery = \"selective\"", "recovery = \"go_back_n\"");
    let s = Scenario::from_toml(&off, "t").unwrap();
    assert!(s.switch.trims().is_none());
}

#[test]
fn a_threshold_or_header_that_cannot_work_is_refused() {
    let with = |trimming: &str| lossy_incast("none", trimming);
    for (trimming, key, says) in [
        (r#"trimming = { threshold = "0B" }"#, "switch.trimming.threshold", "below one full data packet"),
        (r#"trimming = { threshold = "1KB" }"#, "switch.trimming.threshold", "below one full data packet"),
        (r#"trimming = { threshold = "200KB" }"#, "switch.trimming.threshold", "not below the buffer"),
        (r#"trimming = { header = "40B" }"#, "switch.trimming.header", "smaller than a data packet's header"),
        (r#"trimming = { header = "1048B" }"#, "switch.trimming.header", "cut nothing"),
        (r#"trimming = { threshold = "-1KB" }"#, "switch.trimming.threshold", ""),
        (r#"trimming = { level = 3 }"#, "switch.trimming.level", "unknown field"),
    ] {
        let (k, message) = rejected(&with(trimming));
        assert_eq!(k, key, "{trimming}: {message}");
        assert!(message.contains(says), "{trimming}: {message}");
    }
    // The edges that do work: a threshold of one full packet, a header of the NIC's.
    for trimming in [r#"trimming = { threshold = "1048B" }"#, r#"trimming = { header = "48B" }"#] {
        Scenario::from_toml(&with(trimming), "t").unwrap_or_else(|e| panic!("{trimming}: {e}"));
    }
}

#[test]
fn a_scenario_without_trimming_writes_no_trimming_key_and_one_with_it_reads_back() {
    let plain = Scenario::from_toml(&lossy_incast("none", ""), "t").unwrap();
    assert!(!plain.to_toml().contains("trimming"));
    let s = Scenario::from_toml(&lossy_incast("none", TRIM), "t").unwrap();
    let written = s.to_toml();
    let again = Scenario::from_toml(&written, "again").unwrap();
    assert_eq!(again.switch.trimming, s.switch.trimming);
    let t = s.switch.trims().unwrap();
    assert_eq!((t.header.0, t.threshold.map(|b| b.0)), (64, Some(100_000)), "64 B: htsim's trimsize");
}
