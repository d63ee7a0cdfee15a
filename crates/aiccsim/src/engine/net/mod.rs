//! The fabric's moving parts, one file per mechanism: ports (serialiser + link), switches and
//! their shared buffer (counted in pools, `buffer.rs`), PFC or credits (`credit.rs`), ECN
//! marking, packet trimming on a lossy fabric (`trimming.rs`), routing among equal-cost paths
//! (ECMP, spray, adaptive, flowlets; DLB's sampled port quality, `dlb.rs`; CONGA's path
//! feedback, `conga.rs`), links that slow down, fail and come back, the telemetry switches
//! stamp, and the packet pool.

pub mod buffer;
pub(crate) mod conga;
pub mod credit;
pub(crate) mod dlb;
mod ecn;
pub mod failures;
pub mod pfc;
pub mod pool;
pub mod port;
pub mod routing;
pub mod switch;
pub mod telemetry;
mod trimming;

use crate::cc::Check;
use crate::config::{Routing, Scenario, Tier};
use crate::engine::Params;
use crate::rng::{self, SimRng};
use crate::topology::ecmp_ns3::{EcmpNs3, Ns3Numbering};
use crate::topology::Topology;
use crate::watch::{Stop, Watch};
use crate::wire::telemetry::Telemetry;
use crate::workload::FlowDef;
use pool::PacketPool;
use port::Port;
use routing::FlowletTable;
use switch::SwitchState;
use telemetry::{IntPool, PintState};

/// The fabric's state: every port and switch, the packets in it, and what its mechanisms keep
/// between packets (random streams, spraying turns, flowlet tables, link events, telemetry).
pub(crate) struct Network {
    pub(crate) ports: Vec<Port>,
    /// Each port's peer, packed (20 KB for 5000 ports): prefetching an arrival's receiving port
    /// from here does not wait for the sending port's cache line.
    pub(crate) peers: Vec<u32>,
    /// Prefetch for upcoming events: worth it only when the ports outgrow the caches.
    pub(crate) prefetching: bool,
    pub(crate) switches: Vec<SwitchState>,
    /// Every packet created and not yet consumed or dropped (queued, being sent, or on a link).
    pub(crate) packets: PacketPool,
    /// Per-switch random streams for ECN marking and for spraying.
    pub(crate) ecn_rng: Vec<SimRng>,
    pub(crate) spray_rng: Vec<SimRng>,
    /// Round-robin spraying: each equal-cost set's next turn, by set (`Topology::route_set`).
    pub(crate) round_robin: Vec<u32>,
    /// Per switch, its flowlet table (empty at switches that do not route by flowlet, or by
    /// CONGA with flowlets).
    pub(crate) flowlets: Vec<FlowletTable>,
    /// DLB's sampled port bands, when some switch routes by DLB.
    pub(crate) dlb: Option<Box<dlb::Dlb>>,
    /// CONGA's estimators and tables, when the leaves route by CONGA.
    pub(crate) conga: Option<Box<conga::Conga>>,
    /// The HPCC ns-3 simulator's tables, seeds and flow ports, when some switch routes by
    /// `"ecmp_ns3"` (set once the flows are known, [`Network::start_ecmp_ns3`]).
    pub(crate) ecmp_ns3: Option<Box<EcmpNs3>>,
    /// The link events and the links' state, when the scenario has `[[events]]`.
    pub(crate) links: Option<Box<failures::LinkEvents>>,
    /// INT stacks of the packets that carry one.
    pub(crate) int_pool: IntPool,
    /// Switch-side PINT state and its per-switch random streams (HPCC-PINT runs only; set once
    /// the flows' round trips are known, `telemetry::pint`).
    pub(crate) pint: Option<PintState>,
    pub(crate) pint_rng: Vec<SimRng>,
    /// The credit loop's state, under `switch.flow_control = "credit"`.
    pub(crate) credit: Option<Box<credit::Credits>>,
    /// Packets trimmed at each port (`trimming.rs`), by port; empty without trimming.
    pub(crate) trims: Vec<u64>,
}

impl Network {
    /// The fabric of `topo` as `scenario` configures it, with the link events to queue. Ticks
    /// `watch` once per port (steps `0..ports` of the setup's `steps`).
    pub(crate) fn build(
        topo: &Topology,
        scenario: &Scenario,
        params: &Params,
        watch: &mut Watch,
        steps: u64,
    ) -> Result<(Network, Vec<(crate::time::SimTime, u32)>), Stop> {
        let sw = &scenario.switch;
        let ports = port::build_ports(topo, sw, params.mtu + params.header, params.pause_size, watch, steps)?;
        let tiers = topo.switch_tiers();
        // CONGA is the leaves' choice: other switches hash, as in CONGA's fabric.
        let routing_of = |tier: Tier| match sw.routing.of(tier) {
            Routing::Conga if tier != Tier::Leaf => Routing::Ecmp,
            r => r,
        };
        let switches: Vec<SwitchState> = (0..topo.num_switches)
            .map(|s| match topo.is_nvswitch(s) {
                false => SwitchState::new(topo, topo.num_hosts + s, sw, &ports, routing_of(tiers[s as usize])),
                true => SwitchState::nvswitch(),
            })
            .collect();
        let routes = |r: Routing| -> Vec<bool> { switches.iter().map(|s| s.routing == r).collect() };
        let dlb = sw
            .routing
            .uses(Routing::Dlb)
            .then(|| Box::new(dlb::Dlb::new(&sw.dlb.unwrap_or_default(), topo, &ports, &routes(Routing::Dlb))));
        let conga_cfg = sw.conga.unwrap_or_default();
        let conga = (switches.iter().any(|s| s.routing == Routing::Conga))
            .then(|| Box::new(conga::Conga::new(&conga_cfg, topo, ports.len(), &routes(Routing::Conga))));
        // Sized once here: the hot path only reads and writes their entries.
        let slots = sw.flowlet.unwrap_or_default().slots;
        let flowlets = (switches.iter())
            .map(|s| match s.routing {
                Routing::Flowlet => FlowletTable::new(slots),
                Routing::Conga if conga_cfg.flowlet_gap > crate::time::SimTime::ZERO => {
                    FlowletTable::new(conga_cfg.flowlet_slots)
                }
                _ => FlowletTable::default(),
            })
            .collect();
        let (links, link_events) = match scenario.events.is_empty() {
            true => (None, Vec::new()),
            false => {
                let (links, queued) = failures::LinkEvents::new(scenario, topo);
                (Some(Box::new(links)), queued)
            }
        };
        let streams = |name| (0..topo.num_switches).map(|s| rng::stream(params.seed, name, s as u64)).collect();
        let int_pool = match params.telemetry {
            Telemetry::Int { max_hops, .. } => IntPool::new(max_hops),
            _ => IntPool::default(),
        };
        let net = Network {
            // About 600 B per port: past ~1000 ports the port array alone overflows a 512 KiB L2.
            prefetching: ports.len() > 1024,
            peers: ports.iter().map(|p| p.peer).collect(),
            ports,
            switches,
            packets: PacketPool::default(),
            ecn_rng: streams("switch.ecn"),
            spray_rng: streams("switch.spray"),
            round_robin: vec![0; topo.route_set_count()],
            flowlets,
            dlb,
            conga,
            ecmp_ns3: None,
            links,
            int_pool,
            pint: None,
            pint_rng: Vec::new(),
            credit: (sw.credit.filter(|_| params.credit))
                .map(|c| Box::new(credit::Credits::new(topo, &c, params.nic_data_packet()))),
            trims: if params.trimming { vec![0; topo.ports.len()] } else { Vec::new() },
        };
        Ok((net, link_events))
    }
}

impl Network {
    /// Lays out ns-3's routing if some switch routes by `"ecmp_ns3"`: its source ports are
    /// counted over `flows` in the workload's order (an imported twin's: the flow file's).
    pub(crate) fn start_ecmp_ns3(&mut self, topo: &Topology, scenario: &Scenario, flows: &[FlowDef]) {
        if !self.switches.iter().any(|s| s.routing == Routing::EcmpNs3) {
            return;
        }
        let c = scenario.switch.ecmp_ns3.clone().unwrap_or_default();
        let ids = Ns3Numbering {
            host_ids: &c.host_ids,
            switch_ids: &c.switch_ids,
            seed_offset: c.seed_offset,
            dport: c.dport,
        };
        self.ecmp_ns3 = Some(Box::new(EcmpNs3::new(topo, &ids, flows.iter().map(|d| (d.src, d.dst)))));
    }
}

/// The fabric against the scenario: ECN thresholds that some port can reach, PFC headroom that
/// leaves a shared buffer, routing tiers that exist, CONGA's uplinks within its tag, link events
/// on real links
/// (`max_packet`: the largest data packet's bytes).
pub(crate) fn check(s: &Scenario, topo: &Topology, max_packet: u64) -> Check {
    ecn::check(&s.switch, topo)?;
    pfc::check(&s.switch, topo, max_packet, s.nic.pause_size.0)?;
    routing::check_tiers(s, topo)?;
    routing::check_ecmp_ns3(s, topo)?;
    conga::check(s, topo)?;
    failures::check(s, topo)
}
