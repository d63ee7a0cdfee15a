//! The dependency graph of a run: flows and compute steps, each starting once everything it
//! waits for is done. A flow is done when it is delivered (its last byte reached the receiver);
//! a compute step when its fixed duration has passed after it started. A flow of an explicit
//! list may instead wait for another flow to be acknowledged (`after_acked`: its sender holds
//! the ACK of the last byte), a second, later event of that flow with dependents of its own.
//!
//! Flows and steps share one numbering of graph nodes: flow f is node f, compute step c is
//! node F + c (F flows). Nothing here runs per packet: a flow touches the graph once at its
//! delivery and once when its sender is done, a step once when it ends.

use super::{Event, Simulation};
use crate::metrics::{ComputeStep, Predecessors};
use crate::workload::{ComputeDef, FlowDef};

pub(crate) struct Dependencies {
    flows: u32,
    /// Per node: the nodes that wait for it (for a flow: for its delivery).
    dependents: Vec<Vec<u32>>,
    /// Per flow: the flows that wait for its sender to have every byte acknowledged. Only flows
    /// wait so, so a compute step's predecessors never include these edges.
    acked_dependents: Vec<Vec<u32>>,
    /// Per node: how many of the nodes it waits for are not done yet.
    waiting_on: Vec<u32>,
    pub(crate) computes: Vec<ComputeStep>,
    /// Compute steps not yet ended: the run is not over while any is left.
    pub(crate) computes_left: usize,
}

impl Dependencies {
    pub(crate) fn new(flows: &[FlowDef], computes: &[ComputeDef]) -> Dependencies {
        let f = flows.len() as u32;
        let nodes = flows.len() + computes.len();
        let mut dependents = vec![Vec::new(); nodes];
        let mut acked_dependents = vec![Vec::new(); flows.len()];
        let mut waiting_on = vec![0u32; nodes];
        for (node, d) in flows.iter().enumerate() {
            for &before in &d.after_acked {
                acked_dependents[before as usize].push(node as u32);
            }
            waiting_on[node] = d.after_acked.len() as u32;
        }
        let waits = flows.iter().map(|d| (&d.after, &d.after_compute));
        let waits = waits.chain(computes.iter().map(|c| (&c.after, &c.after_compute)));
        for (node, (after, after_compute)) in waits.enumerate() {
            for &before in after {
                dependents[before as usize].push(node as u32);
            }
            for &before in after_compute {
                dependents[(f + before) as usize].push(node as u32);
            }
            waiting_on[node] += (after.len() + after_compute.len()) as u32;
        }
        let computes: Vec<ComputeStep> = computes
            .iter()
            .map(|c| ComputeStep { host: c.host, duration: c.duration, earliest: c.start, start: None, end: None })
            .collect();
        Dependencies { flows: f, dependents, acked_dependents, waiting_on, computes_left: computes.len(), computes }
    }

    /// What each compute step waited for, for the iteration split of a training run: the
    /// graph's edges turned around once, after the run.
    pub(crate) fn predecessors(&self) -> Predecessors {
        Predecessors::invert(self.flows, self.computes.len(), &self.dependents)
    }

    /// Whether flow `f` waits for nothing.
    pub(crate) fn flow_ready(&self, f: u32) -> bool {
        self.waiting_on[f as usize] == 0
    }
}

impl Simulation {
    /// Starts the compute steps that wait for nothing (the flows that wait for nothing are
    /// queued with the rest of the flow setup).
    pub(crate) fn start_ready_computes(&mut self) {
        for c in 0..self.work.deps.computes.len() as u32 {
            if self.work.deps.waiting_on[(self.work.deps.flows + c) as usize] == 0 {
                self.begin_compute(c);
            }
        }
    }

    /// Node `node` is done (a flow: delivered): whatever waited only for it starts now (or at
    /// its own start time).
    pub(crate) fn release(&mut self, node: u32) {
        for i in 0..self.work.deps.dependents[node as usize].len() {
            let d = self.work.deps.dependents[node as usize][i];
            self.one_wait_over(d);
        }
    }

    /// Flow `f`'s sender holds the acknowledgement of its last byte: the flows that waited only
    /// for that start now (or at their own start time).
    pub(crate) fn release_acked(&mut self, f: u32) {
        for i in 0..self.work.deps.acked_dependents[f as usize].len() {
            let d = self.work.deps.acked_dependents[f as usize][i];
            self.one_wait_over(d);
        }
    }

    /// One of the things node `d` waits for is done; the last one starts it.
    fn one_wait_over(&mut self, d: u32) {
        self.work.deps.waiting_on[d as usize] -= 1;
        if self.work.deps.waiting_on[d as usize] > 0 {
            return;
        }
        if d < self.work.deps.flows {
            let at = self.nic.flows[d as usize].start.max(self.now);
            self.events.push(at, Event::FlowStart(d));
        } else {
            self.begin_compute(d - self.work.deps.flows);
        }
    }

    fn begin_compute(&mut self, c: u32) {
        let step = &mut self.work.deps.computes[c as usize];
        let start = step.earliest.max(self.now);
        step.start = Some(start);
        self.events.push(start + step.duration, Event::ComputeDone(c));
    }

    pub(crate) fn compute_done(&mut self, c: u32) {
        self.work.deps.computes[c as usize].end = Some(self.now);
        self.work.deps.computes_left -= 1;
        self.release(self.work.deps.flows + c);
    }
}
