//! In-band network telemetry (INT), as HPCC uses it.
//!
//! A data packet of a flow whose algorithm asks for INT carries a stack of per-hop records:
//! every switch egress port it leaves pushes one (time, bytes sent so far, queue length, link
//! speed). The receiver copies the stack into the ACK and the sender reads it. The records live
//! in a side pool, not in the packet: a packet holds only a slot number, so that runs without
//! INT move packets no larger than before, and the pool, once grown to the run's working size,
//! recycles slots without allocating.
//!
//! The probabilistic variant (PINT) needs no pool: its feedback is one byte in the packet. Each
//! switch egress keeps its own smoothed utilisation and raises the byte to its encoding when
//! that is higher, so the packet arrives with the path's maximum ([`PintCodec`]).

use crate::cc::Telemetry;
use crate::engine::Simulation;
use crate::net::packet::PacketKind;
use crate::net::pool::PacketId;
use crate::time::{Bandwidth, SimTime};
use rand::RngExt;

/// Hops a stack can hold. The header on the wire is sized by the algorithm's configured
/// maximum (HPCC: 5); hops beyond it are not recorded, as on a switch that finds the header full.
pub const MAX_INT_HOPS: usize = 8;

/// A packet's slot number when it carries no INT.
pub const NO_INT: u32 = u32::MAX;

/// What one switch egress port reports (HPCC paper §3.2, Fig. 4; ns-3 `IntHop`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet left the port.
    pub ts: SimTime,
    /// Bytes the port had transmitted, this packet included.
    pub tx_bytes: u64,
    /// Bytes left in the port's egress queues after the packet left.
    pub qlen: u64,
    /// The link's speed.
    pub rate: Bandwidth,
}

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

/// PINT's encoding of a utilisation into one byte (Ben Basat et al., "PINT: Probabilistic In-band
/// Network Telemetry", SIGCOMM 2020, §4.2 and the HPCC-PINT model in the HPCC ns-3 code,
/// `pint.cc`): a (1+ε)-multiplicative approximation, code = log_base(u·512), rounded up or down
/// at random so that the decoded value is right on average. The packet holds code + 1 so that 0
/// can mean "this packet carries no feedback".
#[derive(Clone, Copy, Debug)]
pub struct PintCodec {
    ln_base: f64,
}

/// Utilisation resolution: u is encoded in units of 1/512 (the ns-3 model's `max_concurrent`).
const PINT_SCALE: f64 = 512.0;
/// Largest code that, plus one, fits the byte.
pub const PINT_MAX_CODE: u8 = 254;

impl PintCodec {
    pub fn new(log_base: f64) -> Self {
        PintCodec { ln_base: log_base.ln() }
    }

    /// The largest utilisation the byte can express.
    pub fn max_utilisation(&self) -> f64 {
        (PINT_MAX_CODE as f64 * self.ln_base).exp() / PINT_SCALE
    }

    /// The packet byte for utilisation `u` (1..=255); `coin` uniform in [0, 1).
    pub fn encode(&self, u: f64, coin: f64) -> u8 {
        let x = (u * PINT_SCALE).ceil().max(1.0);
        let e = x.ln() / self.ln_base;
        let lo = e.floor();
        let code = if e == lo {
            lo
        } else {
            let (below, above) = ((lo * self.ln_base).exp(), ((lo + 1.0) * self.ln_base).exp());
            if coin < (x - below) / (above - below) {
                lo + 1.0
            } else {
                lo
            }
        };
        code.min(PINT_MAX_CODE as f64) as u8 + 1
    }

    /// The utilisation a packet byte stands for (`byte` >= 1).
    pub fn decode(&self, byte: u8) -> f64 {
        ((byte.max(1) - 1) as f64 * self.ln_base).exp() / PINT_SCALE
    }
}

/// A switch egress port's smoothed utilisation, for PINT.
#[derive(Clone, Copy, Debug, Default)]
pub struct PintPort {
    pub utilisation: f64,
    last_ts: SimTime,
    last_size: u64,
}

/// What switches need to stamp PINT feedback.
pub struct PintState {
    pub codec: PintCodec,
    /// The smoothing period (the fabric's base round trip).
    pub period: SimTime,
    pub ports: Vec<PintPort>,
}

impl Simulation {
    /// Telemetry at a switch egress as a data packet leaves port `p`: an INT record (HPCC §3.2),
    /// or the port's utilisation folded into the PINT byte.
    pub(crate) fn stamp_telemetry(&mut self, p: u32, id: PacketId) {
        let pkt = &mut self.packets[id];
        debug_assert_eq!(pkt.kind, PacketKind::Data);
        match self.params.telemetry {
            Telemetry::None => {}
            Telemetry::Int { .. } => {
                if pkt.int != NO_INT {
                    let port = &self.ports[p as usize];
                    let hop = IntHop {
                        ts: self.now,
                        tx_bytes: port.tx_bytes + pkt.size as u64,
                        qlen: port.queued,
                        rate: port.bandwidth,
                    };
                    self.int_pool.push(pkt.int, hop);
                }
            }
            Telemetry::Pint { .. } => {
                let Some(pint) = self.pint.as_mut() else { return };
                let port = &self.ports[p as usize];
                let st = &mut pint.ports[p as usize];
                // The ns-3 HPCC-PINT switch: U = (1 - dt/T)·U + dt/T·(q/(B·T) + bytes/(dt·B)),
                // over every data packet the port sends, dt capped at T.
                let t = pint.period.as_secs_f64();
                let dt = self.now.saturating_sub(st.last_ts).as_secs_f64().min(t);
                if dt > 0.0 {
                    let b = port.bandwidth.as_f64();
                    let queue_term = port.queued as f64 * 8.0 / (b * t);
                    let rate_term = st.last_size as f64 * 8.0 / (dt * b);
                    st.utilisation = (1.0 - dt / t) * st.utilisation + dt / t * (queue_term + rate_term);
                }
                st.last_ts = self.now;
                st.last_size = pkt.size as u64;
                if pkt.pint != 0 {
                    let sw = (self.ports[p as usize].node - self.topo.num_hosts) as usize;
                    let coin = self.pint_rng[sw].random::<f64>();
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

    #[test]
    fn pint_encoding_is_within_one_step_and_unbiased() {
        let codec = PintCodec::new(1.05);
        assert!(codec.max_utilisation() > 100.0);
        for &u in &[0.01, 0.3, 0.95, 1.0, 1.7, 12.0] {
            let mut sum = 0.0;
            let n = 2000;
            for i in 0..n {
                let byte = codec.encode(u, (i as f64 + 0.5) / n as f64);
                let d = codec.decode(byte);
                assert!(d >= u / 1.05 - 1.0 / 512.0 && d <= u * 1.05 + 1.0 / 512.0, "u {u} decoded {d}");
                sum += d;
            }
            // Randomised rounding: right on average (up to the 1/512 quantum).
            let mean = sum / n as f64;
            assert!((mean - u).abs() <= 0.005 * u + 1.0 / 512.0, "u {u} mean {mean}");
        }
        assert_eq!(codec.decode(codec.encode(0.0, 0.5)), 1.0 / 512.0);
        assert_eq!(codec.encode(1e12, 0.0), PINT_MAX_CODE + 1);
    }
}
