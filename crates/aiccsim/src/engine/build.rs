//! Assembling a run: the one place the fabric is built.
//!
//! A scenario arrives here having passed its own checks (`config/validate.rs`). [`Fabric::build`]
//! checks first what needs only the number of hosts, which the topology's settings give (each
//! job's ranks, how many flows the workload makes and the bytes they carry, counted without
//! making them), then builds its topology once and runs the checks that need it: the NICs'
//! speeds against the algorithm's rate floor, each switch's PFC headroom against its buffer.
//! [`Simulation::with_fabric`] then lays out the run on that fabric. Front ends that check a
//! scenario without running it (`aiccsim validate`) use [`Fabric::check_watched`], which builds
//! the topology but makes no flow; a run builds it once.

use super::net::{self, Network};
use super::nic::{self, Nics, SetupSteps};
use super::observe::{self, Observers};
use super::work::WorkProgress;
use super::{Dependencies, Event, EventQueue, Params, RunControl, Simulation};
use crate::cc::Check;
use crate::config::{ConfigError, NvlinkModel, Scenario};
use crate::time::SimTime;
use crate::topology::Topology;
use crate::watch::{BuildError, Phase, Stop, Watch};
use crate::workload::{self, FlowDef};

/// Flows in one scenario at most: each costs about a kilobyte of state (its queue pair, both
/// halves of its algorithm, its record), so this is a few gigabytes. Workloads multiply
/// (all-to-all is n^2 x `flows_per_pair`), and a typo should not become an out-of-memory crash.
const MAX_FLOWS: u64 = 1 << 22;

/// A scenario's fabric, built and checked against the scenario: what a run of it starts from.
pub struct Fabric {
    topo: Topology,
    /// The scenario's flows and compute steps, laid out on the topology's hosts.
    work: workload::Workload,
}

impl Fabric {
    /// Builds the scenario's topology and checks the scenario against it; errors name the
    /// scenario's origin and the key at fault.
    pub fn build(scenario: &Scenario) -> Result<Fabric, ConfigError> {
        Fabric::build_watched(scenario, &mut Watch::unwatched()).map_err(BuildError::unwatched)
    }

    /// [`Fabric::build`], reporting its progress to `watch` and stopping when it says so.
    pub fn build_watched(scenario: &Scenario, watch: &mut Watch) -> Result<Fabric, BuildError<ConfigError>> {
        let invalid = |e: (String, String)| BuildError::Invalid(scenario.error(e));
        let (topo, jobs, _) = checked_fabric(scenario, watch)?;
        let work = workload::jobs::lay_out(&jobs, scenario.simulation.seed, watch)?;
        // Byte totals (summary.bytes, the ledger) are 64-bit: a workload beyond that is refused
        // rather than summed into a saturated, wrong number.
        let total = work.flows.iter().try_fold(0u64, |sum, f| sum.checked_add(f.size));
        if total.is_none() {
            let key = if scenario.jobs.is_empty() { "workload" } else { "jobs" };
            return Err(invalid((key.into(), too_many_bytes())));
        }
        Ok(Fabric { topo, work })
    }

    /// Every check [`Fabric::build`] makes, without laying out the workload: what `aiccsim
    /// validate` needs, in the time and memory of the topology alone (a 4-million-flow
    /// all-to-all is counted, not made). Returns the number of flows the workload makes.
    pub fn check_watched(scenario: &Scenario, watch: &mut Watch) -> Result<u64, BuildError<ConfigError>> {
        let (_, _, flows) = checked_fabric(scenario, watch)?;
        Ok(flows)
    }
}

/// The scenario checked, cheapest first: its own settings, then what needs the number of hosts
/// only (each job's ranks, the flow count and the flows' bytes, counted by the workload kinds
/// without making a flow), and only then the topology, built, and what needs it. A workload
/// 65,000 times over the flow limit on a fabric whose routes take minutes is refused at once.
fn checked_fabric(
    s: &Scenario,
    watch: &mut Watch,
) -> Result<(Topology, Vec<workload::jobs::JobPlan>, u64), BuildError<ConfigError>> {
    let invalid = |e: (String, String)| BuildError::Invalid(s.error(e));
    // Again, in case the scenario was changed since it was parsed (it takes microseconds).
    crate::config::validate(s).map_err(invalid)?;
    // The host count follows from the topology's settings (`validate` held it to MAX_HOSTS).
    let hosts = u32::try_from(s.topology.fabric_hosts()).unwrap_or(u32::MAX);
    let jobs = workload::jobs::plan(s.workload.as_ref(), &s.jobs, s.simulation.seed, hosts, s.topology.per_server())
        .map_err(invalid)?;
    // Every job's ranks, and each of its workloads on them (each kind's own checks).
    let flows = workload::jobs::check(&jobs, MAX_FLOWS).map_err(invalid)?;
    counted_bytes(s, &jobs, flows).map_err(invalid)?;
    let topo = Topology::build_watched(&s.topology, watch).map_err(|e| e.map_invalid(|e| s.error(e)))?;
    debug_assert_eq!(topo.fabric_hosts, hosts, "the settings' host count is the built topology's");
    check(s, &topo, flows).map_err(invalid)?;
    Ok((topo, jobs, flows))
}

/// Byte totals (summary.bytes, the ledger) are 64-bit: a workload beyond that is refused from
/// its kinds' counts, before anything is made. (Their counts round a collective's pieces to
/// within a byte per flow, so only a count beyond that slack is refused here; the laid-out flows
/// are summed again, exactly, in `Fabric::build`.)
fn counted_bytes(s: &Scenario, plans: &[workload::jobs::JobPlan], flows: u64) -> Check {
    let bytes = (plans.iter())
        .flat_map(|p| p.workloads.iter().map(|(_, w)| w.as_kind().size(p.hosts.len() as u32).bytes))
        .fold(0u128, u128::saturating_add);
    if bytes > u128::from(u64::MAX) + u128::from(flows) {
        let key = if s.jobs.is_empty() { "workload" } else { "jobs" };
        return Err((key.into(), too_many_bytes()));
    }
    Ok(())
}

fn too_many_bytes() -> String {
    format!(
        "its flows carry more than {} bytes together (2^64 - 1, the most aiccsim counts); lower the sizes",
        u64::MAX
    )
}

/// The checks that need the built fabric; `flows` is the workload's count.
fn check(s: &Scenario, topo: &Topology, flows: u64) -> Check {
    let max_packet = s.nic.mtu.0 + s.nic.header.0 + s.cc.as_algorithm().extra_header_bytes().0;
    nic::check(s, topo, max_packet)?;
    net::check(s, topo, max_packet)?;
    observe::check(s, topo, flows)
}

impl Simulation {
    /// Builds the fabric, checks the scenario against it, and lays out the run.
    pub fn new(scenario: &Scenario) -> Result<Simulation, ConfigError> {
        Ok(Simulation::with_fabric(scenario, Fabric::build(scenario)?))
    }

    /// Lays out the run on a fabric already built and checked for this scenario: ports,
    /// switches, hosts, the flows with both halves of their algorithm, and the first events.
    pub fn with_fabric(scenario: &Scenario, fabric: Fabric) -> Simulation {
        match Simulation::with_fabric_watched(scenario, fabric, &mut Watch::unwatched()) {
            Ok(sim) => sim,
            Err(_) => unreachable!("nothing stops an unwatched build"),
        }
    }

    /// [`Simulation::with_fabric`], reporting its progress to `watch` and stopping when it says
    /// so.
    pub fn with_fabric_watched(scenario: &Scenario, fabric: Fabric, watch: &mut Watch) -> Result<Simulation, Stop> {
        let Fabric { topo, mut work } = fabric;
        // The ports, then three passes over the flows (connections, queue pairs, connection
        // state) and the first events: with two million flows each takes a quarter of a second
        // or more, so each checks for a stop.
        let flows = work.flows.len() as u64;
        let total = topo.ports.len() as u64 + 4 * flows;
        let params = Params::of(scenario);
        let (mut net, link_events) = Network::build(&topo, scenario, &params, watch, total)?;
        if topo.has_nvlink() {
            onto_nvlink(&topo, &mut work.flows);
        }
        let deps = Dependencies::new(&work.flows, &work.computes);
        let steps = SetupSteps { first: topo.ports.len() as u64, total };
        let (nic, largest_base_rtt) = Nics::build(&topo, scenario, &params, &work.flows, &deps, watch, steps)?;
        net.start_pint(params.telemetry, largest_base_rtt, params.seed, topo.num_switches);
        net.start_ecmp_ns3(&topo, scenario, &work.flows);
        let mut sim = Simulation {
            now: SimTime::ZERO,
            events: EventQueue::with_capacity(1024 + work.flows.len()),
            observe: Observers::new(scenario, &topo, work.flows.len()),
            work: WorkProgress::new(&mut work, deps),
            topo,
            params,
            net,
            nic,
            control: RunControl::default(),
            cadence: crate::watch::Cadence::new(),
            event_limit: u64::MAX,
            ff: None,
            ff_off: None,
            fluid: None,
            scenario: scenario.clone(),
        };
        if scenario.simulation.nvlink == NvlinkModel::Fluid && sim.topo.has_nvlink() {
            let servers = sim.topo.server_of.iter().max().map_or(0, |&s| s as usize + 1);
            let (ack, every, packet) = (sim.params.ack_size, sim.params.ack_every, sim.params.mtu + sim.params.header);
            let fluid = super::nvlink_fluid::NvlinkFluid::new(servers, u64::from(ack), u64::from(every), packet);
            sim.fluid = Some(Box::new(fluid));
        }
        match crate::engine::fast_forward::FastForward::for_run(scenario, &sim) {
            Ok(ff) => sim.ff = ff,
            Err(off) => sim.ff_off = Some(*off),
        }
        sim.queue_first_events(&work.flows, &link_events, watch, total - flows)?;
        sim.observe.warnings = sim.find_warnings();
        watch.at(Phase::Setup, total, total)?;
        Ok(sim)
    }

    /// The events a run starts from: the flows and compute steps that wait for nothing, the
    /// flows' stop times, the link events and the first timeline sample. Ticks `watch` once per
    /// flow from step `first` on.
    fn queue_first_events(
        &mut self,
        defs: &[FlowDef],
        link_events: &[(SimTime, u32)],
        watch: &mut Watch,
        first: u64,
    ) -> Result<(), Stop> {
        let total = first + defs.len() as u64;
        for (f, def) in defs.iter().enumerate() {
            watch.tick(Phase::Setup, first + f as u64, total)?;
            if self.work.deps.flow_ready(f as u32) {
                self.events.push(self.nic.flows[f].start, Event::FlowStart(f as u32));
            }
            if let Some(stop) = def.stop {
                self.events.push(stop, Event::FlowStop(f as u32));
            }
        }
        self.start_ready_computes();
        for &(t, i) in link_events {
            self.events.push(t, Event::Link(i));
        }
        if self.params.sample_interval.is_some() {
            self.events.push(SimTime::ZERO, Event::Sample);
        }
        if let Some(ff) = &self.ff {
            self.events.push(ff.every(), Event::FastForward);
        }
        if let Some(dlb) = &self.net.dlb {
            self.events.push(dlb.period(), Event::DlbSample);
        }
        Ok(())
    }
}

/// Transfers between GPUs of one server go over NVLink: between their NVLink ports.
fn onto_nvlink(topo: &Topology, flows: &mut [FlowDef]) {
    for d in flows {
        (d.src, d.dst) = topo.endpoints(d.src, d.dst);
    }
}
