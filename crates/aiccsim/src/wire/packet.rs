//! Packets.
//!
//! A packet is a small `Copy` struct of exactly one aligned cache line. It lives in the
//! packet pool (`engine/net/pool.rs`) from creation to consumption; queues and links
//! pass its 4-byte id. Once the pool and the queues' ring buffers have grown to the run's working
//! size, the per-packet path allocates nothing.

use crate::time::SimTime;
use crate::wire::telemetry::NO_INT;

/// Priority of ACKs, NACKs and CNPs: served first at every port, never paused.
pub const CONTROL_PRIORITY: u8 = 7;
pub const NUM_PRIORITIES: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
    Nack,
    Cnp,
    /// PFC frame: pause (`flag = true`) or resume priority `pfc_class` at the receiving port.
    Pfc,
    /// RTT probe request (`engine/nic/probe.rs`): travels at the flow's data priority, so it
    /// waits in the same queues as the flow's data; `sent_at` is the sender's transmit time.
    Probe,
    /// RTT probe reply, at control priority: `sent_at` echoes the request's, `seq` carries the
    /// receiver's clock at the request's arrival and `feedback` its clock at the reply
    /// (both picoseconds, as `i64` bits).
    ProbeReply,
    /// A data packet a switch cut to its header instead of dropping it (`[switch.trimming]`,
    /// `engine/net/trimming.rs`): it keeps the data packet's flow, `seq` and `sent_at`, its
    /// `size` is the trimmed size, and it travels at the control priority. It carries no
    /// payload: the receiver NACKs exactly that packet (`engine/nic/selective.rs`).
    Trimmed,
}

#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub struct Packet {
    pub kind: PacketKind,
    /// Traffic class the packet is queued and paused in.
    pub priority: u8,
    /// ECN Congestion Experienced (data), or the echo of it (ACK). On a NACK: the packet it
    /// names reached the receiver trimmed (a switch that had no room for it cut it to its
    /// header), not missing; a trim is a congestion signal, as a mark is.
    pub ecn: bool,
    /// A bit whose meaning is the kind's (the cache line has no byte to spare). PFC frames:
    /// pause (true) or resume (false), for class `pfc_class`. Data: the sender asks for an ACK
    /// at once (Ultra Ethernet's AR flag, `nic.ack_request`). Trimmed packets and the NACKs that
    /// answer them: the packet was trimmed at its last hop, by the switch port facing its
    /// receiver (the UEC reference's `last_hop`).
    pub flag: bool,
    pub pfc_class: u8,
    pub flow: u32,
    /// The flow's ECMP hash input (its 5-tuple, in a real switch), carried so switches need not
    /// look the flow up.
    pub ecmp_key: u64,
    /// Destination host (unused for PFC frames, which go one hop). The source is the flow's.
    pub dst: u32,
    /// Bytes on the wire, headers included (a data packet's payload is `size` minus the run's
    /// data header).
    pub size: u32,
    /// Data: offset of the first payload byte. ACK: cumulative bytes received in order.
    /// NACK: the first byte the receiver is missing (go-back-N), or, as an ACK's, the
    /// cumulative bytes received in order (selective).
    pub seq: u64,
    /// Data: when the NIC put it on the wire. ACK/NACK: echo of the triggering packet's value.
    pub sent_at: SimTime,
    /// The ingress port it arrived on at the current switch (for PFC accounting).
    pub ingress: u32,
    /// Slot of its INT stack in the telemetry pool (data, and the ACK that echoes it), or
    /// [`NO_INT`].
    pub int: u32,
    /// HPCC-PINT: the encoded path utilisation the packet carries (data) or echoes (ACK);
    /// 0 = no feedback.
    pub pint: u8,
    /// ACK: what the receiver half of the algorithm sends back (its meaning is the algorithm's,
    /// e.g. PC4's base rate and one-way delay).
    pub feedback: [u32; 2],
    /// Selective recovery, ACK and NACK: a block of `block_len` packets starting `block_start`
    /// packets past the cumulative `seq` (whose packet number is `seq / mtu`). An ACK's block
    /// is the packet that arrived out of order; a NACK's, the packets the receiver declares
    /// lost. Length 0: no block. Both fit in 4 bytes the cache line had free.
    pub block_start: u16,
    pub block_len: u16,
    /// CONGA's overlay header (`engine/net/conga.rs`), packed as CONGA packs it: the source
    /// leaf's uplink (LBTag) and the path's congestion so far (CE), and the feedback the leaf
    /// piggybacks for the other direction (FB_LBTag, FB_Metric); 0 = no tag, no feedback. The
    /// last 2 bytes the cache line had free.
    pub conga: u16,
}

impl Packet {
    pub fn new(kind: PacketKind, priority: u8, size: u32) -> Packet {
        Packet {
            kind,
            priority,
            ecn: false,
            flag: false,
            pfc_class: 0,
            flow: 0,
            ecmp_key: 0,
            dst: 0,
            size,
            seq: 0,
            sent_at: SimTime::ZERO,
            ingress: u32::MAX,
            int: NO_INT,
            pint: 0,
            feedback: [0; 2],
            block_start: 0,
            block_len: 0,
            conga: 0,
        }
    }
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64, "a packet fills one cache line");
const _: () = assert!(std::mem::align_of::<Packet>() == 64, "and starts one");
