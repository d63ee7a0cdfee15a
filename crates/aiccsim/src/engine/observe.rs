//! What a run records as it goes: the run-wide counters, the sampled timelines, the RTT and
//! queuing-delay distributions, the opt-in per-packet trace, and the scenario's warnings.

use crate::config::Scenario;
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
