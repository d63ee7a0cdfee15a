//! The event queue: a binary min-heap keyed by (time, insertion sequence).
//!
//! The sequence number makes the order total: two events due at the same picosecond run in the
//! order they were scheduled, so a run never depends on how the heap happens to break ties.

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

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    /// Events ever scheduled; the number processed is what the run loop counts.
    pub scheduled: u64,
    /// Most events pending at once.
    pub max_len: usize,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), next_seq: 0, scheduled: 0, max_len: 0 }
    }

    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        let key = ((time.0 as u128) << 64) | self.next_seq as u128;
        self.next_seq += 1;
        self.scheduled += 1;
        self.heap.push(Entry { key, event });
        self.max_len = self.max_len.max(self.heap.len());
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.heap.pop().map(|e| (SimTime((e.key >> 64) as u64), e.event))
    }

    /// The next event and, probably, the one after (for prefetching; exact order not needed).
    #[inline]
    pub fn peek_two(&self) -> (Option<Event>, Option<Event>) {
        let s = self.heap.as_slice();
        let second = match (s.get(1), s.get(2)) {
            (Some(a), Some(b)) => Some(if a.key < b.key { a.event } else { b.event }),
            (Some(a), None) => Some(a.event),
            _ => None,
        };
        (s.first().map(|e| e.event), second)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
    }

    #[test]
    fn matches_a_sorted_reference_under_random_monotone_use() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut q = EventQueue::default();
        let mut reference: std::collections::BTreeMap<(u64, u64), u32> = Default::default();
        let (mut now, mut seq, mut id) = (0u64, 0u64, 0u32);
        for _ in 0..50_000 {
            if rng.random_bool(0.55) || reference.is_empty() {
                let t = now + rng.random_range(0..3_000_000u64) * rng.random_range(0..2u64);
                q.push(SimTime(t), Event::FlowStart(id));
                reference.insert((t, seq), id);
                seq += 1;
                id += 1;
            } else {
                let (&(t, s), &want) = reference.iter().next().unwrap();
                reference.remove(&(t, s));
                let (got_t, got) = q.pop().unwrap();
                assert_eq!((got_t, got), (SimTime(t), Event::FlowStart(want)));
                now = t;
            }
        }
        assert_eq!(q.len(), reference.len());
    }
}
