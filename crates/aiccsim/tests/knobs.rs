//! Knobs matter: turning each family of scenario keys moves the result the way the physics says,
//! by a margin the physics sets. Each test runs one small scenario at two or three settings of
//! one knob and prints what it measured when an assertion fails.

mod common;

use aiccsim::Results;

use common::incast_on as incast;

const FAST: (&str, &str) = ("100Gbps", "1us");

fn algo(name: &str) -> String {
    format!("algorithm = \"{name}\"")
}

fn completion_us(r: &Results) -> f64 {
    r.summary.completion_time_ns.unwrap().as_us_f64()
}

/// Mean one-way queuing delay of the data packets, in us: on a star, the time they waited in the
/// bottleneck queue, so the packet-weighted mean of that queue over the line rate.
fn mean_queuing_us(r: &Results) -> f64 {
    r.summary.queuing_delay_ns.mean.as_us_f64()
}

/// Time the senders' links spent paused by the switch, summed over the senders, in us.
fn senders_paused_us(r: &Results) -> f64 {
    r.ports.iter().filter(|p| p.node.starts_with('h') && p.node != "h0").map(|p| p.stats.paused_time.as_us_f64()).sum()
}

/// Lone-flow FCT on an idle path: the wire bytes (48 B of header per packet) at line rate, the
/// propagation of every hop, and one more packet's serialisation per store-and-forward switch.
fn lone_analytic_us(size: u64, mtu: u64, gbps: f64, hops: u32, delay_us: f64) -> f64 {
    let packets = size.div_ceil(mtu);
    let ser_us = |bytes: u64| bytes as f64 * 8.0 / (gbps * 1e3);
    ser_us(size + 48 * packets) + hops as f64 * delay_us + (hops - 1) as f64 * ser_us(mtu.min(size) + 48)
}

#[test]
fn cc_algorithm_sets_the_incast_queue() {
    // 8-to-1 incast of 1 MB each into a 4 MB buffer. With no end-to-end control only PFC stops
    // the senders, so the queue sits at the PAUSE thresholds. DCQCN cuts rates once ECN marks
    // reach the senders, but only after the queue passed Kmin (400 KB) plus a feedback delay.
    // HPCC reacts to the queue itself each round trip and drains it to near zero.
    let extra = "[switch]\nbuffer = \"4MB\"\n";
    let run = |cc: &str| common::run(&incast(8, "1MB", FAST, &algo(cc), extra));
    let (none, dcqcn, hpcc) = (run("none"), run("dcqcn"), run("hpcc"));
    let q = |r: &Results| (mean_queuing_us(r), r.summary.max_switch_queue_bytes, r.summary.pause_frames);
    let msg = format!(
        "(mean queuing us, max queue B, PAUSEs): none {:?} dcqcn {:?} hpcc {:?}",
        q(&none),
        q(&dcqcn),
        q(&hpcc)
    );
    assert!(mean_queuing_us(&none) > 1.5 * mean_queuing_us(&dcqcn), "{msg}");
    assert!(mean_queuing_us(&hpcc) < 0.1 * mean_queuing_us(&dcqcn), "{msg}");
    assert!(none.summary.max_switch_queue_bytes > dcqcn.summary.max_switch_queue_bytes, "{msg}");
    assert!(hpcc.summary.max_switch_queue_bytes < none.summary.max_switch_queue_bytes / 3, "{msg}");
    assert!(none.summary.pause_frames > 4 * dcqcn.summary.pause_frames.max(1), "{msg}");
    assert_eq!(hpcc.summary.pause_frames, 0, "{msg}");
    // Only DCQCN's receivers answer marks with CNPs.
    assert!(dcqcn.summary.cnps > 0 && none.summary.cnps == 0 && hpcc.summary.cnps == 0, "{msg}");
}

#[test]
fn lower_ecn_thresholds_mark_more_and_hold_a_smaller_dcqcn_queue() {
    let run =
        |ecn: &str| common::run(&incast(8, "1MB", FAST, &algo("dcqcn"), &format!("[switch]\necn = {{ {ecn} }}\n")));
    let default = run(r#"kmin = "400KB", kmax = "1600KB""#);
    let mid = run(r#"kmin = "100KB", kmax = "400KB""#);
    let low = run(r#"kmin = "20KB", kmax = "100KB""#);
    let f = |r: &Results| (mean_queuing_us(r), r.summary.max_switch_queue_bytes, r.summary.ecn_marks, r.summary.cnps);
    let msg = format!(
        "(mean queuing us, max queue B, marks, CNPs): 400/1600 KB {:?}, 100/400 KB {:?}, 20/100 KB {:?}",
        f(&default),
        f(&mid),
        f(&low)
    );
    // The queue DCQCN settles around follows the marking ramp down.
    assert!(mean_queuing_us(&mid) < 0.8 * mean_queuing_us(&default), "{msg}");
    assert!(mean_queuing_us(&low) < 0.8 * mean_queuing_us(&mid), "{msg}");
    assert!(low.summary.max_switch_queue_bytes < mid.summary.max_switch_queue_bytes, "{msg}");
    assert!(mid.summary.max_switch_queue_bytes < default.summary.max_switch_queue_bytes, "{msg}");
    // Marking starts at a queue the incast reaches sooner and stays above longer.
    assert!(low.summary.ecn_marks > 3 * default.summary.ecn_marks / 2, "{msg}");
    assert!(low.summary.cnps > 3 * default.summary.cnps / 2, "{msg}");
}

#[test]
fn a_steeper_marking_ramp_holds_a_smaller_dcqcn_queue() {
    let run = |pmax: f64| {
        let ecn = format!("[switch]\necn = {{ kmin = \"100KB\", kmax = \"400KB\", pmax = {pmax} }}\n");
        common::run(&incast(8, "1MB", FAST, &algo("dcqcn"), &ecn))
    };
    let (gentle, steep) = (run(0.05), run(1.0));
    let msg = format!(
        "pmax 0.05: mean queuing {:.1} us, max queue {} B; pmax 1: {:.1} us, {} B",
        mean_queuing_us(&gentle),
        gentle.summary.max_switch_queue_bytes,
        mean_queuing_us(&steep),
        steep.summary.max_switch_queue_bytes
    );
    assert!(mean_queuing_us(&steep) < 0.8 * mean_queuing_us(&gentle), "{msg}");
    assert!(steep.summary.max_switch_queue_bytes < gentle.summary.max_switch_queue_bytes, "{msg}");
}

#[test]
fn a_burst_below_the_static_xoff_is_absorbed_without_pause() {
    // 8 x 100 KB into one port: while all eight send, each ingress port gains 7/8 of its
    // sender's line rate, so it peaks at 7/8 x 100 KB payload = 91.7 KB on the wire.
    let run = |xoff: &str| {
        common::run(&incast(8, "100KB", FAST, &algo("none"), &format!("[switch]\npfc = {{ xoff = \"{xoff}\" }}\n")))
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
        common::run(&incast(8, "1MB", FAST, &algo("none"), &format!("[switch]\npfc = {{ xoff = \"{xoff}\" }}\n")))
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
        common::run(&incast(8, "1MB", FAST, &algo("none"), &extra))
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
        common::run(&incast(8, "1MB", FAST, &algo("none"), &extra))
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
        common::run(&incast(8, "1MB", FAST, &algo("none"), &extra))
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
        common::run(&incast(8, "1MB", FAST, &algo("none"), &extra))
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
fn a_smaller_buffer_drops_more_without_pfc() {
    let run = |buffer: &str| {
        let extra = format!("[switch]\nbuffer = \"{buffer}\"\npfc = {{ enabled = false }}\n[nic]\nrto = \"100us\"\n");
        common::run(&incast(8, "1MB", FAST, &algo("none"), &extra))
    };
    // Buffers far apart: between two much smaller than the burst (100 and 300 KB) go-back-N's
    // timeouts make the order of drops and completion times a matter of tie-breaking.
    let runs = [run("100KB"), run("1MB"), run("4MB"), run("8MB")];
    let msg: Vec<String> = runs
        .iter()
        .map(|r| {
            format!(
                "buffer {}: {} drops, {} B resent, done {:.1} us",
                r.scenario.switch.buffer,
                r.summary.packets_dropped,
                r.summary.retransmitted_bytes,
                completion_us(r)
            )
        })
        .collect();
    let msg = msg.join("; ");
    for w in runs.windows(2) {
        let (small, big) = (&w[0].summary, &w[1].summary);
        assert!(big.packets_dropped < small.packets_dropped * 9 / 10, "{msg}");
        assert!(big.retransmitted_bytes < small.retransmitted_bytes, "{msg}");
        assert!(big.completion_time_ns < small.completion_time_ns, "{msg}");
    }
    // 8 MB holds the whole excess: the peak queue is 7/8 of the 8 MB sent (wire bytes),
    // 7.3 MB, so nothing drops and the incast finishes at line rate.
    let last = &runs[3].summary;
    assert_eq!(last.packets_dropped, 0, "{msg}");
    assert_eq!(last.max_switch_queue_bytes, 7 * 1_048_000, "{msg}");
}

#[test]
fn doubling_the_bandwidth_halves_serialisation() {
    let lone = |bw: &str| common::run(&incast(1, "1MB", (bw, "1us"), &algo("none"), ""));
    let four = |bw: &str| common::run(&incast(4, "1MB", (bw, "1us"), &algo("none"), ""));
    let mut seen = Vec::new();
    for gbps in [25.0, 50.0, 100.0] {
        let bw = format!("{gbps}Gbps");
        let (l, f) = (completion_us(&lone(&bw)), completion_us(&four(&bw)));
        seen.push((gbps, l, f));
        let msg = format!("(Gbps, lone FCT us, 4-to-1 completion us): {seen:?}");
        let expect = lone_analytic_us(1_000_000, 1000, gbps, 2, 1.0);
        assert!((l / expect - 1.0).abs() < 0.005, "lone flow vs analytic {expect:.2} us: {msg}");
        // The receiver link carries 4 MB back to back.
        let expect = 4.0 * 1.048e6 * 8.0 / (gbps * 1e3);
        assert!(f > expect && f < 1.01 * expect + 3.0, "incast vs 4 MB at line rate {expect:.1} us: {msg}");
    }
    // Everything but the 2 us of propagation scales as 1 / bandwidth.
    for w in seen.windows(2) {
        let ((_, l0, f0), (_, l1, f1)) = (w[0], w[1]);
        let ratio = (l0 - 2.0) / (l1 - 2.0);
        assert!((ratio - 2.0).abs() < 0.01, "lone serialisation ratio {ratio:.4}: {seen:?}");
        assert!((f0 / f1 - 2.0).abs() < 0.02, "incast completion ratio {:.4}: {seen:?}", f0 / f1);
    }
}

#[test]
fn longer_links_add_exactly_their_propagation_to_a_lone_flow() {
    let fct = |delay: &str| {
        let r = common::run(&incast(1, "1MB", ("100Gbps", delay), &algo("dcqcn"), ""));
        r.flows[0].fct().unwrap()
    };
    let (short, long) = (fct("1us"), fct("10us"));
    // Two links, 9 us more each way, to the picosecond.
    assert_eq!((long - short).0, 18_000_000, "FCT {short:?} at 1 us links, {long:?} at 10 us");
}

#[test]
fn longer_links_let_a_bigger_queue_build_before_feedback_arrives() {
    let run = |cc: &str, delay: &str| common::run(&incast(8, "1MB", ("100Gbps", delay), &algo(cc), ""));
    // DCQCN: the senders keep their rate for a round trip after marking starts (plus the CNP
    // and decrease timers), so the overshoot past Kmin grows with the round trip.
    let (d1, d10) = (run("dcqcn", "1us"), run("dcqcn", "10us"));
    let msg = format!(
        "DCQCN max queue {} B at 1 us links, {} B at 10 us; mean queuing {:.1} us, {:.1} us",
        d1.summary.max_switch_queue_bytes,
        d10.summary.max_switch_queue_bytes,
        mean_queuing_us(&d1),
        mean_queuing_us(&d10)
    );
    assert!(d10.summary.max_switch_queue_bytes > 3 * d1.summary.max_switch_queue_bytes / 2, "{msg}");
    assert!(mean_queuing_us(&d10) > 1.5 * mean_queuing_us(&d1), "{msg}");
    // HPCC starts every flow with a window of one bandwidth-delay product, so the first round
    // trip of n flows leaves (n - 1) windows in the queue: it scales with the round trip.
    for delay_us in [1.0, 10.0] {
        let r = run("hpcc", &format!("{delay_us}us"));
        // Base RTT: four link delays, a 1090 B data packet (INT included) and a 102 B ACK
        // serialised twice each; windows count payload, the queue counts 1090 B per 1000.
        let rtt_us = 4.0 * delay_us + 2.0 * (1090.0 + 102.0) * 8.0 / 100e3;
        let window = 100e3 / 8.0 * rtt_us;
        let expect = 7.0 * window * 1.09;
        let q = r.summary.max_switch_queue_bytes as f64;
        assert!(
            (q / expect - 1.0).abs() < 0.1,
            "HPCC, {delay_us} us links: max queue {q} B vs 7 windows {expect:.0} B"
        );
    }
}

#[test]
fn a_larger_mtu_spends_less_on_headers() {
    let mut seen = Vec::new();
    for mtu in [1000u64, 4000] {
        let r = common::run(&incast(1, "1MB", FAST, &algo("none"), &format!("[nic]\nmtu = \"{mtu}B\"\n")));
        let fct = completion_us(&r);
        seen.push((mtu, fct, r.summary.data_packets));
        let expect = lone_analytic_us(1_000_000, mtu, 100.0, 2, 1.0);
        assert!((fct / expect - 1.0).abs() < 0.002, "MTU {mtu}: FCT {fct:.3} us vs analytic {expect:.3} us");
        assert_eq!(r.summary.data_packets, 1_000_000 / mtu);
    }
    // 48 B per 4000 B instead of per 1000 B: 1.2% of wire bytes instead of 4.6%.
    assert!(seen[1].1 < seen[0].1 - 2.0, "(MTU, FCT us, packets): {seen:?}");
}

#[test]
fn coalescing_acks_sends_fewer_of_them() {
    let mut fcts = Vec::new();
    for every in [1u64, 4, 16] {
        let r = common::run(&incast(1, "1MB", FAST, &algo("none"), &format!("[nic]\nack_every = {every}\n")));
        // One per `every` packets, and one for the packet that completes the flow.
        assert_eq!(r.summary.acks, 1000u64.div_ceil(every), "ack_every {every}");
        let reverse = r.ports.iter().find(|p| p.node == "h0").unwrap();
        assert_eq!(reverse.stats.tx_bytes, 60 * r.summary.acks, "ack_every {every}: receiver's uplink carries ACKs");
        fcts.push(completion_us(&r));
    }
    // A rate-paced sender does not wait for ACKs.
    assert!(fcts.windows(2).all(|w| w[0] == w[1]), "FCTs {fcts:?}");
}

#[test]
fn a_shorter_rto_recovers_a_lost_tail_sooner() {
    // A drop-tail incast loses flow tails that no later packet reveals, so only the timeout
    // recovers them: the incast cannot end before one RTO has passed.
    let run = |rto: &str| {
        let extra = format!("[switch]\nbuffer = \"150KB\"\npfc = {{ enabled = false }}\n[nic]\nrto = \"{rto}\"\n");
        common::run(&incast(8, "300KB", FAST, &algo("none"), &extra))
    };
    let runs = [(20.0, run("20us")), (100.0, run("100us")), (1000.0, run("1ms"))];
    let msg: Vec<String> = runs
        .iter()
        .map(|(rto, r)| {
            format!(
                "rto {rto} us: done {:.1} us, {} timeouts, {} B resent",
                completion_us(r),
                r.summary.timeouts,
                r.summary.retransmitted_bytes
            )
        })
        .collect();
    let msg = msg.join("; ");
    for (rto, r) in &runs {
        assert!(r.summary.timeouts > 0, "{msg}");
        assert!(completion_us(r) > *rto, "{msg}");
    }
    for w in runs.windows(2) {
        assert!(completion_us(&w[1].1) > 1.5 * completion_us(&w[0].1), "{msg}");
    }
    // An RTO shorter than the queueing also fires while data is still on its way.
    assert!(runs[0].1.summary.retransmitted_bytes > runs[2].1.summary.retransmitted_bytes, "{msg}");
}

#[test]
fn a_longer_cnp_interval_means_fewer_cnps_and_a_bigger_dcqcn_queue() {
    let run = |interval: &str| {
        let cc = format!("algorithm = \"dcqcn\"\ncnp_interval = \"{interval}\"");
        common::run(&incast(8, "1MB", FAST, &cc, ""))
    };
    let runs = [(4.0, run("4us")), (20.0, run("20us")), (50.0, run("50us"))];
    let msg: Vec<String> = runs
        .iter()
        .map(|(i, r)| {
            format!(
                "cnp_interval {i} us: {} CNPs, mean queuing {:.1} us, done {:.1} us",
                r.summary.cnps,
                mean_queuing_us(r),
                completion_us(r)
            )
        })
        .collect();
    let msg = msg.join("; ");
    for (interval, r) in &runs {
        // At most one CNP per flow per interval.
        let bound = 8.0 * (completion_us(r) / interval).ceil();
        assert!((r.summary.cnps as f64) <= bound, "{msg}");
    }
    for w in runs.windows(2) {
        assert!(w[1].1.summary.cnps < w[0].1.summary.cnps * 4 / 5, "{msg}");
        assert!(mean_queuing_us(&w[1].1) > 1.2 * mean_queuing_us(&w[0].1), "{msg}");
    }
}

/// Four flows from the four hosts of leaf 0 to the four of leaf 1, over four spines: one flow
/// per spine is possible, and then each flow runs alone at line rate.
fn leaf_to_leaf(routing: &str, seed: u64) -> Results {
    common::leaf_to_leaf(routing, seed, 4, 4, "500KB")
}

/// Bytes leaf 0 sent up to each spine (its ports 4 to 7).
fn uplink_bytes(r: &Results) -> Vec<u64> {
    r.ports.iter().filter(|p| p.node == "s0" && p.port >= 4).map(|p| p.stats.tx_bytes).collect()
}

#[test]
fn load_balancing_decides_how_the_spines_share_the_flows() {
    const FLOW_WIRE: u64 = 500 * 1048;
    // Seed 5 hashes three of the four flows onto one spine.
    let (ecmp, spray, adaptive) = (leaf_to_leaf("ecmp", 5), leaf_to_leaf("spray", 5), leaf_to_leaf("adaptive", 5));
    let f = |r: &Results| {
        format!(
            "uplinks {:?} B, done {:.1} us, {} NACKs, {} B resent",
            uplink_bytes(r),
            completion_us(r),
            r.summary.nacks,
            r.summary.retransmitted_bytes
        )
    };
    let msg = format!("ecmp: {}; spray: {}; adaptive: {}", f(&ecmp), f(&spray), f(&adaptive));
    let ideal_us = ecmp.flows[0].ideal_fct.as_us_f64();
    let ser_us = FLOW_WIRE as f64 * 8.0 / 100e3;

    // ECMP: whole flows per spine; the busiest spine link serialises its k flows back to back.
    let up = uplink_bytes(&ecmp);
    assert!(up.iter().all(|b| b % FLOW_WIRE == 0), "{msg}");
    let k = (up.iter().max().unwrap() / FLOW_WIRE) as f64;
    assert_eq!(k, 3.0, "the seed must collide: {msg}");
    let expect = ideal_us + (k - 1.0) * ser_us;
    assert!((completion_us(&ecmp) / expect - 1.0).abs() < 0.02, "ECMP vs {k} flows on one link, {expect:.1} us: {msg}");
    assert_eq!(ecmp.summary.nacks, 0, "{msg}");

    // Adaptive: one flow per spine, each at line rate, in order.
    assert!(uplink_bytes(&adaptive).iter().all(|&b| b.abs_diff(FLOW_WIRE) <= 2 * 1048), "{msg}");
    assert!(completion_us(&adaptive) < 1.01 * ideal_us, "{msg}");
    assert_eq!(adaptive.summary.nacks, 0, "{msg}");

    // Spraying spreads the bytes evenly too, but reorders every flow, and go-back-N resends
    // everything behind each gap: more than the whole transfer, and slower than ECMP.
    let up = uplink_bytes(&spray);
    let (lo, hi) = (*up.iter().min().unwrap() as f64, *up.iter().max().unwrap() as f64);
    assert!(hi < 1.1 * lo, "{msg}");
    assert!(spray.summary.nacks > 0, "{msg}");
    assert!(spray.summary.retransmitted_bytes > 4 * 500_000, "{msg}");
    assert!(completion_us(&spray) > completion_us(&ecmp), "{msg}");
}

#[test]
fn adaptive_routing_never_does_worse_than_ecmp() {
    // Flows that start together reach leaf 0 at the same instant, so adaptive routing must see
    // the spine link a packet has just started on as taken, or it follows the hash like ECMP.
    for seed in 1..=6 {
        let (ecmp, adaptive) = (leaf_to_leaf("ecmp", seed), leaf_to_leaf("adaptive", seed));
        let ideal_us = ecmp.flows[0].ideal_fct.as_us_f64();
        let msg = format!(
            "seed {seed}: ideal {ideal_us:.1} us; ECMP uplinks {:?} B, done {:.1} us; adaptive uplinks {:?} B, done {:.1} us, {} NACKs",
            uplink_bytes(&ecmp),
            completion_us(&ecmp),
            uplink_bytes(&adaptive),
            completion_us(&adaptive),
            adaptive.summary.nacks
        );
        assert!(completion_us(&adaptive) < 1.01 * ideal_us, "{msg}");
        assert!(completion_us(&adaptive) <= completion_us(&ecmp), "{msg}");
        assert_eq!(adaptive.summary.nacks, 0, "{msg}");
    }
}
