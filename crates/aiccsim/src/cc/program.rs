//! The NIC-event view of congestion control: an algorithm written as a program on a
//! programmable NIC is.
//!
//! Programmable NICs (the Barre slides; NVIDIA's DOCA PCC; Broadcom's) run congestion
//! control as one handler per flow, called on events the NIC raises (a packet sent, an ACK or
//! NACK, a CNP, an RTT-probe reply, a timer), with the flow's context at hand; the handler
//! writes the flow's rate (and, if the transport has one, its window) into that context. A
//! [`NicProgram`] is exactly that: one `on_event` method and a [`FlowContext`]. [`Programmed`]
//! runs any program behind the sender half's trait ([`CongestionControl`]), so the engine drives
//! both views the same way. Built-in algorithms may use either view; algorithms written in
//! Python use this one.
//!
//! The view adds no event of its own: each [`NicEvent`] (`events.rs` lists them) is one call of
//! [`CongestionControl`] (docs/cc/programmable.md has the table and a worked example).

use super::{AckInfo, CcContext, CcEvent, CongestionControl, FlowFacts, NicEvent};
use crate::time::SimTime;

/// The flow's context in one handler call: the time, the flow's facts, its rate and window (to
/// read and to set) and its timers.
pub struct FlowContext<'a> {
    cx: &'a mut CcContext,
    facts: &'a FlowFacts,
    rate: &'a mut f64,
    window: &'a mut Option<u64>,
}

impl FlowContext<'_> {
    pub fn now(&self) -> SimTime {
        self.cx.now()
    }
    /// What is known about the flow and its path (line rate, base RTT, hops, MTU, ...).
    pub fn facts(&self) -> &FlowFacts {
        self.facts
    }
    /// In `Start`: flows heading to the same receiver as this one starts (0 elsewhere).
    pub fn incoming_at_start(&self) -> u32 {
        self.cx.incoming_at_start()
    }
    /// The sending rate in bits per second (the line rate until a handler sets it).
    pub fn rate(&self) -> f64 {
        *self.rate
    }
    /// Sets the sending rate, in bits per second, clamped to (0, line rate]: the NIC paces the
    /// flow's packets at it.
    pub fn set_rate(&mut self, bits_per_second: f64) {
        let line = self.facts.line_rate.as_f64();
        // A NaN is a bug in the program; the Python binding refuses it with an error before it
        // gets here. Checked in debug builds (the tests) only: the per-packet path stays as is.
        debug_assert!(
            !bits_per_second.is_nan(),
            "flow {} at {} ns: a congestion-control program set its rate to NaN",
            self.facts.flow,
            self.cx.now().as_ns_f64()
        );
        // A rate of zero would stop the flow for good (no event could come to raise it).
        *self.rate = if bits_per_second.is_nan() { line } else { bits_per_second.clamp(1.0, line) };
    }
    /// The window in bytes in flight, if one is set.
    pub fn window(&self) -> Option<u64> {
        *self.window
    }
    /// Limits the bytes in flight (`None`: rate only). A window below one packet still lets one
    /// packet out when nothing is in flight.
    pub fn set_window(&mut self, bytes: Option<u64>) {
        *self.window = bytes;
    }
    /// Fires timer `slot` (0..[`super::MAX_TIMERS`]) at `at`, replacing any pending one.
    pub fn set_timer(&mut self, slot: usize, at: SimTime) {
        self.cx.set_timer(slot, at);
    }
    pub fn cancel_timer(&mut self, slot: usize) {
        self.cx.cancel_timer(slot);
    }
}

/// A congestion-control program: one handler for every event of its flow.
pub trait NicProgram {
    fn on_event(&mut self, event: &NicEvent<'_>, flow: &mut FlowContext<'_>);
    /// The program's internal state, as [`CongestionControl::metrics`] reports it.
    fn metrics(&self, _report: &mut dyn FnMut(&str, f64)) {}
    /// As [`CongestionControl::steady_signal`], given the rate and window the program last set
    /// in the flow's context. `None` (the default, and every Python program's): never steady.
    fn steady_signal(&self, _rate: f64, _window: Option<u64>) -> Option<f64> {
        None
    }
    /// As [`CongestionControl::shift_clock`]: every point in time the program holds moves on by
    /// `by`. Only called on a program whose `steady_signal` is `Some`.
    fn shift_clock(&mut self, _by: SimTime) {}
}

/// A [`NicProgram`] as a sender half: it keeps the rate and window the program sets.
pub struct Programmed<P> {
    pub program: P,
    facts: FlowFacts,
    rate: f64,
    window: Option<u64>,
}

impl<P: NicProgram> Programmed<P> {
    /// The flow starts at line rate with no window until the program says otherwise.
    pub fn new(program: P, facts: &FlowFacts) -> Self {
        Programmed { program, facts: *facts, rate: facts.line_rate.as_f64(), window: None }
    }

    fn handle(&mut self, event: &NicEvent<'_>, cx: &mut CcContext) {
        let mut flow = FlowContext { cx, facts: &self.facts, rate: &mut self.rate, window: &mut self.window };
        self.program.on_event(event, &mut flow);
    }
}

impl<P: NicProgram> CongestionControl for Programmed<P> {
    fn on_start(&mut self, cx: &mut CcContext) {
        self.handle(&NicEvent::Start, cx);
    }
    #[inline]
    fn on_ack(&mut self, ack: &AckInfo<'_>, cx: &mut CcContext) {
        self.handle(&NicEvent::Ack(ack), cx);
    }
    #[inline]
    fn on_send(&mut self, bytes: u64, cx: &mut CcContext) {
        self.handle(&NicEvent::Tx { bytes }, cx);
    }
    fn on_event(&mut self, ev: CcEvent, cx: &mut CcContext) {
        self.handle(&ev.into(), cx);
    }
    fn on_timer(&mut self, slot: usize, cx: &mut CcContext) {
        self.handle(&NicEvent::Timer { slot }, cx);
    }
    #[inline]
    fn rate(&self) -> f64 {
        self.rate
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        self.window
    }
    fn metrics(&self, report: &mut dyn FnMut(&str, f64)) {
        self.program.metrics(report);
    }
    fn steady_signal(&self) -> Option<f64> {
        self.program.steady_signal(self.rate, self.window)
    }
    /// The wrapper holds no time of its own (its facts are durations): the program's move.
    fn shift_clock(&mut self, by: SimTime) {
        self.program.shift_clock(by);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::facts;

    /// Halves the rate on each CNP, and restores line rate on a timer armed at start.
    struct Halver;

    impl NicProgram for Halver {
        fn on_event(&mut self, event: &NicEvent<'_>, flow: &mut FlowContext<'_>) {
            match event {
                NicEvent::Start => flow.set_timer(1, SimTime::from_us(10)),
                NicEvent::Cnp => flow.set_rate(flow.rate() / 2.0),
                NicEvent::Timer { slot: 1 } => flow.set_rate(f64::INFINITY),
                NicEvent::Tx { bytes } => flow.set_window(Some(*bytes * 4)),
                _ => {}
            }
        }
    }

    #[test]
    fn a_program_sets_rate_window_and_timers_through_its_context() {
        let mut cc = Programmed::new(Halver, &facts());
        let mut cx = CcContext::new(SimTime::ZERO);
        cc.on_start(&mut cx);
        assert_eq!(cx.timer_requests().collect::<Vec<_>>(), vec![(1, Some(SimTime::from_us(10)))]);
        assert_eq!(cc.rate(), 100e9);
        assert_eq!(cc.window(), None);
        cc.on_event(CcEvent::Cnp, &mut CcContext::new(SimTime::from_us(1)));
        cc.on_event(CcEvent::Cnp, &mut CcContext::new(SimTime::from_us(2)));
        assert_eq!(cc.rate(), 25e9);
        cc.on_send(1048, &mut CcContext::new(SimTime::from_us(3)));
        assert_eq!(cc.window(), Some(4192));
        // Set above the line rate: clamped to it.
        cc.on_timer(1, &mut CcContext::new(SimTime::from_us(10)));
        assert_eq!(cc.rate(), 100e9);
    }
}
