//! Stopping a run from outside, and watching it being made ready.
//!
//! A run can be ended from outside the simulation: an interrupt (Ctrl-C) or a wall-clock budget
//! ([`RunControl`]). The event loop checks them every so often; so do the phases before it.
//! Building a million-host fabric or laying out millions of flows takes seconds: a front end
//! shows their progress and must be able to stop them as promptly as a simulation. Their long
//! loops tick a [`Watch`], which checks the [`RunControl`] and tells an observer where they are.
//! Nothing it sees changes what is built: a build either finishes, the same as unwatched, or
//! stops with nothing to show.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Ways to end a run from outside the simulation. The event loop checks them as often as its
/// events' cost needs ([`Cadence`]), and a build every few thousand steps, so either stops within
/// milliseconds of being asked (an event that takes longer, one Python callback, is not cut
/// short).
#[derive(Clone, Debug, Default)]
pub struct RunControl {
    /// Set (by a signal handler, another thread) to stop the run; results so far are kept.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Stop after this much wall-clock time.
    pub wall_limit: Option<Duration>,
    /// When `wall_limit` started counting: a command's start, so that reading the scenario and
    /// building the fabric count against it too; `None`: when the run (or build) starts.
    pub since: Option<Instant>,
}

/// A stop asked for from outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Halt {
    /// The interrupt flag was set.
    Interrupted,
    /// The wall-clock budget is spent.
    WallLimit,
}

impl RunControl {
    /// Whether to stop now; `started` is when the run or build began (used without `since`).
    pub fn should_stop(&self, started: Instant) -> Option<Halt> {
        if self.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Some(Halt::Interrupted);
        }
        let since = self.since.unwrap_or(started);
        if self.wall_limit.is_some_and(|limit| since.elapsed() >= limit) {
            return Some(Halt::WallLimit);
        }
        None
    }
}

/// When the event loop next checks its [`RunControl`]: after a number of events that follows
/// their cost. Cheap events (a packet hop, tens of nanoseconds) are checked every 2^16, which
/// keeps the check out of the loop's instruction count; events that take milliseconds (a route
/// recomputation on a large fabric, a timeline sample of a hundred thousand ports, a Python
/// callback) would then go tens of seconds between checks, so the interval halves whenever one
/// took more than [`Cadence::SLOW`] and doubles back when one took less than a tenth of that.
/// An event known to be expensive asks for a check right after it ([`Cadence::check_next`]),
/// so the first of a run of them already stops the run.
#[derive(Clone, Debug)]
pub(crate) struct Cadence {
    /// The event count at which the loop checks next (the loop compares its count with it).
    pub(crate) next: u64,
    /// Events from one check to the next.
    every: u64,
    /// When the last check ran (`None`: none has yet).
    last: Option<Instant>,
}

impl Cadence {
    /// The most events between two checks: 2^16, the interval that costs S1 nothing measurable.
    pub(crate) const MOST: u64 = 1 << 16;
    /// The first interval: short, so that a run of expensive events is caught early; cheap
    /// events double it back to [`Cadence::MOST`] within a few milliseconds.
    const FIRST: u64 = 1 << 10;
    /// An interval that took longer than this is halved.
    pub(crate) const SLOW: Duration = Duration::from_millis(100);

    pub(crate) fn new() -> Cadence {
        Cadence { next: Cadence::FIRST, every: Cadence::FIRST, last: None }
    }

    /// Checks right after the event now being handled.
    #[inline]
    pub(crate) fn check_next(&mut self) {
        self.next = 0;
    }

    /// A check ran at `now`, after `events` events: sets the next.
    pub(crate) fn checked(&mut self, events: u64, now: Instant) {
        if let Some(last) = self.last {
            let took = now.saturating_duration_since(last);
            if took > Cadence::SLOW {
                self.every = (self.every / 2).max(1);
            } else if took < Cadence::SLOW / 10 {
                self.every = (self.every * 2).min(Cadence::MOST);
            }
        }
        self.last = Some(now);
        self.next = events.saturating_add(self.every);
    }
}

/// A phase of making a run ready, in the order they come.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Wiring the nodes and links.
    Topology,
    /// Equal-cost routes between the top-of-rack switches.
    Routing,
    /// Making the workload's flows and compute steps and placing them on hosts.
    Workload,
    /// Ports, switches, hosts and flows of the simulation itself.
    Setup,
}

impl Phase {
    /// What a progress display says the phase is doing.
    pub fn describe(self) -> &'static str {
        match self {
            Phase::Topology => "building topology",
            Phase::Routing => "routing",
            Phase::Workload => "laying out flows",
            Phase::Setup => "setting up ports and flows",
        }
    }
}

/// A build stopped from outside, and the phase it was in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    pub halt: Halt,
    pub phase: Phase,
}

/// Why a watched build made nothing: bad input (`E`, as the unwatched build reports it), or a
/// stop from outside.
#[derive(Debug)]
pub enum BuildError<E> {
    Invalid(E),
    Stopped(Stop),
}

impl<E> From<Stop> for BuildError<E> {
    fn from(stop: Stop) -> Self {
        BuildError::Stopped(stop)
    }
}

impl<E> BuildError<E> {
    /// The bad input of a build that nothing could stop (run with [`Watch::unwatched`]).
    pub fn unwatched(self) -> E {
        match self {
            BuildError::Invalid(e) => e,
            BuildError::Stopped(_) => unreachable!("nothing stops an unwatched build"),
        }
    }

    /// The same stop, or the bad input turned into another error.
    pub fn map_invalid<F>(self, f: impl FnOnce(E) -> F) -> BuildError<F> {
        match self {
            BuildError::Invalid(e) => BuildError::Invalid(f(e)),
            BuildError::Stopped(stop) => BuildError::Stopped(stop),
        }
    }
}

/// How far a phase is: `done` of `total` items (a total of 0: not known).
pub type Observer<'a> = &'a mut dyn FnMut(Phase, u64, u64);

/// What the long loops of a build tick.
pub struct Watch<'a> {
    control: RunControl,
    /// What the wall-clock budget counts from.
    started: Instant,
    observe: Option<Observer<'a>>,
    /// Ticks since the last check.
    ticks: u32,
}

/// A fine-grained loop checks once every this many ticks: a flag and a clock read cost about as
/// much as building one port, so every 4096th keeps them out of the build's time and still
/// checks thousands of times a second.
const TICKS_PER_CHECK: u32 = 4096;

impl<'a> Watch<'a> {
    /// A build that `control` can stop (its wall-clock budget counts from `control.since`, or from
    /// now) and whose progress `observe` is told.
    pub fn new(control: RunControl, observe: Observer<'a>) -> Watch<'a> {
        // Only enforces the caller's budget; what is built never depends on it.
        #[allow(clippy::disallowed_methods)]
        let started = control.since.unwrap_or_else(Instant::now);
        Watch { control, started, observe: Some(observe), ticks: 0 }
    }

    /// A build nothing stops and no one watches.
    pub fn unwatched() -> Watch<'static> {
        // As in `new`; without a budget the clock is never read again.
        #[allow(clippy::disallowed_methods)]
        let started = Instant::now();
        Watch { control: RunControl::default(), started, observe: None, ticks: 0 }
    }

    /// Checks for a stop now and reports `phase` at `done` of `total`: for loops whose every
    /// step takes a while (a route search from one switch).
    pub fn at(&mut self, phase: Phase, done: u64, total: u64) -> Result<(), Stop> {
        self.ticks = 0;
        if let Some(observe) = self.observe.as_mut() {
            observe(phase, done, total);
        }
        match self.control.should_stop(self.started) {
            Some(halt) => Err(Stop { halt, phase }),
            None => Ok(()),
        }
    }

    /// One step of a loop of many small steps (a port, a flow): checks every few thousand.
    #[inline]
    pub fn tick(&mut self, phase: Phase, done: u64, total: u64) -> Result<(), Stop> {
        self.ticks += 1;
        if self.ticks < TICKS_PER_CHECK {
            return Ok(());
        }
        self.at(phase, done, total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_check_every_few_thousand_and_report_where_they_are() {
        let flag = Arc::new(AtomicBool::new(false));
        let control = RunControl { interrupt: Some(flag.clone()), ..RunControl::default() };
        let mut seen = Vec::new();
        let mut observe = |phase, done, total| seen.push((phase, done, total));
        let mut watch = Watch::new(control, &mut observe);
        for i in 0..2 * u64::from(TICKS_PER_CHECK) {
            watch.tick(Phase::Setup, i, 10_000).unwrap_or_else(|_| panic!("not stopped at {i}"));
        }
        flag.store(true, Ordering::Relaxed);
        let stopped = (0..u64::from(TICKS_PER_CHECK)).find_map(|i| watch.tick(Phase::Workload, i, 0).err());
        assert_eq!(stopped, Some(Stop { halt: Halt::Interrupted, phase: Phase::Workload }));
        drop(watch);
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(seen[0], (Phase::Setup, u64::from(TICKS_PER_CHECK) - 1, 10_000));
    }

    #[test]
    // The clock only gives the instants the test moves forward by hand.
    #[allow(clippy::disallowed_methods)]
    fn the_check_interval_follows_the_cost_of_events() {
        let t0 = Instant::now();
        let mut c = Cadence::new();
        c.checked(1024, t0);
        assert_eq!(c.next, 2048);
        // Cheap events: the interval doubles up to 2^16 and stays there.
        let mut events = 1024;
        let mut at = t0;
        for _ in 0..20 {
            events = c.next;
            at += Duration::from_millis(1);
            c.checked(events, at);
        }
        assert_eq!(c.next - events, Cadence::MOST);
        // Expensive events: halved after each slow interval, down to a check after every event.
        for _ in 0..20 {
            events = c.next;
            at += Cadence::SLOW * 2;
            c.checked(events, at);
        }
        assert_eq!(c.next - events, 1);
        // An expensive event asks for a check at once, whatever the interval.
        c.checked(events, at + Duration::from_millis(50));
        c.check_next();
        assert!(c.next <= events);
    }

    #[test]
    fn a_spent_budget_stops_at_the_next_check() {
        let control = RunControl { wall_limit: Some(std::time::Duration::ZERO), ..RunControl::default() };
        let mut observe = |_, _, _| {};
        let mut watch = Watch::new(control, &mut observe);
        assert_eq!(watch.at(Phase::Routing, 0, 1), Err(Stop { halt: Halt::WallLimit, phase: Phase::Routing }));
        assert!(Watch::unwatched().at(Phase::Routing, 0, 1).is_ok());
    }
}
