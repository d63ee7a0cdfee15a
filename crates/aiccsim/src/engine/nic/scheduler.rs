//! The NIC's choice of queue pair, in O(log n) of the queue pairs a host has.
//!
//! The rule (`host.rs`): among a host's queue pairs with data to send, in the order they were
//! listed, the first from the round-robin turn on whose pacer time has come and whose window is
//! open sends; if none may, the port wakes at the earliest pacer time among those whose window
//! is open. Scanning them all on every packet cost 83% of a 5000-to-1 incast's instructions
//! (100 queue pairs per NIC), and an all-to-all lists one per peer.
//!
//! Here each listed queue pair has a position in its host's round-robin order (`seq`, numbers
//! that only grow as queue pairs are listed, renumbered densely when they run out) and is in
//! one of three places:
//! - **ready**: a set of positions (`SeqSet`, a bitset with a summary level per 64 words), the
//!   candidates: the turn is the first position from the cursor on, wrapping around. A
//!   candidate's pacer time and window are checked when the search reaches it, so one that has
//!   just sent stays here and, at line rate, is due again when the port is free: no move at all.
//! - **waiting**: a min-heap by pacer time, whose keys always equal the queue pairs' pacer times
//!   (`touched` after every change); those due move to ready before each choice.
//! - **blocked**: parked on a closed window, in a list per connection (the window is the
//!   connection's). The NIC calls `touched` after every event that can open a window (every
//!   congestion-control hook and every change of the bytes in flight is followed by
//!   `apply_cc`), which lists them again; a window that closes needs nothing: the search parks
//!   the queue pair when it finds it closed.
//!
//! A host with a single queue pair keeps it apart (`solo`) and reads it directly, as the old
//! list of one did: a permutation or an incast with one flow per sender costs no more than
//! before. A host that has never had more than `SCAN_UP_TO` keeps them all as candidates and
//! scans them, as the old list did: for a few, that is cheaper than the heap.
//!
//! The turn is a threshold on positions (`cursor`): after a queue pair sends, the search starts
//! just past its position. The old list kept an index instead, adjusted on removal and reset to
//! 0 when it ran past the end; `settle` resets the threshold at the same moments (when no listed
//! queue pair is at or past it), so a queue pair listed after such a reset is not searched
//! first, and one listed before it is, as before. A property test below drives both with random
//! operations and compares every choice and every wake-up time.

use crate::time::SimTime;

/// No queue pair.
const NONE: u32 = u32::MAX;

/// A host that has never listed more queue pairs than this keeps them all as candidates and
/// scans them, as the old list did: for a few, a scan costs less than keeping the heap (S2, an
/// 8-host all-to-all with 7 queue pairs per NIC, took 12% more instructions with it). One that
/// lists more uses the heap from then on.
const SCAN_UP_TO: u32 = 8;

/// What the scheduler reads of the queue pairs it orders.
pub(crate) trait QueuePairs {
    /// Queue pair `f`'s pacer time.
    fn next_send(&self, f: u32) -> SimTime;
    /// Whether `f`'s window lets a packet out now.
    fn window_open(&self, f: u32) -> bool;
    /// `f`'s connection: the events that can open `f`'s window are its connection's.
    fn conn(&self, f: u32) -> u32;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Not listed: no data to send.
    Idle,
    /// The only queue pair listed on its host, checked directly (`HostQueue::solo`).
    Solo,
    Ready,
    Waiting,
    Blocked,
}

/// A queue pair's place in its host's scheduler; as a connection's first queue pair, also the
/// head of the connection's list of blocked queue pairs.
#[derive(Clone, Copy, Debug)]
struct Slot {
    place: Place,
    /// Its position in the round-robin order.
    seq: u32,
    /// Its index in the waiting heap.
    heap: u32,
    /// The next blocked queue pair of its connection.
    next_blocked: u32,
    /// As a connection: its first blocked queue pair.
    blocked: u32,
}

const IDLE: Slot = Slot { place: Place::Idle, seq: 0, heap: 0, next_blocked: NONE, blocked: NONE };

/// One host's listed queue pairs.
#[derive(Default)]
struct HostQueue {
    /// The only listed queue pair, while the host has one and has had no other since it was
    /// listed (`NONE` otherwise): in none of the sets below, its pacer time and window read
    /// directly, as cheap as the old list of one (a permutation, an incast with a flow per
    /// sender).
    solo: u32,
    /// Positions of every listed queue pair (whether any is at or past the cursor).
    listed: SeqSet,
    ready: SeqSet,
    /// The queue pair at each position (`NONE` where none is).
    at: Vec<u32>,
    /// (pacer time, queue pair), a 4-ary min-heap.
    waiting: Vec<(SimTime, u32)>,
    /// The round-robin turn: the search starts at the first position at or past it.
    cursor: u32,
    next_seq: u32,
    len: u32,
    /// The queue pair that sent last, still a candidate: when the port next asks when to
    /// wake, it is the one most likely not due yet.
    sent: u32,
    /// It has listed more than `SCAN_UP_TO` queue pairs: candidates not due wait in the heap,
    /// and those with a closed window are blocked. (Until then every listed queue pair is a
    /// candidate, and the search scans them.)
    large: bool,
}

/// Every host's scheduler, and every queue pair's place in it.
pub(crate) struct Scheduler {
    hosts: Vec<HostQueue>,
    slots: Vec<Slot>,
}

impl Scheduler {
    pub(crate) fn new(hosts: usize, queue_pairs: usize) -> Scheduler {
        let host = || HostQueue { solo: NONE, sent: NONE, ..HostQueue::default() };
        Scheduler { hosts: (0..hosts).map(|_| host()).collect(), slots: vec![IDLE; queue_pairs] }
    }

    /// Lists queue pair `f` of `host` last in the round-robin order.
    pub(crate) fn push(&mut self, host: u32, f: u32, now: SimTime, qps: &impl QueuePairs) {
        debug_assert_eq!(self.slots[f as usize].place, Place::Idle, "queue pair {f} listed twice");
        let h = &mut self.hosts[host as usize];
        if h.next_seq as usize == h.at.len() {
            h.renumber(&mut self.slots);
        }
        let seq = h.next_seq;
        h.next_seq += 1;
        h.len += 1;
        h.at[seq as usize] = f;
        h.listed.insert(seq);
        self.slots[f as usize].seq = seq;
        h.large |= h.len > SCAN_UP_TO;
        if h.len == 1 {
            h.solo = f;
            self.slots[f as usize].place = Place::Solo;
            return;
        }
        if h.solo != NONE {
            // A second one: the first joins the sets.
            let first = std::mem::replace(&mut h.solo, NONE);
            self.place(host, first, now, qps);
        }
        self.place(host, f, now, qps);
    }

    /// Takes queue pair `f` of `host` off the list, wherever it is. The turn stays where it is
    /// until [`Scheduler::settle`].
    pub(crate) fn remove(&mut self, host: u32, f: u32, qps: &impl QueuePairs) {
        let slot = self.slots[f as usize];
        let h = &mut self.hosts[host as usize];
        match slot.place {
            Place::Idle => return,
            Place::Solo => h.solo = NONE,
            Place::Ready => h.ready.remove(slot.seq),
            Place::Waiting => heap_remove(&mut h.waiting, &mut self.slots, slot.heap as usize),
            Place::Blocked => self.unblock(qps.conn(f), f),
        }
        let h = &mut self.hosts[host as usize];
        h.listed.remove(slot.seq);
        h.at[slot.seq as usize] = NONE;
        h.len -= 1;
        if h.sent == f {
            h.sent = NONE;
        }
        self.slots[f as usize].place = Place::Idle;
    }

    /// The turn goes back to the first queue pair when none is listed at or past it (as the
    /// old index did when it ran past the end of the list).
    #[inline]
    pub(crate) fn settle(&mut self, host: u32) {
        let h = &mut self.hosts[host as usize];
        let past_all = match h.solo {
            NONE => h.listed.successor(h.cursor).is_none(),
            f => self.slots[f as usize].seq < h.cursor,
        };
        if past_all {
            h.cursor = 0;
        }
    }

    /// The queue pair of `host` that sends at `now`: the first from the turn on, in
    /// round-robin order, whose pacer time has come and whose window is open; the turn moves
    /// past it. If none may, the earliest pacer time of one whose window is open
    /// (`SimTime::MAX`: none, until a window opens).
    #[inline]
    pub(crate) fn pick(&mut self, host: u32, now: SimTime, qps: &impl QueuePairs) -> Result<u32, SimTime> {
        let h = &mut self.hosts[host as usize];
        let f = h.solo;
        if f == NONE {
            return self.pick_among(host, now, qps);
        }
        if !qps.window_open(f) {
            return Err(SimTime::MAX);
        }
        match qps.next_send(f) {
            t if t > now => Err(t),
            _ => {
                h.cursor = self.slots[f as usize].seq + 1;
                Ok(f)
            }
        }
    }

    #[inline(never)]
    fn pick_among(&mut self, host: u32, now: SimTime, qps: &impl QueuePairs) -> Result<u32, SimTime> {
        let h = &mut self.hosts[host as usize];
        if !h.large {
            return h.scan_pick(now, qps);
        }
        if h.ready.is_empty() {
            // Paced queue pairs: none is due (an ACK kicked the NIC), or the one due now is the
            // only candidate: the heap's least, the next not due yet.
            match h.waiting.first() {
                Some(&(t, _)) if t > now => return Err(self.earliest_waiting(host, qps).unwrap_or(SimTime::MAX)),
                Some(&(_, f)) if h.waiting.iter().skip(1).take(ARITY).all(|w| w.0 > now) => {
                    heap_pop(&mut h.waiting, &mut self.slots);
                    let seq = self.slots[f as usize].seq;
                    h.ready.insert(seq);
                    self.slots[f as usize].place = Place::Ready;
                    if qps.window_open(f) {
                        (h.cursor, h.sent) = (seq + 1, f);
                        return Ok(f);
                    }
                }
                _ => {}
            }
        }
        self.promote(host, now);
        match self.search(host, now, qps) {
            Some(f) => {
                let h = &mut self.hosts[host as usize];
                h.cursor = self.slots[f as usize].seq + 1;
                h.sent = f;
                Ok(f)
            }
            None => Err(self.earliest_waiting(host, qps).unwrap_or(SimTime::MAX)),
        }
    }

    /// The earliest time, no earlier than `not_before` (itself no earlier than `now`), a queue
    /// pair of `host` with an open window may send, if any is listed.
    #[inline]
    pub(crate) fn next_time(
        &mut self,
        host: u32,
        now: SimTime,
        not_before: SimTime,
        qps: &impl QueuePairs,
    ) -> Option<SimTime> {
        debug_assert!(not_before >= now);
        let h = &self.hosts[host as usize];
        match h.solo {
            NONE if h.len == 0 => None,
            NONE if !h.large => h.scan_next_time(not_before, qps),
            NONE => self.next_time_among(host, now, not_before, qps),
            f => qps.window_open(f).then(|| qps.next_send(f).max(not_before)),
        }
    }

    #[inline(never)]
    fn next_time_among(
        &mut self,
        host: u32,
        now: SimTime,
        not_before: SimTime,
        qps: &impl QueuePairs,
    ) -> Option<SimTime> {
        let h = &mut self.hosts[host as usize];
        // The one that sent last first: paced, it waits now.
        let f = std::mem::replace(&mut h.sent, NONE);
        if f != NONE && self.slots[f as usize].place == Place::Ready {
            let t = qps.next_send(f);
            if t > not_before {
                h.ready.remove(self.slots[f as usize].seq);
                self.slots[f as usize].place = Place::Waiting;
                heap_push(&mut h.waiting, &mut self.slots, t, f);
            } else if qps.window_open(f) {
                // At line rate it is due again when its packet is out: whichever goes then, the
                // port wakes then, and the search for it waits until then (an all-to-all's
                // queue pairs mostly send at line rate, each search reading another's state).
                return Some(not_before);
            }
        }
        let h = &self.hosts[host as usize];
        let idle = h.ready.is_empty() && h.waiting.first().is_none_or(|w| w.0 > now);
        if !idle {
            self.promote(host, now);
            if self.search(host, not_before, qps).is_some() {
                return Some(not_before);
            }
        }
        self.earliest_waiting(host, qps).map(|t| t.max(not_before))
    }

    /// Queue pair `f`'s pacer time may have changed, and its connection's window opened: keeps
    /// its waiting key, and lists the connection's blocked queue pairs again.
    #[inline]
    pub(crate) fn touched(&mut self, host: u32, f: u32, now: SimTime, qps: &impl QueuePairs) {
        if self.slots[f as usize].place == Place::Waiting {
            self.retime(host, f, qps);
        }
        let conn = qps.conn(f);
        if self.slots[conn as usize].blocked != NONE {
            self.reopened(host, conn, now, qps);
        }
    }

    /// Connection `conn`'s window may have opened: its blocked queue pairs are candidates again.
    #[cold]
    fn reopened(&mut self, host: u32, conn: u32, now: SimTime, qps: &impl QueuePairs) {
        let mut f = std::mem::replace(&mut self.slots[conn as usize].blocked, NONE);
        while f != NONE {
            let next = self.slots[f as usize].next_blocked;
            self.place(host, f, now, qps);
            f = next;
        }
    }

    /// Waiting queue pair `f`'s key follows its pacer time.
    fn retime(&mut self, host: u32, f: u32, qps: &impl QueuePairs) {
        let t = qps.next_send(f);
        let pos = self.slots[f as usize].heap as usize;
        let heap = &mut self.hosts[host as usize].waiting;
        if heap[pos].0 != t {
            let later = t > heap[pos].0;
            heap[pos].0 = t;
            if later {
                sift_down(heap, &mut self.slots, pos);
            } else {
                sift_up(heap, &mut self.slots, pos);
            }
        }
    }

    /// Listed queue pair `f` becomes a candidate, or waits for its pacer time.
    fn place(&mut self, host: u32, f: u32, now: SimTime, qps: &impl QueuePairs) {
        let h = &mut self.hosts[host as usize];
        let t = qps.next_send(f);
        if t <= now || !h.large {
            self.slots[f as usize].place = Place::Ready;
            h.ready.insert(self.slots[f as usize].seq);
        } else {
            self.slots[f as usize].place = Place::Waiting;
            heap_push(&mut h.waiting, &mut self.slots, t, f);
        }
    }

    /// Waiting queue pairs due by `now` become candidates.
    #[inline]
    fn promote(&mut self, host: u32, now: SimTime) {
        let h = &mut self.hosts[host as usize];
        while let Some(&(t, f)) = h.waiting.first() {
            if t > now {
                break;
            }
            heap_pop(&mut h.waiting, &mut self.slots);
            self.slots[f as usize].place = Place::Ready;
            h.ready.insert(self.slots[f as usize].seq);
        }
    }

    /// The first candidate from the turn on, wrapping around, due by `by` with its window open.
    /// Candidates passed over move: those not due to the waiting heap, those with a closed
    /// window to their connection's blocked list.
    #[inline]
    fn search(&mut self, host: u32, by: SimTime, qps: &impl QueuePairs) -> Option<u32> {
        let h = &mut self.hosts[host as usize];
        if h.ready.is_empty() {
            return None; // (the usual answer when an ACK kicks a NIC whose queue pairs are paced)
        }
        let cursor = h.cursor;
        let (mut from, mut wrapped) = (cursor, cursor == 0);
        loop {
            let Some(seq) = h.ready.successor(from) else {
                if wrapped {
                    return None;
                }
                // Those from the turn on were all passed over (and moved): none is left there.
                (from, wrapped) = (0, true);
                continue;
            };
            let f = h.at[seq as usize];
            let t = qps.next_send(f);
            if t > by {
                h.ready.remove(seq);
                self.slots[f as usize].place = Place::Waiting;
                heap_push(&mut h.waiting, &mut self.slots, t, f);
            } else if qps.window_open(f) {
                return Some(f);
            } else {
                h.ready.remove(seq);
                block(&mut self.slots, f, qps.conn(f));
            }
            from = seq + 1;
        }
    }

    /// The earliest pacer time among waiting queue pairs with an open window; those found
    /// closed on the way are blocked.
    #[inline]
    fn earliest_waiting(&mut self, host: u32, qps: &impl QueuePairs) -> Option<SimTime> {
        let h = &mut self.hosts[host as usize];
        loop {
            let &(t, f) = h.waiting.first()?;
            if qps.window_open(f) {
                return Some(t);
            }
            heap_pop(&mut h.waiting, &mut self.slots);
            block(&mut self.slots, f, qps.conn(f));
        }
    }

    /// Takes `f` off connection `conn`'s blocked list (a short one: the queue pairs of one
    /// connection that have data to send).
    fn unblock(&mut self, conn: u32, f: u32) {
        let next = self.slots[f as usize].next_blocked;
        if self.slots[conn as usize].blocked == f {
            self.slots[conn as usize].blocked = next;
            return;
        }
        let mut g = self.slots[conn as usize].blocked;
        while self.slots[g as usize].next_blocked != f {
            g = self.slots[g as usize].next_blocked;
        }
        self.slots[g as usize].next_blocked = next;
    }

    /// Fast-forward: host `host`'s pacer times move on by `by` (a uniform shift keeps the
    /// heap's order).
    pub(crate) fn shift_clock(&mut self, host: u32, by: SimTime) {
        for (t, _) in self.hosts[host as usize].waiting.iter_mut() {
            if *t != SimTime::MAX {
                *t += by;
            }
        }
    }
}

/// Parks queue pair `f` on connection `conn`'s blocked list.
fn block(slots: &mut [Slot], f: u32, conn: u32) {
    let head = std::mem::replace(&mut slots[conn as usize].blocked, f);
    let slot = &mut slots[f as usize];
    slot.place = Place::Blocked;
    slot.next_blocked = head;
}

impl HostQueue {
    /// [`Scheduler::pick`] on a host with few queue pairs, all of them candidates: the old
    /// list's scan, from the turn on.
    fn scan_pick(&mut self, now: SimTime, qps: &impl QueuePairs) -> Result<u32, SimTime> {
        let cursor = self.cursor;
        let (mut from, mut wrapped) = (cursor, false);
        let mut earliest = SimTime::MAX;
        loop {
            let seq = match self.ready.successor(from) {
                Some(seq) if !wrapped || seq < cursor => seq,
                None if !wrapped && cursor > 0 => {
                    (from, wrapped) = (0, true);
                    continue;
                }
                _ => return Err(earliest),
            };
            from = seq + 1;
            let f = self.at[seq as usize];
            if !qps.window_open(f) {
                continue;
            }
            match qps.next_send(f) {
                t if t > now => earliest = earliest.min(t),
                _ => {
                    self.cursor = seq + 1;
                    return Ok(f);
                }
            }
        }
    }

    /// [`Scheduler::next_time`] on a host with few queue pairs: a scan of them all.
    fn scan_next_time(&self, not_before: SimTime, qps: &impl QueuePairs) -> Option<SimTime> {
        let mut earliest = None;
        let mut next = self.ready.successor(0);
        while let Some(seq) = next {
            let f = self.at[seq as usize];
            if qps.window_open(f) {
                let t = qps.next_send(f).max(not_before);
                if t == not_before {
                    return Some(t);
                }
                earliest = Some(earliest.map_or(t, |e: SimTime| e.min(t)));
            }
            next = self.ready.successor(seq + 1);
        }
        earliest
    }

    /// Renumbers the listed queue pairs densely from 0, in order, with room for at least as
    /// many again (and 64): positions only grow, so they run out now and then. The turn keeps
    /// its place among them.
    #[cold]
    fn renumber(&mut self, slots: &mut [Slot]) {
        let cap = (2 * self.len as usize).max(64).next_power_of_two();
        let (mut listed, mut ready, mut at) = (SeqSet::with_capacity(cap), SeqSet::with_capacity(cap), vec![NONE; cap]);
        let mut cursor = None;
        let mut k = 0;
        let mut next = self.listed.successor(0);
        while let Some(seq) = next {
            if seq >= self.cursor && cursor.is_none() {
                cursor = Some(k);
            }
            let f = self.at[seq as usize];
            let slot = &mut slots[f as usize];
            slot.seq = k;
            listed.insert(k);
            if slot.place == Place::Ready {
                ready.insert(k);
            }
            at[k as usize] = f;
            k += 1;
            next = self.listed.successor(seq + 1);
        }
        // None at or past the turn: it stays past them all, where the next listed one will be.
        self.cursor = cursor.unwrap_or(k);
        (self.listed, self.ready, self.at, self.next_seq) = (listed, ready, at, k);
    }
}

/// A set of small integers with a successor query: a bitset, and above it levels of summary
/// bits (one per nonempty word below), up to a single word.
#[derive(Default)]
struct SeqSet {
    levels: Vec<Vec<u64>>,
}

impl SeqSet {
    fn with_capacity(cap: usize) -> SeqSet {
        let mut levels = Vec::new();
        let mut words = cap.div_ceil(64).max(1);
        loop {
            levels.push(vec![0; words]);
            if words == 1 {
                return SeqSet { levels };
            }
            words = words.div_ceil(64);
        }
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.levels.last().is_none_or(|top| top[0] == 0)
    }

    #[inline]
    fn insert(&mut self, i: u32) {
        let mut i = i as usize;
        for level in &mut self.levels {
            let word = &mut level[i >> 6];
            let was = *word;
            *word |= 1 << (i & 63);
            if was != 0 {
                return;
            }
            i >>= 6;
        }
    }

    #[inline]
    fn remove(&mut self, i: u32) {
        let mut i = i as usize;
        for level in &mut self.levels {
            let word = &mut level[i >> 6];
            *word &= !(1 << (i & 63));
            if *word != 0 {
                return;
            }
            i >>= 6;
        }
    }

    /// The smallest member at or above `from`.
    #[inline]
    fn successor(&self, from: u32) -> Option<u32> {
        // Usually in `from`'s own word (queue pairs listed together sit together).
        let i = from as usize;
        let bits = self.levels.first()?.get(i >> 6).map_or(0, |w| w & (!0u64 << (i & 63)));
        if bits != 0 {
            return Some(((i & !63) | bits.trailing_zeros() as usize) as u32);
        }
        self.successor_beyond(from)
    }

    /// [`SeqSet::successor`] when `from`'s word has none at or above it.
    #[inline(never)]
    fn successor_beyond(&self, from: u32) -> Option<u32> {
        let mut i = from as usize;
        let mut level = 0;
        // Up: the first level with a set bit at or past i in i's word.
        loop {
            let words = self.levels.get(level)?;
            let w = i >> 6;
            let bits = words.get(w)? & (!0u64 << (i & 63));
            if bits != 0 {
                i = (w << 6) | bits.trailing_zeros() as usize;
                break;
            }
            level += 1;
            i = w + 1; // the next word, one level up
        }
        // Down: the lowest set bit under it.
        while level > 0 {
            level -= 1;
            i = (i << 6) | self.levels[level][i].trailing_zeros() as usize;
        }
        Some(i as u32)
    }
}

/// The waiting heap's children per node.
const ARITY: usize = 4;

fn heap_push(heap: &mut Vec<(SimTime, u32)>, slots: &mut [Slot], t: SimTime, f: u32) {
    heap.push((t, f));
    let last = heap.len() - 1;
    sift_up(heap, slots, last);
}

/// Removes the least entry. (Bottom-up: the hole at the top sinks to a leaf along the least
/// children, and the last entry fills it from there; a paced queue pair's new key is among the
/// largest, so it rarely climbs. Once per packet of a paced queue pair, this is most of what
/// the scheduler costs; four children a node halve the levels of a binary heap.)
fn heap_pop(heap: &mut Vec<(SimTime, u32)>, slots: &mut [Slot]) {
    let last = heap.pop().expect("popping an empty heap");
    let heap = heap.as_mut_slice();
    if heap.is_empty() {
        return;
    }
    let mut pos = 0;
    loop {
        let first = ARITY * pos + 1;
        let c = if let Some(kids) = heap.get(first..first + ARITY) {
            let (mut c, mut least) = (0, kids[0].0);
            for (j, kid) in kids.iter().enumerate().skip(1) {
                if kid.0 < least {
                    (c, least) = (j, kid.0);
                }
            }
            first + c
        } else if first < heap.len() {
            least_child(heap, first)
        } else {
            break;
        };
        heap[pos] = heap[c];
        slots[heap[pos].1 as usize].heap = pos as u32;
        pos = c;
    }
    heap[pos] = last;
    sift_up(heap, slots, pos);
}

/// The least of the children from `first` on (up to `ARITY`, as many as there are).
#[inline]
fn least_child(heap: &[(SimTime, u32)], first: usize) -> usize {
    let mut c = first;
    for j in first + 1..(first + ARITY).min(heap.len()) {
        if heap[j].0 < heap[c].0 {
            c = j;
        }
    }
    c
}

fn heap_remove(heap: &mut Vec<(SimTime, u32)>, slots: &mut [Slot], pos: usize) {
    let last = heap.pop().expect("removing from an empty heap");
    if pos < heap.len() {
        heap[pos] = last;
        sift_down(heap, slots, pos);
        if slots[last.1 as usize].heap as usize == pos {
            sift_up(heap, slots, pos);
        }
    }
}

/// Moves the entry at `pos` up to its place; entries it passes move down into the hole.
fn sift_up(heap: &mut [(SimTime, u32)], slots: &mut [Slot], mut pos: usize) {
    let e = heap[pos];
    while pos > 0 {
        let parent = (pos - 1) / ARITY;
        if heap[parent].0 <= e.0 {
            break;
        }
        heap[pos] = heap[parent];
        slots[heap[pos].1 as usize].heap = pos as u32;
        pos = parent;
    }
    heap[pos] = e;
    slots[e.1 as usize].heap = pos as u32;
}

/// Moves the entry at `pos` down to its place; the least child moves up into the hole.
fn sift_down(heap: &mut [(SimTime, u32)], slots: &mut [Slot], mut pos: usize) {
    let e = heap[pos];
    loop {
        let first = ARITY * pos + 1;
        if first >= heap.len() {
            break;
        }
        let c = least_child(heap, first);
        if heap[c].0 >= e.0 {
            break;
        }
        heap[pos] = heap[c];
        slots[heap[pos].1 as usize].heap = pos as u32;
        pos = c;
    }
    heap[pos] = e;
    slots[e.1 as usize].heap = pos as u32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    /// Queue pairs by id: pacer times (ns), windows, connections.
    struct World {
        next_send: Vec<SimTime>,
        open: Vec<bool>,
        conn: Vec<u32>,
    }

    impl World {
        /// `n` queue pairs due at 0 with open windows, each its own connection.
        fn new(n: usize) -> World {
            World { next_send: vec![SimTime::ZERO; n], open: vec![true; n], conn: (0..n as u32).collect() }
        }
    }

    impl QueuePairs for World {
        fn next_send(&self, f: u32) -> SimTime {
            self.next_send[f as usize]
        }
        fn window_open(&self, f: u32) -> bool {
            self.open[f as usize]
        }
        fn conn(&self, f: u32) -> u32 {
            self.conn[f as usize]
        }
    }

    /// The rule as the NIC kept it before this scheduler: a list in round-robin order, an index
    /// for the turn, and a scan of the whole list.
    #[derive(Default)]
    struct Linear {
        active: Vec<u32>,
        rr: usize,
    }

    impl Linear {
        fn pick(&self, now: SimTime, w: &World) -> Result<usize, SimTime> {
            let n = self.active.len();
            let mut earliest = SimTime::MAX;
            for i in 0..n {
                let idx = (self.rr + i) % n;
                let f = self.active[idx];
                if !w.window_open(f) {
                    continue;
                }
                let next = w.next_send(f);
                if next > now {
                    earliest = earliest.min(next);
                    continue;
                }
                return Ok(idx);
            }
            Err(earliest)
        }

        fn next_time(&self, not_before: SimTime, w: &World) -> Option<SimTime> {
            let mut earliest = None;
            for &f in &self.active {
                if w.window_open(f) {
                    let next = w.next_send(f).max(not_before);
                    earliest = Some(earliest.map_or(next, |e: SimTime| e.min(next)));
                }
            }
            earliest
        }

        /// The queue pair at `idx` sent; it is done (`finished`), and the next message of its
        /// connection is listed (`passed`).
        fn sent(&mut self, idx: usize, finished: bool, passed: Option<u32>) {
            self.rr = idx + 1;
            if finished {
                self.active.remove(idx);
                if self.rr > idx {
                    self.rr -= 1;
                }
            }
            self.active.extend(passed);
            if self.rr >= self.active.len() {
                self.rr = 0;
            }
        }

        fn unlist(&mut self, f: u32) {
            if let Some(i) = self.active.iter().position(|&x| x == f) {
                self.active.remove(i);
                if self.rr > i {
                    self.rr -= 1;
                }
                if self.rr >= self.active.len() {
                    self.rr = 0;
                }
            }
        }
    }

    const HOST: u32 = 1;

    fn scheduler(n: usize) -> Scheduler {
        Scheduler::new(2, n)
    }

    /// Sends from `HOST` at `now` as the NIC does: the choice, then the sender's new pacer time.
    fn send(s: &mut Scheduler, w: &mut World, now: SimTime, gap: u64) -> Option<u32> {
        let f = s.pick(HOST, now, w).ok()?;
        s.settle(HOST);
        w.next_send[f as usize] = now + SimTime(gap);
        s.touched(HOST, f, now, w);
        Some(f)
    }

    #[test]
    fn every_queue_pair_due_gets_its_turn_in_listing_order() {
        let (mut s, mut w) = (scheduler(5), World::new(5));
        for f in [4, 0, 3, 1, 2] {
            s.push(HOST, f, SimTime::ZERO, &w);
        }
        let order: Vec<u32> = (0..10).map(|_| send(&mut s, &mut w, SimTime::ZERO, 0).unwrap()).collect();
        assert_eq!(order, [4, 0, 3, 1, 2, 4, 0, 3, 1, 2]);
    }

    #[test]
    fn one_waiting_on_its_pacer_is_passed_over_and_none_due_gives_the_earliest_pacer_time() {
        let (mut s, mut w) = (scheduler(4), World::new(4));
        w.next_send = [0, 50, 20, 0].map(SimTime::from_ns).to_vec();
        for f in 0..4 {
            s.push(HOST, f, SimTime::ZERO, &w);
        }
        let t = |ns| SimTime::from_ns(ns);
        assert_eq!(send(&mut s, &mut w, t(10), 1_000_000), Some(0));
        assert_eq!(send(&mut s, &mut w, t(10), 1_000_000), Some(3), "1 and 2 wait on their pacers");
        assert_eq!(s.pick(HOST, t(10), &w), Err(t(20)));
        assert_eq!(s.next_time(HOST, t(10), t(15), &w), Some(t(20)));
        assert_eq!(s.next_time(HOST, t(10), t(30), &w), Some(t(30)), "due by then: then");
        assert_eq!(s.pick(HOST, t(20), &w), Ok(2), "due exactly now");
    }

    #[test]
    fn a_closed_window_is_passed_over_until_its_connection_reopens_it() {
        let (mut s, mut w) = (scheduler(3), World::new(3));
        w.conn = vec![0, 1, 1]; // 1 and 2 share a connection
        for f in 0..3 {
            s.push(HOST, f, SimTime::ZERO, &w);
        }
        w.open = vec![false, false, true];
        w.next_send[2] = SimTime::from_ns(40);
        assert_eq!(s.pick(HOST, SimTime::ZERO, &w), Err(SimTime::from_ns(40)), "only 2's window is open");
        w.open[2] = false;
        assert_eq!(s.pick(HOST, SimTime::ZERO, &w), Err(SimTime::MAX), "all windows closed");
        assert_eq!(s.next_time(HOST, SimTime::ZERO, SimTime::ZERO, &w), None);
        // An ACK of flow 2 opens the shared window: 1 comes back, and 2 (with its pacer).
        w.open = vec![false, true, true];
        s.touched(HOST, 2, SimTime::ZERO, &w);
        assert_eq!(s.pick(HOST, SimTime::ZERO, &w), Ok(1));
        w.open[0] = true;
        s.touched(HOST, 0, SimTime::ZERO, &w);
        assert_eq!(s.pick(HOST, SimTime::ZERO, &w), Ok(0), "0 comes before 1 in the order, and the turn had wrapped");
    }

    #[test]
    fn the_turn_goes_back_to_the_first_once_it_runs_past_the_last() {
        let (mut s, mut w) = (scheduler(4), World::new(4));
        for f in [0, 1] {
            s.push(HOST, f, SimTime::ZERO, &w);
        }
        assert_eq!(send(&mut s, &mut w, SimTime::ZERO, 0), Some(0));
        assert_eq!(send(&mut s, &mut w, SimTime::ZERO, 0), Some(1));
        // Listed after the turn went back: it waits for those before it.
        s.push(HOST, 2, SimTime::ZERO, &w);
        assert_eq!(send(&mut s, &mut w, SimTime::ZERO, 0), Some(0));
        // The last in the order finishes and hands its connection to the next message, listed
        // before the turn goes back: that one is next.
        assert_eq!(s.pick(HOST, SimTime::ZERO, &w), Ok(1));
        assert_eq!(s.pick(HOST, SimTime::ZERO, &w), Ok(2));
        s.remove(HOST, 2, &w);
        s.push(HOST, 3, SimTime::ZERO, &w);
        s.settle(HOST);
        assert_eq!(s.pick(HOST, SimTime::ZERO, &w), Ok(3));
    }

    #[test]
    fn positions_are_renumbered_when_they_run_out_keeping_order_and_turn() {
        let (mut s, mut w) = (scheduler(3), World::new(3));
        for f in 0..3 {
            s.push(HOST, f, SimTime::ZERO, &w);
        }
        // Flow 1 leaves and comes back, again and again: positions run past 64 many times.
        let mut expected = vec![0, 2, 1];
        for round in 0..200 {
            s.remove(HOST, 1, &w);
            s.settle(HOST);
            s.push(HOST, 1, SimTime::ZERO, &w);
            let f = send(&mut s, &mut w, SimTime::ZERO, 0).unwrap();
            assert_eq!(f, expected[0], "round {round}");
            expected.rotate_left(1);
            expected.retain(|&x| x != 1);
            expected.push(1);
        }
    }

    #[test]
    fn the_sets_successor_agrees_with_a_btree_set_across_levels() {
        let cap = 300_000; // three levels
        let mut set = SeqSet::with_capacity(cap);
        let mut model = BTreeSet::new();
        let mut k = 7u64;
        let mut rand = |n: u64| {
            k += 1;
            crate::rng::mix64(k) % n
        };
        for step in 0..20_000 {
            let i = rand(cap as u64) as u32;
            let i = if step % 3 == 0 { i % 70 } else { i }; // crowd the low words too
            if rand(3) == 0 {
                set.remove(i);
                model.remove(&i);
            } else {
                set.insert(i);
                model.insert(i);
            }
            let from = rand(cap as u64 + 10) as u32;
            assert_eq!(set.successor(from), model.range(from..).next().copied(), "from {from}");
            assert_eq!(set.successor(0), model.first().copied());
        }
        assert_eq!(SeqSet::default().successor(0), None);
    }

    /// One step of a random run: what happens to which queue pair, with two parameters.
    type Op = (u8, u32, u32);

    /// Drives the scheduler and the old rule with the same events, as the NIC would: the window
    /// closes at any time, but opens only with an event of its connection (`touched`); a pacer
    /// time changes with `touched` too. Every choice and every wake-up time must agree.
    fn agrees_with_the_linear_rule(n: usize, shared: bool, ops: &[Op]) -> Result<(), TestCaseError> {
        let w = RefCell::new(World::new(n));
        if shared {
            w.borrow_mut().conn = (0..n as u32).map(|f| f - f % 3).collect();
        }
        let (mut s, mut old) = (scheduler(n), Linear::default());
        let mut listed = vec![false; n];
        let mut now = SimTime::ZERO;
        let ns = |x: u32, div: u64| SimTime((x % 40) as u64 * 10 / div);
        for (i, &(op, a, b)) in ops.iter().enumerate() {
            let f = a % n as u32;
            match op % 8 {
                // Listed with data to send, its pacer time around now.
                0 if !listed[f as usize] => {
                    w.borrow_mut().next_send[f as usize] = now.saturating_sub(SimTime::from_ns(200)) + ns(b, 1);
                    s.push(HOST, f, now, &*w.borrow());
                    old.active.push(f);
                    listed[f as usize] = true;
                }
                1 if listed[f as usize] => {
                    s.remove(HOST, f, &*w.borrow());
                    s.settle(HOST);
                    old.unlist(f);
                    listed[f as usize] = false;
                }
                // The NIC sends.
                2 | 3 => {
                    let got = s.pick(HOST, now, &*w.borrow());
                    let want = old.pick(now, &w.borrow()).map(|idx| old.active[idx]);
                    prop_assert_eq!(got, want, "step {}: the choice at {}", i, now);
                    let Ok(g) = got else { continue };
                    let idx = old.active.iter().position(|&x| x == g).unwrap();
                    let finished = b % 5 == 0;
                    let next = (0..n as u32).find(|&x| {
                        w.borrow().conn[x as usize] == w.borrow().conn[g as usize] && x != g && !listed[x as usize]
                    });
                    let passed = if finished && b % 2 == 0 { next } else { None };
                    if finished {
                        s.remove(HOST, g, &*w.borrow());
                        listed[g as usize] = false;
                    }
                    if let Some(p) = passed {
                        w.borrow_mut().next_send[p as usize] = now + ns(b / 7, 1);
                        s.push(HOST, p, now, &*w.borrow());
                        listed[p as usize] = true;
                    }
                    s.settle(HOST);
                    old.sent(idx, finished, passed);
                    let mut world = w.borrow_mut();
                    world.next_send[g as usize] = now + ns(b / 3, 4);
                    if b % 3 == 0 {
                        world.open[g as usize] = false; // the window filled
                    }
                    drop(world);
                    s.touched(HOST, g, now, &*w.borrow());
                }
                // The port asks when to wake.
                4 => {
                    let not_before = now + ns(b, 2);
                    let got = s.next_time(HOST, now, not_before, &*w.borrow());
                    prop_assert_eq!(got, old.next_time(not_before, &w.borrow()), "step {}: wake-up from {}", i, now);
                }
                5 => now += ns(b, 3),
                // An event of f's connection: windows of the connection open or close, and f's
                // pacer time may move (a rate change, a timeout).
                6 => {
                    let mut world = w.borrow_mut();
                    let c = world.conn[f as usize];
                    for x in 0..n {
                        if world.conn[x] == c && (b >> (x % 16)) & 1 == 1 {
                            world.open[x] = !world.open[x];
                        }
                    }
                    if b % 4 == 0 {
                        world.next_send[f as usize] = now + ns(b / 5, 1);
                    }
                    drop(world);
                    s.touched(HOST, f, now, &*w.borrow());
                }
                // A window closes on its own (bytes sent by another message of its connection).
                7 => w.borrow_mut().open[f as usize] = false,
                _ => {}
            }
        }
        Ok(())
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec((any::<u8>(), any::<u32>(), any::<u32>()), 1..400)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn the_choice_is_the_linear_rules_with_a_few_queue_pairs(ops in ops()) {
            agrees_with_the_linear_rule(6, false, &ops)?;
        }

        #[test]
        fn the_choice_is_the_linear_rules_with_shared_connections(ops in ops()) {
            agrees_with_the_linear_rule(12, true, &ops)?;
        }

        #[test]
        fn the_choice_is_the_linear_rules_with_many_queue_pairs(ops in ops()) {
            agrees_with_the_linear_rule(150, true, &ops)?;
        }
    }
}
