//! `[switch]`: the shared buffer, PFC, ECN marking and how a switch picks among equal-cost
//! next hops.

use crate::time::{Bandwidth, ByteSize};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Shared packet buffer of each switch.
    #[serde(default = "default_buffer")]
    pub buffer: ByteSize,
    #[serde(default)]
    pub pfc: PfcConfig,
    #[serde(default)]
    pub ecn: EcnConfig,
    #[serde(default)]
    pub routing: Routing,
    /// Drop-tail without PFC: an egress queue may hold at most this fraction of the buffer's
    /// free bytes (the dynamic threshold of egress accounting); absent, the whole buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_alpha: Option<f64>,
}

fn default_buffer() -> ByteSize {
    ByteSize(32_000_000)
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: default_buffer(),
            pfc: PfcConfig::default(),
            ecn: EcnConfig::default(),
            routing: Routing::default(),
            egress_alpha: None,
        }
    }
}

/// Priority flow control, per ingress port and priority.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PfcConfig {
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Static XOFF threshold: bytes buffered from one ingress port (one priority) above which the
    /// switch pauses the upstream sender. When absent the threshold is dynamic (`dynamic_alpha`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xoff: Option<ByteSize>,
    /// Dynamic threshold: XOFF = alpha x (buffer - reserved headroom - bytes in use), the
    /// Broadcom-style shared-buffer rule the HPCC ns-3 switch uses (alpha = 1/8 there).
    #[serde(default = "default_alpha")]
    pub dynamic_alpha: f64,
    /// RESUME is sent once the ingress counter falls this far below XOFF (hysteresis).
    #[serde(default = "default_xon_delta")]
    pub xon_delta: ByteSize,
    /// Headroom per ingress port: buffer set apart from the shared pool for what arrives
    /// through a port after it has sent PAUSE; a packet that finds it full is dropped. When
    /// absent: two bandwidth-delay products of the link, three maximum-size packets and a PAUSE
    /// frame. Zero: no headroom pool, so what arrives after PAUSE takes shared buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headroom: Option<ByteSize>,
    /// Bytes guaranteed to each ingress port and priority, taken before the shared pool (an
    /// ASIC's per-priority-group minimum); the shared pool is what the reserves and headrooms
    /// leave of the buffer.
    #[serde(default)]
    pub reserve: ByteSize,
}

fn yes() -> bool {
    true
}
fn default_alpha() -> f64 {
    0.125
}
fn default_xon_delta() -> ByteSize {
    ByteSize(3_000)
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            enabled: true,
            xoff: None,
            dynamic_alpha: default_alpha(),
            xon_delta: default_xon_delta(),
            headroom: None,
            reserve: ByteSize(0),
        }
    }
}

/// RED-style ECN marking on each egress queue.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EcnConfig {
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Below Kmin no packet is marked; the defaults are the HPCC ns-3 study's DCQCN profile at 100 Gbps.
    #[serde(default = "default_kmin")]
    pub kmin: ByteSize,
    /// Above Kmax every packet is marked; between, with probability rising linearly to Pmax.
    #[serde(default = "default_kmax")]
    pub kmax: ByteSize,
    #[serde(default = "default_pmax")]
    pub pmax: f64,
    /// Kmin and Kmax are given for this port speed and scaled linearly for others (the HPCC
    /// study scales them with link speed: 400 KB/1600 KB at 100 Gbps, a quarter at 25 Gbps).
    #[serde(default = "default_ref_bw")]
    pub reference_bandwidth: Bandwidth,
    /// Mark when a packet leaves the queue (HPCC ns-3, reflects the queue the packet saw) or
    /// when it enters.
    #[serde(default)]
    pub mark_at: MarkPoint,
}

impl EcnConfig {
    /// A threshold given for `reference_bandwidth` (`kmin`, `kmax`), scaled to a port of `port`
    /// speed: linearly, as the HPCC study scales them.
    pub fn scaled(&self, threshold: ByteSize, port: Bandwidth) -> u128 {
        threshold.0 as u128 * port.0 as u128 / self.reference_bandwidth.0 as u128
    }
}

fn default_kmin() -> ByteSize {
    ByteSize(400_000)
}
fn default_kmax() -> ByteSize {
    ByteSize(1_600_000)
}
fn default_pmax() -> f64 {
    0.2
}
fn default_ref_bw() -> Bandwidth {
    Bandwidth::from_gbps(100)
}

impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig {
            enabled: true,
            kmin: default_kmin(),
            kmax: default_kmax(),
            pmax: default_pmax(),
            reference_bandwidth: default_ref_bw(),
            mark_at: MarkPoint::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkPoint {
    #[default]
    Dequeue,
    Enqueue,
}

/// How a switch picks among equal-cost next hops.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    /// Hash of the flow: one path per flow, no reordering.
    #[default]
    Ecmp,
    /// A random next hop per packet (packet spraying): reorders, which go-back-N pays for.
    Spray,
    /// The next hop with the fewest bytes ahead of a new packet, the one in service included
    /// (ties by flow hash).
    Adaptive,
}
