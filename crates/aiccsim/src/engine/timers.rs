//! Congestion-control timers with lazy re-arming.
//!
//! Algorithms re-arm timers often (DCQCN pushes its 300 us increase timer back on every rate
//! decrease, every few microseconds). Queueing a new heap entry each time would fill the heap
//! with stale entries. Instead each timer keeps the time it should fire (`due`) apart from the
//! time of its one queued entry (`queued`): moving the deadline later only updates `due`, and
//! when the early entry pops it is re-queued for the real deadline. Moving it earlier queues a
//! new entry and the old one is recognised as stale by its generation.

use super::{Event, Simulation};
use crate::cc::{CcContext, CongestionControl};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, Default)]
pub struct TimerSlot {
    due: Option<SimTime>,
    queued: Option<SimTime>,
    gen: u32,
}

impl TimerSlot {
    /// Fast-forward: the deadline and the queued entry's time move on by `by`.
    pub(crate) fn shift_clock(&mut self, by: SimTime) {
        self.due = self.due.map(|t| t + by);
        self.queued = self.queued.map(|t| t + by);
    }
}

impl Simulation {
    /// Sets timer `slot` of the algorithm of flow `f`'s connection (timers belong to the
    /// algorithm, which the connection's messages share).
    pub(crate) fn set_cc_timer(&mut self, f: u32, slot: usize, at: Option<SimTime>) {
        let c = self.nic.flows[f as usize].conn;
        let t = &mut self.nic.conns[c as usize].timers[slot];
        t.due = at;
        let Some(at) = at else { return }; // cancelled: the queued entry will find nothing due
        if t.queued.is_none_or(|q| at < q) {
            t.gen = t.gen.wrapping_add(1);
            t.queued = Some(at);
            self.events.push(at, Event::CcTimer(c, slot as u8, t.gen));
        }
    }

    /// Timer `slot` of connection `c` fired: the algorithm hears it while the flow holding the
    /// connection has data unacknowledged, or, on a connection that carries several transfers,
    /// at any time: the queue pair outlives its transfers, and a NIC's rate limiter goes on
    /// recovering between them (DCQCN's rate increase is timed, not only clocked by ACKs).
    pub(crate) fn cc_timer_fired(&mut self, c: u32, slot: usize, gen: u32) {
        let now = self.now;
        let t = &mut self.nic.conns[c as usize].timers[slot];
        if t.gen != gen {
            return; // superseded by an earlier entry
        }
        t.queued = None;
        match t.due {
            Some(due) if due > now => {
                t.gen = t.gen.wrapping_add(1);
                t.queued = Some(due);
                self.events.push(due, Event::CcTimer(c, slot as u8, t.gen));
            }
            Some(_) => {
                t.due = None;
                let f = self.nic.conns[c as usize].holder;
                let flow = &self.nic.flows[f as usize];
                if flow.sender_done.is_none() || flow.shared {
                    let mut cx = CcContext::new(now);
                    self.nic.ccs[c as usize].on_timer(slot, &mut cx);
                    self.apply_cc(f, &cx);
                }
            }
            None => {}
        }
    }
}
