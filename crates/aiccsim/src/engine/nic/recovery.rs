//! Loss recovery, RoCEv2's go-back-N. The receiver accepts only the next in-order packet;
//! anything after a gap is discarded and answered with a NACK for the first missing byte (again
//! after `nack_interval` if it seems lost), and the sender goes back to that byte. A
//! retransmission timeout, doubling on each expiry up to `MAX_RTO_BACKOFF` times `nic.rto`,
//! covers lost tails that no later packet can reveal.

use crate::cc::{CcContext, CcEvent, CongestionControl};
use crate::config::MAX_RTO_BACKOFF;
use crate::engine::{Event, Simulation};
use crate::time::SimTime;
use crate::wire::packet::{Packet, PacketKind};

impl Simulation {
    /// Data packet `pkt` arrived at host port `p` after a gap: it is discarded, and the missing
    /// byte asked for, once per missing byte unless the NACK seems lost.
    pub(super) fn answer_gap(&mut self, p: u32, pkt: &Packet) {
        let now = self.now;
        let nack_interval = self.params.nack_interval;
        let flow = &mut self.flows[pkt.flow as usize];
        let expected = flow.rcv_nxt;
        let due = match flow.last_nack {
            Some((seq, at)) => seq != expected || now.saturating_sub(at) >= nack_interval,
            None => true,
        };
        if due {
            flow.last_nack = Some((expected, now));
            self.send_control(p, PacketKind::Nack, pkt, expected);
        }
    }

    /// A NACK: the receiver is missing `seq`; everything before it arrived.
    pub(crate) fn on_nack(&mut self, f: u32, seq: u64) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if flow.sender_done.is_some() || seq < flow.snd_una {
            return;
        }
        let before = flow.in_flight();
        if seq > flow.snd_una {
            flow.snd_una = seq;
            flow.last_progress = now;
            flow.rto_backoff = 1;
        }
        if seq < flow.snd_nxt {
            flow.retransmitted_bytes += flow.snd_nxt - seq;
            self.counters.retransmitted_bytes += flow.snd_nxt - seq;
        }
        // Go back to the missing byte; or, if an earlier go-back has not yet resent up to it,
        // skip ahead: everything before `seq` has arrived.
        flow.snd_nxt = seq;
        self.track_in_flight(f, before);
        let mut cx = CcContext::new(now);
        let flow = &self.flows[f as usize];
        let seq = flow.seq_base + seq;
        self.ccs[flow.conn as usize].on_event(CcEvent::Nack { seq }, &mut cx);
        self.apply_cc(f, &cx);
        self.schedule_qp(f);
    }

    /// When the retransmission timeout is due: `rto` (times the backoff) after the last progress.
    fn rto_deadline(&self, f: u32) -> SimTime {
        let flow = &self.flows[f as usize];
        flow.last_progress + SimTime(self.params.rto.0.saturating_mul(flow.rto_backoff as u64))
    }

    /// Makes sure a timeout check is queued no later than the current deadline. The check is not
    /// moved on every ACK (that would be a heap operation per ACK): when it fires early it
    /// re-queues itself for the deadline then current. Only a deadline that moves earlier (the
    /// backoff reset by an ACK) queues a new check; the old one is recognised as stale.
    pub(crate) fn arm_rto(&mut self, f: u32) {
        let deadline = self.rto_deadline(f).max(self.now);
        let flow = &mut self.flows[f as usize];
        if flow.rto_queued.is_none_or(|q| deadline < q) {
            flow.rto_gen = flow.rto_gen.wrapping_add(1);
            flow.rto_queued = Some(deadline);
            self.events.push(deadline, Event::Rto(f, flow.rto_gen));
        }
    }

    pub(crate) fn rto_fired(&mut self, f: u32, gen: u32) {
        let now = self.now;
        let deadline = self.rto_deadline(f);
        let flow = &mut self.flows[f as usize];
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
        // Timeout: go back to the first unacknowledged byte.
        let before = flow.in_flight();
        flow.retransmitted_bytes += flow.snd_nxt - flow.snd_una;
        self.counters.retransmitted_bytes += flow.snd_nxt - flow.snd_una;
        flow.snd_nxt = flow.snd_una;
        flow.timeouts += 1;
        flow.rto_backoff = (flow.rto_backoff * 2).min(MAX_RTO_BACKOFF);
        flow.last_progress = now;
        flow.next_send = now;
        self.counters.timeouts += 1;
        self.track_in_flight(f, before);
        let mut cx = CcContext::new(now);
        self.ccs[self.flows[f as usize].conn as usize].on_event(CcEvent::Timeout, &mut cx);
        self.apply_cc(f, &cx);
        self.schedule_qp(f);
        self.arm_rto(f);
    }
}
