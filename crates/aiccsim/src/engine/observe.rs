//! What a run records as it goes: the run-wide counters, the sampled timelines, the RTT and
//! queuing-delay distributions, the opt-in per-packet trace, and the scenario's warnings.

use crate::cc::Check;
use crate::config::{fail, Scenario};
use crate::metrics::trace::Tracer;
use crate::metrics::{Counters, DurationHistogram, Recorder, Warning};
use crate::topology::Topology;

pub(crate) struct Observers {
    pub(crate) counters: Counters,
    pub(crate) recorder: Recorder,
    /// Every ACK's RTT and every full data packet's one-way queuing delay (from the warm-up on).
    pub(crate) rtts: DurationHistogram,
    pub(crate) queuing: DurationHistogram,
    /// The per-packet trace, when the scenario asks for one.
    pub(crate) tracer: Option<Box<Tracer>>,
    /// Settings that are legal but almost certainly a mistake (`warnings.rs`).
    pub(crate) warnings: Vec<Warning>,
}

impl Observers {
    /// Recording as `scenario.output` asks, for `flows` flows on `topo`.
    pub(crate) fn new(scenario: &Scenario, topo: &Topology, flows: usize) -> Observers {
        Observers {
            counters: Counters::default(),
            recorder: Recorder::new(&scenario.output, topo.num_switches, topo.ports.len(), flows),
            rtts: DurationHistogram::default(),
            queuing: DurationHistogram::default(),
            tracer: scenario.output.trace.as_ref().map(|t| Box::new(Tracer::new(t, topo, flows))),
            warnings: Vec::new(),
        }
    }
}

/// What `[output]` names must exist: the flows it samples or traces (the workload makes
/// `flows`), the nodes it traces, the switches whose queues it records.
pub(crate) fn check(s: &Scenario, topo: &Topology, flows: u64) -> Check {
    // (A training workload without communication has no flows at all.)
    let no_such_flow = |bad: u32| match flows {
        0 => format!("flow {bad} does not exist (the workload has no flows)"),
        n => format!("flow {bad} does not exist (the workload has flows 0 to {})", n - 1),
    };
    if let Some(ids) = &s.output.rate_flows {
        if let Some(&bad) = ids.iter().find(|&&f| u64::from(f) >= flows) {
            return fail("output.rate_flows", no_such_flow(bad));
        }
    }
    if let Some(trace) = &s.output.trace {
        if let Some(ids) = &trace.flows {
            if let Some(&bad) = ids.iter().find(|&&f| u64::from(f) >= flows) {
                return fail("output.trace.flows", no_such_flow(bad));
            }
        }
        for (i, name) in trace.nodes.iter().flatten().enumerate() {
            topo.names().parse(name).map_err(|m| (format!("output.trace.nodes[{i}]"), m))?;
        }
    }
    if let Some(sw) = &s.output.queue_switches {
        if let Some(&bad) = sw.iter().find(|&&x| x >= topo.num_switches) {
            return fail(
                "output.queue_switches",
                format!("switch {bad} does not exist (the topology has switches 0 to {})", topo.num_switches - 1),
            );
        }
    }
    Ok(())
}
