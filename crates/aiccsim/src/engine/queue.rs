//! The event queue: a calendar queue keyed by (time, insertion sequence).
//!
//! The sequence number makes the order total: two events due at the same picosecond run in the
//! order they were scheduled, so a run never depends on how ties happen to break.
//!
//! Most events of a packet simulation fall within a few microseconds of now (serialisation,
//! propagation, pacing). Those go into a ring of 1 ns buckets covering the next ~4 us, by a
//! shift and a mask; only the bucket being drained is sorted. Events further out (timers, slow
//! pacers, samples) wait in a binary heap and join the ring when their bucket comes up. A bitmap
//! of occupied buckets finds the next non-empty one without walking empty ones.

use super::Event;
use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy)]
struct Entry {
    /// `time << 64 | seq`: one integer comparison orders by time, then by insertion.
    key: u128,
    event: Event,
}

impl Entry {
    #[inline]
    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
        other.key.cmp(&self.key)
    }
}

/// log2 of the bucket width in picoseconds (1.024 ns).
const SHIFT: u32 = 10;
/// Buckets in the ring (a power of two): a horizon of about 4.2 us.
const BUCKETS: u64 = 4096;
const MASK: u64 = BUCKETS - 1;
/// Entries a bucket's buffer keeps room for once drained.
const SPARE_CAPACITY: usize = 64;

pub struct EventQueue {
    ring: Vec<Vec<Entry>>,
    /// Bit i set: ring slot i holds entries.
    occupied: Vec<u64>,
    /// Absolute number (time >> SHIFT) of the bucket being drained.
    cur: u64,
    /// The entries of bucket `cur`, sorted latest first (so `pop` takes from the end).
    current: Vec<Entry>,
    /// Entries beyond the ring's horizon when they were scheduled.
    far: BinaryHeap<Entry>,
    /// Whether bucket `cur` is being drained (`current` holds it, sorted). Not before the first
    /// pop: a run's setup schedules every flow's start, often all at time zero, and inserting
    /// each in order at the front of `current` moved the others every time (quadratic: minutes
    /// for a million flows).
    draining: bool,
    /// Before the first pop, the entries due in bucket `cur`, as scheduled (so in key order:
    /// sorting them is one reversal). The heap took them in constant time too, but the first
    /// pop then spent a third of a second taking two million back out, unable to stop.
    undrained: Vec<Entry>,
    len: usize,
    next_seq: u64,
    /// Most events pending at once.
    pub max_len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::with_capacity(0)
    }
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            ring: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: vec![0; (BUCKETS / 64) as usize],
            cur: 0,
            current: Vec::new(),
            far: BinaryHeap::with_capacity(n),
            draining: false,
            undrained: Vec::new(),
            len: 0,
            next_seq: 0,
            max_len: 0,
        }
    }

    /// Schedules `event` at `time`, which must not be before the last popped event.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        let key = ((time.0 as u128) << 64) | self.next_seq as u128;
        self.next_seq += 1;
        self.len += 1;
        self.max_len = self.max_len.max(self.len);
        let e = Entry { key, event };
        let b = time.0 >> SHIFT;
        debug_assert!(b >= self.cur, "event scheduled in the past");
        if b == self.cur {
            if self.draining {
                // Same bucket as the one being drained: insert in order (latest first).
                let at = self.current.partition_point(|x| x.key > key);
                self.current.insert(at, e);
            } else {
                self.undrained.push(e);
            }
        } else if b < self.cur + BUCKETS {
            let slot = (b & MASK) as usize;
            self.ring[slot].push(e);
            self.occupied[slot / 64] |= 1 << (slot % 64);
        } else {
            self.far.push(e);
        }
    }

    /// The absolute number of the next occupied ring bucket after `cur`, if any.
    fn next_ring_bucket(&self) -> Option<u64> {
        let start = (self.cur + 1) & MASK;
        let words = self.occupied.len() as u64;
        let mut word = start / 64;
        // Bits of the first word below `start` belong to the far end of the window.
        let mut bits = self.occupied[word as usize] & (!0u64 << (start % 64));
        for step in 0..=words {
            if bits != 0 {
                let slot = word * 64 + bits.trailing_zeros() as u64;
                let ahead = (slot.wrapping_sub(start) & MASK) + 1;
                return Some(self.cur + ahead);
            }
            if step == words {
                break;
            }
            word = (word + 1) % words;
            bits = self.occupied[word as usize];
            if word == start / 64 {
                bits &= !(!0u64 << (start % 64)); // wrapped around: only the bits before `start`
            }
        }
        None
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        let e = self.current.pop()?;
        self.len -= 1;
        Some((SimTime(e.time()), e.event))
    }

    /// The time of the next event, without taking it. (It moves to that event's bucket, as the
    /// next `pop` would: a run paused before an event goes on exactly as one that was not.)
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        self.current.last().map(|e| SimTime(e.time()))
    }

    /// Moves to the next non-empty bucket and sorts it; false when nothing is left.
    #[cold]
    fn advance(&mut self) -> bool {
        if !self.draining && self.begin() {
            return true;
        }
        let ring = self.next_ring_bucket();
        let far = self.far.peek().map(|e| e.time() >> SHIFT);
        let next = match (ring, far) {
            (Some(r), Some(f)) => r.min(f),
            (Some(r), None) => r,
            (None, Some(f)) => f,
            (None, None) => return false,
        };
        self.cur = next;
        self.draining = true;
        let slot = (next & MASK) as usize;
        if ring == Some(next) {
            // Hand the drained buffer back to the ring, trimmed: a burst that once filled one
            // bucket must not leave every bucket it passes through holding that much memory.
            let mut spare = std::mem::take(&mut self.ring[slot]);
            std::mem::swap(&mut self.current, &mut spare);
            spare.shrink_to(SPARE_CAPACITY);
            self.ring[slot] = spare;
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        while self.far.peek().is_some_and(|e| e.time() >> SHIFT == next) {
            let e = self.far.pop().expect("peeked");
            self.current.push(e);
        }
        self.current.sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
        true
    }

    /// The first pop: drains bucket `cur` if anything was scheduled in it before. Apart from
    /// `advance`, whose every call would otherwise pay for a test that only its first needs.
    #[cold]
    #[inline(never)]
    fn begin(&mut self) -> bool {
        self.draining = true;
        if self.undrained.is_empty() {
            return false;
        }
        // Nothing else is due in bucket `cur`: the ring and the heap hold only later buckets.
        self.current = std::mem::take(&mut self.undrained);
        self.current.sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
        true
    }

    /// The next event and, probably, the one after (for prefetching; exact order not needed).
    #[inline]
    pub fn peek_two(&self) -> (Option<Event>, Option<Event>) {
        let n = self.current.len();
        match n {
            0 => (None, None),
            1 => (Some(self.current[0].event), None),
            _ => (Some(self.current[n - 1].event), Some(self.current[n - 2].event)),
        }
    }

    /// Lets `f` change any pending event in place, keeping its time and order (the events of
    /// packets on a link that has just failed become losses). Visits every pending event: for
    /// rare moments only.
    pub fn rewrite(&mut self, mut f: impl FnMut(&mut Event)) {
        for e in self.ring.iter_mut().flatten().chain(self.current.iter_mut()) {
            f(&mut e.event);
        }
        let mut far = std::mem::take(&mut self.far).into_vec();
        for e in far.iter_mut() {
            f(&mut e.event);
        }
        // (The keys did not change: the heap's order holds.)
        self.far = BinaryHeap::from(far);
    }

    /// Takes out every pending event `pick` chooses, in the order they would have run, with
    /// their times (fast-forward sets a frozen group's events aside). Visits every pending
    /// event: for rare moments only.
    pub fn extract(&mut self, mut pick: impl FnMut(&Event) -> bool) -> Vec<(SimTime, Event)> {
        let mut taken: Vec<Entry> = Vec::new();
        let mut keep = |e: &Entry| {
            if pick(&e.event) {
                taken.push(*e);
                false
            } else {
                true
            }
        };
        for (slot, bucket) in self.ring.iter_mut().enumerate() {
            bucket.retain(&mut keep);
            if bucket.is_empty() {
                self.occupied[slot / 64] &= !(1 << (slot % 64));
            }
        }
        self.current.retain(&mut keep);
        self.undrained.retain(&mut keep);
        let mut far = std::mem::take(&mut self.far).into_vec();
        far.retain(&mut keep);
        self.far = BinaryHeap::from(far);
        self.len -= taken.len();
        taken.sort_unstable_by_key(|e| e.key);
        taken.into_iter().map(|e| (SimTime(e.time()), e.event)).collect()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn same_time_events_run_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), Event::Sample);
        q.push(SimTime(3), Event::FlowStart(7));
        q.push(SimTime(5), Event::FlowStart(1));
        q.push(SimTime(3), Event::FlowStart(2));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (SimTime(3), Event::FlowStart(7)),
                (SimTime(3), Event::FlowStart(2)),
                (SimTime(5), Event::Sample),
                (SimTime(5), Event::FlowStart(1)),
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn extracted_events_leave_the_rest_in_order_and_come_out_in_order() {
        let mut q = EventQueue::default();
        let mut all = Vec::new();
        for i in 0..300u32 {
            // Near (the ring), far (the heap), and ties.
            let t = SimTime(u64::from(i % 37) * if i % 2 == 0 { 900 } else { 9_000_000 });
            q.push(t, Event::Probe(i));
            all.push((t, i));
        }
        assert_eq!(q.pop(), Some((SimTime(0), Event::Probe(0))));
        all.sort_by_key(|&(t, i)| (t, i));
        all.remove(0);
        let taken = q.extract(|e| matches!(e, Event::Probe(i) if i % 3 == 0));
        let expect = |keep: bool| -> Vec<(SimTime, Event)> {
            all.iter().filter(|&&(_, i)| (i % 3 == 0) != keep).map(|&(t, i)| (t, Event::Probe(i))).collect()
        };
        assert_eq!(taken, expect(false));
        assert_eq!(q.len(), expect(true).len());
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, expect(true));
    }

    #[test]
    fn rewritten_events_keep_their_time_and_order() {
        let mut q = EventQueue::default();
        for i in 0..100u32 {
            q.push(SimTime(u64::from(i) * 50_000), Event::Arrive(i % 3, i));
        }
        q.pop();
        q.rewrite(|e| {
            if let Event::Arrive(1, id) = *e {
                *e = Event::Lost(1, id);
            }
        });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = (1..100u32)
            .map(|i| {
                let e = if i % 3 == 1 { Event::Lost(1, i) } else { Event::Arrive(i % 3, i) };
                (SimTime(u64::from(i) * 50_000), e)
            })
            .collect();
        assert_eq!(order, want);
    }

    #[test]
    fn events_due_now_wait_apart_until_the_first_pop() {
        let mut q = EventQueue::default();
        for f in 0..1000 {
            q.push(SimTime(f % 3), Event::FlowStart(f as u32));
        }
        q.push(SimTime(5_000), Event::Sample);
        // Not inserted one by one into the bucket being drained: none is being drained yet.
        assert!(q.current.is_empty() && q.undrained.len() == 1000);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let mut want: Vec<_> = (0..1000u64).map(|f| (SimTime(f % 3), Event::FlowStart(f as u32))).collect();
        want.sort_by_key(|&(t, _)| t); // stable: insertion order among equal times
        want.push((SimTime(5_000), Event::Sample));
        assert_eq!(order, want);
    }

    #[test]
    fn matches_a_sorted_reference_under_random_monotone_use() {
        for (span, seed) in [(3_000u64, 1u64), (3_000_000, 2), (30_000_000, 3), (5_000_000_000, 4)] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut q = EventQueue::default();
            let mut reference: std::collections::BTreeMap<(u64, u64), u32> = Default::default();
            let (mut now, mut seq, mut id) = (0u64, 0u64, 0u32);
            for _ in 0..100_000 {
                if rng.random_bool(0.55) || reference.is_empty() {
                    let t = now + rng.random_range(0..span) * rng.random_range(0..2u64);
                    q.push(SimTime(t), Event::FlowStart(id));
                    reference.insert((t, seq), id);
                    seq += 1;
                    id += 1;
                } else {
                    let (&(t, s), &want) = reference.iter().next().unwrap();
                    reference.remove(&(t, s));
                    let (got_t, got) = q.pop().unwrap();
                    assert_eq!((got_t, got), (SimTime(t), Event::FlowStart(want)), "span {span}");
                    now = t;
                }
            }
            assert_eq!(q.len(), reference.len());
            while let Some((t, _)) = q.pop() {
                let (&k, _) = reference.iter().next().unwrap();
                reference.remove(&k);
                assert_eq!(t.0, k.0);
            }
            assert!(reference.is_empty());
        }
    }
}
