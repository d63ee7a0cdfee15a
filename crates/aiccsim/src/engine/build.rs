//! Assembling a run: the one place the fabric is built.
//!
//! A scenario arrives here having passed its own checks (`config/validate.rs`). [`Fabric::build`]
//! builds its topology once and runs the checks that need it: hosts and switches that must
//! exist, the NICs' speeds against the algorithm's rate floor, each switch's PFC headroom
//! against its buffer, and how many flows the workload makes. [`Simulation::with_fabric`] then
//! lays out the run on that fabric. Front ends that check a scenario before running it
//! (`aiccsim validate`, a sweep checking all its points first) build the fabric to check it;
//! a run builds it once.

use super::{Dependencies, Event, EventQueue, Params, RunControl, Simulation};
use crate::cc::{Check, FlowFacts, Telemetry};
use crate::config::{fail, ConfigError, Recovery, Scenario};
use crate::config::{Routing, RoutingConfig, Tier};
use crate::engine::net::failures::{self, LinkEvents};
use crate::engine::net::pfc::{port_headroom, total_headroom};
use crate::engine::net::pool::PacketPool;
use crate::engine::net::port::Port;
use crate::engine::net::routing::FlowletTable;
use crate::engine::net::switch::SwitchState;
use crate::engine::net::telemetry::{IntPool, PintPort, PintState};
use crate::engine::nic::clock::HostClocks;
use crate::engine::nic::host::HostState;
use crate::engine::nic::qp::Flow;
use crate::metrics::trace::Tracer;
use crate::metrics::{ideal_fct, Counters, DurationHistogram, Recorder};
use crate::rng;
use crate::time::{Bandwidth, SimTime};
use crate::topology::{routing, Topology};
use crate::watch::{BuildError, Phase, Stop, Watch};
use crate::wire::telemetry::PintCodec;
use crate::workload;

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
        // Again, in case the scenario was changed since it was parsed (it takes microseconds).
        crate::config::validate(scenario).map_err(invalid)?;
        let topo =
            Topology::build_watched(&scenario.topology, watch).map_err(|e| e.map_invalid(|e| scenario.error(e)))?;
        let (s, hosts) = (scenario, topo.fabric_hosts);
        let jobs =
            workload::jobs::plan(s.workload.as_ref(), &s.jobs, s.simulation.seed, hosts, s.topology.per_server())
                .map_err(invalid)?;
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

/// The speed of the slowest host's NIC (`None` for a fabric without hosts). NVLink ports are
/// not NICs: no congestion control runs on them.
fn slowest_nic(topo: &Topology) -> Option<Bandwidth> {
    (0..topo.fabric_hosts).map(|h| topo.ports[topo.host_port(h) as usize].bandwidth).min()
}

/// The checks that need the built fabric (and the jobs placed on it).
fn check(s: &Scenario, topo: &Topology, plans: &[workload::jobs::JobPlan]) -> Check {
    let nic = &s.nic;
    let algorithm = s.cc.as_algorithm();
    if let (Some(floor), Some(slowest)) = (algorithm.min_rate(), slowest_nic(topo)) {
        if floor > slowest {
            return fail("cc.min_rate", format!("{floor} is above the NIC speed {slowest}"));
        }
    }

    let sw = &s.switch;
    let max_packet = nic.mtu.0 + nic.header.0 + algorithm.extra_header_bytes().0;
    // The fastest round trip any data packet can make: out over the quickest host link to a
    // switch and back, and its ACK the same way. A timeout shorter than that fires on every
    // packet, which no one means.
    let quickest = (0..topo.fabric_hosts).map(|h| &topo.ports[topo.host_port(h) as usize]).min_by_key(|p| p.delay);
    if let Some(p) = quickest {
        let ack = nic.ack_size.0;
        let fastest = (p.delay + p.bandwidth.tx_time(max_packet)) + (p.delay + p.bandwidth.tx_time(ack));
        let round_trip = fastest + fastest;
        if nic.rto <= round_trip {
            return fail(
                "nic.rto",
                format!(
                    "{} expires before any ACK can come back (the quickest round trip through one switch is {round_trip}), so every packet would time out; RDMA NICs wait milliseconds, e.g. \"1ms\"",
                    nic.rto
                ),
            );
        }
    }
    // ECN thresholds scale with each port's speed: a reference speed that puts Kmin above the
    // buffer on every switch port turns marking off without a word. (A Kmin above a small
    // buffer as given is the scenario's own choice.) Every port: the slowest has the lowest
    // Kmin; NVSwitch ports never mark.
    if sw.ecn.enabled && sw.ecn.kmin <= sw.buffer {
        let slowest_port = topo.fabric_switch_ports().map(|p| p.bandwidth).min();
        if let Some(bw) = slowest_port {
            let kmin = sw.ecn.scaled(sw.ecn.kmin, bw);
            if kmin > sw.buffer.0 as u128 {
                return fail(
                    "switch.ecn.reference_bandwidth",
                    format!(
                        "scales kmin ({}) above the {} buffer on every switch port ({kmin} B on the slowest, {bw}), so no packet could ever be marked; give the port speed kmin and kmax are meant for (\"100Gbps\" for the HPCC study's 400KB / 1600KB), or ecn = {{ enabled = false }}",
                        sw.ecn.kmin, sw.buffer
                    ),
                );
            }
        }
    }
    if sw.pfc.enabled {
        for s in 0..topo.fabric_switches {
            let node = topo.num_hosts + s;
            let ports = topo.node_ports[node as usize].len();
            let headroom = total_headroom(topo, node, &sw.pfc, max_packet, nic.pause_size.0);
            let reserve = sw.pfc.reserve.0.saturating_mul(ports as u64);
            if headroom.saturating_add(reserve) >= sw.buffer.0 {
                let key = if reserve >= headroom { "switch.pfc.reserve" } else { "switch.pfc.headroom" };
                return fail(
                    key,
                    format!(
                        "switch {s} sets apart {} of headroom and {} of reserve over its {ports} ports, leaving nothing of its {} buffer to share; raise switch.buffer or lower switch.pfc.headroom or switch.pfc.reserve",
                        crate::time::format_bytes(headroom),
                        crate::time::format_bytes(reserve),
                        sw.buffer
                    ),
                );
            }
        }
    }

    // Routing by tier: a tier the scenario names must have switches.
    if let RoutingConfig::Tiers(named) = &sw.routing {
        let tiers = topo.switch_tiers();
        let fabric = &tiers[..topo.fabric_switches as usize];
        for tier in Tier::ALL {
            if named.named(tier).is_some() && !fabric.contains(&tier) {
                let has: Vec<&str> = Tier::ALL.iter().filter(|t| fabric.contains(t)).map(|t| t.name()).collect();
                return fail(
                    format!("switch.routing.{}", tier.name()),
                    format!(
                        "this {} topology has no {} switches (its tiers: {}); remove it, or name one of those",
                        s.topology.kind(),
                        tier.name(),
                        has.join(", ")
                    ),
                );
            }
        }
    }
    // Link events: their links, and hosts that stay connected.
    failures::check(s, topo)?;

    // Workload: every job's ranks, and each of its workloads on them (each kind's own checks).
    let flows = workload::jobs::check(plans, MAX_FLOWS)?;

    // Output.
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
        let topo = fabric.topo;
        // The ports, then four passes over the flows: their start groups and connections, their
        // state, their connections' state, their start events. Each pass checks for a stop:
        // with two million flows each takes a quarter of a second or more.
        let setup_steps = (topo.ports.len() + 4 * fabric.work.flows.len()) as u64;
        let nic = &scenario.nic;
        let sw = &scenario.switch;
        let algorithm = scenario.cc.as_algorithm();
        let telemetry = algorithm.telemetry();
        let (data_extra, ack_extra) = algorithm.extra_header_bytes();
        let selective = nic.recovery == Recovery::Selective;
        // Selective ACKs and NACKs carry a block (`wire/packet.rs`).
        let block_bytes = if selective { crate::engine::nic::selective::BLOCK_HEADER_BYTES } else { 0 };
        let params = Params {
            mtu: nic.mtu.0,
            header: nic.header.0 + data_extra,
            base_header: nic.header.0,
            ack_size: (nic.ack_size.0 + ack_extra + block_bytes) as u32,
            nack_size: (nic.ack_size.0 + block_bytes) as u32,
            cnp_size: nic.cnp_size.0 as u32,
            pause_size: nic.pause_size.0 as u32,
            ack_every: nic.ack_every,
            rto: nic.rto,
            nack_interval: nic.nack_interval,
            data_priority: nic.data_priority,
            recovery: nic.recovery,
            reorder_window: nic.reorder_window,
            track_bytes: if selective { nic.sack_bitmap as u64 * nic.mtu.0 } else { u64::MAX },
            egress_alpha: sw.egress_alpha,
            pfc_static_xoff: sw.pfc.xoff.map(|x| x.0),
            pfc_alpha: sw.pfc.dynamic_alpha,
            xon_delta: sw.pfc.xon_delta.0,
            ecn_pmax: sw.ecn.pmax,
            ecn_at_dequeue: sw.ecn.mark_at == crate::config::MarkPoint::Dequeue,
            flowlet_gap: sw.flowlet.unwrap_or_default().gap,
            flowlet_pick: sw.flowlet.unwrap_or_default().pick,
            tx_hooks: scenario.output.trace.is_some() || !scenario.events.is_empty(),
            seed: scenario.simulation.seed,
            // Events at `SimTime::MAX` are the ones whose time saturated ("never", see
            // `SimTime`'s addition): the run ends just before them, as at a stop time.
            stop_time: scenario.simulation.stop_time.unwrap_or(SimTime::MAX).min(SimTime(u64::MAX - 1)),
            tracing: scenario.output.trace.is_some(),
            sample_interval: scenario.output.sample_interval,
            warmup: scenario.output.warmup.unwrap_or(SimTime::ZERO),
            telemetry,
        };
        let int_pool = match telemetry {
            Telemetry::Int { max_hops, .. } => IntPool::new(max_hops),
            _ => IntPool::default(),
        };
        let max_packet = params.mtu + params.header;
        // Each port's place among its node's ports, read off the lists in one pass: searching a
        // star switch's million ports for each of them took minutes.
        let mut local_of = vec![0u32; topo.ports.len()];
        for own in &topo.node_ports {
            for (local, &p) in own.iter().enumerate() {
                local_of[p as usize] = local as u32;
            }
        }
        // Filled in place: collecting through a `Result` would grow the vector by doubling, and
        // a million-host fabric's ports are over a gigabyte.
        let mut ports: Vec<Port> = Vec::with_capacity(topo.ports.len());
        for (i, info) in topo.ports.iter().enumerate() {
            watch.tick(Phase::Setup, i as u64, setup_steps)?;
            let nvswitch = !topo.is_host(info.node) && topo.is_nvswitch(info.node - topo.num_hosts);
            let mut port = Port::new(info, local_of[i], topo.is_host(info.node), (!nvswitch).then_some(&sw.ecn));
            if !topo.is_host(info.node) && !nvswitch {
                port.headroom = port_headroom(info, &sw.pfc, max_packet, params.pause_size as u64);
            }
            ports.push(port);
        }
        let tiers = topo.switch_tiers();
        let switches: Vec<SwitchState> = (0..topo.num_switches)
            .map(|s| {
                let node = topo.num_hosts + s;
                match topo.is_nvswitch(s) {
                    false => SwitchState::new(&topo, node, sw, &ports, sw.routing.of(tiers[s as usize])),
                    true => SwitchState::nvswitch(),
                }
            })
            .collect();
        // Flowlet tables where switches route by flowlet, sized once here: the hot path only
        // reads and writes their entries.
        let slots = sw.flowlet.unwrap_or_default().slots;
        let flowlets = (switches.iter())
            .map(|s| match s.routing {
                Routing::Flowlet => FlowletTable::new(slots),
                _ => FlowletTable::default(),
            })
            .collect();
        let round_robin = vec![0; topo.route_set_count()];
        let (links, link_events) = match scenario.events.is_empty() {
            true => (None, Vec::new()),
            false => {
                let (links, queued) = LinkEvents::new(scenario, &topo);
                (Some(Box::new(links)), queued)
            }
        };
        let ecn_rng = (0..topo.num_switches).map(|s| rng::stream(params.seed, "switch.ecn", s as u64)).collect();
        let spray_rng = (0..topo.num_switches).map(|s| rng::stream(params.seed, "switch.spray", s as u64)).collect();
        let hosts = (0..topo.num_hosts).map(|_| HostState::default()).collect();

        let mut work = fabric.work;
        // Transfers between GPUs of one server go over NVLink: between their NVLink ports.
        if topo.has_nvlink() {
            for d in work.flows.iter_mut() {
                (d.src, d.dst) = topo.endpoints(d.src, d.dst);
            }
        }
        // NVLink is lossless and credit-flow-controlled: no congestion control of the NIC's
        // runs on it, so its transfers send at the link's rate.
        let nvlink_cc = crate::cc::CcConfig::None(Default::default());
        let defs = &work.flows;
        let mut flows = Vec::with_capacity(defs.len());
        let mut ccs = Vec::with_capacity(defs.len());
        let mut receivers = Vec::with_capacity(defs.len());
        let mut all_facts = Vec::with_capacity(defs.len());
        let mut groups: std::collections::BTreeMap<(u32, SimTime), u32> = Default::default();
        let mut start_group = vec![u32::MAX; defs.len()];
        let mut group_unstarted = Vec::new();
        let deps = Dependencies::new(defs, &work.computes);
        // Connections: flows of one job with the same endpoints and connection number ride the
        // queue pair of the first of them (whose id names the connection), with its path.
        let persistent = nic.connections == crate::config::Connections::Persistent;
        let mut first_of: std::collections::HashMap<(u32, u32, u32, u32), u32> = Default::default();
        let mut conn_of: Vec<u32> = Vec::with_capacity(defs.len());
        for (id, d) in defs.iter().enumerate() {
            watch.tick(Phase::Setup, (ports.len() + id) as u64, setup_steps)?;
            conn_of.push(match (persistent, d.connection) {
                (true, Some(k)) => *first_of.entry((d.job, d.src, d.dst, k)).or_insert(id as u32),
                _ => id as u32,
            });
            if deps.flow_ready(id as u32) {
                let next = groups.len() as u32;
                let g = *groups.entry((d.dst, d.start)).or_insert(next);
                if g == next {
                    group_unstarted.push(0);
                }
                group_unstarted[g as usize] += 1;
                start_group[id] = g;
            }
        }
        let mut messages = vec![0u32; defs.len()];
        for &c in &conn_of {
            messages[c as usize] += 1;
        }
        let mut largest_base_rtt = SimTime::ZERO;
        for (id, d) in defs.iter().enumerate() {
            watch.tick(Phase::Setup, (ports.len() + defs.len() + id) as u64, setup_steps)?;
            let conn = conn_of[id];
            let key = routing::flow_key(params.seed, conn);
            let path = topo.path(d.src, d.dst, key);
            let back = topo.path(d.dst, d.src, key);
            // The ideal is the same for every algorithm: telemetry headers count against it.
            let ideal = ideal_fct(&topo, &path, d.size, params.mtu, nic.header.0);
            let base_rtt = topo.path_latency(&path, max_packet) + topo.path_latency(&back, params.ack_size as u64);
            largest_base_rtt = largest_base_rtt.max(base_rtt);
            let one_way_baseline = topo.path_latency(&path, max_packet);
            let facts = FlowFacts {
                flow: conn,
                line_rate: topo.ports[topo.host_port(d.src) as usize].bandwidth,
                base_rtt,
                hops: path.len() as u32 - 1,
                one_way_baseline,
                receiver_line_rate: topo.ports[topo.host_port(d.dst) as usize].bandwidth,
                mtu: params.mtu,
                packet_bytes: max_packet,
                collective: d.collective.map(|c| (c.kind, c.group_size)),
            };
            let mut flow = Flow::new(id as u32, d, key, ideal, params.data_priority);
            flow.one_way_baseline = one_way_baseline;
            flow.nvlink = topo.is_nvlink_port(d.src);
            flow.conn = conn;
            flow.shared = messages[conn as usize] > 1;
            let flow_algorithm = if flow.nvlink { nvlink_cc.as_algorithm() } else { algorithm };
            flows.push(flow);
            ccs.push(flow_algorithm.sender(&facts));
            receivers.push(flow_algorithm.receiver(&facts));
            all_facts.push(facts);
        }
        // Probing flows, if the algorithm probes: NVLink transfers run no algorithm of the NIC's.
        let intervals: Vec<SimTime> = (all_facts.iter().zip(&flows))
            .map(|(facts, flow)| match flow.nvlink {
                true => SimTime::ZERO,
                false => algorithm.rtt_probe_interval(facts).unwrap_or(SimTime::ZERO),
            })
            .collect();
        let probes = intervals
            .iter()
            .any(|&i| i > SimTime::ZERO)
            .then(|| Box::new(crate::engine::nic::probe::Probes::new(intervals, nic.probe_loss, params.seed)));
        let (pint, pint_rng) = match telemetry {
            Telemetry::Pint { log_base, switch_period, .. } => {
                let period = switch_period.unwrap_or(largest_base_rtt);
                let state = PintState {
                    codec: PintCodec::new(log_base),
                    period,
                    ports: vec![PintPort::default(); ports.len()],
                };
                let rngs = (0..topo.num_switches).map(|s| rng::stream(params.seed, "switch.pint", s as u64)).collect();
                (Some(state), rngs)
            }
            _ => (None, Vec::new()),
        };
        let recorder = Recorder::new(&scenario.output, topo.num_switches, ports.len(), flows.len());
        let tracer = scenario.output.trace.as_ref().map(|t| Box::new(Tracer::new(t, &topo, flows.len())));
        let topo_hosts = topo.num_hosts;
        let clocks = HostClocks::new(&scenario.clocks, topo_hosts, params.seed);
        let first_conn_step = (ports.len() + 2 * defs.len()) as u64;
        let mut conns = Vec::with_capacity(defs.len());
        for id in 0..defs.len() {
            watch.tick(Phase::Setup, first_conn_step + id as u64, setup_steps)?;
            conns.push(Default::default());
        }
        let mut sim = Simulation {
            now: SimTime::ZERO,
            events: EventQueue::with_capacity(1024 + flows.len()),
            topo,
            params,
            ports,
            switches,
            hosts,
            flows,
            conns,
            ccs,
            receivers,
            facts: all_facts,
            packets: PacketPool::default(),
            counters: Counters::default(),
            recorder,
            flows_done: 0,
            flows_started: 0,
            bytes_delivered: 0,
            // Fabric::build refused a workload whose sizes overflow this.
            bytes_total: defs.iter().map(|d| d.size).sum(),
            progress_at: SimTime::ZERO,
            ecn_rng,
            spray_rng,
            round_robin,
            flowlets,
            links,
            deps,
            collectives: std::mem::take(&mut work.collectives),
            training: std::mem::take(&mut work.training),
            jobs: std::mem::take(&mut work.jobs),
            incoming_flows: vec![0; topo_hosts as usize],
            start_group,
            group_unstarted,
            incoming_seen: vec![0; topo_hosts as usize],
            clocks,
            rtts: DurationHistogram::default(),
            queuing: DurationHistogram::default(),
            int_pool,
            sack: crate::engine::nic::selective::Scoreboards::new(nic.sack_bitmap),
            losses: Vec::new(),
            probes,
            pint,
            pint_rng,
            prefetching: false,
            peers: Vec::new(),
            tracer,
            control: RunControl::default(),
            event_limit: u64::MAX,
            warnings: Vec::new(),
            scenario: scenario.clone(),
        };
        // About 600 B per port: past ~1000 ports the port array alone overflows a 512 KiB L2.
        sim.prefetching = sim.ports.len() > 1024;
        sim.peers = sim.ports.iter().map(|p| p.peer).collect();
        let first_start_step = first_conn_step + defs.len() as u64;
        for (f, def) in defs.iter().enumerate() {
            watch.tick(Phase::Setup, first_start_step + f as u64, setup_steps)?;
            if sim.deps.flow_ready(f as u32) {
                let start = sim.flows[f].start;
                sim.events.push(start, Event::FlowStart(f as u32));
            }
            if let Some(stop) = def.stop {
                sim.events.push(stop, Event::FlowStop(f as u32));
            }
        }
        sim.start_ready_computes();
        failures::queue(&mut sim, &link_events);
        if sim.params.sample_interval.is_some() {
            sim.events.push(SimTime::ZERO, Event::Sample);
        }
        sim.warnings = sim.find_warnings();
        watch.at(Phase::Setup, setup_steps, setup_steps)?;
        Ok(sim)
    }
}
