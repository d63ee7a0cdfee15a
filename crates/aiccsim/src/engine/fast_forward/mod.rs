//! Fast-forward: skip the stretches in which a group of flows is steady.
//!
//! Most of a large transfer's packets are simulated after its congestion control has converged,
//! when every round trip looks like the one before. Every few round trips (a *check*) the engine
//! splits the running flows into contention groups (`groups.rs`: flows that share a port,
//! directly or through others), snapshots their counters (`history.rs`), and asks of each group
//! whether it has been steady over its last four windows (`steady.rs`). A steady group is
//! *frozen*: its pending events (port wake-ups, packets on its links, its algorithms' timers, its
//! flows' timeouts and probes) are taken out of the event queue, and a thaw is scheduled for when
//! its first flow would come near its end at the measured rates. The rest of the fabric runs on.
//!
//! At the thaw (`skip.rs`), after `d` of simulated time, the group resumes exactly as if it had
//! been translated in time: its events go back `d` later, and every absolute time its state holds
//! (ports, packets, queue pairs, pacers, timers, both halves of every algorithm) moves on by `d`.
//! What it would have done in between is credited at the rates of the windows that judged it
//! steady: each flow's bytes (its remaining size shrinks by them, so that it finishes as late as
//! it would have), each port's bytes, packets and ECN marks, and the run's ACK and CNP counts.
//!
//! Anything that would reach a frozen group thaws it first, at that instant: a flow starting
//! across one of its ports, a flow's stop, the end of the run. Fast-forward runs on fabrics that
//! route each flow on one path (ECMP) and without link events; the others run unskipped, and
//! `summary.json` says why.

mod groups;
mod history;
mod skip;
mod steady;
#[cfg(test)]
mod tests;

use crate::cc::CongestionControl;
use crate::config::{FlowControl, LoadBalancing, Routing, Scenario, Tier};
use crate::engine::{Event, Simulation};
use crate::metrics::fast_forward::FastForwardReport;
use crate::time::SimTime;
use groups::{Group, NONE};
use history::{FlowSnap, History, PortSnap};
use std::collections::BTreeMap;

/// A port is busy when it sends at least this fraction of its capacity over the windows judged:
/// below every algorithm's target utilisation (HPCC's 95% the lowest) by enough for its noise.
const BUSY: f64 = 0.9;

/// A connection with a running flow.
struct Conn {
    /// Its running flows (the one sending, and those that wait or finish behind it).
    flows: Vec<u32>,
    /// The ports it crosses (`groups::ports_of`), and the egress ports of its data path.
    ports: Box<[u32]>,
    path: Box<[u32]>,
}

/// Counters of a connection's messages that add up across them.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    acked: u64,
    sent: u64,
    acks: u32,
    cnps: u32,
    feedback_acks: u32,
    trouble: u64,
}

impl Totals {
    fn of(flow: &crate::engine::nic::qp::Flow) -> Totals {
        Totals {
            acked: flow.snd_una,
            sent: flow.high_sent,
            acks: flow.acks,
            cnps: flow.cnps,
            feedback_acks: flow.feedback_acks,
            trouble: flow.retransmitted_bytes + u64::from(flow.timeouts) + u64::from(flow.nacks),
        }
    }

    fn add(&mut self, o: Totals) {
        self.acked += o.acked;
        self.sent += o.sent;
        self.acks = self.acks.wrapping_add(o.acks);
        self.cnps = self.cnps.wrapping_add(o.cnps);
        self.feedback_acks = self.feedback_acks.wrapping_add(o.feedback_acks);
        self.trouble += o.trouble;
    }
}

/// Fast-forward's state in a run that has it on.
pub(crate) struct FastForward {
    tolerance: f64,
    /// Time between two checks.
    every: SimTime,
    history: History,
    /// The running flows at the last grouping, each with its connection.
    running: BTreeMap<u32, u32>,
    /// Flows started since the last grouping (`qp.rs` notes each start).
    pub(crate) started: Vec<u32>,
    /// The connections with a running flow: what fast-forward judges and skips. A connection
    /// that carries one message after another (chunks, persistent queue pairs) stays the same
    /// sender through them, as its queue pair does.
    conns: BTreeMap<u32, Conn>,
    /// Per connection: the counters of its finished messages, which its running ones add to.
    done: Vec<Totals>,
    /// The groups, each with the check its members were first seen together at.
    groups: Vec<(Group, u64)>,
    /// Per group (by key): the time skipped since its members last changed. A group frozen
    /// resumes as it was, so a slow drift its windows could not see is held up by every skip:
    /// the drift's allowance (`skip.rs`) is for all the skips of one membership together.
    skipped_since_formed: BTreeMap<u32, SimTime>,
    /// Flows started and finished when the groups were formed.
    formed_with: (usize, usize),
    /// The frozen groups, by key.
    frozen: BTreeMap<u32, skip::Frozen>,
    /// Per port, per flow and per connection: the key of the frozen group holding it (`NONE`).
    port_frozen: Vec<u32>,
    flow_frozen: Vec<u32>,
    conn_frozen: Vec<u32>,
    /// Per port: bytes and packets credited by skips (`skip.rs`), added to its counters where
    /// they are reported.
    port_credit: Vec<(u64, u64)>,
    /// Per flow thawed since its last timeline sample: where its next sample's span begins,
    /// translated as the group was, so that the sample divides the bytes by the time that was
    /// simulated (`Simulation::sample_span`).
    sample_from: BTreeMap<u32, SimTime>,
    /// Numbers each freeze, so that the thaw of an earlier one is recognised.
    freezes: u32,
    /// Checks are made (always, except in tests that freeze by hand).
    checking: bool,
    report: FastForwardReport,
}

impl FastForward {
    /// Fast-forward for `scenario` on `sim`'s fabric, if the scenario asks for it; with the
    /// reason it cannot run, if it cannot.
    pub(crate) fn for_run(
        scenario: &Scenario,
        sim: &Simulation,
    ) -> Result<Option<FastForward>, Box<FastForwardReport>> {
        let Some(tolerance) = scenario.simulation.fast_forward.tolerance() else { return Ok(None) };
        let off = |why: &str| {
            Box::new(FastForwardReport { tolerance, off_because: Some(why.to_string()), ..Default::default() })
        };
        if Tier::ALL.iter().any(|&t| scenario.switch.routing.of(t) == Routing::EcmpNs3) {
            // One path per flow, but not the one `Topology::path` (aiccsim's own hash) gives,
            // which the contention groups are built from.
            return Err(off(
                "the switches route as ns-3's ECMP (routing = \"ecmp_ns3\"), whose paths the contention groups are not built from (only routing = \"ecmp\" is fast-forwarded)",
            ));
        }
        if Tier::ALL.iter().any(|&t| scenario.switch.routing.of(t) != Routing::Ecmp) {
            return Err(off(
                "switches route packets of one flow on several paths (only ECMP routing is fast-forwarded)",
            ));
        }
        if scenario.nic.load_balancing != LoadBalancing::Flow {
            return Err(off(&format!(
                "the NICs spray each flow's packets over several paths (nic.load_balancing = \"{}\"; only one path per flow is fast-forwarded)",
                scenario.nic.load_balancing.name()
            )));
        }
        if !scenario.events.is_empty() {
            return Err(off("the scenario has link events ([[events]]), which change routes"));
        }
        if scenario.switch.flow_control == FlowControl::Credit {
            return Err(off(
                "the links run credit flow control, whose credits in flight a skip would have to carry (only PFC fabrics are fast-forwarded)",
            ));
        }
        let flows = sim.nic.flows.len();
        let ports = sim.net.ports.len();
        // Two round trips of the longest path, or the algorithm's settling time if longer: the
        // four windows judged are 1 to 8 of these each (`history.rs`).
        let algorithm = scenario.cc.as_algorithm();
        let settling = sim.nic.facts.iter().map(|f| algorithm.settling_time(f)).max().unwrap_or(SimTime::ZERO);
        let rtts = SimTime(sim.nic_largest_base_rtt().0.saturating_mul(2));
        let every = rtts.max(settling).max(SimTime::from_ns(500));
        Ok(Some(FastForward {
            tolerance,
            every,
            history: History::new(flows, ports),
            running: BTreeMap::new(),
            started: Vec::new(),
            conns: BTreeMap::new(),
            done: vec![Totals::default(); flows],
            groups: Vec::new(),
            skipped_since_formed: BTreeMap::new(),
            formed_with: (usize::MAX, usize::MAX),
            frozen: BTreeMap::new(),
            port_frozen: vec![NONE; ports],
            flow_frozen: vec![NONE; flows],
            conn_frozen: vec![NONE; flows],
            port_credit: vec![(0, 0); ports],
            sample_from: BTreeMap::new(),
            freezes: 0,
            checking: true,
            report: FastForwardReport { tolerance, ..Default::default() },
        }))
    }

    pub(crate) fn every(&self) -> SimTime {
        self.every
    }

    pub(crate) fn any_frozen(&self) -> bool {
        !self.frozen.is_empty()
    }

    pub(crate) fn port_is_frozen(&self, p: u32) -> bool {
        self.port_frozen[p as usize] != NONE
    }

    pub(crate) fn flow_is_frozen(&self, f: u32) -> bool {
        self.flow_frozen[f as usize] != NONE
    }

    /// The simulated time a timeline sample of flow `f` taken `now` covers: the interval `iv`,
    /// less what a skip took out of it since the flow's last sample.
    pub(crate) fn sample_span(&mut self, f: u32, now: SimTime, iv: SimTime) -> SimTime {
        self.sample_from.remove(&f).map_or(iv, |from| now - from)
    }

    /// No more checks: nothing is judged steady or skipped (tests that freeze by hand).
    #[cfg(test)]
    pub(crate) fn disable_checks(&mut self) {
        self.checking = false;
    }

    /// Bytes and packets credited to port `p` by skips.
    pub(crate) fn port_credit(&self, p: usize) -> (u64, u64) {
        self.port_credit[p]
    }

    pub(crate) fn into_report(self) -> FastForwardReport {
        self.report
    }
}

impl Simulation {
    /// A check: regroup if flows started or finished, snapshot, and freeze every group that is
    /// steady and has far enough to go.
    pub(crate) fn fast_forward_check(&mut self) {
        let Some(mut ff) = self.ff.take() else { return };
        if !ff.checking {
            self.ff = Some(ff);
            return;
        }
        let now = self.now;
        if ff.formed_with != (self.work.flows_started, self.work.flows_done) {
            self.regroup(&mut ff);
        }
        self.snapshot(&mut ff);
        ff.report.checks += 1;
        let packet = self.params.mtu;
        let checks = ff.history.checks;
        let mut steady = Vec::new();
        for (g, formed) in &ff.groups {
            if ff.frozen.contains_key(&g.key) {
                continue;
            }
            let why = match steady::judge(&ff.history, g, checks - 1 - formed, ff.tolerance, packet) {
                Ok(s) if self.converged(&ff, &s) => {
                    steady.push((g.clone(), s));
                    continue;
                }
                Ok(_) => "not_converged",
                Err(why) => why.name(),
            };
            *ff.report.not_steady.entry(why.to_string()).or_default() += 1;
        }
        for (g, s) in steady {
            match self.skip_until(&ff, &s, g.key) {
                Some(until) => self.freeze(&mut ff, g, s, until),
                None => *ff.report.not_steady.entry("too_near_an_end".to_string()).or_default() += 1,
            }
        }
        if self.work.flows_done < self.nic.flows.len() {
            self.events.push(now + ff.every, Event::FastForward);
        }
        self.ff = Some(ff);
    }

    /// Whether every flow of a steady group is held back by something: it sends at its NIC's
    /// rate, or some port of its path is busy. A flow below its line rate on an idle path is
    /// one whose algorithm is still climbing, however flat its rate looked over the windows
    /// (DCQCN recovering after an incast's first cut holds each rate for a timer's period).
    fn converged(&self, ff: &FastForward, s: &steady::Steady) -> bool {
        let span = ff.every.as_secs_f64() * s.checks as f64;
        let (mtu, header) = (self.params.mtu as f64, self.params.header as f64);
        let busy: BTreeMap<u32, bool> = (s.ports.iter())
            .map(|p| {
                let capacity = self.net.ports[p.port as usize].bandwidth.as_f64() * span / 8.0;
                (p.port, p.tx_bytes as f64 >= BUSY * capacity)
            })
            .collect();
        s.flows.iter().all(|fs| {
            let rate = fs.acked as f64 * 8.0 / (fs.time as f64 * 1e-12);
            let line = self.nic.facts[fs.conn as usize].line_rate.as_f64() * mtu / (mtu + header);
            rate >= (1.0 - 2.0 * ff.tolerance) * line
                || ff.conns[&fs.conn].path.iter().any(|p| busy.get(p).copied().unwrap_or(false))
        })
    }

    /// The running flows, their connections and the connections' groups, anew; a group whose
    /// connections did not change keeps the check it was formed at.
    fn regroup(&mut self, ff: &mut FastForward) {
        ff.formed_with = (self.work.flows_started, self.work.flows_done);
        let running = |f: &crate::engine::nic::qp::Flow| f.started && f.sender_done.is_none();
        let gone: Vec<u32> = ff.running.keys().copied().filter(|&f| !running(&self.nic.flows[f as usize])).collect();
        let mut changed = false;
        // Connections whose counters and history start again from nothing: one that comes
        // back in this same grouping (its next message started before the check) leaves its
        // group looking unchanged, and must not be judged against snapshots from before.
        let mut restarted = std::collections::BTreeSet::new();
        for f in gone {
            let c = ff.running.remove(&f).expect("running");
            ff.done[c as usize].add(Totals::of(&self.nic.flows[f as usize]));
            let conn = ff.conns.get_mut(&c).expect("a running flow's connection");
            conn.flows.retain(|&g| g != f);
            if conn.flows.is_empty() {
                ff.conns.remove(&c);
                ff.done[c as usize] = Totals::default();
                ff.history.forget(c);
                restarted.insert(c);
                changed = true;
            }
        }
        let mut started = std::mem::take(&mut ff.started);
        started.sort_unstable();
        for f in started {
            let flow = &self.nic.flows[f as usize];
            if running(flow) && !ff.running.contains_key(&f) {
                changed |= !ff.conns.contains_key(&flow.conn);
                ff.running.insert(f, flow.conn);
                let conn = ff.conns.entry(flow.conn).or_insert_with(|| Conn {
                    flows: Vec::new(),
                    ports: groups::ports_of(&self.topo, flow).into_boxed_slice(),
                    path: self.topo.path(flow.src, flow.dst, flow.ecmp_key).into_boxed_slice(),
                });
                conn.flows.push(f);
            }
        }
        // Messages that follow each other on their connections change no group.
        if !changed {
            return;
        }
        let list: Vec<(u32, &[u32])> = ff.conns.iter().map(|(&c, conn)| (c, &conn.ports[..])).collect();
        let fresh = groups::group(&list, self.net.ports.len());
        let old: BTreeMap<u32, (&Group, u64)> = ff.groups.iter().map(|(g, at)| (g.key, (g, *at))).collect();
        let checks = ff.history.checks;
        let kept: Vec<(Group, u64)> = fresh
            .into_iter()
            .map(|g| {
                let at = match old.get(&g.key) {
                    Some((was, at)) if was.conns == g.conns && !g.conns.iter().any(|c| restarted.contains(c)) => *at,
                    _ => {
                        ff.skipped_since_formed.remove(&g.key);
                        checks
                    }
                };
                (g, at)
            })
            .collect();
        ff.groups = kept;
    }

    /// Every running connection's and every grouped port's counters, as check number
    /// `ff.history.checks`.
    fn snapshot(&mut self, ff: &mut FastForward) {
        let at = History::at(ff.history.checks);
        for (&c, conn) in &ff.conns {
            let mut t = ff.done[c as usize];
            let mut acked_at = SimTime::ZERO;
            for &f in &conn.flows {
                let flow = &self.nic.flows[f as usize];
                t.add(Totals::of(flow));
                acked_at = acked_at.max(flow.last_progress);
            }
            let snap = FlowSnap {
                acked: t.acked,
                sent: t.sent,
                // (`last_progress` is also the start of sending: an instant of acknowledgement only
                // once something was acknowledged.)
                acked_at: if t.acked == 0 { SimTime::MAX } else { acked_at },
                signal: self.nic.ccs[c as usize].steady_signal().unwrap_or(f64::NAN),
                acks: t.acks,
                cnps: t.cnps,
                feedback_acks: t.feedback_acks,
                trouble: t.trouble,
            };
            ff.history.track(c)[at] = snap;
        }
        for (g, _) in &ff.groups {
            for &p in &g.ports {
                let port = &self.net.ports[p as usize];
                ff.history.port_row(p)[at] = PortSnap {
                    queued: port.queued,
                    tx_bytes: port.tx_bytes,
                    tx_packets: port.tx_packets,
                    ecn_marks: port.stats.ecn_marks,
                    pfc: port.stats.pause_sent + port.stats.resume_sent,
                    drops: port.stats.drops,
                };
            }
        }
        ff.history.checks += 1;
    }

    /// The group's forgotten past: after a thaw its history no longer lines up in time, so it is
    /// judged again from this check on.
    fn regrouped_now(ff: &mut FastForward, key: u32) {
        let checks = ff.history.checks;
        if let Some((_, at)) = ff.groups.iter_mut().find(|(g, _)| g.key == key) {
            *at = checks;
        }
    }

    /// The end of the run, or a stop: every frozen group thaws now, so that the counters and the
    /// flows' progress are those of a run that went on packet by packet to this instant.
    pub(crate) fn thaw_all(&mut self) {
        let Some(mut ff) = self.ff.take() else { return };
        let keys: Vec<u32> = ff.frozen.keys().copied().collect();
        for key in keys {
            self.thaw(&mut ff, key);
        }
        self.ff = Some(ff);
    }

    /// Flow `f` is about to start: any frozen group on its ports thaws first.
    pub(crate) fn thaw_for_start(&mut self, f: u32) {
        let Some(mut ff) = self.ff.take() else { return };
        if ff.any_frozen() {
            let ports = groups::ports_of(&self.topo, &self.nic.flows[f as usize]);
            for p in ports {
                let key = ff.port_frozen[p as usize];
                if key != NONE {
                    self.thaw(&mut ff, key);
                }
            }
        }
        self.ff = Some(ff);
    }

    /// Flow `f`'s sender stops taking data (a timed stop): its group, if frozen, thaws first.
    pub(crate) fn thaw_flow(&mut self, f: u32) {
        let Some(mut ff) = self.ff.take() else { return };
        let key = ff.flow_frozen[f as usize];
        if key != NONE {
            self.thaw(&mut ff, key);
        }
        self.ff = Some(ff);
    }

    /// A thaw came due: group `key`'s freeze number `n`, unless it thawed early.
    pub(crate) fn thaw_due(&mut self, key: u32, n: u32) {
        let Some(mut ff) = self.ff.take() else { return };
        if ff.frozen.get(&key).is_some_and(|fz| fz.number == n) {
            self.thaw(&mut ff, key);
        }
        self.ff = Some(ff);
    }

    /// The report for `summary.json`.
    pub(crate) fn fast_forward_report(&mut self) -> Option<FastForwardReport> {
        match self.ff.take() {
            Some(ff) => Some(ff.into_report()),
            None => self.ff_off.take(),
        }
    }

    fn nic_largest_base_rtt(&self) -> SimTime {
        self.nic.facts.iter().map(|f| f.base_rtt).max().unwrap_or(SimTime::ZERO)
    }
}

#[cfg(test)]
impl Simulation {
    /// Freezes every running flow now, crediting nothing, and thaws them `by` later: the run
    /// must go on exactly as one never frozen, `by` later (the test of `translate`).
    pub(crate) fn freeze_everything_for(&mut self, by: SimTime) {
        let mut ff = self.ff.take().expect("fast-forward on");
        self.regroup(&mut ff);
        let groups: Vec<Group> = ff.groups.iter().map(|(g, _)| g.clone()).collect();
        for g in groups {
            let nothing = steady::Steady { checks: 1, flows: Vec::new(), ports: Vec::new() };
            self.freeze(&mut ff, g, nothing, self.now + by);
        }
        self.ff = Some(ff);
    }
}
