//! Packets and the pool they live in.
//!
//! A packet is created once, moved between queues and links by its `PacketId`, and returned to
//! the pool when it is consumed or dropped, so the per-packet path allocates nothing.

use crate::time::SimTime;

/// Priority of ACKs, NACKs and CNPs: served first at every port, never paused.
pub const CONTROL_PRIORITY: u8 = 7;
pub const NUM_PRIORITIES: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
    Nack,
    Cnp,
    /// PFC frame: pause (`pfc_pause = true`) or resume priority `pfc_class` at the receiving port.
    Pfc,
}

/// Index of a packet in the pool.
pub type PacketId = u32;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub kind: PacketKind,
    /// Traffic class the packet is queued and paused in.
    pub priority: u8,
    /// ECN Congestion Experienced (data), or the echo of it (ACK).
    pub ecn: bool,
    /// PFC frames: pause (true) or resume (false), for class `pfc_class`.
    pub pfc_pause: bool,
    pub pfc_class: u8,
    pub flow: u32,
    /// Source and destination hosts (unused for PFC frames, which go one hop).
    pub src: u32,
    pub dst: u32,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// Payload bytes (data only).
    pub payload: u32,
    /// Data: offset of the first payload byte. ACK: cumulative bytes received in order.
    /// NACK: the first byte the receiver is missing.
    pub seq: u64,
    /// Data: when the NIC put it on the wire. ACK/NACK: echo of the triggering packet's value.
    pub sent_at: SimTime,
    /// The ingress port it arrived on at the current switch (for PFC accounting).
    pub ingress: u32,
}

impl Packet {
    pub fn new(kind: PacketKind, priority: u8, size: u32) -> Packet {
        Packet {
            kind,
            priority,
            ecn: false,
            pfc_pause: false,
            pfc_class: 0,
            flow: 0,
            src: 0,
            dst: 0,
            size,
            payload: 0,
            seq: 0,
            sent_at: SimTime::ZERO,
            ingress: u32::MAX,
        }
    }
}

/// A slab of packets with a free list.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl PacketPool {
    pub fn with_capacity(n: usize) -> Self {
        PacketPool { slots: Vec::with_capacity(n), free: Vec::with_capacity(n) }
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = p;
                id
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(!self.free.contains(&id), "packet {id} freed twice");
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets currently alive (in a queue or on a link).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The most packets ever alive at once.
    pub fn high_water(&self) -> usize {
        self.slots.len()
    }
}
