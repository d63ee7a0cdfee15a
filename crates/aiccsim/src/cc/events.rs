//! The NIC events, named once. The one list (`nic_events!` at the end of this file) makes the
//! enum a NIC program hears ([`NicEvent`]), the subset the sender half hears through its one
//! hook for rare signals ([`CcEvent`], as Linux's `cwnd_event`), the mapping from the one to
//! the other, and [`NIC_EVENTS`]: each event's Python handler and its arguments, which the Python
//! binding exports (`aiccsim._native.nic_events`) for `python/aiccsim/_algorithm.py` to check a
//! class against. A test holds `python/aiccsim/_native.pyi` and the table of
//! docs/cc/programmable.md to the same list.

use super::AckInfo;
use crate::time::SimTime;

/// One NIC event as a front end sees it: its [`NicEvent`] variant, the handler a Python class
/// defines for it, and the arguments that handler takes after the flow, each with its Python type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicEventInfo {
    pub variant: &'static str,
    pub handler: &'static str,
    pub args: &'static [(&'static str, &'static str)],
}

/// Expands the list of events; invoked once, below. `hooks` are the events the sender half
/// hears through a method of its own (`on_start`, `on_send`, `on_ack`, `on_timer`): they stay
/// out of [`CcEvent`]. Each event: its variant (unit, fields `{ name: Type, ... }`, or one value
/// `(name: Type)`), then its Python handler with its arguments after `flow` (`name: PythonType`).
macro_rules! nic_events {
    (
        hooks { $(
            $(#[$hdoc:meta])*
            $hook:ident $( ($hval:ident: $hvty:ty) )? $( { $hfield:ident: $hfty:ty } )?
                => $hhandler:ident($($harg:ident: $hpy:ident),*),
        )+ }
        signals { $(
            $(#[$sdoc:meta])*
            $signal:ident $( ($sval:ident: $svty:ty) )? $( { $($sfield:ident: $sfty:ty),+ } )?
                => $shandler:ident($($sarg:ident: $spy:ident),*),
        )+ }
    ) => {
        /// An event the NIC raises for one flow (one connection, when messages share one).
        #[derive(Clone, Copy, Debug)]
        pub enum NicEvent<'a> {
            $( $(#[$hdoc])* $hook $( ($hvty) )? $( { $hfield: $hfty } )?, )+
            $( $(#[$sdoc])* $signal $( ($svty) )? $( { $($sfield: $sfty),+ } )?, )+
        }

        /// Rare signals, one hook (as Linux's `cwnd_event`): the NIC events that have no method
        /// of their own in [`super::CongestionControl`]. An algorithm ignores those it has no use for.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum CcEvent {
            $( $(#[$sdoc])* $signal $( ($svty) )? $( { $($sfield: $sfty),+ } )?, )+
        }

        impl From<CcEvent> for NicEvent<'_> {
            fn from(ev: CcEvent) -> Self {
                match ev {
                    $( CcEvent::$signal $( ($sval) )? $( { $($sfield),+ } )?
                        => NicEvent::$signal $( ($sval) )? $( { $($sfield),+ } )?, )+
                }
            }
        }

        /// Every event, in the order of [`NicEvent`]'s variants.
        pub const NIC_EVENTS: &[NicEventInfo] = &[
            $( NicEventInfo {
                variant: stringify!($hook),
                handler: stringify!($hhandler),
                args: &[$( (stringify!($harg), stringify!($hpy)) ),*],
            }, )+
            $( NicEventInfo {
                variant: stringify!($signal),
                handler: stringify!($shandler),
                args: &[$( (stringify!($sarg), stringify!($spy)) ),*],
            }, )+
        ];

        impl NicEvent<'_> {
            /// The event's place in [`NIC_EVENTS`].
            pub fn index(&self) -> usize {
                // The variants' own numbering, without their payloads.
                enum Index { $( $hook, )+ $( $signal, )+ }
                match self {
                    $( NicEvent::$hook { .. } => Index::$hook as usize, )+
                    $( NicEvent::$signal { .. } => Index::$signal as usize, )+
                }
            }
        }
    };
}

nic_events! {
    hooks {
        /// The flow starts: set the first rate and arm timers here.
        Start => on_start(),
        /// A data packet of `bytes` wire bytes left the NIC (the byte counter's input).
        Tx { bytes: u64 } => on_tx(nbytes: int),
        /// An ACK came back (transports with ACKs only).
        Ack(ack: &'a AckInfo<'a>) => on_ack(ack: Ack),
        /// Timer `slot` fired.
        Timer { slot: usize } => on_timer(slot: int),
    }
    signals {
        /// The receiver saw a gap and asked for the bytes from `seq` again; `trimmed`: it asked
        /// because the packet reached it trimmed by a congested switch (`[switch.trimming]`),
        /// not missing; `last_hop`: trimmed by the switch port facing the receiver, not inside
        /// the fabric. (A Python handler hears `seq` alone.)
        Nack { seq: u64, trimmed: bool, last_hop: bool } => on_nack(seq: int),
        /// A congestion notification packet arrived.
        Cnp => on_cnp(),
        /// No ACK progress for the retransmission timeout.
        Timeout => on_timeout(),
        /// An RTT probe the NIC sent for this flow came back, with the timestamps both NICs wrote
        /// on it.
        RttProbe(reply: ProbeReply) => on_rtt_probe(probe: Probe),
        /// The last byte of one of the connection's messages was acknowledged (for message-level
        /// algorithms: on a collective's persistent connections, a message is one chunk).
        MessageDone(done: MessageDone) => on_message_done(message: Message),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_has_its_place_in_the_list_and_each_signal_maps_to_its_namesake() {
        let reply = ProbeReply { sent_at: SimTime::ZERO, remote_arrival: 0, remote_reply: 0, rtt: SimTime::from_us(1) };
        let done = MessageDone { bytes: 10, first_sent: SimTime::ZERO };
        let signals = [
            CcEvent::Nack { seq: 7, trimmed: true, last_hop: false },
            CcEvent::Cnp,
            CcEvent::Timeout,
            CcEvent::RttProbe(reply),
            CcEvent::MessageDone(done),
        ];
        for signal in signals {
            let event = NicEvent::from(signal);
            let name = format!("{signal:?}");
            assert!(name.starts_with(NIC_EVENTS[event.index()].variant), "{name} is {:?}", NIC_EVENTS[event.index()]);
            assert_eq!(format!("{event:?}"), name, "the payload goes across unchanged");
        }
        assert_eq!(NIC_EVENTS[NicEvent::Start.index()].handler, "on_start");
        assert_eq!(NIC_EVENTS[NicEvent::Timer { slot: 2 }.index()].args, &[("slot", "int")]);
        let handlers: std::collections::BTreeSet<_> = NIC_EVENTS.iter().map(|e| e.handler).collect();
        assert_eq!(handlers.len(), NIC_EVENTS.len(), "one handler per event");
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
