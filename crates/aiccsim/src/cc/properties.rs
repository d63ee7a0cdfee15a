//! Property tests: every built-in algorithm, driven by arbitrary sequences of the events the
//! engine delivers, keeps the promises the engine relies on. The pacer divides by the rate and
//! the window gates sending, so a NaN, zero or out-of-range value stalls a flow or floods the
//! fabric long before any figure looks wrong; a timer in the past would fire out of order.
//!
//! The harness plays the engine's part faithfully where an algorithm depends on it: time only
//! moves forward, ACKs acknowledge bytes that were sent, INT records of a hop only grow, timers
//! fire at the time they asked for, and the hook's timer requests are applied after it returns.
//! Everything else (ECN echoes, RTT samples, feedback bytes) is arbitrary, as a congested or
//! misbehaving fabric can make it. Half the cases play a selective-recovery NIC
//! (`nic.recovery = "selective"`), whose events mean other things: ACKs that acknowledge bytes
//! out of order without moving the cumulative acknowledgement, NACKs for a packet past the first
//! unacknowledged one that send nothing back, timeouts that resend without going back.
//!
//! Fast-forward moves a steady flow's state on in time (`shift_clock`); the last properties
//! check that every algorithm moved so behaves exactly as it would have without the move.

use super::*;
use crate::tags::CollectiveKind;
use crate::time::ByteSize;
use proptest::prelude::*;

/// One INT record's change since the same hop's previous record.
#[derive(Clone, Copy, Debug)]
struct HopStep {
    tx_delta: u64,
    qlen: u64,
    gbps: u64,
}

/// What the (simulated) engine does next. Each step first lets `after_ps` picoseconds pass.
#[derive(Clone, Debug)]
enum Event {
    Ack {
        /// Asked-for bytes; the harness caps them at what is outstanding.
        newly_acked: u64,
        ecn_echo: bool,
        rtt_ps: u64,
        /// A new path length (a route change), or the same hops as the last ACK.
        path: Option<usize>,
        hops: [HopStep; 5],
        pint: u8,
        feedback: [u32; 2],
        /// With selective recovery: the bytes are acknowledged out of order (a SACK).
        sack: bool,
    },
    Cnp,
    /// An RTT probe's reply: its round trip, and the receiver's clock at the probe's arrival
    /// and how long after it replied (negative with timestamp noise).
    Probe {
        rtt_ps: u64,
        remote_arrival: i64,
        hold_ps: i64,
    },
    /// Go back to the first unacknowledged byte (go-back-N), or declare the packet `nth`
    /// packets past it lost (selective).
    Nack {
        nth: u64,
    },
    Timeout,
    /// A message of `bytes` payload bytes, first sent `age_ps` ago, is acknowledged whole.
    MessageDone {
        bytes: u64,
        age_ps: u64,
    },
    /// One full data packet handed to the wire.
    Send,
    /// Fire every timer that is due by now.
    FireDue,
    /// Jump to the earliest pending timer and fire it (what an otherwise idle engine does).
    NextTimer,
    /// `event` `times` over, `every_ps` apart, firing the timers that fall due in between:
    /// sustained congestion (a CNP every few microseconds, a run of marked ACKs or of long
    /// RTTs), which independent random events almost never line up to make.
    Repeat {
        times: u16,
        every_ps: u64,
        event: Box<Event>,
    },
}

#[derive(Clone, Debug)]
struct Step {
    after_ps: u64,
    event: Event,
}

fn hop() -> impl Strategy<Value = HopStep> {
    (
        prop_oneof![Just(0u64), 0u64..2_000_000],
        prop_oneof![Just(0u64), 0u64..50_000_000],
        prop_oneof![Just(25u64), Just(100), Just(400)],
    )
        .prop_map(|(tx_delta, qlen, gbps)| HopStep { tx_delta, qlen, gbps })
}

fn feedback() -> impl Strategy<Value = [u32; 2]> {
    prop_oneof![
        // What PC4's receiver encodes: a share in kb/s up to the line, a one-way delay in ns
        // (negative with clock errors). Mostly one of a few shares, as a receiver with a steady
        // count of flows sends: only ACKs that repeat the share reach PC4's delay rule.
        2 => (prop_oneof![Just(25_000_000u32), Just(4_000_000)], -20_000i32..200_000)
            .prop_map(|(kbps, ns)| [kbps, ns as u32]),
        1 => (0u32..=100_000_000, -20_000i32..200_000).prop_map(|(kbps, ns)| [kbps, ns as u32]),
        1 => any::<[u32; 2]>(),
    ]
}

fn single_event() -> impl Strategy<Value = Event> {
    let ack = (
        0u64..=5_000,
        any::<bool>(),
        prop_oneof![Just(0u64), 1_000_000u64..100_000_000, 0u64..1_000_000_000],
        prop_oneof![19 => Just(None), 1 => (0usize..=5).prop_map(Some)],
        prop::array::uniform5(hop()),
        prop_oneof![Just(0u8), any::<u8>()],
        (feedback(), any::<bool>()),
    )
        .prop_map(|(newly_acked, ecn_echo, rtt_ps, path, hops, pint, (feedback, sack))| Event::Ack {
            newly_acked,
            ecn_echo,
            rtt_ps,
            path,
            hops,
            pint,
            feedback,
            sack,
        });
    prop_oneof![
        4 => ack,
        1 => Just(Event::Cnp),
        1 => (
            prop_oneof![Just(0u64), 1_000_000u64..100_000_000, 0u64..1_000_000_000],
            any::<i64>().prop_map(|t| t / 4),
            prop_oneof![Just(0i64), -1_000_000i64..10_000_000],
        )
            .prop_map(|(rtt_ps, remote_arrival, hold_ps)| Event::Probe { rtt_ps, remote_arrival, hold_ps }),
        1 => (0u64..64).prop_map(|nth| Event::Nack { nth }),
        1 => Just(Event::Timeout),
        1 => (1u64..=1_000_000, prop_oneof![0u64..100_000_000, 0u64..10_000_000_000])
            .prop_map(|(bytes, age_ps)| Event::MessageDone { bytes, age_ps }),
        3 => Just(Event::Send),
        1 => Just(Event::FireDue),
        1 => Just(Event::NextTimer),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        10 => single_event(),
        1 => (1u16..=64, 100_000u64..10_000_000, single_event()).prop_map(|(times, every_ps, event)| {
            Event::Repeat { times, every_ps, event: Box::new(event) }
        }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    // Mostly packet-scale gaps, sometimes long idle periods (timers catch up, RTTs go stale).
    let gap = prop_oneof![20 => 0u64..5_000_000, 1 => 0u64..50_000_000_000];
    (gap, event()).prop_map(|(after_ps, event)| Step { after_ps, event })
}

/// A flow's facts as the engine derives them from a path: the base RTT and one-way baseline
/// include at least the serialisation of a packet at the sender's line rate, which the
/// algorithms' rate floors rely on.
fn flow_facts() -> impl Strategy<Value = FlowFacts> {
    let gbps = prop_oneof![Just(10u64), Just(25), Just(100), Just(200), Just(400), Just(800)];
    (
        gbps.clone(),
        gbps,
        1u32..=6,
        0u64..5_000_000,
        prop_oneof![Just(1000u64), 64u64..=9000],
        prop_oneof![
            Just(None),
            (
                prop_oneof![
                    Just(CollectiveKind::AllReduce),
                    Just(CollectiveKind::AllToAll),
                    Just(CollectiveKind::AllGather),
                    Just(CollectiveKind::Other)
                ],
                2u32..=128
            )
                .prop_map(Some)
        ],
    )
        .prop_map(|(line_gbps, rx_gbps, hops, delay_ps, mtu, collective)| {
            let line_rate = Bandwidth::from_gbps(line_gbps);
            let packet_bytes = mtu + 48;
            let links = u64::from(hops) + 1;
            let one_way = SimTime((delay_ps + line_rate.tx_time(packet_bytes).0) * links);
            let back = SimTime((delay_ps + line_rate.tx_time(60).0) * links);
            FlowFacts {
                flow: 0,
                line_rate,
                base_rtt: one_way + back,
                hops,
                one_way_baseline: one_way,
                receiver_line_rate: Bandwidth::from_gbps(rx_gbps),
                mtu,
                packet_bytes,
                collective,
                network_rtt: one_way + back,
                trimming: false,
            }
        })
}

/// What one hook left: its timer requests (in the harness's frame), and what the sender half
/// reports afterwards.
#[derive(Debug, PartialEq)]
struct Outcome {
    hook: &'static str,
    timers: Vec<(usize, Option<SimTime>)>,
    rate: Exactly,
    window: Option<u64>,
    steady: Option<Exactly>,
    metrics: Vec<(String, Exactly)>,
}

/// A float equal only to the same bits (a NaN to itself): identical, not close.
#[derive(Clone, Copy)]
struct Exactly(f64);

impl PartialEq for Exactly {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl std::fmt::Debug for Exactly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// The engine's side of one flow: time, sequence numbers, INT history and pending timers.
struct Harness {
    cfg: CcConfig,
    facts: FlowFacts,
    cc: Cc,
    now: SimTime,
    una: u64,
    nxt: u64,
    /// Selective recovery: the NIC keeps what arrived after a gap and resends only losses.
    selective: bool,
    /// Selective: bytes between `una` and `nxt` out of the network (acknowledged out of order,
    /// or declared lost and not yet resent), and of those the ones waiting to be resent.
    out: u64,
    lost: u64,
    last_int: Vec<IntHop>,
    timers: [Option<SimTime>; MAX_TIMERS],
    acks_with_pint: u64,
    /// The longest RTT an ACK has reported (the base RTT before any).
    max_rtt: SimTime,
    /// Added to every point in time handed to the sender half (the hooks' `now`, the times
    /// events carry) and taken off its timer requests: the flow as fast-forward resumes it,
    /// moved on in time. Everything above is kept in the harness's own frame.
    offset: SimTime,
    /// Each hook's outcome, when recorded.
    outcomes: Option<Vec<Outcome>>,
}

impl Harness {
    fn new(cfg: CcConfig, facts: FlowFacts, incoming: u32, selective: bool) -> Result<Self, TestCaseError> {
        let mut h = Harness {
            cc: cfg.as_algorithm().sender(&facts),
            cfg,
            facts,
            now: SimTime::ZERO,
            una: 0,
            nxt: 0,
            selective,
            out: 0,
            lost: 0,
            last_int: Vec::new(),
            timers: [None; MAX_TIMERS],
            acks_with_pint: 0,
            max_rtt: facts.base_rtt,
            offset: SimTime::ZERO,
            outcomes: None,
        };
        let mut cx = CcContext::at_start(h.now, incoming);
        h.cc.on_start(&mut cx);
        h.after_hook(&cx, "on_start")?;
        Ok(h)
    }

    /// Applies the hook's timer requests, as the engine does once the hook returns, and checks
    /// every invariant.
    fn after_hook(&mut self, cx: &CcContext, hook: &'static str) -> Result<(), TestCaseError> {
        let offset = self.offset;
        let requests: Vec<_> =
            cx.timer_requests().map(|(slot, at)| (slot, at.map(|t| t.saturating_sub(offset)))).collect();
        for &(slot, request) in &requests {
            if let Some(at) = request {
                prop_assert!(at >= self.now, "{hook}: timer {slot} set for {at}, before now ({})", self.now);
            }
            self.timers[slot] = request;
        }
        if let Some(outcomes) = &mut self.outcomes {
            let mut metrics = Vec::new();
            self.cc.metrics(&mut |name, value| metrics.push((name.to_string(), Exactly(value))));
            outcomes.push(Outcome {
                hook,
                timers: requests,
                rate: Exactly(self.cc.rate()),
                window: self.cc.window(),
                steady: self.cc.steady_signal().map(Exactly),
                metrics,
            });
        }
        self.check(hook)
    }

    /// The hook's context: now, in the sender half's frame.
    fn context(&self) -> CcContext {
        CcContext::new(self.now + self.offset)
    }

    fn check(&self, hook: &str) -> Result<(), TestCaseError> {
        let line = self.facts.line_rate.as_f64();
        let floor = self.cfg.as_algorithm().rate_floor(&self.facts);
        let rate = self.cc.rate();
        // One bit per second of slack: the floors and the line are products of floats.
        prop_assert!(rate.is_finite() && rate > 0.0, "after {hook}: rate {rate}");
        prop_assert!(rate <= line + 1.0, "after {hook}: rate {rate} above the line rate {line}");
        prop_assert!(rate >= floor - 1.0, "after {hook}: rate {rate} below the floor {floor}");
        // The largest window a rate-derived algorithm may ask for: the line rate's
        // bandwidth-delay product.
        let bdp = (line * self.facts.base_rtt.as_secs_f64() / 8.0).max(1.0);
        if let Some(w) = self.cc.window() {
            prop_assert!(w >= 1, "after {hook}: empty window");
            let cap = match &self.cfg {
                CcConfig::Swift(c) => (c.max_cwnd * self.facts.mtu as f64).max(1.0),
                // Over the latest RTT sample, the window is the line rate's over the longest.
                CcConfig::Pc4(c) if c.window_rtt == pc4::WindowRtt::Latest => {
                    (line * self.max_rtt.as_secs_f64() / 8.0).max(1.0)
                }
                // MCC lets a message start while the last ones are acknowledged (`headroom`
                // chunks above the product, and never below a packet), and keeps its rate
                // through partial congestion by stretching that up to `max_window` products.
                CcConfig::Mcc(c) => {
                    (bdp + c.headroom * c.chunk.0 as f64).max(bdp * c.max_window).max(self.facts.packet_bytes as f64)
                }
                // NSCC's largest window is `max_window` products (never below a packet).
                CcConfig::Nscc(c) => (bdp * c.max_window).max(self.facts.mtu as f64),
                // RCCC's window is the bytes in flight plus the credit held, at most
                // `max_credit` products (never below a packet).
                CcConfig::Rccc(c) => (self.nxt - self.una - self.out) as f64 + c.max_credit_bytes(&self.facts),
                _ => bdp,
            };
            prop_assert!(w as f64 <= cap + 1.0, "after {hook}: window {w} B above {cap} B");
        }
        match &self.cc {
            Cc::Dcqcn(d) => {
                let (alpha, target) = (d.alpha(), d.target_rate());
                prop_assert!((0.0..=1.0).contains(&alpha), "after {hook}: DCQCN alpha {alpha}");
                // The current rate only ever moves towards the target, and the target never
                // leaves the line: every decrease starts from rate <= target.
                prop_assert!(rate <= target && target <= line, "after {hook}: rate {rate}, target {target}");
            }
            Cc::Dctcp(d) => {
                let alpha = d.alpha();
                prop_assert!((0.0..=1.0).contains(&alpha), "after {hook}: DCTCP alpha {alpha}");
            }
            Cc::Timely(t) => {
                let g = t.gradient();
                prop_assert!(g.is_finite(), "after {hook}: TIMELY gradient {g}");
            }
            Cc::Hpcc(h) => {
                let u = h.utilisation();
                prop_assert!(u.is_finite() && u >= 0.0, "after {hook}: HPCC utilisation {u}");
            }
            Cc::HpccPint(p) => {
                prop_assert_eq!(p.feedback_acks(), self.acks_with_pint, "after {}: PINT feedback count", hook);
            }
            Cc::Swift(s) => {
                let CcConfig::Swift(c) = &self.cfg else { unreachable!() };
                let cwnd = s.cwnd();
                prop_assert!(
                    cwnd >= c.min_cwnd && cwnd <= c.max_cwnd,
                    "after {hook}: Swift cwnd {cwnd} outside [{}, {}]",
                    c.min_cwnd,
                    c.max_cwnd
                );
                let target = s.target_delay();
                prop_assert!(target.is_finite() && target > 0.0, "after {hook}: Swift target delay {target}");
            }
            Cc::Pc4(p) => {
                let CcConfig::Pc4(c) = &self.cfg else { unreachable!() };
                prop_assert!(p.cwnd() >= c.min_cwnd, "after {hook}: PC4 cwnd {} below min_cwnd", p.cwnd());
                let tx = p.tx_rate();
                prop_assert!(tx.is_finite() && tx > 0.0 && tx <= line + 1.0, "after {hook}: PC4 tx rate {tx}");
                let q = p.target_qtime();
                prop_assert!(q.is_finite() && q >= 0.0, "after {hook}: PC4 target queuing time {q}");
            }
            Cc::Barre(b) => {
                let r = b.program.nominal_rate();
                prop_assert!(r.is_finite() && r >= floor - 1.0 && r <= line + 1.0, "after {hook}: Barre R {r}");
                // The inflight monitor only ever holds the flow below R (or at the floor).
                prop_assert!(rate <= r + 1.0, "after {hook}: Barre sends at {rate} above R {r}");
                prop_assert!(b.program.rtt() > SimTime::ZERO, "after {hook}: Barre RTT zero");
            }
            Cc::Nscc(n) => {
                let cwnd = n.cwnd();
                prop_assert!(
                    cwnd >= n.min_cwnd() && cwnd <= n.max_cwnd().max(n.min_cwnd()),
                    "after {hook}: NSCC cwnd {cwnd} outside [{}, {}]",
                    n.min_cwnd(),
                    n.max_cwnd()
                );
            }
            Cc::Rccc(r) => {
                let CcConfig::Rccc(c) = &self.cfg else { unreachable!() };
                let credit = r.credit();
                prop_assert!(
                    credit.is_finite() && credit <= c.max_credit_bytes(&self.facts) + 1e-6,
                    "after {hook}: RCCC credit {credit}"
                );
            }
            // Algorithms without invariants of their own beyond the common ones above.
            _ => {}
        }
        Ok(())
    }

    fn int_stack(&mut self, path: Option<usize>, hops: &[HopStep; 5]) -> Vec<IntHop> {
        let len = path.unwrap_or(if self.last_int.is_empty() { 1 } else { self.last_int.len() });
        let now = self.now;
        let stack: Vec<IntHop> = hops[..len]
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let before = self.last_int.get(i).copied().unwrap_or_default();
                IntHop {
                    ts: now.max(before.ts),
                    tx_bytes: before.tx_bytes + h.tx_delta,
                    qlen: h.qlen,
                    rate: Bandwidth::from_gbps(h.gbps),
                }
            })
            .collect();
        self.last_int = stack.clone();
        stack
    }

    fn fire(&mut self, slot: usize) -> Result<(), TestCaseError> {
        self.timers[slot] = None;
        let mut cx = self.context();
        self.cc.on_timer(slot, &mut cx);
        self.after_hook(&cx, "on_timer")
    }

    fn step(&mut self, step: &Step) -> Result<(), TestCaseError> {
        self.now += SimTime(step.after_ps);
        self.event(&step.event)
    }

    fn fire_due(&mut self) -> Result<(), TestCaseError> {
        for slot in 0..MAX_TIMERS {
            if self.timers[slot].is_some_and(|t| t <= self.now) {
                self.fire(slot)?;
            }
        }
        Ok(())
    }

    fn event(&mut self, event: &Event) -> Result<(), TestCaseError> {
        let mut cx = self.context();
        let hook = match event {
            Event::Ack { newly_acked, ecn_echo, rtt_ps, path, hops, pint, feedback, sack } => {
                let newly = if self.selective && *sack {
                    // Out of order: the cumulative acknowledgement stays, the bytes leave the
                    // network (a resend waiting for them is not needed any more).
                    let newly = (*newly_acked).min(self.nxt - self.una - self.out + self.lost);
                    let unlost = newly.min(self.lost);
                    self.lost -= unlost;
                    self.out += newly - unlost;
                    newly
                } else {
                    // The bytes already acknowledged out of order are not acknowledged again.
                    let covered = (*newly_acked).min(self.nxt - self.una);
                    self.una += covered;
                    let cleared = covered.min(self.out);
                    self.out -= cleared;
                    self.lost = self.lost.min(self.out);
                    covered - cleared
                };
                let mut int = self.int_stack(*path, hops);
                for hop in &mut int {
                    hop.ts += self.offset;
                }
                if *pint != 0 {
                    self.acks_with_pint += 1;
                }
                self.max_rtt = self.max_rtt.max(SimTime(*rtt_ps));
                let ack = AckInfo {
                    ack_seq: self.una,
                    newly_acked: newly,
                    ecn_echo: *ecn_echo,
                    rtt: SimTime(*rtt_ps),
                    in_flight: self.nxt - self.una - self.out,
                    snd_nxt: self.nxt,
                    int: &int,
                    pint: *pint,
                    feedback: *feedback,
                };
                self.cc.on_ack(&ack, &mut cx);
                "on_ack"
            }
            Event::Cnp => {
                self.cc.on_event(CcEvent::Cnp, &mut cx);
                "CNP"
            }
            Event::Probe { rtt_ps, remote_arrival, hold_ps } => {
                // The receiver's clock runs on with the sender's: moved on by the same offset.
                let remote_arrival = remote_arrival.saturating_add(self.offset.0 as i64);
                let reply = ProbeReply {
                    sent_at: self.now.saturating_sub(SimTime(*rtt_ps)) + self.offset,
                    remote_arrival,
                    remote_reply: remote_arrival.saturating_add(*hold_ps),
                    rtt: SimTime(*rtt_ps),
                };
                self.cc.on_event(CcEvent::RttProbe(reply), &mut cx);
                "RTT probe"
            }
            Event::Nack { nth } if self.selective => {
                let seq = self.una + nth * self.facts.mtu;
                let missing = self.nxt - self.una - self.out;
                let lost = self.facts.mtu.min(missing);
                self.out += lost;
                self.lost += lost;
                self.cc.on_event(CcEvent::Nack { seq, trimmed: false, last_hop: false }, &mut cx);
                "selective NACK"
            }
            Event::Nack { .. } => {
                self.cc.on_event(CcEvent::Nack { seq: self.una, trimmed: false, last_hop: false }, &mut cx);
                self.nxt = self.una;
                "NACK"
            }
            Event::Timeout => {
                self.cc.on_event(CcEvent::Timeout, &mut cx);
                if self.selective {
                    // Everything in the network is declared lost, to be resent.
                    self.lost += self.nxt - self.una - self.out;
                    self.out = self.nxt - self.una;
                } else {
                    self.nxt = self.una;
                }
                "timeout"
            }
            Event::MessageDone { bytes, age_ps } => {
                let first_sent = self.now.saturating_sub(SimTime(*age_ps)) + self.offset;
                self.cc.on_event(CcEvent::MessageDone(MessageDone { bytes: *bytes, first_sent }), &mut cx);
                "message done"
            }
            Event::Send => {
                if self.lost > 0 {
                    let resend = self.facts.mtu.min(self.lost);
                    self.lost -= resend;
                    self.out -= resend;
                } else {
                    self.nxt += self.facts.mtu;
                }
                self.cc.on_send(self.facts.packet_bytes, &mut cx);
                "on_send"
            }
            Event::FireDue => return self.fire_due(),
            Event::NextTimer => {
                let next = (0..MAX_TIMERS).filter_map(|s| self.timers[s].map(|t| (t, s))).min();
                if let Some((at, slot)) = next {
                    self.now = self.now.max(at);
                    self.fire(slot)?;
                }
                return Ok(());
            }
            Event::Repeat { times, every_ps, event } => {
                for i in 0..*times {
                    if i > 0 {
                        self.now += SimTime(*every_ps);
                        self.fire_due()?;
                    }
                    self.event(event)?;
                }
                return Ok(());
            }
        };
        self.after_hook(&cx, hook)
    }
}

fn run(cfg: CcConfig, facts: FlowFacts, incoming: u32, selective: bool, steps: &[Step]) -> Result<(), TestCaseError> {
    let mut h = Harness::new(cfg, facts, incoming, selective)?;
    for s in steps {
        h.step(s)?;
    }
    Ok(())
}

/// Long enough for every algorithm to go through its phases (DCQCN's increase stages need a
/// dozen timer firings, HPCC a few committed round trips), short enough that a few hundred
/// cases run in about a second.
fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(step(), 1..400)
}

macro_rules! property {
    ($name:ident, $cfg:expr) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: 96, max_shrink_iters: 8192, ..ProptestConfig::default() })]
            #[test]
            fn $name(cfg in $cfg, facts in flow_facts(), incoming in 0u32..=64, selective in any::<bool>(), steps in steps()) {
                run(cfg, facts, incoming, selective, &steps)?;
            }
        }
    };
}

// Each algorithm with its defaults half of the time, and otherwise with its switches flipped
// and its knobs anywhere validation allows (rate floors stay at or below the slowest line rate
// the facts use, 10 Gb/s, as validation requires).

fn dcqcn() -> impl Strategy<Value = CcConfig> {
    let varied = (
        prop::option::of(1_000u64..10_000_000),
        any::<bool>(),
        0u32..=5,
        prop_oneof![Just(1.0), 0.01f64..=1.0],
        1u64..=10_000_000,
    )
        .prop_map(|(byte_counter, clamp_target_rate, fast_recovery_stages, rate_on_first_cnp, min_kbps)| DcqcnConfig {
            byte_counter: byte_counter.map(ByteSize),
            clamp_target_rate,
            fast_recovery_stages,
            rate_on_first_cnp,
            min_rate: Bandwidth(min_kbps * 1000),
            ..DcqcnConfig::default()
        });
    prop_oneof![Just(DcqcnConfig::default()), varied].prop_map(CcConfig::Dcqcn)
}

fn dctcp() -> impl Strategy<Value = CcConfig> {
    let varied = (0.001f64..=1.0, 0.0f64..=1.0).prop_map(|(g, initial_alpha)| DctcpConfig {
        g,
        initial_alpha,
        ..DctcpConfig::default()
    });
    prop_oneof![Just(DctcpConfig::default()), varied].prop_map(CcConfig::Dctcp)
}

fn timely() -> impl Strategy<Value = CcConfig> {
    let varied = (any::<bool>(), 1u64..=200_000, 0u32..=10).prop_map(|(per_window, segment, hai_threshold)| {
        TimelyConfig { per_window, segment: ByteSize(segment), hai_threshold, ..TimelyConfig::default() }
    });
    prop_oneof![Just(TimelyConfig::default()), varied].prop_map(CcConfig::Timely)
}

fn hpcc() -> impl Strategy<Value = CcConfig> {
    let varied = (any::<bool>(), 0u32..=10, 0.05f64..=1.0).prop_map(|(fast_react, max_stage, eta)| HpccConfig {
        fast_react,
        max_stage,
        eta,
        ..HpccConfig::default()
    });
    prop_oneof![Just(HpccConfig::default()), varied].prop_map(CcConfig::Hpcc)
}

fn hpcc_pint() -> impl Strategy<Value = CcConfig> {
    let varied = (0u32..=10, 0.05f64..=1.0).prop_map(|(max_stage, eta)| HpccPintConfig {
        max_stage,
        eta,
        ..HpccPintConfig::default()
    });
    prop_oneof![Just(HpccPintConfig::default()), varied].prop_map(CcConfig::HpccPint)
}

fn swift() -> impl Strategy<Value = CcConfig> {
    let varied =
        (0u32..=10, 0.0001f64..=1.0, 1.0f64..=10_000.0).prop_map(|(retx_reset_threshold, min_cwnd, max_cwnd)| {
            SwiftConfig { retx_reset_threshold, min_cwnd, max_cwnd, ..SwiftConfig::default() }
        });
    prop_oneof![Just(SwiftConfig::default()), varied].prop_map(CcConfig::Swift)
}

fn pc4() -> impl Strategy<Value = CcConfig> {
    let flags = (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>());
    let readings = (any::<bool>(), any::<bool>());
    let varied = (flags, readings, prop::option::of(1_000_000u64..100_000_000), 0.0001f64..=1.0).prop_map(
        |(
            (base_rate, adjust_rate, observed, start_at_share, by_baseline, by_flows),
            (latest, as_written),
            adjust_ps,
            min_cwnd,
        )| Pc4Config {
            base_rate,
            adjust_rate,
            flow_count: if observed { pc4::FlowCount::Observed } else { pc4::FlowCount::Controller },
            start_at_share,
            scale_target_by_baseline: by_baseline,
            scale_target_by_flows: by_flows,
            adjust_interval: adjust_ps.map(SimTime),
            min_cwnd,
            window_rtt: if latest { pc4::WindowRtt::Latest } else { pc4::WindowRtt::Base },
            negative_delay: if as_written { pc4::NegativeDelay::AsWritten } else { pc4::NegativeDelay::AsZero },
            ..Pc4Config::default()
        },
    );
    prop_oneof![Just(Pc4Config::default()), varied].prop_map(CcConfig::Pc4)
}

fn aimd() -> impl Strategy<Value = CcConfig> {
    let varied = (0.01f64..=1000.0, 0.01f64..0.99, 0.01f64..=1.0)
        .prop_map(|(additive_increase, beta, initial_window)| AimdConfig { additive_increase, beta, initial_window });
    prop_oneof![Just(AimdConfig::default()), varied].prop_map(CcConfig::Aimd)
}

fn mcc() -> impl Strategy<Value = CcConfig> {
    let varied = (
        1u64..=1_000_000,
        prop::option::of(1_000u64..100_000_000),
        1u32..=64,
        (0.0f64..=100.0, 0.0f64..=100.0),
        (0.01f64..0.99, 0.01f64..0.99),
        (0.01f64..=1.0, 1.0f64..=100.0),
    )
        .prop_map(
            |(
                chunk_kb,
                target_ps,
                sample_every,
                (additive_increase, headroom),
                (beta, max_decrease),
                (initial_window, max_window),
            )| {
                MccConfig {
                    chunk: ByteSize(chunk_kb * 1024),
                    target: target_ps.map(SimTime),
                    sample_every,
                    additive_increase,
                    beta,
                    max_decrease,
                    initial_window,
                    headroom,
                    max_window,
                }
            },
        );
    prop_oneof![Just(MccConfig::default()), varied].prop_map(CcConfig::Mcc)
}

fn barre() -> impl Strategy<Value = CcConfig> {
    let flags = (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>());
    let knobs = (0.5f64..0.999, 1u64..=10_000, 1u64..=100_000, 0u32..=20, 1u32..=16, 10_000u64..=100_000_000);
    let varied = (flags, knobs).prop_map(
        |(
            (realtime_rtt, per_cnp_decrease, fast_increase, dual_lock, inflight_monitor, per_flow_alpha),
            (beta, alpha_mbps, fast_mbps, fast_increase_rtts, byte_counter_packets, probe_ps),
        )| BarreConfig {
            realtime_rtt,
            per_cnp_decrease,
            fast_increase,
            dual_lock,
            inflight_monitor,
            per_flow_alpha,
            beta,
            alpha: Bandwidth(alpha_mbps * 1_000_000),
            fast_step: Bandwidth(fast_mbps * 1_000_000),
            fast_increase_rtts,
            byte_counter_packets,
            probe_interval: SimTime(probe_ps),
            ..BarreConfig::default()
        },
    );
    prop_oneof![Just(BarreConfig::default()), varied].prop_map(CcConfig::Barre)
}

fn nscc() -> impl Strategy<Value = CcConfig> {
    let gains = (0.0f64..=20.0, 0.0f64..=20.0, 0.0f64..=2.0, 0.0f64..=2.0, 0.05f64..=1.0, 0.001f64..=1.0);
    let rest = (
        prop::option::of(1u64..=100_000_000),
        (0.1f64..=4.0, prop::option::of(0.01f64..=1.0)),
        (any::<bool>(), 0u32..=8, 0.5f64..=10.0, 1u32..=64),
        any::<bool>(),
    );
    let varied = (gains, rest).prop_map(
        |(
            (fair_increase, proportional_gain, eta, fast_increase, md_gain, delay_ewma),
            (target_ps, (max_window, initial), (quick_adapt, qa_gate, qa_delay, adjust_packets), receiver_credit),
        )| NsccConfig {
            target_delay: target_ps.map(SimTime),
            max_window,
            initial_window: initial.map(|f| f * max_window),
            fair_increase,
            proportional_gain,
            eta,
            fast_increase,
            md_gain,
            delay_ewma,
            quick_adapt,
            qa_gate,
            qa_delay,
            adjust_packets,
            receiver_credit,
            ..NsccConfig::default()
        },
    );
    prop_oneof![
        Just(NsccConfig::default()),
        Just(NsccConfig { receiver_credit: true, ..NsccConfig::default() }),
        varied
    ]
    .prop_map(CcConfig::Nscc)
}

fn rccc() -> impl Strategy<Value = CcConfig> {
    let varied = (0.01f64..=1.0, 0.0f64..=1.0, 0.01f64..=10.0).prop_map(|(credit_rate, initial, max_credit)| {
        RcccConfig { credit_rate, initial_credit: initial * max_credit, max_credit }
    });
    prop_oneof![Just(RcccConfig::default()), varied].prop_map(CcConfig::Rccc)
}

property!(pfc_only_stays_at_line_rate, Just(CcConfig::None(PfcOnlyConfig {})));
property!(dcqcn_keeps_its_invariants, dcqcn());
property!(dctcp_keeps_its_invariants, dctcp());
property!(timely_keeps_its_invariants, timely());
property!(hpcc_keeps_its_invariants, hpcc());
property!(hpcc_pint_keeps_its_invariants, hpcc_pint());
property!(swift_keeps_its_invariants, swift());
property!(pc4_keeps_its_invariants, pc4());
property!(mcc_keeps_its_invariants, mcc());
property!(aimd_keeps_its_invariants, aimd());
property!(barre_keeps_its_invariants, barre());
property!(nscc_keeps_its_invariants, nscc());
property!(rccc_keeps_its_invariants, rccc());
// Every algorithm of the registry with its defaults, so that a new one is covered from the
// moment it is registered (the properties above also vary each one's parameters).
property!(every_algorithm_keeps_its_invariants_with_its_defaults, prop::sample::select(CcConfig::all_defaults()));

/// Fast-forward's promise, for one sender half: two flows built alike and driven through the
/// same steps, one of them moved on in time (`shift_clock`) before some of the steps and from
/// then on driven that much later (hook times, INT and probe timestamps, a message's first send;
/// RTT samples and other durations unchanged), do the same thing after every hook: the same
/// rate, window, steady signal and metrics, and the same timer requests, the moved one's later
/// by the moves so far. A flow may be frozen and resumed many times, and each move is a chance
/// to catch a time left behind in a state the steps before it built.
fn run_shifted(
    cfg: CcConfig,
    facts: FlowFacts,
    incoming: u32,
    selective: bool,
    steps: &[(Option<SimTime>, Step)],
) -> Result<(), TestCaseError> {
    let mut a = Harness::new(cfg.clone(), facts, incoming, selective)?;
    let mut b = Harness::new(cfg, facts, incoming, selective)?;
    a.outcomes = Some(Vec::new());
    b.outcomes = Some(Vec::new());
    for (i, (shift, s)) in steps.iter().enumerate() {
        if let Some(by) = *shift {
            prop_assert_eq!(a.cc.steady_signal().map(Exactly), b.cc.steady_signal().map(Exactly));
            b.cc.shift_clock(by);
            b.offset += by;
        }
        a.step(s)?;
        b.step(s)?;
        let (done, moved) = (a.outcomes.as_mut().unwrap(), b.outcomes.as_mut().unwrap());
        prop_assert_eq!(&*done, &*moved, "step {} ({:?}), moved on by {} in all", i, s, b.offset);
        done.clear();
        moved.clear();
    }
    Ok(())
}

/// How far fast-forward moves a flow: from a picosecond (grids that would slip by one tick) to
/// seconds.
fn shift() -> impl Strategy<Value = SimTime> {
    prop_oneof![1u64..1_000_000, 1u64..5_000_000_000_000].prop_map(SimTime)
}

/// Steps, about one in ten preceded by a move in time.
fn shifted_steps() -> impl Strategy<Value = Vec<(Option<SimTime>, Step)>> {
    prop::collection::vec((prop_oneof![9 => Just(None), 1 => shift().prop_map(Some)], step()), 1..400)
}

macro_rules! shift_property {
    ($name:ident, $cfg:expr) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: 96, max_shrink_iters: 8192, ..ProptestConfig::default() })]
            #[test]
            fn $name(
                cfg in $cfg,
                facts in flow_facts(),
                incoming in 0u32..=64,
                selective in any::<bool>(),
                steps in shifted_steps(),
            ) {
                run_shifted(cfg, facts, incoming, selective, &steps)?;
            }
        }
    };
}

shift_property!(pfc_only_moved_on_in_time_acts_alike, Just(CcConfig::None(PfcOnlyConfig {})));
shift_property!(dcqcn_moved_on_in_time_acts_alike, dcqcn());
shift_property!(dctcp_moved_on_in_time_acts_alike, dctcp());
shift_property!(timely_moved_on_in_time_acts_alike, timely());
shift_property!(hpcc_moved_on_in_time_acts_alike, hpcc());
shift_property!(hpcc_pint_moved_on_in_time_acts_alike, hpcc_pint());
shift_property!(swift_moved_on_in_time_acts_alike, swift());
shift_property!(pc4_moved_on_in_time_acts_alike, pc4());
shift_property!(mcc_moved_on_in_time_acts_alike, mcc());
shift_property!(aimd_moved_on_in_time_acts_alike, aimd());
shift_property!(barre_moved_on_in_time_acts_alike, barre());
shift_property!(nscc_moved_on_in_time_acts_alike, nscc());
shift_property!(rccc_moved_on_in_time_acts_alike, rccc());
shift_property!(every_algorithm_moved_on_in_time_acts_alike, prop::sample::select(CcConfig::all_defaults()));

#[test]
fn every_built_in_algorithm_opts_in_to_fast_forward() {
    for cfg in CcConfig::all_defaults() {
        let cc = cfg.as_algorithm().sender(&tests::facts());
        assert!(cc.steady_signal().is_some(), "{} reports no steady signal", cfg.name());
    }
}

/// One data packet at a receiver half: a move in time before it (as in `shifted_steps`), the
/// gap since the previous packet, its one-way time, CE, the measured delay and the flow counts.
type Arrival = (Option<SimTime>, u64, u64, bool, i64, u32, u32);

fn arrivals() -> impl Strategy<Value = Vec<Arrival>> {
    let arrival = (
        prop_oneof![9 => Just(None), 1 => shift().prop_map(Some)],
        prop_oneof![0u64..3_000_000, 0u64..50_000_000_000],
        0u64..50_000_000,
        any::<bool>(),
        -20_000_000i64..200_000_000,
        0u32..=5000,
        0u32..=5000,
    );
    prop::collection::vec(arrival, 1..300)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Fast-forward's promise for receiver halves (`run_shifted`'s for senders): a receiver
    /// moved on in time answers the arrivals that follow, as much later (its `now` and the
    /// packet's send time; the measured delay unchanged), with the same actions as one not moved.
    #[test]
    fn receivers_moved_on_in_time_act_alike(
        cfg in prop_oneof![prop::sample::select(CcConfig::all_defaults()), dcqcn(), pc4(), barre(), rccc()],
        facts in flow_facts(),
        arrivals in arrivals(),
    ) {
        let mut a = cfg.as_algorithm().receiver(&facts);
        let mut b = cfg.as_algorithm().receiver(&facts);
        let (mut now, mut offset) = (SimTime::ZERO, SimTime::ZERO);
        for (i, &(shift, gap, one_way, ecn_ce, measured_delay, incoming_flows, incoming_seen)) in arrivals.iter().enumerate() {
            if let Some(by) = shift {
                b.shift_clock(by);
                offset += by;
            }
            now += SimTime(gap);
            let at = |now: SimTime| DataArrival {
                now,
                ecn_ce,
                bytes: facts.packet_bytes,
                sent_at: now.saturating_sub(SimTime(one_way)),
                measured_delay,
                incoming_flows,
                incoming_seen,
            };
            let moved = DataArrival { now: now + offset, sent_at: at(now).sent_at + offset, ..at(now) };
            prop_assert_eq!(a.on_data(&at(now)), b.on_data(&moved), "arrival {}, moved on by {} in all", i, offset);
        }
    }

    /// DCQCN's notification point sends at most one CNP per `cnp_interval`, answers the first
    /// marked packet at once, and any marked packet a full interval after the last CNP (with
    /// the default interval 0, every marked packet).
    #[test]
    fn dcqcn_receiver_spaces_its_cnps(
        arrivals in prop::collection::vec((0u64..3_000_000, any::<bool>()), 1..300),
        interval in prop_oneof![Just(0u64), Just(4_000_000), 1u64..10_000_000],
    ) {
        let cfg = DcqcnConfig { cnp_interval: SimTime(interval), ..DcqcnConfig::default() };
        let mut np = DcqcnReceiver::new(&cfg);
        let mut now = SimTime::ZERO;
        let mut last: Option<SimTime> = None;
        for (gap, ce) in arrivals {
            now += SimTime(gap);
            let action = np.on_data(&DataArrival {
                now,
                ecn_ce: ce,
                bytes: 1048,
                sent_at: SimTime::ZERO,
                measured_delay: 0,
                incoming_flows: 1,
                incoming_seen: 1,
            });
            prop_assert!(!action.send_cnp || ce, "a CNP for an unmarked packet at {now}");
            if action.send_cnp {
                if let Some(t) = last {
                    prop_assert!(now - t >= cfg.cnp_interval, "CNPs at {t} and {now}");
                }
                last = Some(now);
            } else if ce {
                let t = last.expect("the first marked packet got a CNP");
                prop_assert!(now - t < cfg.cnp_interval, "no CNP at {now}, the last at {t}");
            }
        }
    }

    /// PC4's receiver always names a share the sender can use: positive and at most the
    /// receiver's line rate, whatever the flow counts and clock errors.
    #[test]
    fn pc4_receiver_shares_are_usable(
        facts in flow_facts(),
        flows in 0u32..=5000,
        seen in 0u32..=5000,
        delay in any::<i64>(),
    ) {
        for flow_count in [pc4::FlowCount::Controller, pc4::FlowCount::Observed] {
            let cfg = Pc4Config { flow_count, ..Pc4Config::default() };
            let mut rx = Pc4Receiver::new(&cfg, &facts);
            let action = rx.on_data(&DataArrival {
                now: SimTime::from_us(5),
                ecn_ce: false,
                bytes: 1048,
                sent_at: SimTime::ZERO,
                measured_delay: delay,
                incoming_flows: flows,
                incoming_seen: seen,
            });
            let kbps = f64::from(action.feedback[0]);
            prop_assert!(kbps >= 1.0, "a zero share");
            prop_assert!(kbps * 1e3 <= facts.receiver_line_rate.as_f64() + 1e3, "share {kbps} kb/s above the line");
        }
    }
}
