//! RoCEv2's go-back-N. The receiver accepts only the next in-order packet; anything after a gap
//! is discarded and answered with a NACK for the first missing byte (again after
//! `nack_interval` if it seems lost), and the sender goes back to that byte and resends
//! everything from there, as it does on a timeout.

use crate::cc::{CcContext, CcEvent, CongestionControl};
use crate::engine::nic::host::{Reply, NO_BLOCK};
use crate::engine::Simulation;
use crate::wire::packet::{Packet, PacketKind};

impl Simulation {
    /// Data packet `pkt` (`payload` bytes) arrived at host port `p`: the ACK it triggers, if
    /// any, and whether it completed its flow.
    #[inline(always)]
    pub(super) fn go_back_n_receive(&mut self, p: u32, pkt: &Packet, payload: u64) -> (Option<Reply>, bool) {
        let now = self.now;
        let ack_every = self.params.ack_every;
        let flow = &mut self.nic.flows[pkt.flow as usize];
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
            if complete || flow.acks_pending >= ack_every {
                ack = Some(Reply { seq: flow.rcv_nxt, ecn: flow.ecn_pending, block: NO_BLOCK });
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
            if flow.acks_pending >= ack_every || last {
                flow.acks_pending = 0;
                ack = Some(Reply { seq: flow.rcv_nxt, ecn: false, block: NO_BLOCK });
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
    pub(super) fn go_back_on_nack(&mut self, f: u32, seq: u64) {
        let now = self.now;
        let flow = &mut self.nic.flows[f as usize];
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
            self.observe.counters.retransmitted_bytes += flow.snd_nxt - seq;
        }
        // Go back to the missing byte; or, if an earlier go-back has not yet resent up to it,
        // skip ahead: everything before `seq` has arrived.
        flow.snd_nxt = seq;
        self.track_in_flight(f, before);
        let mut cx = CcContext::new(now);
        let flow = &self.nic.flows[f as usize];
        let seq = flow.seq_base + seq;
        self.nic.ccs[flow.conn as usize].on_event(CcEvent::Nack { seq }, &mut cx);
        self.apply_cc(f, &cx);
        self.schedule_qp(f);
    }

    /// The timeout's go-back: to the first unacknowledged byte.
    pub(super) fn go_back_on_timeout(&mut self, f: u32) {
        let flow = &mut self.nic.flows[f as usize];
        flow.retransmitted_bytes += flow.snd_nxt - flow.snd_una;
        self.observe.counters.retransmitted_bytes += flow.snd_nxt - flow.snd_una;
        flow.snd_nxt = flow.snd_una;
    }
}
