//! Telemetry as the fabric produces it: the pool of INT stacks that data packets point into, and
//! each switch egress port's smoothed utilisation for PINT. What travels in the packet (the hop
//! record, the PINT byte's encoding) is in `wire/telemetry.rs`.
//!
//! The INT records live in a side pool, not in the packet: a packet holds only a slot number, so
//! that runs without INT move packets no larger than before, and the pool, once grown to the
//! run's working size, recycles slots without allocating.

use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use crate::time::SimTime;
use crate::wire::packet::PacketKind;
use crate::wire::telemetry::{IntHop, Telemetry, MAX_INT_HOPS, NO_INT};
use rand::RngExt;

#[derive(Clone, Copy, Debug, Default)]
struct IntStack {
    len: u8,
    hops: [IntHop; MAX_INT_HOPS],
}

/// Slots of INT stacks, recycled through a free list.
#[derive(Default)]
pub struct IntPool {
    stacks: Vec<IntStack>,
    free: Vec<u32>,
    max_hops: usize,
}

impl IntPool {
    pub fn new(max_hops: usize) -> Self {
        IntPool { stacks: Vec::new(), free: Vec::new(), max_hops: max_hops.min(MAX_INT_HOPS) }
    }

    /// An empty stack for a new packet.
    pub fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.stacks[slot as usize].len = 0;
                slot
            }
            None => {
                self.stacks.push(IntStack::default());
                (self.stacks.len() - 1) as u32
            }
        }
    }

    /// Appends a hop record, unless the header is full.
    pub fn push(&mut self, slot: u32, hop: IntHop) {
        let s = &mut self.stacks[slot as usize];
        if (s.len as usize) < self.max_hops {
            s.hops[s.len as usize] = hop;
            s.len += 1;
        }
    }

    pub fn hops(&self, slot: u32) -> &[IntHop] {
        if slot == NO_INT {
            return &[];
        }
        let s = &self.stacks[slot as usize];
        &s.hops[..s.len as usize]
    }

    /// The hop records of `slot`, to change in place (fast-forward moves their times on).
    pub fn hops_mut(&mut self, slot: u32) -> &mut [IntHop] {
        if slot == NO_INT {
            return &mut [];
        }
        let s = &mut self.stacks[slot as usize];
        &mut s.hops[..s.len as usize]
    }

    /// The packet carrying `slot` is gone (consumed, dropped or replaced by its ACK's copy).
    pub fn release(&mut self, slot: u32) {
        if slot != NO_INT {
            self.free.push(slot);
        }
    }

    /// Slots handed out and not yet released (zero at the end of a drained run).
    pub fn in_use(&self) -> usize {
        self.stacks.len() - self.free.len()
    }
}

/// A switch egress port's smoothed utilisation, for PINT.
#[derive(Clone, Copy, Debug, Default)]
pub struct PintPort {
    pub utilisation: f64,
    last_ts: SimTime,
    last_size: u64,
}

impl PintPort {
    /// Fast-forward: the time of the last update moves on by `by`.
    pub(crate) fn shift_clock(&mut self, by: SimTime) {
        self.last_ts += by;
    }
}

/// What switches need to stamp PINT feedback.
pub struct PintState {
    pub codec: crate::wire::telemetry::PintCodec,
    /// The smoothing period (the fabric's base round trip).
    pub period: SimTime,
    pub ports: Vec<PintPort>,
}

impl super::Network {
    /// Starts PINT's switch side if the algorithm asks for PINT: every switch port smooths its
    /// utilisation over `switch_period`, or else the largest base round trip of the run's flows.
    pub(crate) fn start_pint(&mut self, telemetry: Telemetry, largest_base_rtt: SimTime, seed: u64, switches: u32) {
        if let Telemetry::Pint { log_base, switch_period, .. } = telemetry {
            self.pint = Some(PintState {
                codec: crate::wire::telemetry::PintCodec::new(log_base),
                period: switch_period.unwrap_or(largest_base_rtt),
                ports: vec![PintPort::default(); self.ports.len()],
            });
            self.pint_rng = (0..switches).map(|s| crate::rng::stream(seed, "switch.pint", s as u64)).collect();
        }
    }
}

/// A port's utilisation for PINT after a packet leaves `dt` after the one before (of
/// `last_size` bytes) with `queued` bytes behind it, as the ns-3 HPCC-PINT switch smooths it:
/// U = (1 - dt/T)·U + dt/T·(q/(B·T) + bytes/(dt·B)), dt capped at the period T. A second
/// packet in the same instant leaves U as it was.
#[inline]
fn smoothed_utilisation(
    u: f64,
    dt: SimTime,
    period: SimTime,
    queued: u64,
    last_size: u64,
    bandwidth: crate::time::Bandwidth,
) -> f64 {
    let t = period.as_secs_f64();
    let dt = dt.as_secs_f64().min(t);
    if dt <= 0.0 {
        return u;
    }
    let b = bandwidth.as_f64();
    let queue_term = queued as f64 * 8.0 / (b * t);
    let rate_term = last_size as f64 * 8.0 / (dt * b);
    (1.0 - dt / t) * u + dt / t * (queue_term + rate_term)
}

impl Simulation {
    /// Telemetry at a switch egress as a data packet leaves port `p`: an INT record (HPCC §3.2),
    /// or the port's utilisation folded into the PINT byte.
    pub(crate) fn stamp_telemetry(&mut self, p: u32, id: PacketId) {
        let pkt = &mut self.net.packets[id];
        debug_assert_eq!(pkt.kind, PacketKind::Data);
        match self.params.telemetry {
            Telemetry::None => {}
            Telemetry::Int { .. } => {
                if pkt.int != NO_INT {
                    let port = &self.net.ports[p as usize];
                    let hop = IntHop {
                        ts: self.now,
                        tx_bytes: port.tx_bytes + pkt.size as u64,
                        qlen: port.queued,
                        rate: port.bandwidth,
                    };
                    self.net.int_pool.push(pkt.int, hop);
                }
            }
            Telemetry::Pint { .. } => {
                let Some(pint) = self.net.pint.as_mut() else { return };
                let port = &self.net.ports[p as usize];
                let st = &mut pint.ports[p as usize];
                st.utilisation = smoothed_utilisation(
                    st.utilisation,
                    self.now.saturating_sub(st.last_ts),
                    pint.period,
                    port.queued,
                    st.last_size,
                    port.bandwidth,
                );
                st.last_ts = self.now;
                st.last_size = pkt.size as u64;
                if pkt.pint != 0 {
                    let sw = (self.net.ports[p as usize].node - self.topo.num_hosts) as usize;
                    let coin = self.net.pint_rng[sw].random::<f64>();
                    let byte = pint.codec.encode(st.utilisation, coin);
                    pkt.pint = pkt.pint.max(byte);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Bandwidth;

    #[test]
    fn back_to_back_packets_on_an_empty_queue_smooth_to_full_utilisation() {
        let (bw, period) = (Bandwidth::from_gbps(100), SimTime::from_us(10));
        let gap = bw.tx_time(1_000);
        let mut u = 0.0;
        for _ in 0..2_000 {
            u = smoothed_utilisation(u, gap, period, 0, 1_000, bw);
        }
        assert!((u - 1.0).abs() < 1e-6, "{u}");
        // Half the rate: half the utilisation.
        let mut half = 0.0;
        for _ in 0..2_000 {
            half = smoothed_utilisation(half, gap + gap, period, 0, 1_000, bw);
        }
        assert!((half - 0.5).abs() < 1e-6, "{half}");
    }

    #[test]
    fn a_queue_adds_its_drain_time_over_the_period_and_a_long_gap_forgets_the_past() {
        let (bw, period) = (Bandwidth::from_gbps(100), SimTime::from_us(10));
        // A gap of a whole period or more replaces U: the last packet over the period, plus a
        // queue of one period's worth of bytes (125 KB) counted as 1.
        let u = smoothed_utilisation(0.7, SimTime::from_us(50), period, 125_000, 1_000, bw);
        assert!((u - (1.0 + 1_000.0 / 125_000.0)).abs() < 1e-12, "{u}");
        assert_eq!(smoothed_utilisation(0.7, SimTime::ZERO, period, 125_000, 1_000, bw), 0.7);
    }

    #[test]
    fn slots_recycle_and_stacks_stop_at_the_header_size() {
        let mut pool = IntPool::new(2);
        let a = pool.alloc();
        for i in 0..4 {
            pool.push(a, IntHop { qlen: i, ..Default::default() });
        }
        assert_eq!(pool.hops(a).iter().map(|h| h.qlen).collect::<Vec<_>>(), vec![0, 1]);
        pool.release(a);
        let b = pool.alloc();
        assert_eq!(b, a);
        assert!(pool.hops(b).is_empty());
        assert_eq!(pool.in_use(), 1);
        assert!(pool.hops(NO_INT).is_empty());
    }
}
