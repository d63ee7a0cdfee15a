//! Freezing a steady group and thawing it later, translated in time, with what it would have
//! done in between credited at its steady rates (see `mod.rs`).

use super::groups::{Group, NONE};
use super::steady::Steady;
use super::FastForward;
use crate::cc::{CongestionControl, ReceiverCc};
use crate::engine::net::pool::PacketId;
use crate::engine::{Event, Simulation};
use crate::metrics::fast_forward::{FlowSkip, Skip};
use crate::time::SimTime;

/// A frozen group: since when, its rates, and its events set aside.
pub(crate) struct Frozen {
    pub number: u32,
    pub since: SimTime,
    pub group: Group,
    pub steady: Steady,
    /// The running flows of its connections, and the hosts of its ports.
    flows: Vec<u32>,
    hosts: Vec<u32>,
    /// Its pending events, in the order they were due, with their times.
    stash: Vec<(SimTime, Event)>,
}

/// `t` moved on by `by` ("never" stays never).
fn later(t: SimTime, by: SimTime) -> SimTime {
    if t == SimTime::MAX {
        t
    } else {
        t + by
    }
}

impl Simulation {
    /// When a steady group should thaw: before the message each of its connections is sending
    /// comes within one judging window of its last byte at the connection's steady rate (so that
    /// every message's end is simulated), and before the stop time; `None` if that leaves less
    /// than one span of four windows to skip (not worth a freeze).
    pub(super) fn skip_until(&self, ff: &FastForward, s: &Steady, key: u32) -> Option<SimTime> {
        let skipped = ff.skipped_since_formed.get(&key).map_or(0.0, |t| t.0 as f64);
        let span = SimTime(ff.every.0 * s.checks);
        let mut skip = u128::MAX;
        for fs in &s.flows {
            let flow = &self.nic.flows[self.nic.conns[fs.conn as usize].holder as usize];
            let left = u128::from(flow.size - flow.high_sent);
            // The time to send what is left at the steady rate, less a window.
            let time_left = left * u128::from(fs.time) / u128::from(fs.acked);
            skip = skip.min(time_left.saturating_sub(u128::from(span.0) / 4));
            // A rate that moved by `drift` over half a span, if it goes on moving so, makes the
            // credit of a skip of `k` spans wrong by about `drift * k`: no more than the
            // tolerance, over all the skips since the group's members last changed.
            let drifting = span.0 as f64 * ff.tolerance / fs.drift.max(1e-9) - skipped;
            skip = skip.min(drifting.clamp(0.0, u64::MAX as f64) as u128);
        }
        let stop = self.params.stop_time;
        if stop < SimTime::MAX {
            skip = skip.min(u128::from(stop.0.saturating_sub(self.now.0)).saturating_sub(u128::from(span.0)));
        }
        (skip >= u128::from(span.0)).then(|| SimTime(self.now.0.saturating_add(skip.min(u128::from(u64::MAX)) as u64)))
    }

    /// Freezes group `g`, steady as `s` says, until `until` at the latest.
    pub(super) fn freeze(&mut self, ff: &mut FastForward, g: Group, s: Steady, until: SimTime) {
        ff.freezes = ff.freezes.wrapping_add(1);
        let key = g.key;
        let flows: Vec<u32> = g.conns.iter().flat_map(|c| ff.conns[c].flows.iter().copied()).collect();
        let hosts: Vec<u32> = (g.ports.iter())
            .filter(|&&p| self.net.ports[p as usize].is_host)
            .map(|&p| self.net.ports[p as usize].node)
            .collect();
        for &p in &g.ports {
            ff.port_frozen[p as usize] = key;
        }
        for &f in &flows {
            ff.flow_frozen[f as usize] = key;
        }
        for &c in &g.conns {
            ff.conn_frozen[c as usize] = key;
        }
        let (pf, ff_flows, cf) = (&ff.port_frozen, &ff.flow_frozen, &ff.conn_frozen);
        let stash = self.events.extract(|ev| match *ev {
            Event::PortWake(p, _) | Event::Arrive(p, _) | Event::Lost(p, _) => pf[p as usize] == key,
            Event::CcTimer(c, _, _) => cf[c as usize] == key,
            Event::Rto(f, _) | Event::Probe(f) => ff_flows[f as usize] == key,
            _ => false,
        });
        self.events.push(until, Event::Thaw(key, ff.freezes));
        let frozen = Frozen { number: ff.freezes, since: self.now, group: g, steady: s, flows, hosts, stash };
        ff.frozen.insert(key, frozen);
    }

    /// Thaws group `key` now: translated by the time it was frozen, with that time's progress
    /// credited.
    pub(super) fn thaw(&mut self, ff: &mut FastForward, key: u32) {
        let fz = ff.frozen.remove(&key).expect("thawing a frozen group");
        let by = self.now - fz.since;
        for &p in &fz.group.ports {
            ff.port_frozen[p as usize] = NONE;
        }
        for &f in &fz.flows {
            ff.flow_frozen[f as usize] = NONE;
        }
        for &c in &fz.group.conns {
            ff.conn_frozen[c as usize] = NONE;
        }
        if by > SimTime::ZERO {
            self.translate(&fz, by);
            let credited = self.credit(ff, &fz, by);
            ff.report.bytes_credited += credited;
            ff.report.skipped += by;
            *ff.skipped_since_formed.entry(key).or_insert(SimTime::ZERO) += by;
            // (The group's key is its lowest connection's number; the report names it by that
            // connection's first flow, its lowest flow.)
            let group = self.nic.conn_heads[key as usize];
            ff.report.skips.push(Skip { group, flows: fz.flows.len() as u32, from: fz.since, to: self.now });
            if let Some(iv) = self.observe.recorder.interval() {
                // The flows' next samples span what was simulated of their intervals: from
                // their last sample (at or before the freeze), translated by the skip.
                let last_sample = SimTime(fz.since.0 / iv.0 * iv.0);
                for &f in &fz.flows {
                    let from = ff.sample_from.entry(f).or_insert(last_sample);
                    *from += by;
                }
            }
        }
        for (t, ev) in fz.stash {
            self.events.push(later(t, by), ev);
        }
        Simulation::regrouped_now(ff, key);
        self.work.progress_at = self.now;
    }

    /// Moves every absolute time group `fz` holds on by `by`: what a group translated in time
    /// would hold. (Records of the past, a flow's start or first byte, stay.)
    fn translate(&mut self, fz: &Frozen, by: SimTime) {
        for &p in &fz.group.ports {
            let port = &mut self.net.ports[p as usize];
            port.busy_until += by;
            port.wake_at = later(port.wake_at, by);
            let queued: Vec<PacketId> = port.prio.iter().flat_map(|q| q.packets.iter().copied()).collect();
            for id in queued {
                self.translate_packet(id, by);
            }
            if let Some(pint) = self.net.pint.as_mut() {
                pint.ports[p as usize].shift_clock(by);
            }
        }
        for &(_, ev) in &fz.stash {
            if let Event::Arrive(_, id) | Event::Lost(_, id) = ev {
                self.translate_packet(PacketId(id), by);
            }
        }
        for &f in &fz.flows {
            let flow = &mut self.nic.flows[f as usize];
            flow.next_send = later(flow.next_send, by);
            flow.rto_queued = flow.rto_queued.map(|t| later(t, by));
            flow.last_progress += by;
            if let Some((seq, t)) = flow.last_nack {
                flow.last_nack = Some((seq, t + by));
            }
        }
        for &h in &fz.hosts {
            self.nic.sched.shift_clock(h, by);
        }
        for &c in &fz.group.conns {
            for t in self.nic.conns[c as usize].timers.iter_mut() {
                t.shift_clock(by);
            }
            self.nic.ccs[c as usize].shift_clock(by);
            self.nic.receivers[c as usize].shift_clock(by);
        }
    }

    fn translate_packet(&mut self, id: PacketId, by: SimTime) {
        let pkt = &mut self.net.packets[id];
        pkt.sent_at += by;
        let int = pkt.int;
        for hop in self.net.int_pool.hops_mut(int) {
            hop.ts += by;
        }
    }

    /// What group `fz` would have done in `by` at its steady rates, credited: each connection's
    /// bytes to the message it is sending (whole packets, its remaining size shrinking by them), each port's bytes, packets and ECN
    /// marks, and the run's counters. Returns the bytes credited to flows.
    fn credit(&mut self, ff: &mut FastForward, fz: &Frozen, by: SimTime) -> u64 {
        let span = u128::from(ff.every.0 * fz.steady.checks);
        let scale = |x: u64| (u128::from(x) * u128::from(by.0) / span) as u64;
        let (mtu, header) = (self.params.mtu, self.params.header);
        let mut credited = 0;
        let c = &mut self.observe.counters;
        for fs in &fz.steady.flows {
            let holder = self.nic.conns[fs.conn as usize].holder;
            let flow = &mut self.nic.flows[holder as usize];
            // Whole packets, and never the last one: the flow's end is simulated.
            let room = (flow.size - flow.high_sent).saturating_sub(mtu) / mtu;
            let at_rate = u128::from(fs.acked) * u128::from(by.0) / u128::from(fs.time);
            // Never faster than the NIC: packets of `mtu + header` bytes back to back.
            let line = self.nic.facts[fs.conn as usize].line_rate;
            let at_line = u128::from(by.0) / u128::from(line.tx_time(mtu + header).0.max(1)) * u128::from(mtu);
            let packets = ((at_rate.min(at_line) as u64) / mtu).min(room);
            let bytes = packets * mtu;
            flow.size -= bytes;
            flow.skipped += bytes;
            credited += bytes;
            ff.report.flow_skips.push(FlowSkip { flow: holder, from: fz.since, to: self.now, bytes });
            self.work.bytes_delivered += bytes;
            c.data_packets_sent += packets;
            c.data_payload_sent += bytes;
            c.data_bytes_sent += packets * (mtu + header);
            c.data_bytes_received += packets * (mtu + header);
            c.acks += scale(fs.acks);
            c.cnps += scale(fs.cnps);
            c.feedback_acks += scale(fs.feedback_acks);
        }
        for ps in &fz.steady.ports {
            // The port's own byte counters stay those of the packets it sent: INT stamps them,
            // and HPCC divides their growth by the time between two stamps, which the skip did
            // not pass. The credit is added where the counters are reported.
            let (packets, marks) = (scale(ps.tx_packets), scale(ps.ecn_marks));
            let credit = &mut ff.port_credit[ps.port as usize];
            credit.0 += scale(ps.tx_bytes);
            credit.1 += packets;
            let port = &mut self.net.ports[ps.port as usize];
            port.stats.ecn_marks += marks;
            c.packet_hops += packets;
            c.ecn_marks += marks;
            self.observe.recorder.rebase_link(ps.port as usize, port.tx_bytes);
        }
        credited
    }
}
