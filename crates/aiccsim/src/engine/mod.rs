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

pub mod build;
mod dependencies;
mod finish;
pub mod net;
pub mod nic;
mod queue;
mod stop;
mod timers;
mod warnings;

pub use build::Fabric;
pub(crate) use dependencies::Dependencies;
pub use queue::EventQueue;
pub use stop::RunControl;
pub use timers::TimerSlot;

use crate::cc::{CcConfig, FlowFacts, Receiver, Telemetry, MAX_TIMERS};
use crate::config::{FlowletPick, Recovery, Scenario};
use crate::engine::net::pool::{PacketId, PacketPool};
use crate::engine::net::port::Port;
use crate::engine::net::switch::SwitchState;
use crate::engine::net::telemetry::{IntPool, PintState};
use crate::engine::nic::clock::HostClocks;
use crate::engine::nic::host::HostState;
use crate::engine::nic::qp::Flow;
use crate::metrics::trace::Tracer;
use crate::metrics::{Counters, DurationHistogram, Recorder, Results, StopReason, Warning};
use crate::rng::SimRng;
use crate::time::SimTime;
use crate::topology::Topology;
use crate::wire::packet::NUM_PRIORITIES;
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
    /// Congestion-control timer (connection, slot, generation).
    CcTimer(u32, u8, u32),
    /// Retransmission timeout check (flow, generation).
    Rto(u32, u32),
    /// Record a timeline sample.
    Sample,
    /// A link slows down, fails or comes back, or routing detects it (`net/failures.rs`).
    Link(u32),
    /// A packet sent on a port whose link failed would have reached the peer (port, packet):
    /// it is lost instead.
    Lost(u32, u32),
    /// A flow's RTT probe is due (`nic/probe.rs`).
    Probe(u32),
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
    pub recovery: Recovery,
    /// Selective recovery: the loss threshold (packets arrived past a missing one).
    pub reorder_window: u32,
    /// Selective recovery: the sender sends no new byte this far or further past its first
    /// unacknowledged one (`sack_bitmap` packets).
    pub track_bytes: u64,
    /// Without PFC, an egress queue holds at most this fraction of the free buffer.
    pub egress_alpha: Option<f64>,
    pub pfc_static_xoff: Option<u64>,
    pub pfc_alpha: f64,
    pub xon_delta: u64,
    pub ecn_pmax: f64,
    pub ecn_at_dequeue: bool,
    /// Flowlet switching's gap and where a new flowlet goes (switches that route by flowlet).
    pub flowlet_gap: SimTime,
    pub flowlet_pick: FlowletPick,
    /// A packet put on the wire needs more than its arrival scheduled: a trace row, or a check
    /// of its link (tracing, or `[[events]]`).
    pub tx_hooks: bool,
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
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    pub now: SimTime,
    pub flows_done: usize,
    pub flows_total: usize,
    pub events: u64,
    /// Payload delivered in order to the receivers so far, and the flows' sizes together: how
    /// far the run is, where finished flows say little until the end (an incast's all finish
    /// together).
    pub bytes_delivered: u64,
    pub bytes_total: u64,
    /// The event loop has ended (the last report): the results are being gathered.
    pub ended: bool,
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
    /// Both halves of each connection's algorithm, by connection id (`nic/connection.rs`).
    pub(crate) ccs: Vec<crate::cc::Cc>,
    pub(crate) receivers: Vec<Receiver>,
    pub(crate) conns: Vec<crate::engine::nic::connection::Connection>,
    /// What each flow's algorithm was told about its path.
    facts: Vec<FlowFacts>,
    /// Every packet created and not yet consumed or dropped (queued, being sent, or on a link).
    pub(crate) packets: PacketPool,
    pub(crate) counters: Counters,
    pub(crate) recorder: Recorder,
    pub(crate) flows_done: usize,
    pub(crate) flows_started: usize,
    /// Payload delivered in order, over all flows (for [`Progress`]), and the flows' sizes.
    pub(crate) bytes_delivered: u64,
    bytes_total: u64,
    /// The last time a flow moved (started, or had a byte delivered or acknowledged in order):
    /// what stall detection measures from.
    pub(crate) progress_at: SimTime,
    /// Per-switch random streams for ECN marking and for spraying.
    pub(crate) ecn_rng: Vec<SimRng>,
    pub(crate) spray_rng: Vec<SimRng>,
    /// Round-robin spraying: each equal-cost set's next turn, by set (`Topology::route_set`).
    pub(crate) round_robin: Vec<u32>,
    /// Per switch, its flowlet table (empty at switches that do not route by flowlet).
    pub(crate) flowlets: Vec<net::routing::FlowletTable>,
    /// The link events and the links' state, when the scenario has `[[events]]`.
    pub(crate) links: Option<Box<net::failures::LinkEvents>>,
    /// What waits for what (flows and compute steps), and the compute steps' progress.
    pub(crate) deps: Dependencies,
    /// Which steps and flows make up which training iteration, per `training` workload.
    training: Vec<workload::training::Layout>,
    /// What each collective of the workload is (for `collectives.csv`).
    collectives: Vec<workload::CollectiveInfo>,
    /// The jobs (for `jobs.csv`).
    jobs: Vec<workload::jobs::JobInfo>,
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
    /// Selective recovery's bitmaps, for the flows that have needed one (`nic/selective.rs`).
    pub(crate) sack: crate::engine::nic::selective::Scoreboards,
    /// Data packets to lose on purpose (`nic/losses.rs`).
    pub(crate) losses: Vec<(u32, u64)>,
    /// RTT probes, when the algorithm asks for them (`nic/probe.rs`).
    pub(crate) probes: Option<Box<crate::engine::nic::probe::Probes>>,
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
    /// Settings that are legal but almost certainly a mistake (`warnings.rs`).
    warnings: Vec<Warning>,
    scenario: Scenario,
}

impl Simulation {
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
    /// of your own through [`crate::cc::Cc::Custom`] and [`Receiver::Custom`]); a flow that
    /// shares its connection with others shares it with them. Extra header bytes stay those of
    /// the scenario's `[cc]`.
    pub fn set_flow_algorithm(&mut self, f: u32, sender: crate::cc::Cc, receiver: Receiver) {
        assert!(self.now == SimTime::ZERO && self.counters.events == 0, "algorithms are set before the run");
        let c = self.flows[f as usize].conn as usize;
        self.ccs[c] = sender;
        self.receivers[c] = receiver;
    }

    /// Settings of the scenario that are legal but almost certainly a mistake; `summary.json`
    /// keeps them too.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Lets the run be ended from outside (an interrupt flag, a wall-clock budget).
    pub fn set_control(&mut self, control: RunControl) {
        self.control = control;
    }

    /// Runs to completion: every flow delivered and acknowledged and every packet drained from
    /// the network; or until the stop time, a stall, or a stop from outside ([`RunControl`]),
    /// which leave the results partial. `observe` is called about every 2^16 events.
    pub fn run(mut self, observe: &mut dyn FnMut(Progress)) -> Results {
        // Measures the run (wall_seconds) and enforces the caller's wall_limit (a stop reported as
        // WallLimit); the simulation itself never reads it.
        #[allow(clippy::disallowed_methods)]
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
                observe(self.progress(false));
                if let Some(halt) = self.control.should_stop(wall) {
                    reason = stop::reason(halt);
                    break;
                }
            }
        }
        observe(self.progress(true));
        let wall_seconds = wall.elapsed().as_secs_f64();
        let stall =
            (reason == StopReason::Stalled).then(|| self.diagnose_stall(self.progress_at, total - self.flows_done));
        debug_assert!(
            self.packets.in_use() > 0 || self.int_pool.in_use() == 0,
            "INT slots leaked: {} in use with no packet in the network",
            self.int_pool.in_use()
        );
        self.finish(reason, stall, wall_seconds)
    }

    fn progress(&self, ended: bool) -> Progress {
        Progress {
            now: self.now,
            flows_done: self.flows_done,
            flows_total: self.flows.len(),
            events: self.counters.events,
            bytes_delivered: self.bytes_delivered,
            bytes_total: self.bytes_total,
            ended,
        }
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

    /// (Inlined into the loop by force: its size sits at the compiler's threshold, and a call per
    /// event costs about 1.5% of S1's instructions when it falls out.)
    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::PortWake(p, gen) => self.port_woken(p, gen),
            Event::Arrive(p, id) => self.arrive(p, PacketId(id)),
            Event::FlowStart(f) => self.flow_start(f),
            Event::FlowStop(f) => self.flow_stop(f),
            Event::ComputeDone(c) => self.compute_done(c),
            Event::CcTimer(f, slot, gen) => self.cc_timer_fired(f, slot as usize, gen),
            Event::Rto(f, gen) => self.rto_fired(f, gen),
            Event::Link(i) => self.link_event(i),
            Event::Lost(p, id) => self.lost_on_link(p, PacketId(id)),
            Event::Probe(f) => self.probe_due(f),
            Event::Sample => {
                self.sample_timelines();
                if self.flows_done < self.flows.len() {
                    if let Some(iv) = self.params.sample_interval {
                        self.events.push(self.now + iv, Event::Sample);
                    }
                }
            }
        }
    }
}

const _: () = assert!(MAX_TIMERS <= u8::MAX as usize);
const _: () = assert!(NUM_PRIORITIES == 8);
