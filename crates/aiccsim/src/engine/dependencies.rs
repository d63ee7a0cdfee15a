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
    dependents: Edges,
    /// Per flow: the flows that wait for its sender to have every byte acknowledged. Only flows
    /// wait so, so a compute step's predecessors never include these edges.
    acked_dependents: Edges,
    /// Per node: how many of the nodes it waits for are not done yet.
    waiting_on: Vec<u32>,
    pub(crate) computes: Vec<ComputeStep>,
    /// Compute steps not yet ended: the run is not over while any is left.
    pub(crate) computes_left: usize,
}

/// Lists of nodes per node, packed into one array (compressed sparse rows): a list per node
/// of its own would cost a 24-byte header and an allocation each, more than the edges of a
/// collective's millions of transfers.
struct Edges {
    /// Node `n`'s list is `targets[starts[n]..starts[n + 1]]`.
    starts: Vec<u32>,
    targets: Vec<u32>,
}

impl Edges {
    /// The lists of `nodes` nodes from the edges `(from, to)` that `each` gives (called twice:
    /// once to count, once to fill), each list in the order its edges come.
    fn build(nodes: usize, each: impl Fn(&mut dyn FnMut(u32, u32))) -> Edges {
        let mut starts = vec![0u32; nodes + 1];
        each(&mut |from, _| starts[from as usize + 1] += 1);
        for n in 0..nodes {
            starts[n + 1] += starts[n];
        }
        let mut next = starts[..nodes].to_vec();
        let mut targets = vec![0u32; starts[nodes] as usize];
        each(&mut |from, to| {
            let at = &mut next[from as usize];
            targets[*at as usize] = to;
            *at += 1;
        });
        Edges { starts, targets }
    }

    fn of(&self, node: u32) -> &[u32] {
        &self.targets[self.starts[node as usize] as usize..self.starts[node as usize + 1] as usize]
    }

    fn lists(&self) -> impl Iterator<Item = &[u32]> + Clone {
        self.starts.windows(2).map(|w| &self.targets[w[0] as usize..w[1] as usize])
    }
}

impl Dependencies {
    pub(crate) fn new(flows: &[FlowDef], computes: &[ComputeDef]) -> Dependencies {
        let f = flows.len() as u32;
        let nodes = flows.len() + computes.len();
        let mut waiting_on = vec![0u32; nodes];
        let acked_dependents = Edges::build(flows.len(), |edge| {
            for (node, d) in flows.iter().enumerate() {
                for &before in &d.after_acked {
                    edge(before, node as u32);
                }
            }
        });
        for (node, d) in flows.iter().enumerate() {
            waiting_on[node] = d.after_acked.len() as u32;
        }
        let waits = || {
            let flows = flows.iter().map(|d| (&d.after, &d.after_compute));
            flows.chain(computes.iter().map(|c| (&c.after, &c.after_compute)))
        };
        let dependents = Edges::build(nodes, |edge| {
            for (node, (after, after_compute)) in waits().enumerate() {
                for &before in after {
                    edge(before, node as u32);
                }
                for &before in after_compute {
                    edge(f + before, node as u32);
                }
            }
        });
        for (node, (after, after_compute)) in waits().enumerate() {
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
        Predecessors::invert(self.flows, self.computes.len(), self.dependents.lists())
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
        for i in 0..self.work.deps.dependents.of(node).len() {
            let d = self.work.deps.dependents.of(node)[i];
            self.one_wait_over(d);
        }
    }

    /// Flow `f`'s sender holds the acknowledgement of its last byte: the flows that waited only
    /// for that start now (or at their own start time).
    pub(crate) fn release_acked(&mut self, f: u32) {
        for i in 0..self.work.deps.acked_dependents.of(f).len() {
            let d = self.work.deps.acked_dependents.of(f)[i];
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

#[cfg(test)]
mod tests {
    use super::Edges;

    /// Each node's list holds its edges in the order they came (the order waits are released
    /// in, which the run's event order follows), and a node without edges has an empty list.
    #[test]
    fn edges_are_listed_per_node_in_the_order_they_come() {
        let edges = [(2, 7), (0, 5), (2, 1), (2, 9), (0, 4)];
        let e = Edges::build(4, |edge| {
            for &(from, to) in &edges {
                edge(from, to);
            }
        });
        assert_eq!(e.of(0), &[5, 4]);
        assert_eq!(e.of(1), &[] as &[u32]);
        assert_eq!(e.of(2), &[7, 1, 9]);
        assert_eq!(e.of(3), &[] as &[u32]);
        assert_eq!(e.lists().collect::<Vec<_>>(), [&[5, 4][..], &[], &[7, 1, 9], &[]]);
    }
}
