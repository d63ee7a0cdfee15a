//! The PFC frame log (`pauses.csv`): every PAUSE and RESUME a switch sends, with the node it
//! pauses, agreeing with the per-port totals.

use crate::common;

use crate::common::incast_on;
use crate::common::{algo, completion_us, senders_paused_us, FAST};
use crate::common::{incast, run};
use aiccsim::time::SimTime;
use aiccsim::Simulation;
use std::collections::BTreeMap;

#[test]
fn every_pfc_frame_is_logged_and_pauses_alternate_with_resumes() {
    let r = run(&incast(4, "2MB", "none", "[switch]\nbuffer = \"1MB\"\n[output]\nsample_interval = \"10us\""));
    assert!(r.summary.pause_frames > 0, "a PFC-only 4-to-1 incast must pause");
    assert_eq!(r.pauses.len() as u64, r.summary.pause_frames + r.summary.resume_frames);
    let log = r.summary.pause_log.as_ref().expect("timelines are on");
    assert_eq!((log.rows, log.rows_dropped), (r.pauses.len() as u64, 0));

    // Per (switch port, priority): PAUSE, RESUME, PAUSE, ... in time order, and the counts per
    // port equal ports.csv's.
    let mut last: BTreeMap<(u32, u32, u8), (bool, aiccsim::time::SimTime)> = BTreeMap::new();
    let mut counts: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    for e in &r.pauses {
        assert!(e.node >= r.topology.num_hosts, "only switches send PFC frames");
        assert!(e.peer < r.topology.num_hosts, "on a star the switch pauses hosts");
        if let Some(&(was_pause, at)) = last.get(&(e.node, e.port, e.priority)) {
            assert_ne!(
                was_pause,
                e.pause,
                "two {} in a row at port {}",
                if e.pause { "PAUSEs" } else { "RESUMEs" },
                e.port
            );
            assert!(e.time >= at);
        } else {
            assert!(e.pause, "the first frame of a port is a PAUSE");
        }
        last.insert((e.node, e.port, e.priority), (e.pause, e.time));
        let c = counts.entry((e.node, e.port)).or_default();
        if e.pause {
            c.0 += 1
        } else {
            c.1 += 1
        }
    }
    for p in r.ports.iter().filter(|p| p.stats.pause_sent + p.stats.resume_sent > 0) {
        let node = r.topology.num_hosts; // the star's only switch
        assert_eq!(p.node, r.topology.node_name(node));
        assert_eq!(counts[&(node, p.port)], (p.stats.pause_sent, p.stats.resume_sent), "port {}", p.port);
    }
    // The run drains completely, so every pause was lifted.
    assert!(last.values().all(|&(pause, _)| !pause), "a port was left paused");
}

#[test]
fn no_log_without_timelines() {
    let r = run(&incast(4, "1MB", "none", "[switch]\nbuffer = \"1MB\""));
    assert!(r.summary.pause_frames > 0);
    assert!(r.pauses.is_empty());
    assert!(r.summary.pause_log.is_none());
}

#[test]
fn a_burst_below_the_static_xoff_is_absorbed_without_pause() {
    // 8 x 100 KB into one port: while all eight send, each ingress port gains 7/8 of its
    // sender's line rate, so it peaks at 7/8 x 100 KB payload = 91.7 KB on the wire.
    let run = |xoff: &str| {
        common::run(&incast_on(8, "100KB", FAST, &algo("none"), &format!("[switch]\npfc = {{ xoff = \"{xoff}\" }}\n")))
    };
    let (below, above) = (run("80KB"), run("100KB"));
    let msg = format!("PAUSEs: xoff 80 KB {}, xoff 100 KB {}", below.summary.pause_frames, above.summary.pause_frames);
    assert!(below.summary.pause_frames >= 8, "every ingress crosses 80 KB: {msg}");
    assert_eq!(above.summary.pause_frames, 0, "no ingress reaches 100 KB: {msg}");
    assert_eq!(above.summary.max_switch_queue_bytes, 8 * 91_700, "{msg}");
}

#[test]
fn a_lower_static_xoff_holds_less_in_the_switch_and_pauses_the_senders_longer() {
    // A long PFC-only incast: each ingress port's backlog is held at XOFF plus what arrives in
    // the PAUSE's round trip, so the receiver's queue is about 8 x XOFF. The receiver link is
    // busy throughout either way; what XOFF decides is how much of each flow waits in the
    // switch rather than at the sender, paused.
    let run = |xoff: &str| {
        common::run(&incast_on(8, "1MB", FAST, &algo("none"), &format!("[switch]\npfc = {{ xoff = \"{xoff}\" }}\n")))
    };
    let runs = [(30e3, run("30KB")), (100e3, run("100KB")), (300e3, run("300KB"))];
    let msg: Vec<String> = runs
        .iter()
        .map(|(x, r)| {
            format!(
                "xoff {:.0} KB: max queue {} B, senders paused {:.0} us, {} PAUSEs, done {:.1} us",
                x / 1e3,
                r.summary.max_switch_queue_bytes,
                senders_paused_us(r),
                r.summary.pause_frames,
                completion_us(r)
            )
        })
        .collect();
    let msg = msg.join("; ");
    for (xoff, r) in &runs {
        let q = r.summary.max_switch_queue_bytes as f64;
        // The overshoot: a link round trip at line rate (25 KB) plus packets in service.
        assert!(q > 8.0 * xoff && q < 8.0 * (xoff + 30e3), "{msg}");
        assert_eq!(r.summary.packets_dropped, 0, "{msg}");
    }
    // Each sender sends its last byte while about XOFF of its flow still waits in the switch,
    // which drains at its eighth of the receiver link (1.5625 bytes per ns); it is not paused
    // after that. So raising XOFF by dX takes 8 x dX / 1.5625 ns off the senders' paused time.
    for w in runs.windows(2) {
        let expect = 8.0 * (w[1].0 - w[0].0) / 1562.5;
        let got = senders_paused_us(&w[0].1) - senders_paused_us(&w[1].1);
        assert!((got / expect - 1.0).abs() < 0.25, "paused {got:.0} us less, expected {expect:.0}: {msg}");
    }
}

#[test]
fn a_wider_xon_hysteresis_sends_fewer_pause_frames() {
    // Each PAUSE/RESUME cycle lets through what the sender sends in a link round trip plus the
    // xon_delta the ingress must drain before RESUME, so a wider gap means longer cycles.
    let run = |delta: &str| {
        let extra = format!("[switch]\npfc = {{ xoff = \"100KB\", xon_delta = \"{delta}\" }}\n");
        common::run(&incast_on(8, "1MB", FAST, &algo("none"), &extra))
    };
    let (narrow, wide) = (run("3KB"), run("20KB"));
    let msg = format!("PAUSEs: xon_delta 3 KB {}, 20 KB {}", narrow.summary.pause_frames, wide.summary.pause_frames);
    assert!(wide.summary.pause_frames < narrow.summary.pause_frames * 4 / 5, "{msg}");
    assert_eq!(completion_us(&wide), completion_us(&narrow), "PFC alone keeps the receiver busy: {msg}");
}

/// The receiver's queue a PFC-only n-to-1 incast settles at with the dynamic threshold: every
/// ingress holds X = alpha x (buffer - headroom - n X), so X = alpha (buffer - headroom) /
/// (1 + n alpha).
fn dynamic_equilibrium(n: u32, alpha: f64, buffer: f64, headroom: f64) -> f64 {
    let x = alpha * (buffer - headroom) / (1.0 + n as f64 * alpha);
    n as f64 * x
}

/// Default headroom of one 100 Gbps, 1 us port: 2 x BDP + 3 full packets + a PAUSE.
const DEFAULT_HEADROOM: f64 = 2.0 * 12_500.0 + 3.0 * 1048.0 + 64.0;

#[test]
fn a_larger_dynamic_alpha_lets_the_queue_grow_before_pause() {
    let run = |alpha: f64| {
        let extra = format!("[switch]\nbuffer = \"4MB\"\npfc = {{ dynamic_alpha = {alpha} }}\n");
        common::run(&incast_on(8, "1MB", FAST, &algo("none"), &extra))
    };
    let runs = [(1.0 / 16.0, run(1.0 / 16.0)), (0.25, run(0.25)), (1.0, run(1.0))];
    let msg: Vec<String> = runs
        .iter()
        .map(|(a, r)| {
            let expect = dynamic_equilibrium(8, *a, 4e6, 9.0 * DEFAULT_HEADROOM);
            let q = r.summary.max_switch_queue_bytes;
            format!("alpha {a}: max queue {q} B (equilibrium {expect:.0} B), {} PAUSEs", r.summary.pause_frames)
        })
        .collect();
    let msg = msg.join("; ");
    for (alpha, r) in &runs {
        let expect = dynamic_equilibrium(8, *alpha, 4e6, 9.0 * DEFAULT_HEADROOM);
        let q = r.summary.max_switch_queue_bytes as f64;
        assert!(q > expect && q < expect + 8.0 * 30e3, "{msg}");
        assert_eq!(r.summary.packets_dropped, 0, "{msg}");
    }
    // With the queue larger each ingress also drains for longer between RESUME and PAUSE.
    assert!(runs[2].1.summary.pause_frames < runs[0].1.summary.pause_frames, "{msg}");
}

#[test]
fn more_pfc_headroom_lowers_the_dynamic_threshold() {
    // Headroom sets no buffer apart, but is taken off the buffer the dynamic XOFF shares out.
    let run = |h: &str| {
        let extra = format!("[switch]\nbuffer = \"4MB\"\npfc = {{ headroom = \"{h}\" }}\n");
        common::run(&incast_on(8, "1MB", FAST, &algo("none"), &extra))
    };
    let runs = [(10e3, run("10KB")), (100e3, run("100KB")), (300e3, run("300KB"))];
    let msg: Vec<String> = runs
        .iter()
        .map(|(h, r)| {
            let expect = dynamic_equilibrium(8, 0.125, 4e6, 9.0 * h);
            format!(
                "headroom {:.0} KB: max queue {} B (equilibrium {expect:.0} B)",
                h / 1e3,
                r.summary.max_switch_queue_bytes
            )
        })
        .collect();
    let msg = msg.join("; ");
    for (h, r) in &runs {
        // 9 ports on the switch: 8 senders and the receiver.
        let expect = dynamic_equilibrium(8, 0.125, 4e6, 9.0 * h);
        let q = r.summary.max_switch_queue_bytes as f64;
        assert!(q > expect && q < expect + 8.0 * 30e3, "{msg}");
    }
}

#[test]
fn pfc_turns_a_small_buffer_lossless() {
    let run = |pfc: bool| {
        let extra = format!("[switch]\nbuffer = \"300KB\"\npfc = {{ enabled = {pfc} }}\n[nic]\nrto = \"100us\"\n");
        common::run(&incast_on(8, "1MB", FAST, &algo("none"), &extra))
    };
    let (on, off) = (run(true), run(false));
    let msg = format!(
        "PFC on: {} drops, {} PAUSEs, done {:.1} us; off: {} drops, {} B resent, done {:.1} us",
        on.summary.packets_dropped,
        on.summary.pause_frames,
        completion_us(&on),
        off.summary.packets_dropped,
        off.summary.retransmitted_bytes,
        completion_us(&off)
    );
    assert_eq!(on.summary.packets_dropped, 0, "{msg}");
    assert!(on.summary.pause_frames > 0, "{msg}");
    assert!(off.summary.packets_dropped > 1000, "{msg}");
    // Lossless, the receiver link idles only when the receiver's queue runs dry during the
    // round trip from RESUME to the sender's next packet: the 46 KB of buffer above the
    // headroom hold barely two such round trips. Losing, it resends tens of megabytes.
    let line_rate_us = 8e6 * 1.048 * 8.0 / 100e3;
    assert!(completion_us(&on) < 1.1 * line_rate_us, "{msg}");
    assert!(completion_us(&off) > 1.3 * line_rate_us, "{msg}");
}

#[test]
fn stopped_part_way_a_pfc_incast_shows_who_pauses_whom() {
    // A PFC-only 4-to-1 incast with a static XOFF of 20 KB: each ingress's backlog passes it in
    // a few microseconds, so the switch pauses every sender, and each pause is in force at both
    // ends at once: the sender's port is paused by its peer, the switch's port facing it is
    // pausing that peer. The receiver is never paused.
    let toml = incast_on(4, "1MB", FAST, &algo("none"), "[switch]\npfc = { xoff = \"20KB\" }\n");
    let mut sim = Simulation::new(&common::scenario(&toml)).unwrap();
    let data = 1u8 << sim.flow(0).priority;
    let mut seen_paused = [false; 4];
    for t in (1..=60).map(SimTime::from_us) {
        assert_eq!(sim.run_until(t), None, "the incast is still running at {t}");
        for h in 1..=4u32 {
            let host = sim.port(sim.port_id(&format!("h{h}"), 0).unwrap());
            let ingress = sim.port(sim.port_id("s0", h).unwrap());
            // (A PAUSE or RESUME takes a link delay to arrive: in between the two ends differ.)
            seen_paused[h as usize - 1] |= host.paused & data != 0 && ingress.pausing_peer & data != 0;
            assert_eq!(host.pausing_peer, 0, "hosts never pause the switch");
        }
        let receiver = sim.port(sim.port_id("h0", 0).unwrap());
        assert_eq!(receiver.paused, 0, "nothing pauses the receiver at {t}");
        assert_eq!(sim.port(sim.port_id("s0", 0).unwrap()).pausing_peer, 0);
    }
    assert_eq!(seen_paused, [true; 4], "every sender paused at some moment");
    let r = sim.run(&mut |_| {});
    common::assert_conserved(&r);
    assert_eq!(r.summary.packets_dropped, 0);
}

/// A 256-to-1 incast that fills the buffer: 257 ports of 100 Gbps / 1 us set apart 28 208 B of
/// headroom each (7.25 MB) from an 8 MB buffer, leaving a shared pool of 750 544 B, and the
/// senders offer 16.8 MB. The dynamic XOFF lets each ingress take a packet past it before its
/// PAUSE, so 256 of them overshoot the pool: a packet that finds it full goes to its ingress's
/// headroom and pauses it (before, it was dropped with no PAUSE sent, and so was every packet
/// after it: 22 193 drops and 333 timeouts here without congestion control, 9 942 drops in
/// barre-incast's DCQCN run). Lossless with PFC alone, with DCQCN, and with DCQCN's ACKs and
/// CNPs queued at the data priority.
#[test]
fn a_pfc_fabric_never_drops_under_a_256_to_1_incast_with_a_full_buffer() {
    let (buffer, headroom) = (8_000_000u64, 257 * (2 * 12_500 + 3 * 1048 + 64));
    for (cc, extra) in [("none", ""), ("dcqcn", ""), ("dcqcn", "control_priority = \"data\"\n")] {
        let toml = incast(256, "64KB", cc, &format!("[switch]\nbuffer = \"8MB\"\n{extra}"));
        let r = run(&toml);
        let s = &r.summary;
        let msg = format!(
            "{cc} {extra}: {} drops, {} timeouts, {} PAUSEs, most in use {} B, most in one headroom {} B",
            s.packets_dropped, s.timeouts, s.pause_frames, s.max_switch_buffer_bytes, s.max_headroom_bytes
        );
        assert_eq!((s.packets_dropped, s.timeouts), (0, 0), "{msg}");
        assert!(s.pause_frames >= 256, "every ingress paused: {msg}");
        // The shared pool filled and the headrooms held what came after the PAUSEs.
        assert!(s.max_switch_buffer_bytes > buffer - headroom, "{msg}");
        assert!(s.max_headroom_bytes > 0 && s.max_headroom_bytes <= headroom / 257, "{msg}");
    }
    // Without congestion control the receiver's link never idles: 256 x 64 packets of 1048 B.
    let r = run(&incast(256, "64KB", "none", "[switch]\nbuffer = \"8MB\"\n"));
    let line_rate_us = 256.0 * 64.0 * 1048.0 * 8.0 / 100e3;
    assert!(completion_us(&r) < line_rate_us + 5.0, "{:.1} us, line rate {line_rate_us:.1} us", completion_us(&r));
}
