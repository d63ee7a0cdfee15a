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
mod fast_forward;
mod finish;
mod inspect;
pub mod net;
pub mod nic;
mod nvlink_fluid;
mod observe;
mod params;
mod queue;
mod stop;
mod timers;
mod warnings;
mod work;

pub use build::Fabric;
pub(crate) use dependencies::Dependencies;
pub use inspect::{FlowView, PortView};
pub use net::credit::CreditView;
pub(crate) use params::Params;
pub use queue::EventQueue;
pub use stop::RunControl;
pub use timers::TimerSlot;

use crate::cc::{CcConfig, FlowFacts, Receiver, MAX_TIMERS};
use crate::config::Scenario;
use crate::engine::net::pool::PacketId;
use crate::metrics::{Results, StopReason, Warning};
use crate::time::SimTime;
use crate::topology::Topology;
use crate::wire::packet::NUM_PRIORITIES;

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
    /// Fast-forward checks whether groups of flows are steady (`fast_forward/`).
    FastForward,
    /// A frozen group thaws (group, freeze number).
    Thaw(u32, u32),
    /// DLB switches sample their ports (`net/dlb.rs`).
    DlbSample,
    /// Credits reach a sending port (port, priority, blocks: `net/credit.rs`).
    Credit(u32, u8, u32),
    /// A switch ingress port sends the credits freed since its last update (port).
    CreditUpdate(u32),
    /// Fluid NVLink (`nvlink_fluid.rs`): a server's first transfer to end may have sent its
    /// last byte (server, generation).
    NvlinkRates(u32, u32),
    /// Fluid NVLink: a transfer's last packet is delivered (flow, 0), or its ACK is back (flow, 1).
    NvlinkDone(u32, u32),
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

/// A run's state, grouped by chapter: the fabric's moving parts (`net`), the NICs and their
/// queue pairs (`nic`), the workload's progress (`work`) and what is recorded of it
/// (`observe`). Each chapter builds itself (`Network::build`, `Nics::build`, ...) and its
/// behaviour lives in `impl Simulation` blocks in its own files.
pub struct Simulation {
    pub(crate) now: SimTime,
    pub(crate) events: EventQueue,
    pub(crate) topo: Topology,
    pub(crate) params: Params,
    pub(crate) net: net::Network,
    pub(crate) nic: nic::Nics,
    pub(crate) work: work::WorkProgress,
    pub(crate) observe: observe::Observers,
    control: RunControl,
    /// When the loop next checks `control` (and reports progress).
    cadence: crate::watch::Cadence,
    /// The run stops after this many events (see [`Simulation::set_event_limit`]).
    event_limit: u64,
    /// Fast-forward, when the scenario has it on and the fabric allows it; when it allows it
    /// not, why (for `summary.json`).
    pub(crate) ff: Option<fast_forward::FastForward>,
    ff_off: Option<crate::metrics::fast_forward::FastForwardReport>,
    /// Transfers over NVLink as rates instead of packets, when the scenario asks for it.
    pub(crate) fluid: Option<Box<nvlink_fluid::NvlinkFluid>>,
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
        self.nic.flows.len()
    }

    /// What flow `f`'s algorithm knows about its path (to build a custom algorithm for it).
    pub fn flow_facts(&self, f: u32) -> FlowFacts {
        *self.nic.facts_of(f)
    }

    /// Replaces flow `f`'s algorithm, both halves, before the run (Rust API: plug in an algorithm
    /// of your own through [`crate::cc::Cc::Custom`] and [`Receiver::Custom`]); a flow that
    /// shares its connection with others shares it with them. Extra header bytes stay those of
    /// the scenario's `[cc]`.
    pub fn set_flow_algorithm(&mut self, f: u32, sender: crate::cc::Cc, receiver: Receiver) {
        assert!(self.now == SimTime::ZERO && self.observe.counters.events == 0, "algorithms are set before the run");
        let c = self.nic.flows[f as usize].conn as usize;
        self.nic.ccs[c] = sender;
        self.nic.receivers[c] = receiver;
    }

    /// Settings of the scenario that are legal but almost certainly a mistake; `summary.json`
    /// keeps them too.
    pub fn warnings(&self) -> &[Warning] {
        &self.observe.warnings
    }

    /// Lets the run be ended from outside (an interrupt flag, a wall-clock budget).
    pub fn set_control(&mut self, control: RunControl) {
        self.control = control;
    }

    /// Runs to completion: every flow delivered and acknowledged and every packet drained from
    /// the network; or until the stop time, a stall, or a stop from outside ([`RunControl`]),
    /// which leave the results partial. `observe` is called at every check for a stop: every
    /// 2^16 events, more often where events are slow (`watch::Cadence`). A run
    /// already taken part of the way ([`Simulation::run_until`], [`Simulation::step`]) goes on
    /// from where it stands.
    pub fn run(mut self, observe: &mut dyn FnMut(Progress)) -> Results {
        // Measures the run (wall_seconds) and enforces the caller's wall_limit (a stop reported as
        // WallLimit); the simulation itself never reads it.
        #[allow(clippy::disallowed_methods)]
        let wall = std::time::Instant::now();
        // A handler written in Python can loop where the loop's checks never come: its front end
        // watches the limits itself while the loop runs.
        let watched = crate::cc::external::watch_run(&self.scenario.cc, &self.control, wall);
        let reason = match self.work.ended {
            Some(reason) => reason,
            None => self.event_loop::<false>(SimTime::MAX, wall, observe).expect("only a bounded loop pauses"),
        };
        // Handlers were skipped after the stop: the run is partial even if it went on to its end.
        let reason = watched.and_then(|w| w.halted()).map_or(reason, stop::reason);
        // Frozen groups catch up to the end: their counters then stand where a run simulated
        // packet by packet would have left them.
        self.thaw_all();
        observe(self.progress(true));
        let wall_seconds = wall.elapsed().as_secs_f64();
        let stall = (reason == StopReason::Stalled)
            .then(|| self.diagnose_stall(self.work.progress_at, self.nic.flows.len() - self.work.flows_done));
        debug_assert!(
            self.net.packets.in_use() > 0 || self.net.int_pool.in_use() == 0,
            "INT slots leaked: {} in use with no packet in the network",
            self.net.int_pool.in_use()
        );
        self.finish(reason, stall, wall_seconds)
    }

    /// Runs every event due at or before `until`, then pauses there, the state open to read
    /// (`inspect.rs`), as it stands at `until`; [`Simulation::run`] (or another `run_until`)
    /// goes on from there, and the results are those of a run never paused. Returns why the
    /// run ended, if it ended before `until` (completed, the stop time, a stall, the event
    /// limit, a stop from outside): then `run` only gathers the results.
    pub fn run_until(&mut self, until: SimTime) -> Option<StopReason> {
        if self.work.ended.is_none() {
            #[allow(clippy::disallowed_methods)]
            let wall = std::time::Instant::now();
            self.work.ended = self.event_loop::<true>(until, wall, &mut |_| {});
        }
        self.work.ended
    }

    /// Runs the next event alone (the state may then be read, as after
    /// [`Simulation::run_until`]); returns why the run ended, if it has.
    pub fn step(&mut self) -> Option<StopReason> {
        if self.work.ended.is_none() {
            let limits = self.limits();
            self.work.ended = match self.events.pop() {
                Some((t, ev)) => self.handle(t, ev, &limits),
                None => Some(self.drained(&limits)),
            };
        }
        self.work.ended
    }

    /// The event loop that [`Simulation::run`] and [`Simulation::run_until`] share: events one
    /// after another until the run ends (`Some(why)`) or, `BOUNDED`, until the next is due after
    /// `until` (`None`). (A constant, so that `run`'s loop compiles without the look ahead.)
    #[inline(always)]
    fn event_loop<const BOUNDED: bool>(
        &mut self,
        until: SimTime,
        wall: std::time::Instant,
        observe: &mut dyn FnMut(Progress),
    ) -> Option<StopReason> {
        let limits = self.limits();
        loop {
            if BOUNDED && self.events.peek_time().is_some_and(|t| t > until) {
                self.now = self.now.max(until);
                return None;
            }
            let Some((t, ev)) = self.events.pop() else {
                return Some(self.drained(&limits));
            };
            if let Some(reason) = self.handle(t, ev, &limits) {
                return Some(reason);
            }
            // (One compare per event, as cheap as the fixed mask it replaced: S1's instruction
            // count is unchanged.)
            if self.observe.counters.events >= self.cadence.next {
                observe(self.progress(false));
                if let Some(halt) = self.control.should_stop(wall) {
                    return Some(stop::reason(halt));
                }
                // Only paces the checks; what is simulated never depends on it.
                #[allow(clippy::disallowed_methods)]
                let now = std::time::Instant::now();
                self.cadence.checked(self.observe.counters.events, now);
            }
        }
    }

    /// What the loop checks against on every event.
    fn limits(&self) -> Limits {
        let stall_timeout = (self.scenario.simulation.stall_timeout)
            .unwrap_or_else(|| crate::config::SimulationConfig::default_stall_timeout(&self.scenario.nic));
        Limits { flows: self.nic.flows.len(), stall_timeout }
    }

    /// Nothing is left to happen: the run is complete, or nothing could move what remains.
    fn drained(&self, limits: &Limits) -> StopReason {
        if self.work.flows_done < limits.flows || self.work.deps.computes_left > 0 {
            StopReason::Stalled
        } else {
            StopReason::Completed
        }
    }

    /// One event, due at `t`: handled, unless the run ends first (the stop time, a stall);
    /// `Some(why)` when the run has ended (with it, or before it).
    #[inline(always)]
    fn handle(&mut self, t: SimTime, ev: Event, limits: &Limits) -> Option<StopReason> {
        if t > self.params.stop_time {
            self.now = self.params.stop_time;
            return Some(StopReason::StopTime);
        }
        if t - self.work.progress_at > limits.stall_timeout && !matches!(ev, Event::FlowStart(_)) {
            // (A frozen group moves on, unsimulated: fast-forward's skip is not a stall.)
            let skipping = self.ff.as_ref().is_some_and(|ff| ff.any_frozen());
            if self.work.flows_started > self.work.flows_done && !skipping {
                self.now = self.work.progress_at + limits.stall_timeout;
                return Some(StopReason::Stalled);
            }
            // Nothing was running, so nothing was stuck (or it was skipped): the quiet time was
            // idle time.
            self.work.progress_at = t;
        }
        self.now = t;
        self.observe.counters.events += 1;
        if self.net.prefetching {
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
        if self.work.flows_done == limits.flows && self.net.packets.in_use() == 0 && self.work.deps.computes_left == 0 {
            return Some(StopReason::Completed);
        }
        if self.observe.counters.events >= self.event_limit {
            return Some(StopReason::EventLimit);
        }
        None
    }

    fn progress(&self, ended: bool) -> Progress {
        Progress {
            now: self.now,
            flows_done: self.work.flows_done,
            flows_total: self.nic.flows.len(),
            events: self.observe.counters.events,
            bytes_delivered: self.work.bytes_delivered,
            bytes_total: self.work.bytes_total,
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
            let port = &self.net.ports[p as usize];
            let at = port as *const crate::engine::net::port::Port as *const i8;
            // SAFETY: a prefetch is only a hint; it never faults and never changes memory, and
            // SSE is part of the x86_64 baseline.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(at);
                _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(64));
                if let Event::Arrive(_, id) = ev {
                    let peer = &self.net.ports[self.net.peers[p as usize] as usize]
                        as *const crate::engine::net::port::Port as *const i8;
                    _mm_prefetch::<_MM_HINT_T0>(peer);
                    _mm_prefetch::<_MM_HINT_T0>(&self.net.packets[PacketId(id)] as *const _ as *const i8);
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
                    let port = &self.net.ports[p as usize];
                    if port.nonempty == 0 {
                        return;
                    }
                    let prio = 7 - port.nonempty.leading_zeros() as usize;
                    match port.prio[prio].packets.front() {
                        Some(&head) => &self.net.packets[head] as *const Packet as *const i8,
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
            Event::Link(i) => {
                self.link_event(i);
                // A link event may recompute every route of the fabric: seconds on a large one.
                self.cadence.check_next();
            }
            Event::Lost(p, id) => self.lost_on_link(p, PacketId(id)),
            Event::Probe(f) => self.probe_due(f),
            Event::FastForward => self.fast_forward_check(),
            Event::Thaw(key, n) => self.thaw_due(key, n),
            Event::DlbSample => self.dlb_sample(),
            Event::Credit(p, prio, blocks) => self.credit_arrived(p, prio, blocks),
            Event::CreditUpdate(p) => self.credit_update_due(p),
            Event::NvlinkRates(server, generation) => self.fluid_due(server, generation),
            Event::NvlinkDone(f, stage) => self.fluid_done(f, stage),
            Event::Sample => {
                self.fluid_advance_all();
                self.sample_timelines();
                if self.work.flows_done < self.nic.flows.len() {
                    if let Some(iv) = self.params.sample_interval {
                        self.events.push(self.now + iv, Event::Sample);
                    }
                }
            }
        }
    }
}

/// What the event loop checks every event against: the flows that must finish, and how long
/// nothing may move while some are running.
struct Limits {
    flows: usize,
    stall_timeout: SimTime,
}

const _: () = assert!(MAX_TIMERS <= u8::MAX as usize);
const _: () = assert!(NUM_PRIORITIES == 8);
