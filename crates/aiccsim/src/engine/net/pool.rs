//! The packet pool: every packet in the network lives in one slot from the moment a NIC or a
//! switch creates it until it is consumed or dropped.
//!
//! Queues, links (the `Arrive` events) and the PFC frame queue hold 4-byte [`PacketId`]s, so a
//! packet is never copied as it crosses the fabric: a switch updates it in place and hands its
//! id on. A freed slot is the first one reused, and a host frees the packet it receives just
//! before it builds the ACK for it, so new packets are written into a cache line that was read
//! a moment ago instead of one that left the caches microseconds earlier (on a 1024-host fabric
//! that write was the costliest step of sending a packet).

use crate::wire::packet::Packet;
use std::ops::{Index, IndexMut};

/// A packet's slot in the [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketId(pub u32);

#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    /// Free slots, the most recently freed last.
    free: Vec<u32>,
}

impl PacketPool {
    /// Stores `pkt` and returns its id; grows only while the packets in the network outnumber
    /// every earlier moment's.
    #[inline]
    pub fn alloc(&mut self, pkt: Packet) -> PacketId {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = pkt;
                PacketId(slot)
            }
            None => {
                let slot = u32::try_from(self.slots.len()).expect("more than 2^32 packets in the network");
                self.slots.push(pkt);
                PacketId(slot)
            }
        }
    }

    /// Removes packet `id` (consumed or dropped) and returns it.
    #[inline]
    pub fn take(&mut self, id: PacketId) -> Packet {
        self.free.push(id.0);
        self.slots[id.0 as usize]
    }

    /// Packets in the network: created and not yet consumed or dropped.
    #[inline]
    pub fn in_use(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl Index<PacketId> for PacketPool {
    type Output = Packet;
    #[inline]
    fn index(&self, id: PacketId) -> &Packet {
        &self.slots[id.0 as usize]
    }
}

impl IndexMut<PacketId> for PacketPool {
    #[inline]
    fn index_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::packet::PacketKind;

    #[test]
    fn reuses_the_most_recently_freed_slot_first() {
        let mut pool = PacketPool::default();
        let a = pool.alloc(Packet::new(PacketKind::Data, 0, 100));
        let b = pool.alloc(Packet::new(PacketKind::Ack, 7, 60));
        let c = pool.alloc(Packet::new(PacketKind::Data, 0, 300));
        assert_eq!(pool.in_use(), 3);
        assert_eq!(pool.take(a).size, 100);
        assert_eq!(pool.take(c).size, 300);
        assert_eq!(pool.in_use(), 1);
        assert_eq!(pool.alloc(Packet::new(PacketKind::Cnp, 7, 64)), c);
        assert_eq!(pool.alloc(Packet::new(PacketKind::Cnp, 7, 65)), a);
        assert_eq!(pool[b].size, 60);
        assert_eq!(pool[a].size, 65);
        assert_eq!(pool.in_use(), 3);
    }
}
