//! The RDMA NIC, one file per mechanism: what goes on the wire next and the receive path
//! (`host.rs`), the choice among a host's queue pairs (`scheduler.rs`), queue pairs (`qp.rs`),
//! the entropy each data packet carries, which sprays a flow over paths (`entropy.rs`, with
//! REPS's recycling in `reps.rs`),
//! connections shared by consecutive transfers (`connection.rs`), loss recovery (`recovery.rs`:
//! NACKs and the retransmission timeout, with `go_back_n.rs` and `selective.rs` beside it),
//! losses on purpose (`losses.rs`), the rate limiter (`pacing.rs`), RTT probes (`probe.rs`), and
//! the hosts' clocks (`clock.rs`).

pub mod clock;
pub mod connection;
pub mod entropy;
mod go_back_n;
pub mod host;
mod losses;
mod pacing;
pub mod probe;
pub mod qp;
mod recovery;
pub mod reps;
mod scheduler;
pub mod selective;

use crate::cc::{Cc, Check, FlowFacts, Receiver};
use crate::config::fail;
use crate::config::{Connections, Scenario};
use crate::engine::{Dependencies, Params};
use crate::time::{Bandwidth, SimTime};
use crate::topology::Topology;
use crate::watch::{Phase, Stop, Watch};
use crate::workload::FlowDef;
use clock::HostClocks;
use qp::Flow;
use scheduler::Scheduler;

/// The NICs' state: the hosts' schedulers, every flow's queue pair, the connections they ride,
/// both halves of each connection's algorithm, and what the NIC's mechanisms keep (loss
/// recovery's bitmaps, losses on purpose, RTT probes, clocks, the controller's view of each
/// receiver's incoming flows).
pub(crate) struct Nics {
    /// Each host's queue pairs with data to send, in round-robin order (`scheduler.rs`).
    pub(crate) sched: Scheduler,
    pub(crate) flows: Vec<Flow>,
    /// Per connection (by number, `Flow::conn`; `connection.rs`).
    pub(crate) conns: Vec<connection::Connection>,
    /// Each connection's first flow, whose id names the connection where results do.
    pub(crate) conn_heads: Vec<u32>,
    /// Both halves of each connection's algorithm, by connection number.
    pub(crate) ccs: Vec<Cc>,
    pub(crate) receivers: Vec<Receiver>,
    /// What each connection's algorithm was told about its path (its first flow's).
    pub(crate) facts: Vec<FlowFacts>,
    /// Selective recovery's bitmaps, for the flows that have needed one (`selective.rs`).
    pub(crate) sack: selective::Scoreboards,
    /// What the sender keeps to choose each data packet's entropy (`entropy.rs`).
    pub(crate) entropy: entropy::Entropies,
    /// Data packets to lose on purpose (`losses.rs`).
    pub(crate) losses: Vec<(u32, u64)>,
    /// RTT probes, when the algorithm asks for them (`probe.rs`).
    pub(crate) probes: Option<Box<probe::Probes>>,
    /// The hosts' clocks (one-way delay measurement).
    pub(crate) clocks: HostClocks,
    /// Per host: connections into it with a message that has started and is not delivered (a
    /// controller's view: the flows that share its line, each with its own window), and the
    /// flows (messages) into it it has seen a packet of and not received whole (its own view).
    pub(crate) incoming_flows: Vec<u32>,
    pub(crate) incoming_seen: Vec<u32>,
    /// Flows that start together towards the same receiver (no dependencies, same start time)
    /// form a group, counted by connection; a controller knows the whole group when its first
    /// member starts.
    pub(crate) start_group: Vec<u32>,
    pub(crate) group_unstarted: Vec<u32>,
}

impl Nics {
    /// What flow `f`'s algorithm knows about its path: its connection's.
    pub(crate) fn facts_of(&self, f: u32) -> &FlowFacts {
        &self.facts[self.flows[f as usize].conn as usize]
    }
}

/// Where the NICs' setup passes count their steps: after the ports, three passes over the flows.
pub(crate) struct SetupSteps {
    pub first: u64,
    pub total: u64,
}

impl Nics {
    /// The queue pairs of `defs` (their endpoints already on NVLink where they ride it), their
    /// connections, algorithms and start groups, and the hosts they run on. Also returns the
    /// largest base round trip of the flows (PINT's default period).
    pub(crate) fn build(
        topo: &Topology,
        scenario: &Scenario,
        params: &Params,
        defs: &[FlowDef],
        deps: &Dependencies,
        watch: &mut Watch,
        steps: SetupSteps,
    ) -> Result<(Nics, SimTime), Stop> {
        let nic = &scenario.nic;
        let persistent = nic.connections == Connections::Persistent;
        let n = defs.len() as u64;
        let conn_of =
            connection::connection_of(defs, persistent, |i| watch.tick(Phase::Setup, steps.first + i, steps.total))?;
        let (start_group, group_unstarted) = qp::start_groups(defs, deps, &conn_of.of_flow);
        let algorithm = scenario.cc.as_algorithm();
        let pairs = qp::QueuePairs::build(topo, params, defs, &conn_of, algorithm, |i| {
            watch.tick(Phase::Setup, steps.first + n + i, steps.total)
        })?;
        let probes = probe::Probes::for_flows(algorithm, &pairs.facts, &pairs.flows, nic.probe_loss, params.seed);
        let connections = conn_of.heads.len();
        let mut conns = Vec::with_capacity(connections);
        for i in 0..n {
            watch.tick(Phase::Setup, steps.first + 2 * n + i, steps.total)?;
            if (i as usize) < connections {
                conns.push(Default::default());
            }
        }
        let hosts = topo.num_hosts as usize;
        let nics = Nics {
            sched: Scheduler::new(hosts, defs.len()),
            flows: pairs.flows,
            conns,
            conn_heads: conn_of.heads,
            ccs: pairs.ccs,
            receivers: pairs.receivers,
            facts: pairs.facts,
            sack: selective::Scoreboards::new(nic.sack_bitmap, params.trimming),
            entropy: entropy::Entropies::new(nic, connections),
            losses: Vec::new(),
            probes,
            clocks: HostClocks::new(&scenario.clocks, topo.num_hosts, params.seed),
            incoming_flows: vec![0; hosts],
            incoming_seen: vec![0; hosts],
            start_group,
            group_unstarted,
        };
        Ok((nics, pairs.largest_base_rtt))
    }
}

/// The NICs against the scenario: the algorithm's rate floor within every NIC's speed, and a
/// retransmission timeout that a packet's round trip can beat (`max_packet`: the largest data
/// packet's bytes).
pub(crate) fn check(s: &Scenario, topo: &Topology, max_packet: u64) -> Check {
    let algorithm = s.cc.as_algorithm();
    if let (Some(floor), Some(slowest)) = (algorithm.min_rate(), slowest_nic(topo)) {
        if floor > slowest {
            return fail("cc.min_rate", format!("{floor} is above the NIC speed {slowest}"));
        }
    }
    recovery::check_rto(&s.nic, topo, max_packet)
}

/// The speed of the slowest host's NIC (`None` for a fabric without hosts). NVLink ports are
/// not NICs: no congestion control runs on them.
fn slowest_nic(topo: &Topology) -> Option<Bandwidth> {
    (0..topo.fabric_hosts).map(|h| topo.ports[topo.host_port(h) as usize].bandwidth).min()
}
