//! The simulation: all state in flat arenas, one event loop.
//!
//! [`Simulation`] owns every port, switch, host and flow in `Vec`s addressed by `u32` indices.
//! Behaviour is split by concept across files, each an `impl Simulation` block:
//! `net/port.rs` (serialisation and propagation), `net/switch.rs` (buffer, PFC, ECN, routing),
//! `nic/host.rs` (the NIC scheduler and receive path), `nic/qp.rs` (per-flow transport state).
//!
//! A busy port has one pending wake-up (end of its serialisation, or its NIC's next pacer time)
//! and one arrival per packet on its link, so the queue holds about the busy ports plus the
//! packets in flight on links.

mod dependencies;
pub mod net;
pub mod nic;
mod queue;
mod stop;
mod timers;

pub use dependencies::ComputeStep;
pub(crate) use dependencies::Dependencies;
pub use queue::EventQueue;
pub use stop::{PausedPort, RunControl, StallReport, StopReason};
pub use timers::TimerSlot;

use crate::cc::{CcConfig, CcContext, CongestionControl, FlowFacts, Receiver, Telemetry, MAX_TIMERS};
use crate::config::{ConfigError, Routing, Scenario};
use crate::engine::net::pool::{PacketId, PacketPool};
use crate::engine::net::port::Port;
use crate::engine::net::switch::SwitchState;
use crate::engine::net::telemetry::{IntPool, PintPort, PintState};
use crate::engine::nic::clock::HostClocks;
use crate::engine::nic::host::HostState;
use crate::engine::nic::qp::Flow;
use crate::metrics::trace::Tracer;
use crate::metrics::{ideal_fct, DurationHistogram, Recorder, Results};
use crate::rng::{self, SimRng};
use crate::time::{pacing_gap, SimTime};
use crate::topology::{routing, Topology};
use crate::wire::packet::NUM_PRIORITIES;
use crate::wire::telemetry::PintCodec;
use crate::workload;

/// Everything the event loop can be asked to do. Small and `Copy`: no boxing per event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port may be able to send (port, generation).
    PortWake(u32, u32),
    /// A packet sent on a port reaches the peer (port, packet).
    Arrive(u32, u32),
    FlowStart(u32),
    /// A flow's sender stops taking new data.
    FlowStop(u32),
    /// A compute step ends.
    ComputeDone(u32),
    /// Congestion-control timer (flow, slot, generation).
    CcTimer(u32, u8, u32),
    /// Retransmission timeout check (flow, generation).
    Rto(u32, u32),
    /// Record a timeline sample.
    Sample,
}

/// Derived per-run parameters the hot path reads.
pub(crate) struct Params {
    pub mtu: u64,
    /// Header bytes of a data packet, telemetry included.
    pub header: u64,
    /// The NIC's own header bytes (what ideal FCTs count).
    pub base_header: u64,
    /// ACK bytes, telemetry echo included.
    pub ack_size: u32,
    /// NACK bytes (no telemetry).
    pub nack_size: u32,
    pub cnp_size: u32,
    pub pause_size: u32,
    pub ack_every: u32,
    pub rto: SimTime,
    pub nack_interval: SimTime,
    pub data_priority: u8,
    pub buffer: u64,
    pub pfc_enabled: bool,
    pub pfc_static_xoff: Option<u64>,
    pub pfc_alpha: f64,
    pub xon_delta: u64,
    pub ecn_enabled: bool,
    pub ecn_pmax: f64,
    pub ecn_at_dequeue: bool,
    pub routing: Routing,
    pub seed: u64,
    pub stop_time: SimTime,
    /// A per-packet trace is on (`tracer` is set).
    pub tracing: bool,
    pub sample_interval: Option<SimTime>,
    /// RTT and queuing-delay samples before this time are not recorded (`output.warmup`).
    pub warmup: SimTime,
    /// Feedback switches add to data packets (set by the algorithm).
    pub telemetry: Telemetry,
}

/// Progress of a run, reported to an observer every so often.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub now: SimTime,
    pub flows_done: usize,
    pub flows_total: usize,
    pub events: u64,
}

/// Run-wide counters.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub events: u64,
    /// Packets serialised onto a link: data, ACK, NACK, CNP and PFC alike.
    pub packet_hops: u64,
    pub data_bytes_sent: u64,
    pub data_bytes_received: u64,
    pub data_bytes_dropped: u64,
    pub data_packets_sent: u64,
    /// Payload bytes of the data packets sent (retransmissions included).
    pub data_payload_sent: u64,
    pub retransmitted_bytes: u64,
    pub packets_dropped: u64,
    pub ecn_marks: u64,
    pub pause_frames: u64,
    pub resume_frames: u64,
    pub cnps: u64,
    pub acks: u64,
    /// ACKs that carried telemetry (INT records or PINT feedback).
    pub feedback_acks: u64,
    pub nacks: u64,
    pub timeouts: u64,
}

pub struct Simulation {
    pub(crate) now: SimTime,
    pub(crate) events: EventQueue,
    pub(crate) topo: Topology,
    pub(crate) params: Params,
    pub(crate) ports: Vec<Port>,
    pub(crate) switches: Vec<SwitchState>,
    pub(crate) hosts: Vec<HostState>,
    pub(crate) flows: Vec<Flow>,
    pub(crate) ccs: Vec<crate::cc::Cc>,
    pub(crate) receivers: Vec<Receiver>,
    /// What each flow's algorithm was told about its path.
    facts: Vec<FlowFacts>,
    /// Every packet created and not yet consumed or dropped (queued, being sent, or on a link).
    pub(crate) packets: PacketPool,
    pub(crate) counters: Counters,
    pub(crate) recorder: Recorder,
    pub(crate) flows_done: usize,
    pub(crate) flows_started: usize,
    /// The last time a flow moved (started, or had a byte delivered or acknowledged in order):
    /// what stall detection measures from.
    pub(crate) progress_at: SimTime,
    /// Per-switch random streams for ECN marking and for spraying.
    pub(crate) ecn_rng: Vec<SimRng>,
    pub(crate) spray_rng: Vec<SimRng>,
    /// What waits for what (flows and compute steps), and the compute steps' progress.
    pub(crate) deps: Dependencies,
    /// Which steps and flows make up which training iteration (`training` workloads only).
    training: Option<workload::training::Layout>,
    /// Per host: flows into it that have started and are not delivered (a controller's view),
    /// and those of them it has seen a packet of (its own view).
    pub(crate) incoming_flows: Vec<u32>,
    pub(crate) incoming_seen: Vec<u32>,
    /// Flows that start together towards the same receiver (no dependencies, same start time)
    /// form a group; a controller knows the whole group when its first member starts.
    pub(crate) start_group: Vec<u32>,
    pub(crate) group_unstarted: Vec<u32>,
    /// The hosts' clocks (one-way delay measurement).
    pub(crate) clocks: HostClocks,
    /// Every ACK's RTT and every full data packet's one-way queuing delay (from the warm-up on).
    pub(crate) rtts: DurationHistogram,
    pub(crate) queuing: DurationHistogram,
    /// INT stacks of the packets that carry one.
    pub(crate) int_pool: IntPool,
    /// Switch-side PINT state and its per-switch random streams (HPCC-PINT runs only).
    pub(crate) pint: Option<PintState>,
    pub(crate) pint_rng: Vec<SimRng>,
    /// Prefetch for upcoming events: worth it only when the ports outgrow the caches.
    prefetching: bool,
    /// Each port's peer, packed (20 KB for 5000 ports): prefetching an arrival's receiving port
    /// from here does not wait for the sending port's cache line.
    peers: Vec<u32>,
    /// The per-packet trace, when the scenario asks for one.
    pub(crate) tracer: Option<Box<Tracer>>,
    control: RunControl,
    /// The run stops after this many events (see [`Simulation::set_event_limit`]).
    event_limit: u64,
    scenario: Scenario,
}

impl Simulation {
    /// Builds the fabric, the flows and their congestion control from a validated scenario.
    pub fn new(scenario: &Scenario) -> Result<Simulation, ConfigError> {
        let as_err = |(key, message): (String, String)| ConfigError { file: "scenario".into(), key, message };
        let topo = Topology::build(&scenario.topology).map_err(as_err)?;
        let nic = &scenario.nic;
        let sw = &scenario.switch;
        let telemetry = scenario.cc.telemetry();
        let (data_extra, ack_extra) = scenario.cc.extra_header_bytes();
        let params = Params {
            mtu: nic.mtu.0,
            header: nic.header.0 + data_extra,
            base_header: nic.header.0,
            ack_size: (nic.ack_size.0 + ack_extra) as u32,
            nack_size: nic.ack_size.0 as u32,
            cnp_size: nic.cnp_size.0 as u32,
            pause_size: nic.pause_size.0 as u32,
            ack_every: nic.ack_every,
            rto: nic.rto,
            nack_interval: nic.nack_interval,
            data_priority: nic.data_priority,
            buffer: sw.buffer.0,
            pfc_enabled: sw.pfc.enabled,
            pfc_static_xoff: sw.pfc.xoff.map(|x| x.0),
            pfc_alpha: sw.pfc.dynamic_alpha,
            xon_delta: sw.pfc.xon_delta.0,
            ecn_enabled: sw.ecn.enabled,
            ecn_pmax: sw.ecn.pmax,
            ecn_at_dequeue: sw.ecn.mark_at == crate::config::MarkPoint::Dequeue,
            routing: sw.routing,
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
        let ports: Vec<Port> = topo
            .ports
            .iter()
            .enumerate()
            .map(|(i, info)| {
                let local = topo.node_ports[info.node as usize].iter().position(|&p| p as usize == i).unwrap_or(0);
                Port::new(info, local as u32, topo.is_host(info.node), &sw.ecn)
            })
            .collect();
        let switches: Vec<SwitchState> = (0..topo.num_switches)
            .map(|s| {
                let node = topo.num_hosts + s;
                SwitchState::new(&topo, node, &sw.pfc, sw.buffer.0, max_packet, params.pause_size as u64)
            })
            .collect();
        let ecn_rng = (0..topo.num_switches).map(|s| rng::stream(params.seed, "switch.ecn", s as u64)).collect();
        let spray_rng = (0..topo.num_switches).map(|s| rng::stream(params.seed, "switch.spray", s as u64)).collect();
        let hosts = (0..topo.num_hosts).map(|_| HostState::default()).collect();

        let mut work = workload::expand(&scenario.workload, topo.num_hosts, params.seed);
        let defs = &work.flows;
        let mut flows = Vec::with_capacity(defs.len());
        let mut ccs = Vec::with_capacity(defs.len());
        let mut receivers = Vec::with_capacity(defs.len());
        let mut all_facts = Vec::with_capacity(defs.len());
        let mut groups: std::collections::BTreeMap<(u32, SimTime), u32> = Default::default();
        let mut start_group = vec![u32::MAX; defs.len()];
        let mut group_unstarted = Vec::new();
        let deps = Dependencies::new(defs, &work.computes);
        for (id, d) in defs.iter().enumerate() {
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
        let mut largest_base_rtt = SimTime::ZERO;
        for (id, d) in defs.iter().enumerate() {
            let key = routing::flow_key(params.seed, id as u32);
            let path = topo.path(d.src, d.dst, key);
            let back = topo.path(d.dst, d.src, key);
            // The ideal is the same for every algorithm: telemetry headers count against it.
            let ideal = ideal_fct(&topo, &path, d.size, params.mtu, nic.header.0);
            let base_rtt = topo.path_latency(&path, max_packet) + topo.path_latency(&back, params.ack_size as u64);
            largest_base_rtt = largest_base_rtt.max(base_rtt);
            let one_way_baseline = topo.path_latency(&path, max_packet);
            let facts = FlowFacts {
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
            flows.push(flow);
            ccs.push(scenario.cc.sender(&facts));
            receivers.push(scenario.cc.receiver(&facts));
            all_facts.push(facts);
        }
        let (pint, pint_rng) = match (telemetry, &scenario.cc) {
            (Telemetry::Pint { log_base, .. }, CcConfig::HpccPint(c)) => {
                let period = c.switch_period.unwrap_or(largest_base_rtt);
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
        let recorder = Recorder::new(&scenario.output, &topo, flows.len());
        let tracer = scenario.output.trace.as_ref().map(|t| Box::new(Tracer::new(t, &topo, flows.len())));
        let topo_hosts = topo.num_hosts;
        let clocks = HostClocks::new(&scenario.clocks, topo_hosts, params.seed);
        let mut sim = Simulation {
            now: SimTime::ZERO,
            events: EventQueue::with_capacity(1024 + flows.len()),
            topo,
            params,
            ports,
            switches,
            hosts,
            flows,
            ccs,
            receivers,
            facts: all_facts,
            packets: PacketPool::default(),
            counters: Counters::default(),
            recorder,
            flows_done: 0,
            flows_started: 0,
            progress_at: SimTime::ZERO,
            ecn_rng,
            spray_rng,
            deps,
            training: work.training.take(),
            incoming_flows: vec![0; topo_hosts as usize],
            start_group,
            group_unstarted,
            incoming_seen: vec![0; topo_hosts as usize],
            clocks,
            rtts: DurationHistogram::default(),
            queuing: DurationHistogram::default(),
            int_pool,
            pint,
            pint_rng,
            prefetching: false,
            peers: Vec::new(),
            tracer,
            control: RunControl::default(),
            event_limit: u64::MAX,
            scenario: scenario.clone(),
        };
        // About 600 B per port: past ~1000 ports the port array alone overflows a 512 KiB L2.
        sim.prefetching = sim.ports.len() > 1024;
        sim.peers = sim.ports.iter().map(|p| p.peer).collect();
        for (f, def) in defs.iter().enumerate() {
            if sim.deps.flow_ready(f as u32) {
                let start = sim.flows[f].start;
                sim.events.push(start, Event::FlowStart(f as u32));
            }
            if let Some(stop) = def.stop {
                sim.events.push(stop, Event::FlowStop(f as u32));
            }
        }
        sim.start_ready_computes();
        if sim.params.sample_interval.is_some() {
            sim.events.push(SimTime::ZERO, Event::Sample);
        }
        Ok(sim)
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    pub fn algorithm(&self) -> &CcConfig {
        &self.scenario.cc
    }

    /// Stops the run after `events` events, as a stop time would (the results are partial). A
    /// stop time bounds simulated time, not work: a scenario with picosecond timers or links can
    /// take hours of wall time in a microsecond, and a fuzzer or a smoke test needs both bounds.
    pub fn set_event_limit(&mut self, events: u64) {
        self.event_limit = events;
    }

    /// Flows in the run.
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }

    /// What flow `f`'s algorithm knows about its path (to build a custom algorithm for it).
    pub fn flow_facts(&self, f: u32) -> FlowFacts {
        self.facts[f as usize]
    }

    /// Replaces flow `f`'s algorithm, both halves, before the run (Rust API: plug in an algorithm
    /// of your own through [`crate::cc::Cc::Custom`] and [`Receiver::Custom`]). Extra header bytes
    /// stay those of the scenario's `[cc]`.
    pub fn set_flow_algorithm(&mut self, f: u32, sender: crate::cc::Cc, receiver: Receiver) {
        assert!(self.now == SimTime::ZERO && self.counters.events == 0, "algorithms are set before the run");
        self.ccs[f as usize] = sender;
        self.receivers[f as usize] = receiver;
    }

    /// Lets the run be ended from outside (an interrupt flag, a wall-clock budget).
    pub fn set_control(&mut self, control: RunControl) {
        self.control = control;
    }

    /// Runs to completion: every flow delivered and acknowledged and every packet drained from
    /// the network; or until the stop time, a stall, or a stop from outside ([`RunControl`]),
    /// which leave the results partial. `observe` is called about every 2^16 events.
    pub fn run(mut self, observe: &mut dyn FnMut(Progress)) -> Results {
        let wall = std::time::Instant::now();
        let total = self.flows.len();
        let stall_timeout = (self.scenario.simulation.stall_timeout)
            .unwrap_or_else(|| crate::config::SimulationConfig::default_stall_timeout(&self.scenario.nic));
        let mut reason = StopReason::Completed;
        loop {
            let Some((t, ev)) = self.events.pop() else {
                if self.flows_done < total || self.deps.computes_left > 0 {
                    reason = StopReason::Stalled; // nothing left that could move them
                }
                break;
            };
            if t > self.params.stop_time {
                reason = StopReason::StopTime;
                self.now = self.params.stop_time;
                break;
            }
            if t - self.progress_at > stall_timeout && !matches!(ev, Event::FlowStart(_)) {
                if self.flows_started > self.flows_done {
                    reason = StopReason::Stalled;
                    self.now = self.progress_at + stall_timeout;
                    break;
                }
                // Nothing was running, so nothing was stuck: the quiet time was idle time.
                self.progress_at = t;
            }
            self.now = t;
            self.counters.events += 1;
            if self.prefetching {
                let (next, after) = self.events.peek_two();
                if let Some(next) = next {
                    self.prefetch_data(next);
                }
                if let Some(after) = after {
                    self.prefetch(after);
                }
            }
            self.dispatch(ev);
            // (The compute steps are checked last: that costs nothing while flows are running.)
            if self.flows_done == total && self.packets.in_use() == 0 && self.deps.computes_left == 0 {
                break;
            }
            if self.counters.events >= self.event_limit {
                reason = StopReason::EventLimit;
                break;
            }
            if self.counters.events & 0xFFFF == 0 {
                observe(Progress {
                    now: self.now,
                    flows_done: self.flows_done,
                    flows_total: total,
                    events: self.counters.events,
                });
                if let Some(outside) = self.control.should_stop(wall) {
                    reason = outside;
                    break;
                }
            }
        }
        observe(Progress {
            now: self.now,
            flows_done: self.flows_done,
            flows_total: total,
            events: self.counters.events,
        });
        let wall_seconds = wall.elapsed().as_secs_f64();
        let stall =
            (reason == StopReason::Stalled).then(|| self.diagnose_stall(self.progress_at, total - self.flows_done));
        debug_assert!(
            self.packets.in_use() > 0 || self.int_pool.in_use() == 0,
            "INT slots leaked: {} in use with no packet in the network",
            self.int_pool.in_use()
        );
        crate::metrics::collect(
            self.scenario,
            self.topo,
            self.flows,
            self.ports,
            self.counters,
            self.recorder,
            self.now,
            (reason, stall),
            self.packets.in_use() as u64,
            self.switches.iter().map(|s| s.max_used).max().unwrap_or(0),
            self.events.max_len,
            (self.rtts, self.queuing),
            (self.deps.computes, self.training),
            self.tracer.map(|t| *t),
            wall_seconds,
        )
    }

    /// Starts loading what the event after next will touch while this one is handled (its
    /// port; for an arrival also the receiving port and the packet): on large fabrics nearly
    /// every event reaches a port and a packet no recent event touched, and the wait for them
    /// dominates the run time.
    #[inline]
    fn prefetch(&self, ev: Event) {
        #[cfg(target_arch = "x86_64")]
        if let Event::Arrive(p, _) | Event::PortWake(p, _) = ev {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let port = &self.ports[p as usize];
            let at = port as *const crate::engine::net::port::Port as *const i8;
            // SAFETY: a prefetch is only a hint; it never faults and never changes memory, and
            // SSE is part of the x86_64 baseline.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(at);
                _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(64));
                if let Event::Arrive(_, id) = ev {
                    let peer = &self.ports[self.peers[p as usize] as usize] as *const crate::engine::net::port::Port
                        as *const i8;
                    _mm_prefetch::<_MM_HINT_T0>(peer);
                    _mm_prefetch::<_MM_HINT_T0>(&self.packets[PacketId(id)] as *const _ as *const i8);
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = ev;
    }

    /// The second step for an event whose port was prefetched one event earlier: the packet it
    /// will send, at the head of its highest non-empty priority queue.
    #[inline]
    fn prefetch_data(&self, ev: Event) {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::wire::packet::Packet;
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let at: *const i8 = match ev {
                Event::PortWake(p, _) => {
                    let port = &self.ports[p as usize];
                    if port.nonempty == 0 {
                        return;
                    }
                    let prio = 7 - port.nonempty.leading_zeros() as usize;
                    match port.prio[prio].packets.front() {
                        Some(&head) => &self.packets[head] as *const Packet as *const i8,
                        None => return,
                    }
                }
                _ => return,
            };
            // SAFETY: as in `prefetch`. (A packet is one aligned cache line.)
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(at);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = ev;
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::PortWake(p, gen) => self.port_woken(p, gen),
            Event::Arrive(p, id) => self.arrive(p, PacketId(id)),
            Event::FlowStart(f) => self.flow_start(f),
            Event::FlowStop(f) => self.flow_stop(f),
            Event::ComputeDone(c) => self.compute_done(c),
            Event::CcTimer(f, slot, gen) => self.cc_timer_fired(f, slot as usize, gen),
            Event::Rto(f, gen) => self.rto_fired(f, gen),
            Event::Sample => {
                self.recorder.sample(self.now, &self.topo, &self.ports, &mut self.flows, &self.ccs);
                if self.flows_done < self.flows.len() {
                    if let Some(iv) = self.params.sample_interval {
                        self.events.push(self.now + iv, Event::Sample);
                    }
                }
            }
        }
    }

    /// Applies what a CC hook did: its timer requests, and a rate change, which (as on a real
    /// NIC rate limiter, and in the HPCC ns-3 model's `ChangeRate`) stretches or shortens the
    /// gap already running after the last packet.
    pub(crate) fn apply_cc(&mut self, f: u32, cx: &CcContext) {
        for (slot, req) in cx.timer_requests() {
            self.set_cc_timer(f, slot, req);
        }
        let rate = self.ccs[f as usize].rate();
        let flow = &mut self.flows[f as usize];
        if rate != flow.paced_rate {
            if flow.last_packet_size > 0 && flow.next_send > self.now {
                let old_gap = pacing_gap(flow.last_packet_size, flow.paced_rate);
                let new_gap = pacing_gap(flow.last_packet_size, rate);
                let sent_at = flow.next_send.saturating_sub(old_gap);
                flow.next_send = (sent_at + new_gap).max(self.now);
                if new_gap < old_gap && flow.scheduled {
                    // A wake-up, not a direct kick: this may run while the NIC is choosing its
                    // next packet (a byte counter reacting in `on_send`).
                    let (port, at) = (self.topo.host_port(flow.src), flow.next_send);
                    self.flows[f as usize].paced_rate = rate;
                    self.wake_port(port, at);
                    return;
                }
            }
            flow.paced_rate = rate;
        }
    }
}

const _: () = assert!(MAX_TIMERS <= u8::MAX as usize);
const _: () = assert!(NUM_PRIORITIES == 8);
