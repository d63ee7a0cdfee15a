//! `[nic]`: the RoCEv2 NIC and its transport.

use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// Upper bound of the retransmission-timeout backoff factor: each timeout doubles the timeout,
/// up to `rto` x this.
pub const MAX_RTO_BACKOFF: u32 = 64;

/// The RoCEv2 NIC and transport.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// Payload bytes per data packet (the HPCC ns-3 study uses 1000).
    #[serde(default = "default_mtu")]
    pub mtu: ByteSize,
    /// Header bytes on each data packet (Ethernet + IP + UDP + BTH as the HPCC study counts them).
    #[serde(default = "default_header")]
    pub header: ByteSize,
    #[serde(default = "default_ack")]
    pub ack_size: ByteSize,
    #[serde(default = "default_cnp")]
    pub cnp_size: ByteSize,
    #[serde(default = "default_pause")]
    pub pause_size: ByteSize,
    /// The receiver ACKs every this many in-order data packets (and always the last one).
    #[serde(default = "default_ack_every")]
    pub ack_every: u32,
    /// Retransmission timeout: with no ACK progress for this long the sender goes back to the
    /// first unacknowledged byte. Doubles on each consecutive timeout (up to 64x).
    #[serde(default = "default_rto")]
    pub rto: SimTime,
    /// A receiver stuck on the same missing byte repeats its NACK after this long.
    #[serde(default = "default_nack_interval")]
    pub nack_interval: SimTime,
    /// PFC priority of data packets (0..=6; 7 carries ACKs, NACKs, CNPs and is never paused).
    #[serde(default = "default_data_priority")]
    pub data_priority: u8,
    /// How a collective's transfers map to queue pairs.
    #[serde(default)]
    pub connections: Connections,
    /// How the receiver treats a packet after a gap, and how the sender recovers a loss.
    #[serde(default)]
    pub recovery: Recovery,
    /// Selective recovery: the packets past the first missing one the receiver can hold (its
    /// bitmap's bits). The sender never has more than this many packets outstanding past its
    /// first unacknowledged one, since the receiver could not hold them.
    #[serde(default = "default_sack_bitmap")]
    pub sack_bitmap: u32,
    /// Selective recovery: a missing packet is declared lost once this many packets sent after
    /// it have arrived (the reordering the receiver tolerates before it asks for a resend).
    #[serde(default = "default_reorder_window")]
    pub reorder_window: u32,
    /// Fraction of RTT probes that get no reply (algorithms that probe, `engine/nic/probe.rs`):
    /// the Barre slides report 8.9% lost to a NIC limitation. Drawn from the run's seed.
    #[serde(default)]
    pub probe_loss: f64,
}

/// Loss recovery (`engine/nic/recovery.rs`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// RoCEv2's: the receiver discards a packet after a gap and NACKs the first missing byte;
    /// the sender resends everything from there.
    #[default]
    GoBackN,
    /// The receiver keeps packets after a gap (up to `sack_bitmap` past it), acknowledges
    /// them selectively and NACKs a missing packet once `reorder_window` later packets have
    /// arrived; the sender resends only what is missing.
    Selective,
}

/// The largest `sack_bitmap`: a SACK or NACK block gives its offset from the cumulative
/// acknowledgement in 16 bits.
pub const MAX_SACK_BITMAP: u32 = 32_768;

/// How the transfers of collectives map to queue pairs.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Connections {
    /// Consecutive transfers between the same two ranks ride one queue pair, one after another,
    /// keeping its congestion-control state, as NCCL's connections do.
    #[default]
    Persistent,
    /// Every transfer opens a queue pair of its own, starting its congestion control afresh.
    PerTransfer,
}

fn default_mtu() -> ByteSize {
    ByteSize(1000)
}
fn default_header() -> ByteSize {
    ByteSize(48)
}
fn default_ack() -> ByteSize {
    ByteSize(60)
}
fn default_cnp() -> ByteSize {
    ByteSize(64)
}
fn default_pause() -> ByteSize {
    ByteSize(64)
}
fn default_ack_every() -> u32 {
    1
}
/// The local ACK timeout an RDMA NIC is given by perftest and by NCCL before 2.14:
/// 4.096 us x 2^14 = 67.1 ms (InfiniBand's encoding, `timeout` = 14; NCCL now sets 18 to 20,
/// 1.07 to 4.29 s). A shorter one fires behind PFC pauses on a lossless fabric: a 32 MB
/// buffer full in front of a 100 Gbps port alone holds a packet 2.7 ms.
pub const DEFAULT_RTO: SimTime = SimTime::from_ns(4_096 << 14);

fn default_rto() -> SimTime {
    DEFAULT_RTO
}
fn default_nack_interval() -> SimTime {
    SimTime::from_us(100)
}
fn default_data_priority() -> u8 {
    3
}
fn default_sack_bitmap() -> u32 {
    1024
}
fn default_reorder_window() -> u32 {
    256
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            mtu: default_mtu(),
            header: default_header(),
            ack_size: default_ack(),
            cnp_size: default_cnp(),
            pause_size: default_pause(),
            ack_every: default_ack_every(),
            rto: default_rto(),
            nack_interval: default_nack_interval(),
            data_priority: default_data_priority(),
            connections: Connections::default(),
            recovery: Recovery::default(),
            sack_bitmap: default_sack_bitmap(),
            reorder_window: default_reorder_window(),
            probe_loss: 0.0,
        }
    }
}
