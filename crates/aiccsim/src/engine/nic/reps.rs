//! REPS, recycled entropy packet spraying (Bonato et al., "REPS: Recycled Entropy Packet
//! Spraying for Adaptive Load Balancing and Failure Mitigation", arXiv 2407.21625), the load
//! balancing of the Ultra Ethernet transport: each connection keeps a small ring of entropies
//! whose packets came back unmarked, and sends its next packets on them, oldest first. A path
//! that marks (a congested queue) loses its entropy; one that does not keeps being used. With
//! the ring empty the sender explores: a fresh entropy, drawn at random (`entropy.rs`).
//!
//! This follows the authors' implementation in uet-htsim (`htsim/sim/buffer_reps.cpp` and
//! `UecMpReps` in `uec_mp.cpp`):
//! - An unmarked ACK writes its entropy at the ring's head, over the oldest entry when the ring
//!   is full. A marked ACK, and a NACK, write nothing.
//! - A send takes the oldest entry still usable; each entry carries `reuse` packets (1 by
//!   default: one packet, one ACK, one entropy back).
//! - A retransmission timeout (a lost packet: a failed link, as trimming turns congestion into
//!   NACKs) freezes the ring for `freeze_time`: the sender stops exploring and cycles through
//!   the entropies it holds, used up or not, since those paths delivered. The first ACK after
//!   the freeze has run out empties the ring, and `explore` packets then take fresh entropies.
//!
//! The entries are the entropies as packets carry them, each connection's already mixed into
//! its ECMP key (`Packet::ecmp_key`), so that the ACK's echo is recycled as it stands. The rings
//! of all connections live in one pool of slots: a connection takes one on its first packet, and
//! one that carries a single transfer gives it back when the transfer is done, so the per-packet
//! path allocates nothing once the pool has grown to the connections sending at once.

use crate::config::RepsConfig;
use crate::time::SimTime;

const NO_SLOT: u32 = u32::MAX;

/// A connection's ring, beside its entries.
#[derive(Clone, Copy, Default)]
struct Ring {
    /// Where the next recycled entropy is written.
    head: u32,
    /// Entries written since the ring was last emptied (up to its size).
    filled: u32,
    /// Entries with uses left: always the `usable` written last, just before `head`.
    usable: u32,
    /// Frozen: the entry the next packet takes.
    frozen_next: u32,
    /// Packets still to send on fresh entropies after a freeze.
    explore: u32,
    /// Frozen until this time.
    frozen_until: Option<SimTime>,
}

/// The REPS rings of the connections that have sent.
pub struct Reps {
    config: RepsConfig,
    size: usize,
    /// Per slot, `size` entries: the entropy, and the packets it may still carry (0: used up).
    keys: Vec<u64>,
    uses: Vec<u16>,
    rings: Vec<Ring>,
    slot_of: Vec<u32>,
    free: Vec<u32>,
}

impl Reps {
    pub fn new(config: RepsConfig) -> Reps {
        Reps {
            config,
            size: config.buffer as usize,
            keys: Vec::new(),
            uses: Vec::new(),
            rings: Vec::new(),
            slot_of: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Bytes a connection's slot takes.
    pub fn slot_bytes(buffer: u32) -> usize {
        buffer as usize * (std::mem::size_of::<u64>() + std::mem::size_of::<u16>()) + std::mem::size_of::<Ring>()
    }

    /// Connection `c`'s slot, if it has one.
    #[inline]
    pub fn slot(&self, c: u32) -> Option<u32> {
        self.slot_of.get(c as usize).copied().filter(|&s| s != NO_SLOT)
    }

    /// Connection `c`'s slot, taken from the pool (an empty ring) if it has none.
    pub fn ensure(&mut self, c: u32) -> u32 {
        if let Some(s) = self.slot(c) {
            return s;
        }
        if self.slot_of.len() <= c as usize {
            self.slot_of.resize(c as usize + 1, NO_SLOT);
        }
        let s = match self.free.pop() {
            Some(s) => s,
            None => {
                self.keys.resize(self.keys.len() + self.size, 0);
                self.uses.resize(self.uses.len() + self.size, 0);
                self.rings.push(Ring::default());
                (self.rings.len() - 1) as u32
            }
        };
        self.empty(s);
        self.slot_of[c as usize] = s;
        s
    }

    /// Connection `c` sends no more: its slot goes back to the pool.
    pub fn release(&mut self, c: u32) {
        if let Some(s) = self.slot(c) {
            self.slot_of[c as usize] = NO_SLOT;
            self.free.push(s);
        }
    }

    /// Empties slot `s`'s ring: no entry, not frozen, not exploring.
    fn empty(&mut self, s: u32) {
        let base = s as usize * self.size;
        self.uses[base..base + self.size].fill(0);
        self.rings[s as usize] = Ring::default();
    }

    /// An ACK for a packet sent on entropy `key` came back, ECN-marked or not, at `now`.
    pub fn ack(&mut self, s: u32, key: u64, marked: bool, now: SimTime) {
        let ring = self.rings[s as usize];
        if ring.frozen_until.is_some_and(|until| now > until) {
            // The freeze is over: forget what it held, and explore again.
            self.empty(s);
            self.rings[s as usize].explore = self.config.explore;
        }
        if !marked {
            self.recycle(s, key);
        }
    }

    /// Writes `key` at the ring's head, over its oldest entry if it is full.
    fn recycle(&mut self, s: u32, key: u64) {
        let size = self.size as u32;
        let ring = &mut self.rings[s as usize];
        let i = s as usize * self.size + ring.head as usize;
        if self.uses[i] == 0 {
            ring.usable = (ring.usable + 1).min(size);
        }
        self.keys[i] = key;
        self.uses[i] = self.config.reuse as u16;
        ring.head = (ring.head + 1) % size;
        ring.filled = (ring.filled + 1).min(size);
    }

    /// The retransmission timeout fired at `now`: the ring freezes, unless it is frozen already
    /// or still exploring after a freeze.
    pub fn timeout(&mut self, s: u32, now: SimTime) {
        let ring = &mut self.rings[s as usize];
        if self.config.freeze && ring.frozen_until.is_none() && ring.explore == 0 {
            ring.frozen_until = Some(now + self.config.freeze_time);
        }
    }

    /// The entropy of the next packet, or `None` for a fresh one.
    #[inline]
    pub fn next(&mut self, s: u32) -> Option<u64> {
        let size = self.size as u32;
        let ring = &mut self.rings[s as usize];
        if ring.explore > 0 {
            ring.explore -= 1;
            return None;
        }
        let base = s as usize * self.size;
        if ring.frozen_until.is_some() {
            // Every entry written, used up or not, in turn.
            if ring.filled == 0 {
                return None;
            }
            let i = base + (ring.frozen_next % ring.filled) as usize;
            ring.frozen_next = (ring.frozen_next % ring.filled + 1) % ring.filled;
            if self.uses[i] > 0 {
                self.uses[i] = 0;
                ring.usable -= 1;
            }
            return Some(self.keys[i]);
        }
        if ring.usable == 0 {
            return None;
        }
        // The oldest entry with uses left: the usable ones are the last written.
        let i = base + ((ring.head + size - ring.usable) % size) as usize;
        self.uses[i] -= 1;
        if self.uses[i] == 0 {
            ring.usable -= 1;
        }
        Some(self.keys[i])
    }

    /// Whether slot `s` is frozen (tests).
    #[cfg(test)]
    fn frozen(&self, s: u32) -> bool {
        self.rings[s as usize].frozen_until.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reps(buffer: u32, reuse: u32) -> (Reps, u32) {
        let mut r = Reps::new(RepsConfig { buffer, reuse, ..RepsConfig::default() });
        let s = r.ensure(5);
        (r, s)
    }

    const T: SimTime = SimTime::ZERO;

    #[test]
    fn an_empty_ring_asks_for_fresh_entropies() {
        let (mut r, s) = reps(8, 1);
        assert_eq!(r.next(s), None);
        assert_eq!(r.next(s), None, "and goes on asking: nothing was taken");
    }

    #[test]
    fn marked_acks_never_enter_the_ring() {
        let (mut r, s) = reps(8, 1);
        for k in 0..20 {
            r.ack(s, 100 + k, true, T);
        }
        assert_eq!(r.next(s), None, "only marked entropies came back");
        r.ack(s, 7, false, T);
        r.ack(s, 8, true, T);
        assert_eq!(r.next(s), Some(7));
        assert_eq!(r.next(s), None, "8 was marked");
    }

    #[test]
    fn unmarked_entropies_are_reused_once_each_oldest_first() {
        let (mut r, s) = reps(8, 1);
        for k in [11, 12, 13] {
            r.ack(s, k, false, T);
        }
        assert_eq!([r.next(s), r.next(s), r.next(s), r.next(s)], [Some(11), Some(12), Some(13), None]);
        // Interleaved: what comes back is used in the order it came.
        r.ack(s, 21, false, T);
        assert_eq!(r.next(s), Some(21));
        r.ack(s, 22, false, T);
        r.ack(s, 23, false, T);
        assert_eq!(r.next(s), Some(22));
        r.ack(s, 24, false, T);
        assert_eq!([r.next(s), r.next(s), r.next(s)], [Some(23), Some(24), None]);
    }

    #[test]
    fn a_full_ring_forgets_its_oldest_entries() {
        let (mut r, s) = reps(4, 1);
        for k in 1..=6 {
            r.ack(s, k, false, T);
        }
        assert_eq!([r.next(s), r.next(s), r.next(s), r.next(s), r.next(s)], [Some(3), Some(4), Some(5), Some(6), None]);
    }

    #[test]
    fn with_reuse_an_entropy_carries_that_many_packets() {
        let (mut r, s) = reps(8, 3);
        r.ack(s, 9, false, T);
        r.ack(s, 10, false, T);
        let sent: Vec<_> = (0..7).map(|_| r.next(s)).collect();
        assert_eq!(sent, [Some(9), Some(9), Some(9), Some(10), Some(10), Some(10), None]);
    }

    #[test]
    fn a_timeout_freezes_the_ring_on_what_it_holds_then_it_explores() {
        let config = RepsConfig { buffer: 4, explore: 3, freeze_time: SimTime::from_us(100), ..Default::default() };
        let mut r = Reps::new(config);
        let s = r.ensure(0);
        r.ack(s, 1, false, T);
        r.ack(s, 2, false, T);
        assert_eq!(r.next(s), Some(1), "1 is used up; 2 is left");
        r.timeout(s, SimTime::from_us(10));
        assert!(r.frozen(s));
        // Frozen: every entry written, used up or not, in turn, and no fresh entropy.
        let sent: Vec<_> = (0..5).map(|_| r.next(s)).collect();
        assert_eq!(sent, [Some(1), Some(2), Some(1), Some(2), Some(1)]);
        // Marked ACKs still write nothing; unmarked ones join the cycle.
        r.ack(s, 3, true, SimTime::from_us(50));
        r.ack(s, 4, false, SimTime::from_us(50));
        let sent: Vec<_> = (0..3).map(|_| r.next(s)).collect();
        assert_eq!(sent, [Some(2), Some(4), Some(1)]);
        // A second timeout does not extend the freeze (until 110 us).
        r.timeout(s, SimTime::from_us(60));
        r.ack(s, 5, false, SimTime::from_us(110));
        assert!(r.frozen(s), "not past the freeze yet");
        // The first ACK after it empties the ring; then `explore` packets take fresh entropies,
        // whatever the ring holds.
        r.ack(s, 6, false, SimTime::from_us(111));
        assert!(!r.frozen(s));
        let sent: Vec<_> = (0..5).map(|_| r.next(s)).collect();
        assert_eq!(sent, [None, None, None, Some(6), None], "3 explored, then 6 alone: 1, 2, 4, 5 are gone");
    }

    #[test]
    fn a_ring_exploring_after_a_freeze_does_not_freeze_again() {
        let config = RepsConfig { explore: 2, freeze_time: SimTime::from_us(1), ..Default::default() };
        let mut r = Reps::new(config);
        let s = r.ensure(0);
        r.timeout(s, T);
        r.ack(s, 1, false, SimTime::from_us(2));
        r.timeout(s, SimTime::from_us(3));
        assert!(!r.frozen(s), "exploring: a timeout does not freeze");
        assert_eq!([r.next(s), r.next(s)], [None, None]);
        r.timeout(s, SimTime::from_us(4));
        assert!(r.frozen(s), "explored: it does again");
    }

    #[test]
    fn without_freezing_a_timeout_changes_nothing() {
        let mut r = Reps::new(RepsConfig { freeze: false, ..Default::default() });
        let s = r.ensure(0);
        r.ack(s, 1, false, T);
        r.timeout(s, T);
        assert!(!r.frozen(s));
        assert_eq!([r.next(s), r.next(s)], [Some(1), None]);
    }

    #[test]
    fn a_released_slot_comes_back_empty() {
        let (mut r, s) = reps(8, 1);
        r.ack(s, 1, false, T);
        r.release(5);
        assert_eq!(r.slot(5), None);
        let again = r.ensure(9);
        assert_eq!(again, s, "recycled: no new memory");
        assert_eq!(r.next(again), None, "its ring was emptied");
        assert_eq!(r.rings.len(), 1);
    }
}
