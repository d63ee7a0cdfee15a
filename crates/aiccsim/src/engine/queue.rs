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
//!
//! A bucket is sorted by merging, not by a general sort: its entries arrive in insertion order,
//! and the events scheduled into one bucket come in a few ascending runs (each kind of event
//! lies a fixed time ahead of when it was scheduled: an arrival one serialisation and one
//! propagation delay, a wake-up one serialisation; those scheduled with the same delay arrive
//! in time order). A k = 32 fat tree puts about a thousand entries into a bucket in ten or so
//! runs: merging them costs a few passes, where a sort cost log2 of a thousand (BENCHMARKS.md,
//! session 16). Large buckets' buffers keep their capacity, passed from a drained bucket to the
//! next that fills (most recently drained first: still in cache), instead of being trimmed and
//! grown again every time round the ring; small ones go back to their slot, as before.

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
/// Entries a spare buffer keeps room for at least (more if buckets lately held more, see
/// `EventQueue::recent`); a drained buffer with room for no more goes back to its slot.
const SPARE_CAPACITY: usize = 64;

pub struct EventQueue {
    /// Bucket buffers. An empty bucket holds a small buffer (the last one drained there) or
    /// none (capacity 0), and then takes one from `spare` when it is first scheduled into.
    ring: Vec<Vec<Entry>>,
    /// Bit i set: ring slot i holds entries.
    occupied: Vec<u64>,
    /// Absolute number (time >> SHIFT) of the bucket being drained.
    cur: u64,
    /// The entries of bucket `cur`, sorted earliest first; those before `head` have been popped.
    current: Vec<Entry>,
    head: usize,
    /// Drained buffers, empty, with their capacity: the last one pushed was drained last.
    spare: Vec<Vec<Entry>>,
    /// The most entries a bucket held lately (the largest drained, less 1/64 of it for every
    /// bucket drained since): a spare buffer keeps room for twice that, so that buckets as large
    /// as the recent ones find room, and a burst does not leave every buffer it passed through
    /// that large. (A moving average kept buffers too small while the load grew, and they were
    /// grown again and again.)
    recent: usize,
    /// Where a bucket's runs are merged ([`merge_runs`]), and the runs' bounds.
    scratch: Vec<Entry>,
    bounds: Vec<usize>,
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
            head: 0,
            spare: Vec::new(),
            recent: 0,
            scratch: Vec::new(),
            bounds: Vec::new(),
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
                // Same bucket as the one being drained: insert in order (usually near the end).
                let at = self.head + self.current[self.head..].partition_point(|x| x.key < key);
                self.current.insert(at, e);
            } else {
                self.undrained.push(e);
            }
        } else if b < self.cur + BUCKETS {
            let slot = (b & MASK) as usize;
            let bucket = &mut self.ring[slot];
            if bucket.capacity() == 0 {
                // Its first entry, and it holds no buffer: a spare, or one with room for as many
                // as the recent buckets (grown from nothing, doubling, it was copied again and
                // again: 20 instructions a hop in the all-to-all, whose spares run out).
                *bucket = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(self.recent.max(4)));
            }
            bucket.push(e);
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
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        let e = *self.current.get(self.head)?;
        self.head += 1;
        self.len -= 1;
        Some((SimTime(e.time()), e.event))
    }

    /// The time of the next event, without taking it. (It moves to that event's bucket, as the
    /// next `pop` would: a run paused before an event goes on exactly as one that was not.)
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        self.current.get(self.head).map(|e| SimTime(e.time()))
    }

    /// Moves to the next non-empty bucket and sorts it; false when nothing is left.
    #[cold]
    fn advance(&mut self) -> bool {
        self.current.clear();
        self.head = 0;
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
            self.recent = self.ring[slot].len().max(self.recent - self.recent / 64);
            if self.current.capacity() <= SPARE_CAPACITY {
                // A small buffer goes back to the bucket's slot: where buckets hold an event or
                // two (a 16-to-1 incast), passing every buffer through the spares cost 10% more
                // instructions (BENCHMARKS.md, session 16).
                std::mem::swap(&mut self.current, &mut self.ring[slot]);
            } else {
                let filled = std::mem::take(&mut self.ring[slot]);
                let drained = std::mem::replace(&mut self.current, filled);
                self.recycle(drained);
            }
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        if self.far.peek().is_some_and(|e| e.time() >> SHIFT == next) {
            self.join_far(next);
        }
        if self.current.len() > 1 {
            merge_runs(&mut self.current, &mut self.scratch, &mut self.bounds);
        }
        true
    }

    /// Puts the heap's entries due in bucket `next`, in key order, before the ring's: they were
    /// scheduled before any of those (when the bucket was beyond the ring), as `merge_runs`
    /// needs.
    #[cold]
    fn join_far(&mut self, next: u64) {
        self.scratch.clear();
        while self.far.peek().is_some_and(|e| e.time() >> SHIFT == next) {
            self.scratch.push(self.far.pop().expect("peeked"));
        }
        self.scratch.extend_from_slice(&self.current);
        std::mem::swap(&mut self.current, &mut self.scratch);
    }

    /// Keeps a drained buffer for the next bucket that fills, with room for the recent buckets:
    /// a burst that once filled one must not leave every buffer that large (nor the merges'
    /// scratch space).
    #[inline]
    fn recycle(&mut self, mut buffer: Vec<Entry>) {
        buffer.clear();
        let keep = SPARE_CAPACITY.max(2 * self.recent);
        if buffer.capacity() > keep {
            buffer.shrink_to(keep);
        }
        if self.scratch.capacity() > keep {
            self.scratch.clear();
            self.scratch.shrink_to(keep);
        }
        if buffer.capacity() > 0 {
            self.spare.push(buffer);
        }
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
        // (Scheduled in key order but for their times within the bucket: few runs.)
        let drained = std::mem::replace(&mut self.current, std::mem::take(&mut self.undrained));
        self.recycle(drained);
        merge_runs(&mut self.current, &mut self.scratch, &mut self.bounds);
        true
    }

    /// The next event and, probably, the one after (for prefetching; exact order not needed).
    #[inline]
    pub fn peek_two(&self) -> (Option<Event>, Option<Event>) {
        let next = self.current.get(self.head).map(|e| e.event);
        (next, self.current.get(self.head + 1).map(|e| e.event))
    }

    /// Lets `f` change any pending event in place, keeping its time and order (the events of
    /// packets on a link that has just failed become losses). Visits every pending event: for
    /// rare moments only.
    pub fn rewrite(&mut self, mut f: impl FnMut(&mut Event)) {
        for e in self.ring.iter_mut().flatten().chain(self.current[self.head..].iter_mut()) {
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
        // (Entries of `current` before `head` were popped already.)
        let mut rest = self.current.split_off(self.head);
        rest.retain(&mut keep);
        self.current = rest;
        self.head = 0;
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

/// Sorts `v` by key, where it holds runs each ascending by key, every entry of a run scheduled
/// after every entry of the runs before it (a bucket's entries in the order they were
/// scheduled, after those that waited in the heap, in the heap's order): runs found in one pass
/// where the time goes back, then merged in pairs, pass after pass, between `v` and `scratch`
/// (whose buffers trade places). `bounds` is room for the runs' bounds. The merges compare times
/// alone, taking the earlier run's entry on a tie: the order of the keys. Any order of times is
/// sorted; a few runs cost a few passes.
fn merge_runs(v: &mut Vec<Entry>, scratch: &mut Vec<Entry>, bounds: &mut Vec<usize>) {
    let n = v.len();
    bounds.clear();
    bounds.push(0);
    for (i, w) in v.windows(2).enumerate() {
        if w[1].time() < w[0].time() {
            bounds.push(i + 1);
        }
    }
    if bounds.len() == 1 {
        return; // one run: in order already
    }
    bounds.push(n);
    if scratch.len() < n {
        scratch.resize(n, v[0]);
    }
    while bounds.len() > 2 {
        let (src, dst) = (&v[..n], &mut scratch[..n]);
        let runs = bounds.len() - 1;
        let mut kept = 1; // bounds[..kept] are the merged runs' bounds, written over the old
        let mut r = 0;
        while r < runs {
            let (lo, mid) = (bounds[r], bounds[r + 1]);
            let hi = if r + 1 < runs { bounds[r + 2] } else { mid }; // the last run alone: copied
            merge(src, dst, lo, mid, hi);
            bounds[kept] = hi;
            kept += 1;
            r += 2;
        }
        bounds.truncate(kept);
        std::mem::swap(v, scratch);
    }
    v.truncate(n);
    debug_assert!(v.windows(2).all(|w| w[0].key < w[1].key), "merged out of order");
}

/// Writes the merge of runs `src[lo..mid]` and `src[mid..hi]` (ascending in time, the second
/// scheduled after the first) to `dst[lo..hi]`.
#[inline]
fn merge(src: &[Entry], dst: &mut [Entry], lo: usize, mid: usize, hi: usize) {
    let (a, b, out) = (&src[lo..mid], &src[mid..hi], &mut dst[lo..hi]);
    let (mut i, mut j) = (0, 0);
    if a.last().map(Entry::time) > b.first().map(Entry::time) {
        while i < a.len() && j < b.len() {
            let take_b = b[j].time() < a[i].time();
            out[i + j] = *if take_b { &b[j] } else { &a[i] };
            j += take_b as usize;
            i += !take_b as usize;
        }
    }
    // What is left of one of them follows (all of both, when they were in order already).
    out[i + j..a.len() + j].copy_from_slice(&a[i..]);
    out[a.len() + j..].copy_from_slice(&b[j..]);
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
    fn ties_between_the_heap_and_the_ring_go_in_the_order_scheduled() {
        let mut q = EventQueue::default();
        let t = SimTime::from_us(10); // beyond the ring from time 0: these two wait in the heap
        q.push(t, Event::FlowStart(0));
        q.push(t - SimTime(1), Event::FlowStart(1));
        q.push(SimTime::from_us(7), Event::Sample);
        assert_eq!(q.pop(), Some((SimTime::from_us(7), Event::Sample)));
        // Now within the ring's reach: the same bucket, from the ring.
        q.push(t, Event::FlowStart(2));
        q.push(t - SimTime(1), Event::FlowStart(3));
        q.push(t, Event::FlowStart(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        let want = [1, 3, 0, 2, 4].map(Event::FlowStart);
        assert_eq!(order, want);
    }

    #[test]
    fn merging_runs_orders_as_a_sort_does() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (mut scratch, mut bounds) = (Vec::new(), Vec::new());
        for case in 0..2_000 {
            // In the order scheduled: up to 40 runs ascending in time, of random lengths (some
            // empty, ties within and across them), or times in no order at all.
            let mut v = Vec::new();
            let mut seq = 0u128;
            let runs = rng.random_range(0..40);
            for _ in 0..runs {
                let (len, mut t) = (rng.random_range(0..60), rng.random_range(0..1_000u128));
                for _ in 0..len {
                    t += rng.random_range(0..30);
                    if case % 10 == 0 {
                        t = rng.random_range(0..1_000);
                    }
                    v.push(Entry { key: t << 64 | seq, event: Event::FlowStart(seq as u32) });
                    seq += 1;
                }
            }
            let mut want: Vec<u128> = v.iter().map(|e| e.key).collect();
            want.sort_unstable();
            merge_runs(&mut v, &mut scratch, &mut bounds);
            assert_eq!(v.iter().map(|e| e.key).collect::<Vec<_>>(), want, "case {case}");
        }
    }

    #[test]
    fn drained_buffers_go_to_the_next_bucket_with_their_capacity_but_a_burst_is_trimmed() {
        let mut q = EventQueue::default();
        let ns = |n: u64| SimTime(n << SHIFT);
        // Forty buckets of 500 entries.
        for b in 1..=40 {
            for i in 0..500 {
                q.push(ns(b), Event::FlowStart(i));
            }
        }
        q.push(ns(41), Event::Sample);
        while q.pop().is_some() {}
        // Their buffers were handed back as the next bucket came up: the next bucket to fill
        // takes one, not an empty one grown again.
        q.push(ns(50), Event::Sample);
        let slot = (50 & MASK) as usize;
        assert!(q.ring[slot].capacity() >= 500, "capacity {}", q.ring[slot].capacity());
        // A burst of 100 000 in one bucket, after a thousand buckets of a few: not kept that
        // large.
        for b in 0..1_000u64 {
            q.push(ns(60 + b), Event::Sample);
            q.pop();
        }
        for i in 0..100_000 {
            // (Times that go back and forth: merged through the scratch space.)
            q.push(ns(2_000) + SimTime(u64::from(i % 2)), Event::FlowStart(i));
        }
        while q.pop().is_some() {}
        let kept: usize = q.spare.iter().chain([&q.current, &q.scratch]).map(|b| b.capacity()).max().unwrap();
        assert!(kept >= 100_000, "one buffer holds the bucket being drained: {kept}");
        assert!(q.spare.iter().all(|b| b.capacity() <= SPARE_CAPACITY.max(2 * q.recent)));
        // A thousand buckets of one later, the burst is forgotten.
        for b in 0..1_000u64 {
            q.push(ns(3_000 + b), Event::Sample);
            q.pop();
        }
        let largest = q.spare.iter().chain([&q.scratch]).map(|b| b.capacity()).max().unwrap();
        assert!(largest < 100_000, "the burst's buffers were trimmed once drained: {largest}");
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
