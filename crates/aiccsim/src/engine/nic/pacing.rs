//! The NIC's rate limiter. After each data packet a queue pair waits `size / rate` before the
//! next, at the rate its algorithm reports then. When the algorithm changes the rate, the gap
//! already running is stretched or shortened, as on a NIC rate limiter (the HPCC ns-3 model's
//! `ChangeRate`).

use crate::cc::{CcContext, CongestionControl};
use crate::engine::Simulation;
use crate::time::{pacing_gap, SimTime};

/// When the pacer lets the next packet out after one of `size` wire bytes left at `now`, at
/// `rate` bits/s: one gap, `size / rate`, later.
#[inline]
pub(crate) fn next_send(now: SimTime, size: u64, rate: f64) -> SimTime {
    now + pacing_gap(size, rate)
}

/// The pacer's time when the rate changes from `old` to `new` while the gap after a packet of
/// `last_size` bytes runs (due at `next_send`): the gap is measured again from that packet's
/// departure at the new rate, and no earlier than `now`. Also whether the gap got shorter.
#[inline]
pub(crate) fn restretched(next_send: SimTime, now: SimTime, last_size: u64, old: f64, new: f64) -> (SimTime, bool) {
    let old_gap = pacing_gap(last_size, old);
    let new_gap = pacing_gap(last_size, new);
    let sent_at = next_send.saturating_sub(old_gap);
    ((sent_at + new_gap).max(now), new_gap < old_gap)
}

impl Simulation {
    /// Flow `f` just sent a packet of `size` wire bytes: its next may leave one gap later.
    #[inline]
    pub(super) fn pace_after(&mut self, f: u32, size: u64) {
        let rate = self.nic.ccs[self.nic.flows[f as usize].conn as usize].rate();
        let flow = &mut self.nic.flows[f as usize];
        flow.next_send = next_send(self.now, size, rate);
        flow.paced_rate = rate;
        flow.last_packet_size = size;
    }

    /// The earliest time, but no earlier than `not_before`, a queue pair of `host` with an open
    /// window may send, if any has data (`scheduler.rs`).
    pub(crate) fn host_next_send_time(&mut self, host: u32, not_before: SimTime) -> Option<SimTime> {
        let port = &self.net.ports[self.topo.host_port(host) as usize];
        if port.paused & (1 << self.params.data_priority) != 0 {
            return None;
        }
        let now = self.now;
        let (sched, pairs) = self.nic.scheduler(&self.params);
        sched.next_time(host, now, not_before, &pairs)
    }

    /// Applies what a CC hook did: its timer requests, and a rate change, which (as on a real
    /// NIC rate limiter, and in the HPCC ns-3 model's `ChangeRate`) stretches or shortens the
    /// gap already running after the last packet.
    ///
    /// Every change of a flow's pacer time, of its connection's window and of the bytes in
    /// flight that bound it is followed by a call here (the hooks, the ACK, NACK and timeout
    /// paths, a send, a message taking its connection's queue): the scheduler hears of them
    /// here, and lists again the connection's queue pairs it had parked on a closed window.
    pub(crate) fn apply_cc(&mut self, f: u32, cx: &CcContext) {
        for (slot, req) in cx.timer_requests() {
            self.set_cc_timer(f, slot, req);
        }
        let rate = self.nic.ccs[self.nic.flows[f as usize].conn as usize].rate();
        let flow = &mut self.nic.flows[f as usize];
        if rate != flow.paced_rate {
            let mut sooner = false;
            if flow.last_packet_size > 0 && flow.next_send > self.now {
                (flow.next_send, sooner) =
                    restretched(flow.next_send, self.now, flow.last_packet_size, flow.paced_rate, rate);
            }
            flow.paced_rate = rate;
            if sooner && flow.scheduled {
                // A wake-up, not a direct kick: this may run while the NIC is choosing its
                // next packet (a byte counter reacting in `on_send`).
                let (port, at) = (self.topo.host_port(flow.src), flow.next_send);
                self.wake_port(port, at);
            }
        }
        let (now, host) = (self.now, self.nic.flows[f as usize].src);
        let (sched, pairs) = self.nic.scheduler(&self.params);
        sched.touched(host, f, now, &pairs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_packet_waits_its_size_at_the_rate() {
        let now = SimTime::from_us(10);
        assert_eq!(next_send(now, 1_000, 100e9), now + SimTime::from_ns(80));
        assert_eq!(next_send(now, 1_000, 50e9), now + SimTime::from_ns(160), "half the rate, twice the gap");
        assert_eq!(next_send(now, 1_000, 0.0), SimTime::MAX, "a rate of zero sends nothing more");
    }

    #[test]
    fn a_rate_change_stretches_or_shortens_the_gap_already_running() {
        // A 1000 B packet left at 10 us at 1 Gb/s: its gap (8 us) ends at 18 us.
        let (sent, size) = (SimTime::from_us(10), 1_000);
        let due = next_send(sent, size, 1e9);
        let now = SimTime::from_us(12);
        // Halved: the gap from the departure doubles, to 16 us.
        assert_eq!(restretched(due, now, size, 1e9, 0.5e9), (sent + SimTime::from_us(16), false));
        // Quadrupled: 2 us after the departure would be now exactly; eight times: no earlier
        // than now.
        assert_eq!(restretched(due, now, size, 1e9, 4e9), (now, true));
        assert_eq!(restretched(due, now, size, 1e9, 8e9), (now, true));
        assert_eq!(restretched(due, now, size, 1e9, 1e9), (due, false), "the same rate, the same time");
    }
}
