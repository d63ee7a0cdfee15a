//! The paper's PC4 on an all-to-all with many flows into each receiver (experiments/uec-vs-roce,
//! where it reaches 209 Gbit/s of bus bandwidth against 322-365 for the other schemes). The base
//! rate is right: each receiver divides its line among its n incoming flows (Table I: line /
//! (n - 1)), and alone (the adjust rate off) PC4 runs as fast as no congestion control at all.
//! What slows it is the adjust rate with §III-C's O(1/N) target, read as target / N: with 30
//! incoming flows at 400 Gbps the target (about 36 ns) is shorter than one 4 KB packet's
//! serialisation (83 ns), so a packet that waited behind a single other one anywhere on its path
//! cuts its flow's rate (line 26), and only a packet that waited nowhere raises it (line 22).
//! The rates settle where those balance, well below the share, with the receivers' links far
//! from full; with the target not divided by N the all-to-all is nearly as fast as with the base
//! rate alone (docs/cc/pc4.md, "Many flows into one receiver").

use crate::common;

use aiccsim::cc::{AckInfo, Cc, CcConfig, CcContext, CcEvent, CongestionControl, Pc4, Pc4Receiver, Receiver};
use aiccsim::Simulation;
use std::sync::{Arc, Mutex};

/// One adjustment of Algorithm 2 (lines 9-11): the one-way delay of the ACK it acted on, the
/// target it compared it with (seconds), and whether it raised or cut the rate.
#[derive(Clone, Copy)]
struct Adjustment {
    delay: f64,
    target: f64,
    raised: bool,
    /// The recorded base rate and tx_rate after the adjustment, Gbit/s.
    base: f64,
    after: f64,
}

type Log = Arc<Mutex<Vec<Adjustment>>>;

/// PC4's sender half, logging its adjustments: an ACK with the recorded base rate that moved
/// tx_rate (lines 4-7, a new base rate, are not adjustments).
struct Watch(Pc4, Log);

impl CongestionControl for Watch {
    fn on_start(&mut self, cx: &mut CcContext) {
        self.0.on_start(cx);
    }
    fn on_ack(&mut self, ack: &AckInfo<'_>, cx: &mut CcContext) {
        let (before, target, base) = (self.0.tx_rate(), self.0.target_qtime(), base_of(&self.0));
        self.0.on_ack(ack, cx);
        let after = self.0.tx_rate();
        if after != before && base_of(&self.0) == base && base > 0.0 {
            let delay = f64::from(ack.feedback[1] as i32) * 1e-9;
            self.1.lock().unwrap().push(Adjustment { delay, target, raised: after > before, base, after: after / 1e9 });
        }
    }
    fn on_event(&mut self, ev: CcEvent, cx: &mut CcContext) {
        self.0.on_event(ev, cx);
    }
    fn rate(&self) -> f64 {
        self.0.rate()
    }
    fn window(&self) -> Option<u64> {
        self.0.window()
    }
}

/// The base rate PC4 has recorded (Gbit/s; 0 before the first ACK).
fn base_of(pc4: &Pc4) -> f64 {
    let mut base = 0.0;
    pc4.metrics(&mut |name, v| {
        if name == "base_gbps" {
            base = v;
        }
    });
    base
}

/// A direct all-to-all of 512 KB to each peer among `hosts` hosts of one switch, 400 Gbps / 1 us
/// links, 4 KB packets (uec-vs-roce's all-to-all on one switch, with longer messages so that
/// the rates settle), under PC4 with `cc` added to
/// the paper's defaults.
fn all_to_all(hosts: u32, cc: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = {hosts}
link = {{ bandwidth = "400Gbps", delay = "1us" }}
[switch]
buffer = "32MB"
[nic]
mtu = "4096B"
[cc]
algorithm = "pc4"
{cc}
[workload]
kind = "all_to_all"
hosts = "all"
size = "512KB"
"#
    )
}

/// Completion (us) of the all-to-all, and the adjustments of the flows into host 0 (logged on a
/// second run whose senders are wrapped, which must finish at the same instant).
fn run(hosts: u32, cc: &str) -> (f64, Vec<Adjustment>) {
    let toml = all_to_all(hosts, cc);
    let plain = common::completion_us(&common::run(&toml));
    let scenario = common::scenario(&toml);
    let CcConfig::Pc4(cfg) = scenario.cc.clone() else { panic!("a PC4 scenario") };
    let mut sim = Simulation::new(&scenario).unwrap();
    let log = Log::default();
    for f in 0..hosts * (hosts - 1) {
        let facts = sim.flow_facts(f);
        let sender = Pc4::new(&cfg, &facts);
        let sender =
            if receiver_of(f, hosts) == 0 { Cc::Custom(Box::new(Watch(sender, log.clone()))) } else { Cc::Pc4(sender) };
        sim.set_flow_algorithm(f, sender, Receiver::Pc4(Pc4Receiver::new(&cfg, &facts)));
    }
    let r = sim.run(&mut |_| {});
    common::assert_conserved(&r);
    assert_eq!(common::completion_us(&r), plain, "the logging wrapper changes nothing");
    let log = log.lock().unwrap().clone();
    (plain, log)
}

/// The receiver of flow `f` of a direct all-to-all among `hosts` hosts: flow s (n - 1) + i goes
/// from s to the i-th other host.
fn receiver_of(f: u32, hosts: u32) -> u32 {
    let (s, i) = (f / (hosts - 1), f % (hosts - 1));
    if i < s {
        i
    } else {
        i + 1
    }
}

/// One full data packet's serialisation at the line rate, seconds (4096 B of payload and its
/// headers at 400 Gbps: 83 ns).
fn packet_time() -> f64 {
    let sim = Simulation::new(&common::scenario(&all_to_all(2, ""))).unwrap();
    let facts = sim.flow_facts(0);
    facts.packet_bytes as f64 * 8.0 / facts.line_rate.as_f64()
}

#[test]
fn with_thirty_flows_into_each_receiver_the_paper_s_target_is_below_one_packet_and_costs_the_all_to_all() {
    let packet = packet_time();
    let none = common::completion_us(&common::run(&all_to_all(32, "").replace("\"pc4\"", "\"none\"")));
    let (base_only, _) = run(32, "adjust_rate = false");
    let (paper, adjustments) = run(32, "");
    let (undivided, undivided_adjustments) = run(32, "scale_target_by_flows = false");

    // Algorithm 1's base rate is right: each receiver divides its line among its 31 incoming
    // flows (Table I, line / (n - 1)), then among fewer as its peers finish, and the base rate
    // alone is as fast as no congestion control (334.2 us against 330.4).
    let share = 400.0 / 30.0;
    for a in &adjustments {
        let flows = 400.0 / a.base;
        assert!((flows - flows.round()).abs() < 1e-3 && flows.round() <= 30.0, "base {} Gbit/s", a.base);
    }
    assert!(adjustments.iter().any(|a| a.base > share), "the base rate rises as peers finish");
    assert!(base_only < 1.04 * none, "base rate alone {base_only:.1} us, no congestion control {none:.1}");

    // While all 31 send, every flow into host 0 compares its delay with 1 us x baseline / 2 us
    // / 30: 36 ns, under half a packet's serialisation.
    let at_share = |log: Vec<Adjustment>| -> Vec<Adjustment> {
        log.into_iter().filter(|a| (a.base - share).abs() < 1e-3).collect()
    };
    let (adjustments, undivided_adjustments) = (at_share(adjustments), at_share(undivided_adjustments));
    let target = adjustments[0].target;
    let path_target = undivided_adjustments[0].target;
    assert!(adjustments.iter().all(|a| a.target == target));
    assert!((path_target / target - 30.0).abs() < 1e-9, "target / N, N = line / base rate = 30");
    assert!(target < 0.5 * packet, "target {target:e} s, one packet {packet:e} s");

    // So the adjustments mostly cut (520 of 815), and nearly every cut (489) came on a delay
    // the target undivided (1.08 us, 13 packets) would have let pass: the median delay at an
    // adjustment is 0.9 packets.
    let cuts: Vec<&Adjustment> = adjustments.iter().filter(|a| !a.raised).collect();
    assert!(cuts.len() * 2 > adjustments.len(), "{} cuts of {} adjustments", cuts.len(), adjustments.len());
    let needless = cuts.iter().filter(|a| a.delay < path_target).count();
    assert!(needless * 10 > cuts.len() * 8, "{needless} of {} cuts below the undivided target", cuts.len());
    let mut delays: Vec<f64> = adjustments.iter().map(|a| a.delay / packet).collect();
    delays.sort_by(f64::total_cmp);
    assert!(delays[delays.len() / 2] < 1.5, "median delay {} packets", delays[delays.len() / 2]);
    // The rates settle well below the share: tx_rate after an adjustment is 57% of it on
    // average.
    let settled = adjustments.iter().map(|a| a.after / a.base).sum::<f64>() / adjustments.len() as f64;
    assert!(settled < 0.7, "mean tx_rate after an adjustment: {settled:.2} of the share");

    // And the all-to-all takes 28% longer than the base rate alone (427.8 us), where with the
    // target undivided it takes 2.5% longer (342.5 us).
    assert!(paper > 1.2 * base_only, "the paper's PC4 {paper:.1} us, base rate alone {base_only:.1}");
    assert!(undivided < 1.05 * base_only, "target undivided {undivided:.1} us, base rate alone {base_only:.1}");
}
