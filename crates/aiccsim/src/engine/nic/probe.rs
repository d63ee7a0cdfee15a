//! RTT probes: for algorithms that ask for them ([`crate::cc::Algorithm::rtt_probe_interval`]),
//! the sending NIC sends a small probe for each of its active flows, as a NIC's probe engine
//! would: at most one per real-time RTT (the last reply's round trip; the base RTT before the
//! first) and never more often than the algorithm's interval, and only while the flow has sent
//! data since its last probe (a flow held back by its window or by PFC is not probed into a
//! queue it adds nothing to). The first goes when the flow starts. The receiving NIC answers at
//! once. The reply carries the request's transmit time back (so the
//! sender keeps no state per probe, as the Barre slides' "RTT Probe Modification" asks) with the
//! receiver's clock at the request's arrival and at its reply, and raises
//! [`CcEvent::RttProbe`] at the sender.
//!
//! The request travels at the flow's data priority: it waits in the same egress queues as the
//! flow's data and is paused by PFC with it, so its round trip shows the queuing the data sees
//! (at the control priority it would overtake every queue and measure only the wire). The reply
//! comes back at the control priority, as an ACK does: a probe's RTT and an ACK's measure the
//! same path. Both are the size of a CNP (`nic.cnp_size`): a RoCEv2 header with no payload.
//!
//! A fraction `nic.probe_loss` of the requests that reach their receiver get no reply (the
//! slides report 8.9% lost to a NIC limitation), each drawn from one stream of the run's seed in
//! event order, so a run repeats exactly. A run whose algorithm does not probe has no
//! [`Probes`] and never reaches this file.

use crate::cc::{Algorithm, CcContext, CcEvent, CongestionControl, FlowFacts, ProbeReply};
use crate::engine::nic::qp::Flow;
use crate::engine::{Event, Simulation};
use crate::metrics::DurationHistogram;
use crate::rng::{self, SimRng};
use crate::time::SimTime;
use crate::wire::packet::{Packet, PacketKind, CONTROL_PRIORITY};
use rand::RngExt;

/// The probing state of a run whose algorithm probes.
pub struct Probes {
    /// Per flow: the least time between its probes (`SimTime::ZERO`: the flow is not probed,
    /// e.g. NVLink).
    interval: Vec<SimTime>,
    /// Per flow: its real-time RTT (the last reply's round trip, the base RTT before one), and
    /// the bytes it had sent at its last probe (`u64::MAX`: none yet).
    rtt: Vec<SimTime>,
    sent_mark: Vec<u64>,
    loss: f64,
    rng: SimRng,
    pub sent: u64,
    pub lost: u64,
    /// Replies that reached their sender, and the round trips they measured.
    pub answered: u64,
    pub rtts: DurationHistogram,
}

impl Probes {
    pub fn new(interval: Vec<SimTime>, rtt: Vec<SimTime>, loss: f64, seed: u64) -> Self {
        Probes {
            sent_mark: vec![u64::MAX; interval.len()],
            interval,
            rtt,
            loss,
            rng: rng::stream(seed, "nic.probe_loss", 0),
            sent: 0,
            lost: 0,
            answered: 0,
            rtts: DurationHistogram::default(),
        }
    }
}

impl Probes {
    /// Whether the next request to reach its receiver goes unanswered: a draw of `nic.probe_loss`
    /// (none drawn when no probe is lost).
    #[inline]
    fn loses(&mut self) -> bool {
        self.loss > 0.0 && self.rng.random::<f64>() < self.loss
    }

    /// The probes of a run: every flow probes at its algorithm's interval (NVLink transfers run
    /// no algorithm of the NIC's); `None` when no flow probes. `facts` are per connection.
    pub(crate) fn for_flows(
        algorithm: &dyn Algorithm,
        facts: &[FlowFacts],
        flows: &[Flow],
        loss: f64,
        seed: u64,
    ) -> Option<Box<Probes>> {
        let intervals: Vec<SimTime> = (flows.iter())
            .map(|flow| match flow.nvlink {
                true => SimTime::ZERO,
                false => algorithm.rtt_probe_interval(&facts[flow.conn as usize]).unwrap_or(SimTime::ZERO),
            })
            .collect();
        let any = intervals.iter().any(|&i| i > SimTime::ZERO);
        let rtts = flows.iter().map(|f| facts[f.conn as usize].base_rtt).collect();
        any.then(|| Box::new(Probes::new(intervals, rtts, loss, seed)))
    }
}

/// A clock reading (picoseconds, may be negative) as the two 32-bit words of a reply's feedback
/// field, low word first, and back.
#[inline]
fn to_words(t: i64) -> [u32; 2] {
    let bits = t as u64;
    [bits as u32, (bits >> 32) as u32]
}

#[inline]
fn from_words(w: [u32; 2]) -> i64 {
    ((w[1] as u64) << 32 | w[0] as u64) as i64
}

impl Simulation {
    /// Flow `f` starts sending: its first probe goes now, the next one interval later.
    #[cold]
    #[inline(never)]
    pub(crate) fn start_probing(&mut self, f: u32) {
        let Some(p) = self.nic.probes.as_deref() else { return };
        if p.interval[f as usize] > SimTime::ZERO {
            self.events.push(self.now, Event::Probe(f));
        }
    }

    /// Flow `f`'s probe timer: a probe if the flow sent data since its last one, the next timer
    /// a real-time RTT (at least an interval) on; nothing once the flow is done (its probing
    /// stops).
    #[cold]
    #[inline(never)]
    pub(crate) fn probe_due(&mut self, f: u32) {
        let flow = &self.nic.flows[f as usize];
        if flow.sender_done.is_some() {
            return;
        }
        let sent = flow.high_sent + flow.retransmitted_bytes;
        let probes = self.nic.probes.as_deref_mut().expect("a probe timer runs only where probes do");
        let fi = f as usize;
        if probes.sent_mark[fi] == sent {
            self.events.push(self.now + probes.interval[fi], Event::Probe(f));
            return;
        }
        probes.sent_mark[fi] = sent;
        let mut pkt = Packet::new(PacketKind::Probe, flow.priority, self.params.cnp_size);
        pkt.flow = f;
        pkt.ecmp_key = flow.ecmp_key;
        pkt.dst = flow.dst;
        pkt.sent_at = self.now;
        let port = self.topo.host_port(flow.src);
        let probes = self.nic.probes.as_deref_mut().expect("a probe timer runs only where probes do");
        probes.sent += 1;
        let next = self.now + probes.interval[fi].max(probes.rtt[fi]);
        self.events.push(next, Event::Probe(f));
        // Queued behind nothing but control packets at the NIC: `host_next_packet` takes it
        // before the queue pairs' data, unless its priority is paused.
        let id = self.net.packets.alloc(pkt);
        self.net.ports[port as usize].enqueue(id, &pkt);
        self.kick(port);
    }

    /// A probe request reached its receiver at host port `p`: answered at once with the
    /// receiver's clock at arrival and at reply, unless it is one of those lost.
    #[cold]
    #[inline(never)]
    pub(crate) fn probe_received(&mut self, p: u32, pkt: &Packet) {
        let probes = self.nic.probes.as_deref_mut().expect("probes travel only where probes run");
        if probes.loses() {
            probes.lost += 1;
            return;
        }
        let now = self.now;
        let host = self.net.ports[p as usize].node;
        let arrival = self.nic.clocks.read(host, now);
        // The reply is built in the same instant: with noise, a second reading of the clock.
        let reply_at = self.nic.clocks.read(host, now);
        let mut c = Packet::new(PacketKind::ProbeReply, CONTROL_PRIORITY, self.params.cnp_size);
        c.flow = pkt.flow;
        c.ecmp_key = pkt.ecmp_key;
        c.dst = self.nic.flows[pkt.flow as usize].src;
        c.sent_at = pkt.sent_at;
        c.seq = arrival as u64;
        c.feedback = to_words(reply_at);
        self.put_control(p, c);
    }

    /// A probe reply reached its sender: the flow's algorithm hears it (unless the flow is done
    /// and its queue pair carries nothing after it).
    #[cold]
    #[inline(never)]
    pub(crate) fn probe_answered(&mut self, pkt: &Packet) {
        let now = self.now;
        let f = pkt.flow;
        let reply = ProbeReply {
            sent_at: pkt.sent_at,
            remote_arrival: pkt.seq as i64,
            remote_reply: from_words(pkt.feedback),
            rtt: now.saturating_sub(pkt.sent_at),
        };
        let probes = self.nic.probes.as_deref_mut().expect("probes travel only where probes run");
        probes.answered += 1;
        // The NIC's next probe waits this round trip (the receiver's hold, which a real-time RTT
        // leaves out, is part of how long the probe engine waited).
        probes.rtt[f as usize] = reply.rtt;
        if now >= self.params.warmup {
            probes.rtts.record(reply.rtt.0);
        }
        let flow = &self.nic.flows[f as usize];
        if flow.sender_done.is_some() && !flow.shared {
            return;
        }
        let mut cx = CcContext::new(now);
        self.nic.ccs[flow.conn as usize].on_event(CcEvent::RttProbe(reply), &mut cx);
        self.apply_cc(f, &cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_timestamp_crosses_the_feedback_words_unchanged() {
        for t in [0, 1, -1, 4_000_000, -4_000_000, i64::MAX, i64::MIN, 1 << 32, (1 << 32) - 1] {
            assert_eq!(from_words(to_words(t)), t);
        }
        assert_eq!(to_words(5), [5, 0], "low word first");
    }

    #[test]
    fn the_loss_rate_is_drawn_from_the_seed_and_none_is_drawn_without_loss() {
        let share = |loss: f64, seed: u64| {
            let mut p = Probes::new(vec![SimTime::from_us(1)], vec![SimTime::ZERO], loss, seed);
            (0..40_000).filter(|_| p.loses()).count() as f64 / 40_000.0
        };
        assert_eq!(share(0.0, 1), 0.0);
        assert_eq!(share(1.0, 1), 1.0);
        assert!((share(0.25, 1) - 0.25).abs() < 0.01, "{}", share(0.25, 1));
        assert_eq!(share(0.25, 1), share(0.25, 1), "the same seed, the same losses");
        let mut p = Probes::new(Vec::new(), Vec::new(), 0.0, 1);
        let before = p.rng.clone();
        p.loses();
        assert_eq!(p.rng, before, "no loss configured: the stream does not move");
    }
}
