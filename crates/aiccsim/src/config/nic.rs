//! `[nic]`: the RoCEv2 NIC and its transport.

use crate::cc::Check;
use crate::config::fail;
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
    /// Ultra Ethernet's ACK rules besides `ack_every` (uet-htsim `UecSrc::sendNewPacket`,
    /// `sendRtxPacket`, `UecSink::processData`): the sender sets the AR flag on a packet after
    /// which its window is full, on its last new packet and on every resend; the receiver ACKs
    /// at once a packet with AR, an ECN-marked packet, a flow's first packet and a duplicate.
    /// Off: only `ack_every` (and out-of-order packets, filled holes and the last packet).
    /// Left out of a resolved scenario when off, so that runs without it read as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ack_request: bool,
    /// Selective recovery: when the receiver acknowledges a packet that arrived after a gap
    /// (`engine/nic/selective.rs`). Left out of a resolved scenario when `at_once`, so that runs
    /// without it read as before.
    #[serde(default, skip_serializing_if = "AckOutOfOrder::is_at_once")]
    pub ack_out_of_order: AckOutOfOrder,
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
    /// How the sender spreads a flow's packets over the fabric's equal-cost paths
    /// (`engine/nic/entropy.rs`). Left out of a resolved scenario when `flow`, so that runs that
    /// do not spray read as they did before the key existed.
    #[serde(default, skip_serializing_if = "LoadBalancing::is_flow")]
    pub load_balancing: LoadBalancing,
    /// Oblivious spraying and REPS: the distinct entropy values a connection's packets choose
    /// among (a power of two). Filled in with the default when `load_balancing` sprays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entropies: Option<u32>,
    /// REPS's settings; filled in with the defaults under `load_balancing = "reps"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps: Option<RepsConfig>,
}

/// Where the sender puts a flow's packets (`engine/nic/entropy.rs`): each data packet carries an
/// entropy value (the UDP source port of RoCEv2, the entropy field of Ultra Ethernet's
/// transport), which switches routing by `"ecmp"` hash with the flow's addresses.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LoadBalancing {
    /// One entropy for the whole connection: ECMP gives every packet of a flow one path.
    #[default]
    Flow,
    /// A new entropy for every packet, blind to the paths' state: each round of `entropies`
    /// packets takes every entropy once, in a fresh order (uet-htsim's `UecMpOblivious`).
    Oblivious,
    /// Recycled entropy packet spraying (Bonato et al., arXiv 2407.21625): the entropies of
    /// packets whose ACKs came back without an ECN mark are reused; fresh ones otherwise.
    Reps,
}

impl LoadBalancing {
    pub fn is_flow(&self) -> bool {
        *self == LoadBalancing::Flow
    }

    pub fn name(self) -> &'static str {
        match self {
            LoadBalancing::Flow => "flow",
            LoadBalancing::Oblivious => "oblivious",
            LoadBalancing::Reps => "reps",
        }
    }
}

/// `[nic.reps]`: REPS's settings (`engine/nic/reps.rs`). The defaults are those of the authors'
/// implementation in uet-htsim (`htsim/sim/buffer_reps.cpp`, `uec_mp.cpp`), which the paper
/// evaluates.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RepsConfig {
    /// Entries of each connection's buffer of recycled entropies.
    #[serde(default = "default_reps_buffer")]
    pub buffer: u32,
    /// Packets each recycled entropy may carry before it is used up (more than 1 keeps the
    /// buffer fed when one ACK covers several packets, `nic.ack_every`).
    #[serde(default = "default_reps_reuse")]
    pub reuse: u32,
    /// A retransmission timeout freezes the buffer: for `freeze_time` the sender sends only on
    /// the entropies it holds, cycling through them, and explores no new path.
    #[serde(default = "default_reps_freeze")]
    pub freeze: bool,
    #[serde(default = "default_reps_freeze_time")]
    pub freeze_time: SimTime,
    /// After a freeze the buffer is emptied and this many packets take fresh entropies.
    #[serde(default = "default_reps_explore")]
    pub explore: u32,
}

/// uet-htsim's `CircularBufferREPS::repsBufferSize`.
fn default_reps_buffer() -> u32 {
    8
}
/// uet-htsim's `repsMaxLifetimeEntropy`.
fn default_reps_reuse() -> u32 {
    1
}
/// uet-htsim's `repsUseFreezing`.
fn default_reps_freeze() -> bool {
    true
}
/// uet-htsim's `exit_freeze_after`: 10^10 ps.
fn default_reps_freeze_time() -> SimTime {
    SimTime::from_ms(10)
}
/// uet-htsim's `explore_counter` after a freeze (`UecMpReps::processEv`).
fn default_reps_explore() -> u32 {
    16
}

impl Default for RepsConfig {
    fn default() -> Self {
        RepsConfig {
            buffer: default_reps_buffer(),
            reuse: default_reps_reuse(),
            freeze: default_reps_freeze(),
            freeze_time: default_reps_freeze_time(),
            explore: default_reps_explore(),
        }
    }
}

/// The entropies of a spraying sender: uet-htsim's `-paths` default (`main_uec.cpp`,
/// `path_entropy_size`).
pub const DEFAULT_ENTROPIES: u32 = 64;
/// The largest: Ultra Ethernet's entropy field is 16 bits, as is RoCEv2's UDP source port.
pub const MAX_ENTROPIES: u32 = 1 << 16;
/// The largest REPS buffer (the reference's counts are 16 bits).
pub const MAX_REPS_BUFFER: u32 = 4096;

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

/// When a selective receiver acknowledges a packet that arrived after a gap.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AckOutOfOrder {
    /// At once, the ACK naming that packet (a SACK block of one), as IRN's receiver does.
    #[default]
    AtOnce,
    /// As an in-order packet: it counts towards `ack_every` and is acknowledged at once only by
    /// `ack_request`'s rules; every ACK sent while packets are held names them all in a bitmap
    /// (the UEC reference, uet-htsim `UecSink::processData`, whose ACKs carry a 64-packet SACK
    /// bitmap).
    Coalesced,
}

impl AckOutOfOrder {
    pub fn is_at_once(&self) -> bool {
        *self == AckOutOfOrder::AtOnce
    }
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
            ack_request: false,
            ack_out_of_order: AckOutOfOrder::default(),
            rto: default_rto(),
            nack_interval: default_nack_interval(),
            data_priority: default_data_priority(),
            connections: Connections::default(),
            recovery: Recovery::default(),
            sack_bitmap: default_sack_bitmap(),
            reorder_window: default_reorder_window(),
            probe_loss: 0.0,
            load_balancing: LoadBalancing::default(),
            entropies: None,
            reps: None,
        }
    }
}

impl NicConfig {
    /// Fills in the load balancing's defaults that depend on `load_balancing`, so that a
    /// resolved scenario shows them.
    pub fn resolve_load_balancing(&mut self) {
        if self.load_balancing != LoadBalancing::Flow {
            self.entropies.get_or_insert(DEFAULT_ENTROPIES);
        }
        if self.load_balancing == LoadBalancing::Reps {
            self.reps.get_or_insert_with(RepsConfig::default);
        }
    }
}

/// The load balancing's keys.
pub(crate) fn check_load_balancing(nic: &NicConfig) -> Check {
    if let Some(n) = nic.entropies {
        if n == 0 || n > MAX_ENTROPIES || !n.is_power_of_two() {
            return fail(
                "nic.entropies",
                format!("must be a power of two from 1 to {MAX_ENTROPIES} (a 16-bit entropy field), got {n}; e.g. {DEFAULT_ENTROPIES}"),
            );
        }
    }
    if let Some(r) = &nic.reps {
        if r.buffer == 0 || r.buffer > MAX_REPS_BUFFER {
            return fail(
                "nic.reps.buffer",
                format!("must be from 1 to {MAX_REPS_BUFFER} entropies, got {}; e.g. 8 (REPS's)", r.buffer),
            );
        }
        if r.reuse == 0 || r.reuse > u16::MAX as u32 {
            return fail(
                "nic.reps.reuse",
                format!("must be from 1 to {} packets per recycled entropy, got {}; e.g. 1", u16::MAX, r.reuse),
            );
        }
        if r.freeze && r.freeze_time == SimTime::ZERO {
            return fail(
                "nic.reps.freeze_time",
                "must be positive while freeze is on (set freeze = false for no freezing); e.g. \"10ms\"",
            );
        }
    }
    Ok(())
}
