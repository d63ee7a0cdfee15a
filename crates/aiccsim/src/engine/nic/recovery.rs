//! Loss recovery: what a NACK and the retransmission timeout do, for either scheme
//! (`nic.recovery`): RoCEv2's go-back-N (`go_back_n.rs`) or selective repeat
//! (`selective.rs`), which also decide what the receiver does with a packet after a gap. The
//! timeout is shared: doubling on each expiry up to `MAX_RTO_BACKOFF` times `nic.rto`, it
//! covers lost tails that no later packet can reveal.

use crate::cc::Check;
use crate::cc::{CcContext, CcEvent, CongestionControl};
use crate::config::{fail, NicConfig, Recovery, MAX_RTO_BACKOFF};
use crate::engine::{Event, Simulation};
use crate::time::SimTime;
use crate::topology::Topology;
use crate::wire::packet::Packet;

/// A timeout that expires before any ACK can come back is refused: it would fire on every
/// packet, which no one means (`max_packet`: the largest data packet's bytes).
pub(crate) fn check_rto(nic: &NicConfig, topo: &Topology, max_packet: u64) -> Check {
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
    Ok(())
}

/// When a timeout is due for a flow whose last progress was at `last_progress`: `rto` times
/// its backoff later (saturating: a huge RTO means never).
#[inline]
pub(crate) fn rto_deadline(last_progress: SimTime, rto: SimTime, backoff: u32) -> SimTime {
    last_progress + SimTime(rto.0.saturating_mul(backoff as u64))
}

/// The backoff after a timeout: doubled, up to `MAX_RTO_BACKOFF`. (An ACK that moves the
/// cumulative acknowledgement resets it to 1.)
#[inline]
pub(crate) fn backed_off(backoff: u32) -> u32 {
    (backoff * 2).min(MAX_RTO_BACKOFF)
}

impl Simulation {
    /// A NACK reached the sender.
    pub(crate) fn on_nack(&mut self, pkt: &Packet) {
        match self.params.recovery {
            Recovery::GoBackN => self.go_back_on_nack(pkt.flow, pkt.seq),
            Recovery::Selective => self.selective_nack(pkt),
        }
    }

    /// When the retransmission timeout is due: `rto` (times the backoff) after the last progress.
    fn rto_deadline(&self, f: u32) -> SimTime {
        let flow = &self.nic.flows[f as usize];
        rto_deadline(flow.last_progress, self.params.rto, flow.rto_backoff)
    }

    /// Makes sure a timeout check is queued no later than the current deadline. The check is not
    /// moved on every ACK (that would be a heap operation per ACK): when it fires early it
    /// re-queues itself for the deadline then current. Only a deadline that moves earlier (the
    /// backoff reset by an ACK) queues a new check; the old one is recognised as stale.
    pub(crate) fn arm_rto(&mut self, f: u32) {
        let deadline = self.rto_deadline(f).max(self.now);
        let flow = &mut self.nic.flows[f as usize];
        if flow.rto_queued.is_none_or(|q| deadline < q) {
            flow.rto_gen = flow.rto_gen.wrapping_add(1);
            flow.rto_queued = Some(deadline);
            self.events.push(deadline, Event::Rto(f, flow.rto_gen));
        }
    }

    pub(crate) fn rto_fired(&mut self, f: u32, gen: u32) {
        let now = self.now;
        let deadline = self.rto_deadline(f);
        let flow = &mut self.nic.flows[f as usize];
        if gen != flow.rto_gen {
            return;
        }
        flow.rto_queued = None;
        if flow.sender_done.is_some() || flow.snd_una == flow.snd_nxt {
            return; // nothing outstanding; the next send re-arms
        }
        if now < deadline {
            self.arm_rto(f);
            return;
        }
        let before = flow.in_flight();
        match self.params.recovery {
            Recovery::GoBackN => self.go_back_on_timeout(f),
            Recovery::Selective => self.selective_timeout(f),
        }
        self.reps_timeout(f);
        let flow = &mut self.nic.flows[f as usize];
        flow.timeouts += 1;
        flow.rto_backoff = backed_off(flow.rto_backoff);
        flow.last_progress = now;
        flow.next_send = now;
        self.observe.counters.timeouts += 1;
        self.track_in_flight(f, before);
        let mut cx = CcContext::new(now);
        self.nic.ccs[self.nic.flows[f as usize].conn as usize].on_event(CcEvent::Timeout, &mut cx);
        self.apply_cc(f, &cx);
        self.schedule_qp(f);
        self.arm_rto(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_on_each_timeout_up_to_its_cap() {
        let mut b = 1;
        let mut seen = vec![b];
        for _ in 0..40 {
            b = backed_off(b);
            seen.push(b);
        }
        assert!(seen.windows(2).all(|w| w[1] == (2 * w[0]).min(MAX_RTO_BACKOFF)), "{seen:?}");
        assert_eq!(*seen.last().unwrap(), MAX_RTO_BACKOFF);
        assert_eq!(seen[1..4], [2, 4, 8]);
        assert!(MAX_RTO_BACKOFF.is_power_of_two(), "the cap is a doubling reached exactly");
    }

    #[test]
    fn the_deadline_is_the_rto_times_the_backoff_after_the_last_progress() {
        let (at, rto) = (SimTime::from_us(40), SimTime::from_us(100));
        assert_eq!(rto_deadline(at, rto, 1), SimTime::from_us(140));
        assert_eq!(rto_deadline(at, rto, 8), SimTime::from_us(840));
        let never = rto_deadline(SimTime::ZERO, SimTime(u64::MAX / 2), MAX_RTO_BACKOFF);
        assert_eq!(never, SimTime(u64::MAX), "no overflow: a timeout past the end of time");
    }
}
