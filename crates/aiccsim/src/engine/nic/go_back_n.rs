//! RoCEv2's go-back-N. The receiver accepts only the next in-order packet; anything after a gap
//! is discarded and answered with a NACK for the first missing byte (again after
//! `nack_interval` if it seems lost), and the sender goes back to that byte and resends
//! everything from there, as it does on a timeout.

use crate::cc::{CcContext, CcEvent, CongestionControl};
use crate::engine::nic::host::{Reply, NO_BLOCK};
use crate::engine::Simulation;
use crate::time::SimTime;
use crate::wire::packet::{Packet, PacketKind};

/// Where a go-back-N sender stands after going back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GoBack {
    pub snd_una: u64,
    /// The next byte to send: the one asked for.
    pub snd_nxt: u64,
    /// Bytes that were sent past it and will be sent again.
    pub resent: u64,
    /// The cumulative acknowledgement moved (the timeout's clock and backoff restart).
    pub progress: bool,
}

/// The sender's reaction to a NACK for `seq` (the receiver has everything before it) with
/// `snd_una` and `snd_nxt` as they are: go back to `seq` and send everything from there again,
/// or, if an earlier go-back has not yet resent up to it, skip ahead to it. `None` for a NACK
/// older than what is acknowledged already. (The timeout goes back as a NACK for `snd_una`.)
#[inline]
pub(crate) fn go_back(snd_una: u64, snd_nxt: u64, seq: u64) -> Option<GoBack> {
    if seq < snd_una {
        return None;
    }
    Some(GoBack { snd_una: seq, snd_nxt: seq, resent: snd_nxt.saturating_sub(seq), progress: seq > snd_una })
}

/// Whether the receiver, missing byte `expected`, sends a NACK now: not if it asked for that
/// byte less than `interval` ago (the resend may be on its way); again once it has waited that
/// long (the NACK or the resend was lost).
#[inline]
pub(crate) fn nack_due(last: Option<(u64, SimTime)>, expected: u64, now: SimTime, interval: SimTime) -> bool {
    match last {
        Some((seq, at)) => seq != expected || now.saturating_sub(at) >= interval,
        None => true,
    }
}

impl Simulation {
    /// Data packet `pkt` (`payload` bytes) arrived at host port `p`: the ACK it triggers, if
    /// any, and whether it completed its flow. `credit`: the ACK carries receiver credit, and is
    /// sent at once (`host.rs`).
    #[inline(always)]
    pub(super) fn go_back_n_receive(
        &mut self,
        p: u32,
        pkt: &Packet,
        payload: u64,
        credit: bool,
    ) -> (Option<Reply>, bool) {
        let now = self.now;
        let ack_every = self.params.ack_every;
        let flow = &mut self.nic.flows[pkt.flow as usize];
        // Ultra Ethernet's immediate ACKs (`nic.ack_request`): for AR, a mark, the first packet,
        // a duplicate.
        let at_once = credit || self.params.ack_request && (pkt.flag || pkt.ecn || flow.rcv_nxt == 0);
        let mut ack = None;
        let mut newly_complete = false;
        if pkt.seq == flow.rcv_nxt {
            self.work.progress_at = now;
            self.work.bytes_delivered += payload;
            flow.rcv_nxt += payload;
            flow.acks_pending += 1;
            flow.ecn_pending |= pkt.ecn;
            flow.last_nack = None;
            let complete = flow.rcv_nxt == flow.size;
            newly_complete = complete && flow.finish.is_none();
            if newly_complete {
                flow.finish = Some(now);
            }
            if complete || at_once || flow.acks_pending >= ack_every {
                ack = Some(Reply {
                    seq: flow.rcv_nxt,
                    ecn: flow.ecn_pending,
                    block: NO_BLOCK,
                    sack: super::selective::NO_SACK,
                });
                flow.acks_pending = 0;
                flow.ecn_pending = false;
            }
        } else if pkt.seq > flow.rcv_nxt {
            self.answer_gap(p, pkt);
        } else {
            // A duplicate from a go-back: re-acknowledge so the sender catches up (always for the
            // flow's last packet, whose ACK may be what the sender lost).
            flow.acks_pending += 1;
            let last = pkt.seq + payload >= flow.size;
            if flow.acks_pending >= ack_every || last || credit || self.params.ack_request {
                flow.acks_pending = 0;
                ack = Some(Reply { seq: flow.rcv_nxt, ecn: false, block: NO_BLOCK, sack: super::selective::NO_SACK });
            }
        }
        (ack, newly_complete)
    }

    /// Data packet `pkt` arrived at host port `p` after a gap: it is discarded, and the missing
    /// byte asked for, once per missing byte unless the NACK seems lost.
    fn answer_gap(&mut self, p: u32, pkt: &Packet) {
        let now = self.now;
        let nack_interval = self.params.nack_interval;
        let flow = &mut self.nic.flows[pkt.flow as usize];
        let expected = flow.rcv_nxt;
        if nack_due(flow.last_nack, expected, now, nack_interval) {
            flow.last_nack = Some((expected, now));
            self.send_control(p, PacketKind::Nack, pkt, expected);
        }
    }

    /// A NACK: the receiver is missing `seq`; everything before it arrived.
    pub(super) fn go_back_on_nack(&mut self, f: u32, seq: u64) {
        let now = self.now;
        let flow = &mut self.nic.flows[f as usize];
        if flow.sender_done.is_some() {
            return;
        }
        let Some(back) = go_back(flow.snd_una, flow.snd_nxt, seq) else { return };
        let before = flow.in_flight();
        if back.progress {
            flow.last_progress = now;
            flow.rto_backoff = 1;
        }
        flow.snd_una = back.snd_una;
        flow.snd_nxt = back.snd_nxt;
        flow.retransmitted_bytes += back.resent;
        self.observe.counters.retransmitted_bytes += back.resent;
        self.track_in_flight(f, before);
        let mut cx = CcContext::new(now);
        let flow = &self.nic.flows[f as usize];
        let seq = flow.seq_base + seq;
        self.nic.ccs[flow.conn as usize].on_event(CcEvent::Nack { seq, trimmed: false, last_hop: false }, &mut cx);
        self.apply_cc(f, &cx);
        self.schedule_qp(f);
    }

    /// The timeout's go-back: to the first unacknowledged byte.
    pub(super) fn go_back_on_timeout(&mut self, f: u32) {
        let flow = &mut self.nic.flows[f as usize];
        let back = go_back(flow.snd_una, flow.snd_nxt, flow.snd_una).expect("snd_una is never behind itself");
        flow.retransmitted_bytes += back.resent;
        self.observe.counters.retransmitted_bytes += back.resent;
        flow.snd_nxt = back.snd_nxt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nack_sends_the_sender_back_to_the_nacked_byte() {
        // 10 KB sent, 4 KB acknowledged, the receiver misses byte 6000.
        let back = go_back(4_000, 10_000, 6_000).unwrap();
        assert_eq!(back, GoBack { snd_una: 6_000, snd_nxt: 6_000, resent: 4_000, progress: true });
        // A NACK for the first unacknowledged byte: no progress, everything outstanding again.
        let back = go_back(4_000, 10_000, 4_000).unwrap();
        assert_eq!(back, GoBack { snd_una: 4_000, snd_nxt: 4_000, resent: 6_000, progress: false });
    }

    #[test]
    fn a_nack_ahead_of_a_go_back_skips_to_it_and_an_old_one_is_ignored() {
        // Gone back to 2000 and resent up to 5000 when a NACK for 8000 comes: 2000..8000 all
        // arrived, so the sender goes on from 8000 and resends nothing it has not sent.
        let back = go_back(2_000, 5_000, 8_000).unwrap();
        assert_eq!(back, GoBack { snd_una: 8_000, snd_nxt: 8_000, resent: 0, progress: true });
        assert_eq!(go_back(6_000, 9_000, 5_000), None);
    }

    #[test]
    fn the_timeout_goes_back_to_the_first_unacknowledged_byte() {
        let back = go_back(3_000, 7_000, 3_000).unwrap();
        assert_eq!((back.snd_nxt, back.resent, back.progress), (3_000, 4_000, false));
    }

    #[test]
    fn a_nack_is_repeated_only_for_another_byte_or_after_the_interval() {
        let interval = SimTime::from_us(10);
        let t = SimTime::from_us(100);
        assert!(nack_due(None, 5_000, t, interval));
        assert!(!nack_due(Some((5_000, t)), 5_000, t + SimTime::from_us(9), interval));
        assert!(nack_due(Some((5_000, t)), 5_000, t + interval, interval));
        assert!(nack_due(Some((5_000, t)), 6_000, t, interval), "a new gap is asked for at once");
    }
}
