//! Telemetry as it travels in packets: the INT hop record HPCC reads, the one-byte PINT encoding,
//! and which of them an algorithm asks the fabric for.
//!
//! A data packet of a flow whose algorithm asks for INT carries a stack of per-hop records:
//! every switch egress port it leaves pushes one (time, bytes sent so far, queue length, link
//! speed). The receiver copies the stack into the ACK and the sender reads it. The probabilistic
//! variant (PINT) is one byte in the packet: each switch egress raises it to the encoding of its
//! own smoothed utilisation when that is higher, so the packet arrives with the path's maximum
//! ([`PintCodec`]).

use crate::time::{Bandwidth, SimTime};

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

/// Feedback the fabric must add to an algorithm's data packets, and what it costs on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Telemetry {
    None,
    /// Every switch egress pushes an INT hop record (HPCC). `header_bytes` is the INT header on
    /// every data packet and every ACK; at most `max_hops` records fit in it.
    Int {
        max_hops: usize,
        header_bytes: u64,
    },
    /// Every switch egress folds its utilisation into one byte of the packet (HPCC-PINT), on the
    /// `fraction` of packets the sender selects, encoded with logarithm base `log_base`;
    /// `header_bytes` on every data packet and ACK.
    Pint {
        header_bytes: u64,
        fraction: f64,
        log_base: f64,
        /// The period over which switches smooth their utilisation; `None`: the largest base RTT
        /// of the run's flows.
        switch_period: Option<SimTime>,
    },
}

impl Telemetry {
    /// Bytes the telemetry adds to each data packet and ACK.
    pub fn header_bytes(&self) -> u64 {
        match *self {
            Telemetry::None => 0,
            Telemetry::Int { header_bytes, .. } | Telemetry::Pint { header_bytes, .. } => header_bytes,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
