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
use crate::config::{Routing, Scenario, Tier};
use crate::engine::{Event, Simulation};
use crate::metrics::fast_forward::FastForwardReport;
use crate::time::SimTime;
use groups::{Group, NONE};
use history::{FlowSnap, History, PortSnap};
use std::collections::BTreeMap;

/// Fast-forward's state in a run that has it on.
pub(crate) struct FastForward {
    tolerance: f64,
    /// Time between two checks.
    every: SimTime,
    history: History,
    /// The running flows at the last grouping, with the ports each crosses.
    active: BTreeMap<u32, Box<[u32]>>,
    /// The groups, each with the check its members were first seen together at.
    groups: Vec<(Group, u64)>,
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
    /// Numbers each freeze, so that the thaw of an earlier one is recognised.
    freezes: u32,
    /// Checks are made (always, except in tests that freeze by hand).
    checking: bool,
    report: FastForwardReport,
}

impl FastForward {
    /// Fast-forward for `scenario` on `sim`'s fabric, if the scenario asks for it; with the
    /// reason it cannot run, if it cannot.
    pub(crate) fn for_run(scenario: &Scenario, sim: &Simulation) -> Result<Option<FastForward>, FastForwardReport> {
        let Some(tolerance) = scenario.simulation.fast_forward.tolerance() else { return Ok(None) };
        let off = |why: &str| FastForwardReport { tolerance, off_because: Some(why.to_string()), ..Default::default() };
        if Tier::ALL.iter().any(|&t| scenario.switch.routing.of(t) != Routing::Ecmp) {
            return Err(off(
                "switches route packets of one flow on several paths (only ECMP routing is fast-forwarded)",
            ));
        }
        if !scenario.events.is_empty() {
            return Err(off("the scenario has link events ([[events]]), which change routes"));
        }
        let flows = sim.nic.flows.len();
        let ports = sim.net.ports.len();
        // Two round trips of the longest path: windows of 2 to 16 round trips (`history.rs`).
        let every = SimTime(sim.nic_largest_base_rtt().0.saturating_mul(2).max(SimTime::from_ns(500).0));
        Ok(Some(FastForward {
            tolerance,
            every,
            history: History::new(flows, ports),
            active: BTreeMap::new(),
            groups: Vec::new(),
            formed_with: (usize::MAX, usize::MAX),
            frozen: BTreeMap::new(),
            port_frozen: vec![NONE; ports],
            flow_frozen: vec![NONE; flows],
            conn_frozen: vec![NONE; flows],
            port_credit: vec![(0, 0); ports],
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
            if let Some(s) = steady::judge(&ff.history, g, checks - 1 - formed, ff.tolerance, packet) {
                steady.push((g.clone(), s));
            }
        }
        for (g, s) in steady {
            if let Some(until) = self.skip_until(&ff, &s) {
                self.freeze(&mut ff, g, s, until);
            }
        }
        if self.work.flows_done < self.nic.flows.len() {
            self.events.push(now + ff.every, Event::FastForward);
        }
        self.ff = Some(ff);
    }

    /// The running flows and their groups, anew; a group whose members did not change keeps the
    /// check it was formed at.
    fn regroup(&mut self, ff: &mut FastForward) {
        ff.formed_with = (self.work.flows_started, self.work.flows_done);
        let running = |f: &crate::engine::nic::qp::Flow| f.started && f.sender_done.is_none();
        let gone: Vec<u32> = ff.active.keys().copied().filter(|&f| !running(&self.nic.flows[f as usize])).collect();
        for f in gone {
            ff.active.remove(&f);
            ff.history.forget(f);
        }
        for (f, flow) in self.nic.flows.iter().enumerate() {
            if running(flow) && !ff.active.contains_key(&(f as u32)) {
                ff.active.insert(f as u32, groups::ports_of(&self.topo, flow).into_boxed_slice());
            }
        }
        let list: Vec<(u32, &[u32])> = ff.active.iter().map(|(&f, p)| (f, &p[..])).collect();
        let fresh = groups::group(&list, self.net.ports.len());
        let old: BTreeMap<u32, (&Group, u64)> = ff.groups.iter().map(|(g, at)| (g.key, (g, *at))).collect();
        let checks = ff.history.checks;
        let kept: Vec<(Group, u64)> = fresh
            .into_iter()
            .map(|g| {
                let at = match old.get(&g.key) {
                    Some((was, at)) if was.flows == g.flows => *at,
                    _ => checks,
                };
                (g, at)
            })
            .collect();
        ff.groups = kept;
    }

    /// Every running flow's and every grouped port's counters, as check number
    /// `ff.history.checks`.
    fn snapshot(&mut self, ff: &mut FastForward) {
        let at = History::at(ff.history.checks);
        for &f in ff.active.keys() {
            let flow = &self.nic.flows[f as usize];
            let cc = &self.nic.ccs[flow.conn as usize];
            let snap = FlowSnap {
                acked: flow.snd_una,
                sent: flow.high_sent,
                acked_at: flow.last_progress,
                signal: cc.steady_signal().unwrap_or(f64::NAN),
                acks: flow.acks,
                cnps: flow.cnps,
                feedback_acks: flow.feedback_acks,
                trouble: flow.retransmitted_bytes + u64::from(flow.timeouts) + u64::from(flow.nacks),
            };
            ff.history.track(f)[at] = snap;
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
