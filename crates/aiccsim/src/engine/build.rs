//! Assembling a run: the one place the fabric is built.
//!
//! A scenario arrives here having passed its own checks (`config/validate.rs`). [`Fabric::build`]
//! builds its topology once and runs the checks that need it: hosts and switches that must
//! exist, the NICs' speeds against the algorithm's rate floor, each switch's PFC headroom
//! against its buffer, and how many flows the workload makes. [`Simulation::with_fabric`] then
//! lays out the run on that fabric. Front ends that check a scenario before running it
//! (`aiccsim validate`, a sweep checking all its points first) build the fabric to check it;
//! a run builds it once.

use super::net::{self, failures, Network};
use super::nic::{self, Nics, SetupSteps};
use super::observe::{self, Observers};
use super::work::WorkProgress;
use super::{Dependencies, Event, EventQueue, Params, RunControl, Simulation};
use crate::cc::Check;
use crate::config::{fail, moved, AllReduceAlgorithm, ConfigError, HostSet, Scenario, WorkloadConfig};
use crate::time::{ByteSize, SimTime};
use crate::topology::Topology;
use crate::watch::{BuildError, Phase, Stop, Watch};
use crate::workload::{self, FlowDef};

/// Flows in one scenario at most: each costs about a kilobyte of state (its queue pair, both
/// halves of its algorithm, its record), so this is a few gigabytes. Workloads multiply
/// (all-to-all is n^2 x `flows_per_pair`), and a typo should not become an out-of-memory crash.
const MAX_FLOWS: u64 = 1 << 22;

/// Compute steps in one scenario at most (a `training` workload has three per layer, rank and
/// iteration), about a hundred bytes each.
const MAX_COMPUTE_STEPS: u64 = 1 << 22;

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
        // Again, in case the scenario was changed since it was parsed (it takes microseconds).
        crate::config::validate(scenario).map_err(invalid)?;
        let topo =
            Topology::build_watched(&scenario.topology, watch).map_err(|e| e.map_invalid(|e| scenario.error(e)))?;
        let jobs =
            workload::jobs::plan(scenario, topo.fabric_hosts, scenario.topology.per_server()).map_err(invalid)?;
        check(scenario, &topo, &jobs).map_err(invalid)?;
        let work = workload::jobs::lay_out(&jobs, scenario.simulation.seed, watch)?;
        // Byte totals (summary.bytes, the ledger) are 64-bit: a workload beyond that is refused
        // rather than summed into a saturated, wrong number.
        let total = work.flows.iter().try_fold(0u64, |sum, f| sum.checked_add(f.size));
        if total.is_none() {
            let key = if scenario.jobs.is_empty() { "workload" } else { "jobs" };
            let message = format!(
                "its flows carry more than {} bytes together (2^64 - 1, the most aiccsim counts); lower the sizes",
                u64::MAX
            );
            return Err(invalid((key.into(), message)));
        }
        Ok(Fabric { topo, work })
    }
}

/// The checks that need the built fabric (and the jobs placed on it).
fn check(s: &Scenario, topo: &Topology, plans: &[workload::jobs::JobPlan]) -> Check {
    let max_packet = s.nic.mtu.0 + s.nic.header.0 + s.cc.as_algorithm().extra_header_bytes().0;
    nic::check(s, topo, max_packet)?;
    net::check(s, topo, max_packet)?;

    // Workload: every job's ranks, and each of its workloads on them.
    let mut counts = Vec::new();
    for plan in plans {
        let n = plan.hosts.len() as u32;
        let (noun, members) = match plan.name.as_str() {
            "" => ("host", "the topology has hosts".to_string()),
            name => ("rank", format!("job \"{name}\" has ranks")),
        };
        for (key, w) in &plan.workloads {
            moved(key, check_workload(w, n, noun, &members))?;
            counts.push((key, w, workload::count(w, n)));
        }
    }
    let flows = counts.iter().fold(0u64, |sum, c| sum.saturating_add(c.2));
    if flows > MAX_FLOWS {
        let (key, w, _) = counts.iter().max_by_key(|c| c.2).expect("more flows than none");
        let (at, fix) = match w {
            WorkloadConfig::Incast(_) => ("flows_per_sender", "lower flows_per_sender or use fewer senders"),
            WorkloadConfig::AllToAll(a) if a.flows_per_pair > 1 => {
                ("flows_per_pair", "lower flows_per_pair or use fewer hosts")
            }
            WorkloadConfig::Flows(_) => ("flows", "split the list over several scenarios"),
            WorkloadConfig::Training(_) => ("iterations", "lower iterations or use fewer ranks"),
            _ => ("hosts", "use fewer hosts"),
        };
        return fail(
            format!("{key}.{at}"),
            format!("makes {flows} flows, more than the {MAX_FLOWS} aiccsim runs in one scenario; {fix}"),
        );
    }

    observe::check(s, topo, flows)
}

/// One workload's hosts and sizes on `hosts` hosts (a job's ranks), keyed under `workload`;
/// `noun` and `members` say what the numbers are ("host", "the topology has hosts"; "rank",
/// "job \"a\" has ranks").
fn check_workload(w: &WorkloadConfig, hosts: u32, noun: &str, members: &str) -> Check {
    let host_ok = |key: &str, h: u32| -> Check {
        if h >= hosts {
            fail(key, format!("{noun} {h} does not exist ({members} 0 to {})", hosts - 1))
        } else {
            Ok(())
        }
    };
    let set_ok = |key: &str, set: &HostSet, min: usize| -> Check {
        let v = set.members(hosts, noun, members).map_err(|m| (key.to_string(), m))?;
        if v.len() < min {
            return fail(key, format!("needs at least {min} hosts, got {}", v.len()));
        }
        Ok(())
    };
    match w {
        WorkloadConfig::Flows(list) => {
            for (i, f) in list.flows.iter().enumerate() {
                host_ok(&format!("workload.flows[{i}].src"), f.src)?;
                host_ok(&format!("workload.flows[{i}].dst"), f.dst)?;
            }
        }
        WorkloadConfig::Incast(w) => {
            host_ok("workload.receiver", w.receiver)?;
            set_ok("workload.senders", &w.senders, 1)?;
            if w.senders.expand(hosts).contains(&w.receiver) {
                return fail(
                    "workload.senders",
                    format!("includes the receiver {}, which would send to itself", w.receiver),
                );
            }
        }
        WorkloadConfig::AllToAll(w) => {
            set_ok("workload.hosts", &w.hosts, 2)?;
            let ranks = w.hosts.len(hosts);
            if !w.algorithm.fits(ranks, w.local_ranks) {
                return groups_do_not_fit("workload", ranks, w.local_ranks);
            }
        }
        WorkloadConfig::Permutation(w) => set_ok("workload.hosts", &w.hosts, 2)?,
        WorkloadConfig::AllReduce(w) => {
            set_ok("workload.hosts", &w.hosts, 2)?;
            let ranks = w.hosts.len(hosts);
            splits(w.size, ranks.saturating_mul(u64::from(w.chunks)), "pieces (ranks x chunks)")?;
            fits("workload.algorithm", w.algorithm, ranks, w.local_ranks)?;
        }
        WorkloadConfig::AllGather(w) | WorkloadConfig::ReduceScatter(w) => {
            set_ok("workload.hosts", &w.hosts, 2)?;
            splits(w.size, w.hosts.len(hosts).saturating_mul(u64::from(w.chunks)), "blocks (ranks x chunks)")?;
        }
        WorkloadConfig::SendRecv(w) => {
            for (i, pair) in w.pairs.iter().enumerate() {
                host_ok(&format!("workload.pairs[{i}]"), pair[0])?;
                host_ok(&format!("workload.pairs[{i}]"), pair[1])?;
            }
        }
        WorkloadConfig::Broadcast(w) => {
            set_ok("workload.hosts", &w.hosts, 2)?;
            if let Some(root) = w.root {
                host_ok("workload.root", root)?;
                if !w.hosts.expand(hosts).contains(&root) {
                    return fail(
                        "workload.root",
                        format!("host {root} is not one of the broadcast's hosts; add it to workload.hosts or pick a member"),
                    );
                }
            }
        }
        WorkloadConfig::Training(w) => training(w, hosts, &set_ok)?,
    }

    Ok(())
}

/// Whether a buffer of `size` splits into `ranks` pieces (`what`) of at least one byte each.
fn splits(size: ByteSize, ranks: u64, what: &str) -> Check {
    if size.0 >= ranks {
        return Ok(());
    }
    fail("workload.size", format!("{size} cannot be split into {ranks} {what} of at least 1 byte; raise the size"))
}

/// Whether all-reduce `algorithm` runs on `ranks` ranks (in groups of `local`).
fn fits(key: &str, algorithm: AllReduceAlgorithm, ranks: u64, local: Option<u32>) -> Check {
    if algorithm.fits(ranks, local) {
        return Ok(());
    }
    if algorithm == AllReduceAlgorithm::Hierarchical {
        let at = key.rsplit_once('.').map_or("workload", |(head, _)| head);
        let at = if at.starts_with("workload.layers") { "workload" } else { at };
        return groups_do_not_fit(at, ranks, local);
    }
    let (below, above) = (ranks.next_power_of_two() / 2, ranks.next_power_of_two());
    fail(
        key,
        format!("halving_doubling needs a power-of-two number of ranks, got {ranks}; use {below} or {above} ranks, or algorithm = \"ring\" or \"direct\""),
    )
}

/// A hierarchical collective's groups of `local` that do not divide its `ranks`; `at` is the
/// workload's key.
fn groups_do_not_fit(at: &str, ranks: u64, local: Option<u32>) -> Check {
    fail(
        format!("{at}.local_ranks"),
        format!(
            "hierarchical needs groups of local_ranks that divide the {ranks} ranks, got {}; set local_ranks to a divisor of {ranks} (the GPUs of a server), or choose another algorithm",
            local.map_or("none".to_string(), |g| g.to_string())
        ),
    )
}

/// The `training` workload: its ranks, and the compute steps it makes.
fn training(w: &crate::config::TrainingWorkload, hosts: u32, set_ok: &dyn Fn(&str, &HostSet, usize) -> Check) -> Check {
    set_ok("workload.hosts", &w.hosts, 2)?;
    let ranks = w.hosts.len(hosts);
    for (i, layer) in w.layers.iter().enumerate() {
        let key = |k: &str| format!("workload.layers[{i}].{k}");
        let pieces = ranks.saturating_mul(u64::from(w.chunks));
        if let Some(ar) = layer.all_reduce {
            if ar.size.0 > 0 && ar.size.0 < pieces {
                return fail(
                    key("all_reduce.size"),
                    format!(
                        "{} cannot be split into {pieces} pieces (ranks x chunks) of at least 1 byte; raise the size, or \"0B\" for no all-reduce",
                        ar.size
                    ),
                );
            }
            if ar.size.0 > 0 {
                fits(&key("all_reduce.algorithm"), ar.algorithm, ranks, w.local_ranks)?;
            }
        }
        let a2a = [layer.forward_all_to_all, layer.backward_all_to_all];
        if a2a.iter().flatten().any(|a| a.size.0 > 0 && !a.algorithm.fits(ranks, w.local_ranks)) {
            return groups_do_not_fit("workload", ranks, w.local_ranks);
        }
    }
    let steps = workload::training::count_computes(w, hosts);
    if steps > MAX_COMPUTE_STEPS {
        return fail(
            "workload.iterations",
            format!(
                "makes {steps} compute steps (3 per layer, rank and iteration), more than the {MAX_COMPUTE_STEPS} aiccsim runs in one scenario; lower iterations or use fewer layers or ranks"
            ),
        );
    }
    Ok(())
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
            event_limit: u64::MAX,
            scenario: scenario.clone(),
        };
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
        failures::queue(self, link_events);
        if self.params.sample_interval.is_some() {
            self.events.push(SimTime::ZERO, Event::Sample);
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
