//! RTT probes (`engine/nic/probe.rs`) on a real fabric: they measure the idle round trip
//! exactly and the queue when there is one, go at most once per real-time RTT and only after
//! data, lose what `nic.probe_loss` says, stop with their flow and repeat run for run. (Barre asks for them; its logging sender is `cc_barre`'s.)

use crate::cc_barre::{barre_incast, probes, run_capped, run_logged, Seen};
use crate::common;
use aiccsim::time::SimTime;
use aiccsim::Results;

#[test]
fn a_probe_on_an_idle_path_measures_the_idle_round_trip() {
    // One flow paced at 1 Gb/s (a packet every 8.4 us), probes allowed every microsecond: most
    // probes find the path empty.
    let toml = barre_incast(1, "200KB", "probe_interval = \"1us\"", "");
    let (r, logs) = run_capped(&toml, &[0], 1e9);
    let replies = probes(&logs[0]);
    assert!(replies.len() >= 100, "{} replies", replies.len());
    // Two links each way, 1 us and 64 B at 100 Gb/s (5.12 ns) each, for the request and the
    // reply alike.
    let idle = SimTime(4 * (1_000_000 + 5_120));
    let min = replies.iter().map(|p| p.rtt).min().unwrap();
    assert_eq!(min, idle);
    for p in &replies {
        // Perfect clocks and an immediate answer: both remote timestamps are the arrival.
        assert_eq!(p.remote_arrival, p.remote_reply);
        assert_eq!(p.network_rtt(), p.rtt);
        if p.rtt == idle {
            assert_eq!(p.remote_arrival - p.sent_at.0 as i64, (idle.0 / 2) as i64, "one way of the idle path");
        }
    }
    // (A probe follows data sent since the last one, so some wait behind a packet of it.)
    let idle_share = replies.iter().filter(|p| p.rtt == idle).count() as f64 / replies.len() as f64;
    assert!(idle_share > 0.5, "only {idle_share} of the probes found the path idle");
    let summary = r.summary.rtt_probes.as_ref().expect("probes ran");
    // Replies that come back after the flow's last ACK count, but its algorithm is gone: at most
    // the probes of one round trip (4 us).
    let late = summary.answered - replies.len() as u64;
    assert!(late <= 5, "{late} replies after the flow ended");
    assert_eq!(summary.sent, summary.answered + summary.lost);
    // A probe only after data sent since the last one: at most one per packet (200 of them),
    // and the first at the start. Without that rule one would go every real-time RTT (4 us),
    // 400 over the flow's 1.7 ms.
    assert!(summary.sent <= 201, "{} probes for 200 packets", summary.sent);
    // Probes stop with the flow.
    let fct = r.flows[0].finish.unwrap();
    assert!(replies.iter().all(|p| p.sent_at <= fct), "a probe after the flow's end");
}

#[test]
fn probes_wait_in_the_queues_of_the_data() {
    // Without ECN no CNP comes: eight senders stay at line rate and PFC holds a standing queue
    // at the receiver's port. The probes queue behind the data.
    let toml = barre_incast(8, "400KB", "", "[switch]\necn = { enabled = false }");
    let (r, logs) = run_logged(&toml, &[0]);
    let idle = SimTime(4 * (1_000_000 + 5_120));
    let replies = probes(&logs[0]);
    let longest = replies.iter().map(|p| p.rtt).max().unwrap();
    assert!(longest > idle + SimTime::from_us(5), "longest probe RTT {longest}, idle {idle}");
    let summary = r.summary.rtt_probes.as_ref().unwrap();
    assert!(summary.rtt_ns.mean > idle + SimTime::from_us(2), "{:?}", summary.rtt_ns);
    // The rules run on what the probes measure.
    let rtts: Vec<SimTime> =
        logs[0].iter().filter_map(|s| if let Seen::State { rtt, .. } = s { Some(*rtt) } else { None }).collect();
    assert!(rtts.iter().any(|&t| t > idle + SimTime::from_us(5)));
}

#[test]
fn a_flow_is_probed_at_most_once_per_real_time_rtt() {
    // The same standing queue, probes allowed every microsecond: each probe waits for the round
    // trip of the latest reply back when it went, which the queue stretches to hundreds of us.
    let toml = barre_incast(8, "2MB", "probe_interval = \"1us\"", "[switch]\necn = { enabled = false }");
    let (r, logs) = run_logged(&toml, &[0]);
    let replies = probes(&logs[0]);
    let base = SimTime(4 * (1_000_000 + 5_120));
    let mut stretched = 0;
    for (i, w) in replies.windows(2).enumerate() {
        let known = (replies[..=i].iter())
            .filter(|p| p.sent_at + p.rtt <= w[0].sent_at)
            .max_by_key(|p| p.sent_at + p.rtt)
            .map_or(base, |p| p.rtt);
        assert!(w[1].sent_at - w[0].sent_at >= known, "probe {} went before {known} had passed: {:?}", i + 1, w);
        stretched += u32::from(known > SimTime::from_us(20));
    }
    assert!(stretched >= 2, "only {stretched} gaps stretched by the queue");
    // Every microsecond over the flow's life would be hundreds.
    let fct = r.flows[0].finish.unwrap();
    assert!((replies.len() as u64) < fct.0 / 1_000_000 / 10, "{} probes over {fct}", replies.len());
}

fn lossy(seed: u64) -> Results {
    common::run(&barre_incast(
        8,
        "4MB",
        "probe_interval = \"1us\"",
        &format!("[nic]\nprobe_loss = 0.25\n[simulation]\nseed = {seed}"),
    ))
}

#[test]
fn the_probe_loss_rate_is_honoured_and_repeats_with_the_seed() {
    let r = lossy(1);
    let p = r.summary.rtt_probes.clone().unwrap();
    assert_eq!(p.sent, p.lost + p.answered, "every probe is answered or lost once the run drains");
    let rate = p.lost as f64 / p.sent as f64;
    // Thousands of probes: within five standard deviations of a 25% draw.
    assert!(p.sent > 2000, "{} probes", p.sent);
    let sigma = (0.25 * 0.75 / p.sent as f64).sqrt();
    assert!((rate - 0.25).abs() < 5.0 * sigma, "lost {rate} of {} probes", p.sent);
    // The same seed: the same run, to the probe.
    let again = lossy(1);
    let q = again.summary.rtt_probes.clone().unwrap();
    assert_eq!(
        (p.sent, p.lost, p.answered, p.rtt_ns.mean, p.rtt_ns.max),
        (q.sent, q.lost, q.answered, q.rtt_ns.mean, q.rtt_ns.max)
    );
    let fcts = |r: &Results| r.flows.iter().map(|f| f.finish).collect::<Vec<_>>();
    assert_eq!(fcts(&r), fcts(&again));
    // Another seed draws other losses.
    let other = lossy(2).summary.rtt_probes.unwrap();
    assert_ne!(other.lost, p.lost);
}

#[test]
fn algorithms_that_do_not_probe_send_no_probes() {
    let r = common::run(&common::incast(2, "100KB", "dcqcn", ""));
    assert!(r.summary.rtt_probes.is_none());
    let off = common::run(&barre_incast(2, "100KB", "realtime_rtt = false", ""));
    assert!(off.summary.rtt_probes.is_none());
}
