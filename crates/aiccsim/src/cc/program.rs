//! The NIC-event view of congestion control: an algorithm written as a program on a
//! programmable NIC is.
//!
//! Programmable NICs (the Barre slides, paper 004; NVIDIA's DOCA PCC; Broadcom's) run congestion
//! control as one handler per flow, called on events the NIC raises (a packet sent, an ACK or
//! NACK, a CNP, an RTT-probe reply, a timer), with the flow's context at hand; the handler
//! writes the flow's rate (and, if the transport has one, its window) into that context. A
//! [`NicProgram`] is exactly that: one `on_event` method and a [`FlowContext`]. [`Programmed`]
//! runs any program behind the sender half's trait ([`CongestionControl`]), so the engine drives
//! both views the same way. Built-in algorithms may use either view; algorithms written in
//! Python use this one.
//!
//! The view adds no event of its own: each [`NicEvent`] is one call of [`CongestionControl`]
//! (docs/cc/programmable.md has the table and a worked example).

use super::{AckInfo, CcContext, CcEvent, CongestionControl, FlowFacts};
use crate::time::SimTime;

/// An event the NIC raises for one flow (one connection, when messages share one).
#[derive(Clone, Copy, Debug)]
pub enum NicEvent<'a> {
    /// The flow starts: set the first rate and arm timers here.
    Start,
    /// A data packet of `bytes` wire bytes left the NIC (the byte counter's input).
    Tx { bytes: u64 },
    /// An ACK came back (transports with ACKs only).
    Ack(&'a AckInfo<'a>),
    /// The receiver reported a gap and asked for the bytes from `seq` again.
    Nack { seq: u64 },
    /// A congestion notification packet arrived.
    Cnp,
    /// No progress for the retransmission timeout.
    Timeout,
    /// An RTT probe came back, with the timestamps both NICs wrote on it.
    RttProbe(ProbeReply),
    /// The last byte of a message was acknowledged.
    MessageDone(MessageDone),
    /// Timer `slot` fired.
    Timer { slot: usize },
}

/// An RTT probe's reply: the sender's transmit time, the receiver's arrival and reply times (on
/// the receiver's clock, which may be off by `[clocks]`), and the round trip measured on the
/// sender's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeReply {
    pub sent_at: SimTime,
    /// The receiver's clock when the probe arrived, picoseconds (may be negative with clock
    /// offsets).
    pub remote_arrival: i64,
    /// The receiver's clock when it sent the reply, picoseconds.
    pub remote_reply: i64,
    /// Arrival of the reply minus `sent_at`.
    pub rtt: SimTime,
}

impl ProbeReply {
    /// The round trip less the time the probe waited at the receiver: what the network took.
    pub fn network_rtt(&self) -> SimTime {
        let held = (self.remote_reply - self.remote_arrival).max(0) as u64;
        SimTime(self.rtt.0.saturating_sub(held))
    }
}

/// A message of the flow's connection completed: its first byte left the NIC at `first_sent`,
/// and its last byte was acknowledged now. On a connection that carries a collective's chunks,
/// one message is one chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageDone {
    /// Payload bytes of the message.
    pub bytes: u64,
    pub first_sent: SimTime,
}

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
        let event = match ev {
            CcEvent::Cnp => NicEvent::Cnp,
            CcEvent::Nack { seq } => NicEvent::Nack { seq },
            CcEvent::Timeout => NicEvent::Timeout,
            CcEvent::RttProbe(reply) => NicEvent::RttProbe(reply),
            CcEvent::MessageDone(done) => NicEvent::MessageDone(done),
        };
        self.handle(&event, cx);
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

    #[test]
    fn a_probe_reply_less_the_receivers_hold_is_the_network_rtt() {
        let reply = ProbeReply {
            sent_at: SimTime::ZERO,
            remote_arrival: -500_000,
            remote_reply: 1_500_000,
            rtt: SimTime::from_us(10),
        };
        assert_eq!(reply.network_rtt(), SimTime::from_us(8));
    }
}
