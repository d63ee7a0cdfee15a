//! Barre (`cc/barre.rs`) on a real fabric: its dual lock and inflight monitor act as the slides
//! say inside an incast, and its per-flow alpha shares a bottleneck fairly between paths of
//! different lengths. The logging sender here also serves the RTT probes' tests (`nic_probe`).

use crate::common;

use aiccsim::cc::barre::BarreRules;
use aiccsim::cc::{AckInfo, Algorithm, Cc, CcConfig, CcContext, CcEvent, CongestionControl, ProbeReply, Programmed};
use aiccsim::time::SimTime;
use aiccsim::{Results, Simulation};
use std::sync::{Arc, Mutex};

/// What a wrapped Barre sender heard and did, in order.
#[derive(Clone, Debug)]
pub(crate) enum Seen {
    Probe(ProbeReply),
    Cnp(SimTime),
    /// A data packet left; R and its restriction after the Tx event.
    Tx {
        at: SimTime,
        bytes: u64,
    },
    /// R after any event, with the RTT the rules ran on and whether the monitor restricts.
    State {
        at: SimTime,
        rate: f64,
        rtt: SimTime,
        restricted: bool,
    },
}

/// A Barre sender half that logs every event (Rust API: `Cc::Custom`), paced at no more than
/// `cap`.
struct Logged {
    inner: Programmed<BarreRules>,
    log: Arc<Mutex<Vec<Seen>>>,
    cap: f64,
}

impl Logged {
    fn state(&self, at: SimTime) {
        let p = &self.inner.program;
        let seen = Seen::State { at, rate: p.nominal_rate(), rtt: p.rtt(), restricted: p.restricted() };
        self.log.lock().unwrap().push(seen);
    }
}

impl CongestionControl for Logged {
    fn on_start(&mut self, cx: &mut CcContext) {
        self.inner.on_start(cx);
        self.state(cx.now());
    }
    fn on_ack(&mut self, ack: &AckInfo<'_>, cx: &mut CcContext) {
        self.inner.on_ack(ack, cx);
    }
    fn on_send(&mut self, bytes: u64, cx: &mut CcContext) {
        self.log.lock().unwrap().push(Seen::Tx { at: cx.now(), bytes });
        self.inner.on_send(bytes, cx);
        self.state(cx.now());
    }
    fn on_event(&mut self, ev: CcEvent, cx: &mut CcContext) {
        match ev {
            CcEvent::RttProbe(reply) => self.log.lock().unwrap().push(Seen::Probe(reply)),
            CcEvent::Cnp => self.log.lock().unwrap().push(Seen::Cnp(cx.now())),
            _ => {}
        }
        self.inner.on_event(ev, cx);
        self.state(cx.now());
    }
    fn on_timer(&mut self, slot: usize, cx: &mut CcContext) {
        self.inner.on_timer(slot, cx);
        self.state(cx.now());
    }
    fn rate(&self) -> f64 {
        self.inner.rate().min(self.cap)
    }
    fn window(&self) -> Option<u64> {
        self.inner.window()
    }
}

/// Runs `toml` (whose algorithm is Barre) with the sender of each flow in `logged` logging.
pub(crate) fn run_logged(toml: &str, logged: &[u32]) -> (Results, Vec<Vec<Seen>>) {
    run_capped(toml, logged, f64::INFINITY)
}

/// [`run_logged`], the logged flows paced at `cap` bits/s at most.
pub(crate) fn run_capped(toml: &str, logged: &[u32], cap: f64) -> (Results, Vec<Vec<Seen>>) {
    let scenario = common::scenario(toml);
    let CcConfig::Barre(cfg) = scenario.cc.clone() else { panic!("a Barre scenario") };
    let mut sim = Simulation::new(&scenario).unwrap();
    let logs: Vec<Arc<Mutex<Vec<Seen>>>> = logged.iter().map(|_| Arc::default()).collect();
    for (&f, log) in logged.iter().zip(&logs) {
        let facts = sim.flow_facts(f);
        let inner = Programmed::new(BarreRules::new(&cfg, &facts), &facts);
        let sender = Cc::Custom(Box::new(Logged { inner, log: log.clone(), cap }));
        sim.set_flow_algorithm(f, sender, cfg.receiver(&facts));
    }
    let r = sim.run(&mut |_| {});
    common::assert_conserved(&r);
    let logs = logs.iter().map(|l| l.lock().unwrap().clone()).collect();
    (r, logs)
}

pub(crate) fn probes(log: &[Seen]) -> Vec<ProbeReply> {
    log.iter().filter_map(|s| if let Seen::Probe(p) = s { Some(*p) } else { None }).collect()
}

pub(crate) fn barre_incast(n: u32, size: &str, cc: &str, extra: &str) -> String {
    common::incast_on(n, size, ("100Gbps", "1us"), &format!("algorithm = \"barre\"\n{cc}"), extra)
}

/// The increases of R in `log` from below `slow` bits/s, and the increases (from any rate)
/// that came without a full packet sent since the one before.
fn increases(log: &[Seen], packet: u64, slow: f64) -> (usize, usize) {
    let (mut from_slow, mut unpaid) = (0, 0);
    let mut last_rate: Option<f64> = None;
    let mut bytes = 0u64;
    for s in log {
        match *s {
            Seen::Tx { bytes: b, .. } => bytes += b,
            Seen::State { rate, .. } => {
                if let Some(before) = last_rate.filter(|&before| rate > before) {
                    from_slow += usize::from(before < slow);
                    unpaid += usize::from(bytes < packet);
                    bytes = 0;
                }
                last_rate = Some(rate);
            }
            _ => {}
        }
    }
    (from_slow, unpaid)
}

#[test]
fn under_dual_lock_a_sub_mtu_flow_increases_only_when_its_byte_counter_allows() {
    // 128 senders on one 100 Gb/s port: a fair share of 0.78 Gb/s, under one 1048 B packet per
    // 8.1 us base round trip (1.04 Gb/s).
    let logged: Vec<u32> = (0..8).collect();
    let sub_mtu = 1048.0 * 8.0 / 8.08e-6;
    let (_, logs) = run_logged(&barre_incast(128, "1MB", "", ""), &logged);
    let (mut from_slow, mut unpaid) = (0, 0);
    for log in &logs {
        let (s, u) = increases(log, 1048, sub_mtu);
        from_slow += s;
        unpaid += u;
    }
    assert!(from_slow > 20, "the incast must drive flows below one packet per RTT: {from_slow} increases there");
    assert_eq!(unpaid, 0, "{unpaid} increases came without a packet sent");
    // (Without the lock, the timer alone increases a flow that sent nothing: the unit test
    // `dual_lock_holds_a_sub_mtu_flow_until_its_byte_counter_fills` in cc/barre.rs. In this
    // incast the queue holds the real-time RTT so long that a packet goes out in every one.)
}

#[test]
fn the_inflight_monitor_engages_above_r_times_rtt_and_releases_on_the_next_cnp_or_a_quiet_rtt() {
    let logged: Vec<u32> = (0..16).collect();
    let (_, logs) = run_logged(&barre_incast(16, "500KB", "", ""), &logged);
    let (mut engaged, mut released, mut on_cnp_releases) = (0, 0, 0);
    for log in &logs {
        let mut restricted = false;
        let mut last_cnp = None;
        let mut window: Vec<(SimTime, u64)> = Vec::new();
        for s in log {
            match *s {
                Seen::Cnp(at) => last_cnp = Some(at),
                Seen::Tx { at, bytes } => window.push((at, bytes)),
                Seen::State { at, rate, rtt, restricted: now } => {
                    if now && !restricted {
                        engaged += 1;
                        // What was sent in the last RTT is above R x RTT (one packet of slack).
                        let sent: u64 = window.iter().filter(|(t, _)| at.0 - t.0 < rtt.0).map(|w| w.1).sum();
                        assert!(
                            sent as f64 > rate * rtt.as_secs_f64() / 8.0,
                            "engaged at {at} with {sent} B in the last RTT"
                        );
                    }
                    if !now && restricted {
                        // On a CNP, or (where no congestion followed) after a whole RTT
                        // without one.
                        let on_cnp = last_cnp == Some(at);
                        on_cnp_releases += usize::from(on_cnp);
                        let quiet = last_cnp.is_none_or(|c| at.0 - c.0 >= rtt.0);
                        assert!(on_cnp || quiet, "released at {at}, {last_cnp:?} inside the last RTT");
                        released += 1;
                    }
                    restricted = now;
                }
                Seen::Probe(_) => {}
            }
        }
    }
    assert!(engaged > 0, "the incast never drove a flow above R x RTT");
    assert!(on_cnp_releases > 0, "{released} releases, none on a CNP");
}

/// Two flows into host 0 through one switch: host 1 over 1 us links, host 2 over a 20 us link.
fn two_paths(cc: &str) -> String {
    format!(
        r#"
[topology]
kind = "custom"
hosts = 3
switches = 1
links = [
  {{ a = "h0", b = "s0", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "h1", b = "s0", bandwidth = "100Gbps", delay = "1us" }},
  {{ a = "h2", b = "s0", bandwidth = "100Gbps", delay = "20us" }},
]
[cc]
algorithm = "barre"
{cc}
[workload]
kind = "flows"
flows = [{{ src = 1, dst = 0, size = "20MB" }}, {{ src = 2, dst = 0, size = "20MB" }}]
[output]
sample_interval = "20us"
"#
    )
}

fn jain(r: &Results) -> f64 {
    let shares = r.steady_throughputs().expect("both flows sampled");
    aiccsim::metrics::jain_index(&shares)
}

#[test]
fn per_flow_alpha_shares_fairly_between_paths_of_different_lengths() {
    let per_flow = jain(&common::run(&two_paths("")));
    let single = jain(&common::run(&two_paths("per_flow_alpha = false")));
    eprintln!("Jain: per-flow alpha {per_flow:.4}, one alpha {single:.4}");
    assert!(per_flow >= 0.95, "Jain {per_flow} with per-flow alpha");
    assert!(single < 0.95, "Jain {single} with one alpha for both");
}
