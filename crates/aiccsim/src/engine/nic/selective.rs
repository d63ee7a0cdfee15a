//! Selective repeat (`nic.recovery = "selective"`), the recovery of RDMA NICs built for packet
//! spraying (IRN, NVIDIA's and Broadcom's selective retransmission, the Ultra Ethernet
//! transport): a packet after a gap is kept, not discarded, and only what is missing is sent
//! again.
//!
//! Receiver. It keeps a bitmap of the packets it holds past `rcv_nxt`, `nic.sack_bitmap`
//! packets long. An in-order packet advances `rcv_nxt` over the packets held behind it (the
//! bytes count as delivered only then). A packet after a gap is held and acknowledged at once:
//! the ACK carries the cumulative `rcv_nxt` as always plus a block naming that one packet (a
//! SACK). A missing packet is declared lost once `nic.reorder_window` packets past it have
//! arrived, so reordering shallower than that never causes a resend; the receiver then sends one
//! NACK per run of newly lost packets (cumulative `rcv_nxt` plus the run as a block), and again
//! for its first missing packet if that is still missing `nic.nack_interval` after its last
//! NACK (the resend was lost too).
//!
//! Coalesced SACKs (`nic.ack_out_of_order = "coalesced"`), the UEC reference's receiver
//! (uet-htsim `uec.cpp` `UecSink::processData`): a packet after a gap is held as above but
//! acknowledged by the rules of an in-order one (lines 2703-2707 hold it, 2714 decides: it
//! counts towards `ack_every`; with `ack_request`, AR, a mark or the flow's first arrival send an
//! ACK at once), and a filled hole brings an ACK at once only if it empties the bitmap after a
//! packet with AR came (the reference's `_ack_request`, lines 2676-2681 and 2699-2702). Every
//! ACK sent while packets are held names them all: it carries a copy of the receiver's bitmap,
//! kept in a pool here since a packet has no room for it. (The reference's ACK carries 64 bits
//! around the packet that triggered it, and its sender counts the bytes in flight from the
//! received-bytes total the ACK also carries, which covers every packet held: the whole bitmap
//! gives this sender the same count. Without it the window would stay shut on packets the
//! receiver holds; an incast with trimming ran 10% slower with 64 bits.)
//!
//! Sender. It keeps a scoreboard of the same length past `snd_una`: the packets acknowledged
//! selectively and those declared lost (by a NACK, or all that are not acknowledged when the
//! retransmission timeout fires). Lost packets go out again, lowest first, before anything new;
//! neither kind counts as in flight (`Flow::not_in_flight`), so the window of the algorithm
//! lets a resend out. Nothing new is sent `sack_bitmap` packets or more past `snd_una`: the
//! receiver could not hold it. So the receiver's and the sender's bitmaps never need more
//! bits than they have, and a packet beyond the receiver's cannot arrive.
//!
//! The algorithm hears a NACK as one loss (`CcEvent::Nack`), not one per reordered packet, and
//! counts bytes acknowledged once, when their SACK or cumulative acknowledgement first comes.
//!
//! Trimmed packets (`[switch.trimming]`, `net/trimming.rs`). A packet a switch cut to its header
//! delivers nothing: the receiver NACKs exactly that packet at once (a block of one, the NACK
//! marked as answering a trim), or acknowledges it if it holds it already, as the UEC's htsim
//! sink does. Since the frontier would NACK it again once `reorder_window` packets lie past it,
//! with trimming a fourth bitmap remembers the packets NACKed ahead of the frontier until they
//! arrive, and the frontier passes over them; a resend trimmed again is NACKed again. The sender treats the NACK
//! as any other, and its algorithm hears `CcEvent::Nack { trimmed: true }`.
//!
//! Bitmaps are allocated on a flow's first packet out of order, from a pool of slots that a
//! finished flow gives back: flows that see no reordering never get one, and the per-packet
//! path allocates nothing once the pool has grown to the flows reordering at once.

use crate::cc::{CcContext, CcEvent, CongestionControl};
use crate::engine::nic::host::{Block, Reply, NO_BLOCK};
use crate::engine::Simulation;
use crate::wire::packet::{Packet, PacketKind};

/// Bytes a selective ACK or NACK adds to RoCE's: its block, a packet number's 3 bytes and a
/// length, rounded to the 4-byte words headers are made of (IRN's NACK adds one packet number).
pub const BLOCK_HEADER_BYTES: u64 = 4;

const NO_SLOT: u32 = u32::MAX;
/// The bitmaps of a slot: the receiver's packets held past `rcv_nxt`; the sender's packets
/// acknowledged selectively, and declared lost and not yet resent; with trimming, the
/// receiver's missing packets that it NACKed because their trimmed header arrived ahead of its
/// loss frontier (which then passes them without a NACK), until they arrive.
const HELD: usize = 0;
const SACKED: usize = 1;
const LOST: usize = 2;
const NACKED: usize = 3;
const MAPS: usize = 3;
const MAPS_TRIMMING: usize = 4;

/// The receiver's counts beside its bitmap.
#[derive(Clone, Copy, Default)]
struct Receiver {
    /// Packets held past `rcv_nxt`.
    held: u32,
    /// Missing packets below this packet number have been declared lost (at least `rcv_nxt`'s).
    lost_to: u64,
    /// Packets held at or past `lost_to`: a missing packet at `lost_to` is lost once they are
    /// `reorder_window`.
    past: u32,
    /// Coalesced SACKs: a packet with AR came while packets were held, so the packet that
    /// empties the bitmap is acknowledged at once too (the reference's `_ack_request`).
    ar_pending: bool,
}

/// The bitmaps of the flows that have needed one. Each is a ring over packet numbers: packet k
/// is bit k mod `bits`, which is unambiguous as long as the bits set lie within `bits` packets
/// of each other (past `rcv_nxt`, past `snd_una`).
pub struct Scoreboards {
    bits: u64,
    words: usize,
    /// Bitmaps per slot: `MAPS`, or `MAPS_TRIMMING` with trimming.
    maps_per_slot: usize,
    slot_of: Vec<u32>,
    maps: Vec<u64>,
    rx: Vec<Receiver>,
    free: Vec<u32>,
    /// Coalesced SACKs (`nic.ack_out_of_order = "coalesced"`): the bitmaps of the ACKs in
    /// flight, by slot, and the free slots. The packet's cache line has no room for 64 bits, so
    /// an ACK carries its slot instead (`Packet::flag` set, the slot in its block fields).
    ack_maps: Vec<u64>,
    ack_free: Vec<u32>,
}

impl Scoreboards {
    /// Bitmaps of `bits` packets, with the receiver's NACKed map if `trimming`.
    pub fn new(bits: u32, trimming: bool) -> Scoreboards {
        Scoreboards {
            bits: bits as u64,
            words: (bits as usize).div_ceil(64),
            maps_per_slot: if trimming { MAPS_TRIMMING } else { MAPS },
            slot_of: Vec::new(),
            maps: Vec::new(),
            rx: Vec::new(),
            free: Vec::new(),
            ack_maps: Vec::new(),
            ack_free: Vec::new(),
        }
    }

    /// Bytes a flow's slot takes (its bitmaps and its receiver's counts).
    pub fn slot_bytes(bits: u32, trimming: bool) -> usize {
        let maps = if trimming { MAPS_TRIMMING } else { MAPS };
        maps * (bits as usize).div_ceil(64) * 8 + std::mem::size_of::<Receiver>()
    }

    fn slot(&self, f: u32) -> Option<u32> {
        self.slot_of.get(f as usize).copied().filter(|&s| s != NO_SLOT)
    }

    fn ensure(&mut self, f: u32) -> u32 {
        if let Some(s) = self.slot(f) {
            return s;
        }
        if self.slot_of.len() <= f as usize {
            self.slot_of.resize(f as usize + 1, NO_SLOT);
        }
        let s = match self.free.pop() {
            Some(s) => s,
            None => {
                self.maps.resize(self.maps.len() + self.maps_per_slot * self.words, 0);
                self.rx.push(Receiver::default());
                (self.rx.len() - 1) as u32
            }
        };
        self.rx[s as usize] = Receiver::default();
        self.slot_of[f as usize] = s;
        s
    }

    /// Flow `f` is done (every byte acknowledged): its slot goes back to the pool, all bits
    /// clear, since both ends clear a bit as they move past it.
    #[inline]
    pub(crate) fn release(&mut self, f: u32) {
        if !self.slot_of.is_empty() {
            self.give_back(f);
        }
    }

    #[inline(never)]
    fn give_back(&mut self, f: u32) {
        if let Some(s) = self.slot(f) {
            let len = self.maps_per_slot * self.words;
            let base = s as usize * len;
            debug_assert!(self.maps[base..base + len].iter().all(|&w| w == 0), "flow {f}: bits left");
            self.slot_of[f as usize] = NO_SLOT;
            self.free.push(s);
        }
    }

    #[inline]
    fn at(&self, slot: u32, map: usize, k: u64) -> (usize, u64) {
        let i = (k % self.bits) as usize;
        ((slot as usize * self.maps_per_slot + map) * self.words + i / 64, 1 << (i % 64))
    }

    #[inline]
    fn test(&self, slot: u32, map: usize, k: u64) -> bool {
        let (w, b) = self.at(slot, map, k);
        self.maps[w] & b != 0
    }

    #[inline]
    fn set(&mut self, slot: u32, map: usize, k: u64) {
        let (w, b) = self.at(slot, map, k);
        self.maps[w] |= b;
    }

    #[inline]
    fn clear(&mut self, slot: u32, map: usize, k: u64) {
        let (w, b) = self.at(slot, map, k);
        self.maps[w] &= !b;
    }

    /// Flow `f`'s receiver holds a packet past a gap.
    fn holds_any(&self, f: u32) -> bool {
        self.slot(f).is_some_and(|s| self.rx[s as usize].held > 0)
    }

    /// Copies slot `slot`'s held packets (its receiver's bitmap, whole) for an ACK to carry:
    /// the copy's index in the pool of ACK bitmaps.
    fn snapshot_held(&mut self, slot: u32) -> u32 {
        let held = (slot as usize * self.maps_per_slot + HELD) * self.words;
        let copy = match self.ack_free.pop() {
            Some(c) => c,
            None => {
                self.ack_maps.resize(self.ack_maps.len() + self.words, 0);
                u32::try_from(self.ack_maps.len() / self.words - 1).expect("fewer than 2^32 ACKs in flight")
            }
        };
        let at = copy as usize * self.words;
        for w in 0..self.words {
            self.ack_maps[at + w] = self.maps[held + w];
        }
        copy
    }

    /// ACK `pkt` arrived or was lost: the bitmap it carries, if any (coalesced SACKs), is freed.
    pub(crate) fn forget_ack_map(&mut self, pkt: &Packet) {
        if pkt.kind == PacketKind::Ack && pkt.flag {
            self.ack_free.push(ack_copy(pkt));
        }
    }

    /// The lowest packet number in `from..to` (at most `bits` long) whose bit is set.
    fn first_set(&self, slot: u32, map: usize, from: u64, to: u64) -> Option<u64> {
        let mut k = from;
        while k < to {
            let (w, b) = self.at(slot, map, k);
            let word = self.maps[w] & !(b - 1);
            if word != 0 {
                let found = k - b.trailing_zeros() as u64 + word.trailing_zeros() as u64;
                return (found < to).then_some(found);
            }
            k += 64 - b.trailing_zeros() as u64;
        }
        None
    }
}

/// No copy of the receiver's bitmap: a reply that carries none.
pub(super) const NO_SACK: u32 = u32::MAX;

/// The pool index of the bitmap a coalesced SACK carries in its block fields.
#[inline]
fn ack_copy(pkt: &Packet) -> u32 {
    (pkt.block_start as u32) << 16 | pkt.block_len as u32
}

/// Payload bytes of packet number `k` of a flow of `size` bytes cut into `mtu`-byte packets: a
/// full packet, but for a shorter last one.
#[inline]
fn payload_of(k: u64, mtu: u64, size: u64) -> u64 {
    mtu.min(size - k * mtu)
}

impl Simulation {
    /// Payload bytes of flow `f`'s packet number `k`.
    #[inline]
    fn packet_payload(&self, f: u32, k: u64) -> u64 {
        payload_of(k, self.params.mtu, self.nic.flows[f as usize].size)
    }

    /// Data packet `pkt` (`payload` bytes) arrived at host port `p`: the ACK it triggers, if
    /// any, and whether it completed its flow. `credit`: the ACK carries receiver credit, and is
    /// sent at once (`host.rs`).
    #[inline(never)]
    pub(super) fn selective_receive(
        &mut self,
        p: u32,
        pkt: &Packet,
        payload: u64,
        credit: bool,
    ) -> (Option<Reply>, bool) {
        let now = self.now;
        let (f, mtu, ack_every) = (pkt.flow, self.params.mtu, self.params.ack_every);
        let coalesced = self.params.sack_coalesced;
        let flow = &self.nic.flows[f as usize];
        let rcv_nxt = flow.rcv_nxt;
        // Ultra Ethernet's immediate ACKs (`nic.ack_request`): for AR, a mark, the first packet
        // (coalescing, the first to arrive: before it nothing is held either; the reference's
        // `_received_bytes == 0`).
        let first = rcv_nxt == 0 && !(coalesced && self.nic.sack.holds_any(f));
        let at_once = credit || self.params.ack_request && (pkt.flag || pkt.ecn || first);
        if pkt.seq == rcv_nxt {
            self.work.progress_at = now;
            let mut delivered = payload;
            let mut filled = false;
            // Coalescing: the packets still held after this one, as a bitmap, and whether it
            // emptied the bitmap after an AR (`UecSink::processData`: `_out_of_order_count == 0
            // && _ack_request`), which the reference acknowledges at once.
            let (mut sack_from, mut drained) = (None, false);
            let mut rcv = (rcv_nxt + payload) / mtu;
            if let Some(slot) = self.nic.sack.slot(f) {
                if self.params.trimming {
                    self.nic.sack.clear(slot, NACKED, rcv_nxt / mtu);
                }
                let mut rx = self.nic.sack.rx[slot as usize];
                // The packets held behind it are in order now.
                while rx.held > 0 && self.nic.sack.test(slot, HELD, rcv) {
                    self.nic.sack.clear(slot, HELD, rcv);
                    rx.held -= 1;
                    if rcv >= rx.lost_to {
                        rx.past -= 1;
                    }
                    delivered += self.packet_payload(f, rcv);
                    rcv += 1;
                    filled = true;
                }
                rx.lost_to = rx.lost_to.max(rcv);
                if coalesced {
                    if pkt.flag && rx.held > 0 {
                        rx.ar_pending = true;
                    } else if rx.held == 0 && rx.ar_pending {
                        (rx.ar_pending, drained) = (false, true);
                    }
                }
                self.nic.sack.rx[slot as usize] = rx;
                if coalesced && rx.held > 0 {
                    sack_from = Some(slot);
                }
            }
            self.work.bytes_delivered += delivered;
            let flow = &mut self.nic.flows[f as usize];
            flow.rcv_nxt += delivered;
            flow.acks_pending += 1;
            flow.ecn_pending |= pkt.ecn;
            let complete = flow.rcv_nxt == flow.size;
            let newly_complete = complete && flow.finish.is_none();
            if newly_complete {
                flow.finish = Some(now);
            }
            // A filled hole is acknowledged at once: the sender may be waiting on it. (Coalescing,
            // only the one that empties the bitmap after an AR: the reference's rule.)
            let hole = if coalesced { drained } else { filled };
            if complete || hole || at_once || flow.acks_pending >= ack_every {
                let mut reply = Reply { seq: flow.rcv_nxt, ecn: flow.ecn_pending, block: NO_BLOCK, sack: NO_SACK };
                flow.acks_pending = 0;
                flow.ecn_pending = false;
                if let Some(slot) = sack_from {
                    reply.sack = self.nic.sack.snapshot_held(slot);
                }
                return (Some(reply), newly_complete);
            }
            return (None, newly_complete);
        }
        if pkt.seq < rcv_nxt {
            // A duplicate: re-acknowledge as go-back-N does (always the flow's last packet).
            let flow = &mut self.nic.flows[f as usize];
            flow.acks_pending += 1;
            if flow.acks_pending >= ack_every || pkt.seq + payload >= flow.size || credit || self.params.ack_request {
                flow.acks_pending = 0;
                return (Some(Reply { seq: rcv_nxt, ecn: false, block: NO_BLOCK, sack: NO_SACK }), false);
            }
            return (None, false);
        }
        let (rcv, k) = (rcv_nxt / mtu, pkt.seq / mtu);
        let offset = k - rcv;
        // The sender sends nothing this far past its `snd_una`, which is at most `rcv_nxt`.
        debug_assert!(offset < self.nic.sack.bits, "flow {f}: packet {k} beyond the bitmap at {rcv}");
        if offset >= self.nic.sack.bits {
            return (None, false);
        }
        let slot = self.nic.sack.ensure(f);
        let block: Block = (offset as u16, 1);
        let flow = &mut self.nic.flows[f as usize];
        if self.nic.sack.test(slot, HELD, k) {
            // Held already (resent after a timeout): acknowledge it again.
            return (Some(Reply { seq: rcv_nxt, ecn: false, block, sack: NO_SACK }), false);
        }
        self.nic.sack.set(slot, HELD, k);
        if self.params.trimming {
            self.nic.sack.clear(slot, NACKED, k);
        }
        self.observe.counters.out_of_order_packets += 1;
        let mut rx = self.nic.sack.rx[slot as usize];
        rx.held += 1;
        rx.lost_to = rx.lost_to.max(rcv);
        if k >= rx.lost_to {
            rx.past += 1;
        }
        // Acknowledged at once, with the in-order packets this ACK also covers; coalescing, as
        // an in-order packet would be, the ACK naming every packet held (below).
        let reply = if coalesced {
            flow.acks_pending += 1;
            flow.ecn_pending |= pkt.ecn;
            rx.ar_pending |= pkt.flag;
            (at_once || flow.acks_pending >= ack_every).then(|| {
                let reply = Reply { seq: rcv_nxt, ecn: flow.ecn_pending, block: NO_BLOCK, sack: NO_SACK };
                flow.acks_pending = 0;
                flow.ecn_pending = false;
                reply
            })
        } else {
            let reply = Reply { seq: rcv_nxt, ecn: flow.ecn_pending | pkt.ecn, block, sack: NO_SACK };
            flow.acks_pending = 0;
            flow.ecn_pending = false;
            Some(reply)
        };
        // Missing packets with `reorder_window` packets held past them are lost: move the
        // frontier up to the first that is not, NACKing the runs it passes.
        // (A packet NACKed for its trim already ends a run as a held one does.)
        let mut run = None;
        while rx.past >= self.params.reorder_window {
            let m = rx.lost_to;
            let held = self.nic.sack.test(slot, HELD, m);
            if held || self.params.trimming && self.nic.sack.test(slot, NACKED, m) {
                if held {
                    rx.past -= 1;
                }
                if let Some(start) = run.take() {
                    self.selective_nack_run(p, pkt, start, m);
                }
            } else if run.is_none() {
                run = Some(m);
            }
            rx.lost_to += 1;
        }
        if let Some(start) = run {
            self.selective_nack_run(p, pkt, start, rx.lost_to);
        }
        self.nic.sack.rx[slot as usize] = rx;
        if rcv < rx.lost_to {
            self.repeat_first_nack(p, pkt, slot, rcv, rx.lost_to);
        }
        let reply = reply.map(|r| match coalesced {
            true => Reply { sack: self.nic.sack.snapshot_held(slot), ..r },
            false => r,
        });
        (reply, false)
    }

    /// Trimmed packet `pkt` (its header only) arrived at host port `p`: it delivers nothing. The
    /// receiver NACKs exactly that packet, at once, unless it holds it already (a resend got
    /// through before this trimmed copy), which it acknowledges instead. (Out of line: the
    /// receive path of runs without trimming stays as it was.)
    #[inline(never)]
    pub(crate) fn trimmed_received(&mut self, p: u32, pkt: &Packet) {
        debug_assert_eq!(self.params.recovery, crate::config::Recovery::Selective, "checked with the scenario");
        self.observe.counters.trimmed_received += 1;
        self.observe.counters.data_bytes_received += pkt.size as u64;
        let (f, mtu) = (pkt.flow, self.params.mtu);
        let rcv_nxt = self.nic.flows[f as usize].rcv_nxt;
        // What the replies echo: the trimmed packet's timestamp, no congestion mark.
        let about = Packet { ecn: false, ..*pkt };
        if pkt.seq < rcv_nxt {
            self.send_control_block(p, PacketKind::Ack, &about, rcv_nxt, NO_BLOCK);
            return;
        }
        let (rcv, k) = (rcv_nxt / mtu, pkt.seq / mtu);
        let offset = k - rcv;
        debug_assert!(offset < self.nic.sack.bits, "flow {f}: packet {k} beyond the bitmap at {rcv}");
        if offset >= self.nic.sack.bits {
            return;
        }
        let slot = self.nic.sack.ensure(f);
        let block: Block = (offset as u16, 1);
        if self.nic.sack.test(slot, HELD, k) {
            self.send_control_block(p, PacketKind::Ack, &about, rcv_nxt, block);
            return;
        }
        let rx = &mut self.nic.sack.rx[slot as usize];
        rx.lost_to = rx.lost_to.max(rcv);
        if k >= rx.lost_to {
            self.nic.sack.set(slot, NACKED, k);
        }
        if k == rcv {
            // The first missing packet: its NACK repeats after `nack_interval` if need be.
            self.nic.flows[f as usize].last_nack = Some((rcv_nxt, self.now));
        }
        self.send_control_block(p, PacketKind::Nack, pkt, rcv_nxt, block);
    }

    /// Sends the ACK for data packet `about` with the cumulative `seq` and the copy `sack` of
    /// the receiver's bitmap of held packets (coalesced SACKs), which waits in the scoreboards'
    /// pool for the ACK to arrive (`Simulation::sack_bitmap_ack`) or be lost.
    #[inline(never)]
    pub(super) fn send_sack_bitmap(&mut self, p: u32, about: &Packet, seq: u64, sack: u32) {
        let mut c = self.control_packet(PacketKind::Ack, about, seq, NO_BLOCK);
        c.flag = true;
        (c.block_start, c.block_len) = ((sack >> 16) as u16, sack as u16);
        self.put_control(p, c);
    }

    /// NACKs flow `pkt.flow`'s missing packets `start..end`.
    fn selective_nack_run(&mut self, p: u32, pkt: &Packet, start: u64, end: u64) {
        let flow = &mut self.nic.flows[pkt.flow as usize];
        let mtu = self.params.mtu;
        let rcv_nxt = flow.rcv_nxt;
        if start * mtu == rcv_nxt {
            flow.last_nack = Some((rcv_nxt, self.now));
        }
        let block = ((start - rcv_nxt / mtu) as u16, (end - start) as u16);
        self.send_control_block(p, PacketKind::Nack, pkt, rcv_nxt, block);
    }

    /// The first missing packet, `rcv`, was declared lost (the frontier is at `lost_to`): NACKs
    /// it again if it is still missing `nack_interval` after its last NACK, since the resend
    /// was lost too. (The clock starts when it becomes the first missing packet.)
    fn repeat_first_nack(&mut self, p: u32, pkt: &Packet, slot: u32, rcv: u64, lost_to: u64) {
        let now = self.now;
        let flow = &mut self.nic.flows[pkt.flow as usize];
        let (rcv_nxt, last) = (flow.rcv_nxt, flow.last_nack);
        match last {
            Some((seq, at)) if seq == rcv_nxt => {
                if now.saturating_sub(at) >= self.params.nack_interval {
                    let end = self.nic.sack.first_set(slot, HELD, rcv, lost_to).unwrap_or(lost_to);
                    self.selective_nack_run(p, pkt, rcv, end);
                }
            }
            _ => flow.last_nack = Some((rcv_nxt, now)),
        }
    }

    /// An ACK's selective part, before its cumulative acknowledgement is applied: clears the
    /// scoreboard below it and records the block. Returns the bytes the algorithm hears
    /// acknowledged: the cumulative advance, less what was acknowledged selectively before, plus
    /// what the block acknowledges now.
    #[inline(never)]
    pub(crate) fn sack_ack(&mut self, f: u32, pkt: &Packet) -> u64 {
        if pkt.flag {
            return self.sack_bitmap_ack(f, pkt);
        }
        let newly = pkt.seq.saturating_sub(self.nic.flows[f as usize].snd_una);
        let slot = match pkt.block_len {
            0 => match self.nic.sack.slot(f) {
                Some(s) => s,
                None => return newly,
            },
            _ => self.nic.sack.ensure(f),
        };
        let (before_sacked, _) = self.advance_scoreboard(f, slot, pkt.seq);
        let sacked = self.mark_block(f, slot, pkt, SACKED);
        self.unlist_if_idle(f);
        newly - before_sacked + sacked
    }

    /// [`Simulation::sack_ack`] for an ACK that carries a copy of the receiver's bitmap
    /// (coalesced SACKs): every packet it holds is acknowledged selectively. Bit i of the ring
    /// is the packet past the cumulative acknowledgement `rcv` that is i modulo its length;
    /// runs of held packets never span `rcv`'s own bit, which is clear.
    fn sack_bitmap_ack(&mut self, f: u32, pkt: &Packet) -> u64 {
        let copy = ack_copy(pkt);
        let newly = pkt.seq.saturating_sub(self.nic.flows[f as usize].snd_una);
        let slot = self.nic.sack.ensure(f);
        let (before_sacked, _) = self.advance_scoreboard(f, slot, pkt.seq);
        let (bits, words) = (self.nic.sack.bits, self.nic.sack.words);
        let rcv = pkt.seq / self.params.mtu;
        let mut sacked = 0;
        for w in 0..words {
            let mut word = self.nic.sack.ack_maps[copy as usize * words + w];
            while word != 0 {
                let i = word.trailing_zeros();
                let run = (word >> i).trailing_ones() as u64;
                let at = (w as u64 * 64 + i as u64 + bits - rcv % bits) % bits; // packets past rcv
                sacked += self.mark_range(f, slot, rcv + at, rcv + at + run, SACKED);
                word &= word.wrapping_add(1 << i); // clears the run
            }
        }
        self.nic.sack.ack_free.push(copy);
        self.unlist_if_idle(f);
        newly - before_sacked + sacked
    }

    /// The cumulative acknowledgement reached `ack`: clears the scoreboard below it. Returns the
    /// bytes that were acknowledged selectively and those declared lost that it covers.
    fn advance_scoreboard(&mut self, f: u32, slot: u32, ack: u64) -> (u64, u64) {
        let mtu = self.params.mtu;
        let flow = &self.nic.flows[f as usize];
        if ack <= flow.snd_una || flow.not_in_flight == 0 {
            return (0, 0);
        }
        let (from, to) = (flow.snd_una / mtu, ack.div_ceil(mtu));
        let (mut sacked, mut lost, mut lost_packets) = (0, 0, 0);
        for k in from..to {
            if self.nic.sack.test(slot, SACKED, k) {
                self.nic.sack.clear(slot, SACKED, k);
                sacked += self.packet_payload(f, k);
            } else if self.nic.sack.test(slot, LOST, k) {
                self.nic.sack.clear(slot, LOST, k);
                lost += self.packet_payload(f, k);
                lost_packets += 1;
            }
        }
        let flow = &mut self.nic.flows[f as usize];
        flow.not_in_flight -= sacked + lost;
        flow.rtx_pending -= lost_packets;
        (sacked, lost)
    }

    /// Marks the packets of `pkt`'s block that the sender has sent and not yet had acknowledged
    /// in `map`: acknowledged selectively (`SACKED`: no longer lost either) or lost (`LOST`:
    /// unless acknowledged, or already waiting to be resent). Returns the bytes newly marked.
    fn mark_block(&mut self, f: u32, slot: u32, pkt: &Packet, map: usize) -> u64 {
        let first = pkt.seq / self.params.mtu + pkt.block_start as u64;
        self.mark_range(f, slot, first, first + pkt.block_len as u64, map)
    }

    /// [`Simulation::mark_block`] for packets `first..end` (those sent and past `snd_una`).
    fn mark_range(&mut self, f: u32, slot: u32, first: u64, end: u64, map: usize) -> u64 {
        let mtu = self.params.mtu;
        let flow = &self.nic.flows[f as usize];
        let from = first.max(flow.snd_una / mtu);
        let to = end.min(flow.snd_nxt.div_ceil(mtu));
        let (mut bytes, mut added, mut resend) = (0, 0u64, 0i64);
        for k in from..to {
            if self.nic.sack.test(slot, SACKED, k) {
                continue;
            }
            let lost = self.nic.sack.test(slot, LOST, k);
            if map == LOST && lost {
                continue;
            }
            let b = self.packet_payload(f, k);
            if map == SACKED && lost {
                self.nic.sack.clear(slot, LOST, k);
                resend -= 1;
            } else {
                added += b; // out of the network now
                resend += (map == LOST) as i64;
            }
            self.nic.sack.set(slot, map, k);
            bytes += b;
        }
        let flow = &mut self.nic.flows[f as usize];
        flow.not_in_flight += added;
        flow.rtx_pending = (flow.rtx_pending as i64 + resend) as u32;
        bytes
    }

    /// A flow whose declared losses were all acknowledged after all, with nothing new to send,
    /// leaves its host's list of queue pairs with data to send.
    fn unlist_if_idle(&mut self, f: u32) {
        let flow = &self.nic.flows[f as usize];
        if flow.scheduled && !flow.has_data_to_send() {
            self.unlist(f);
        }
    }

    /// A NACK: the receiver has everything before `pkt.seq` and declares the block lost.
    pub(super) fn selective_nack(&mut self, pkt: &Packet) {
        let (now, f) = (self.now, pkt.flow);
        let flow = &self.nic.flows[f as usize];
        if flow.sender_done.is_some() {
            return;
        }
        let before = flow.in_flight();
        let slot = self.nic.sack.ensure(f);
        if pkt.seq > flow.snd_una {
            self.advance_scoreboard(f, slot, pkt.seq);
            let flow = &mut self.nic.flows[f as usize];
            flow.snd_una = pkt.seq;
            flow.last_progress = now;
            flow.rto_backoff = 1;
        }
        self.mark_block(f, slot, pkt, LOST);
        self.track_in_flight(f, before);
        let flow = &self.nic.flows[f as usize];
        let seq = flow.seq_base + (pkt.seq / self.params.mtu + pkt.block_start as u64) * self.params.mtu;
        let mut cx = CcContext::new(now);
        // A NACK's `ecn` says it answers a trimmed packet, its `flag` that the trim was at the
        // last hop (`wire/packet.rs`).
        let nack = CcEvent::Nack { seq, trimmed: pkt.ecn, last_hop: pkt.flag };
        self.nic.ccs[flow.conn as usize].on_event(nack, &mut cx);
        self.apply_cc(f, &cx);
        self.unlist_if_idle(f);
        self.schedule_qp(f);
    }

    /// The retransmission timeout fired: every packet outstanding and not acknowledged
    /// selectively is declared lost.
    pub(super) fn selective_timeout(&mut self, f: u32) {
        let slot = self.nic.sack.ensure(f);
        let mtu = self.params.mtu;
        let flow = &self.nic.flows[f as usize];
        let (from, to) = (flow.snd_una / mtu, flow.snd_nxt.div_ceil(mtu));
        let (mut added, mut packets) = (0, 0);
        for k in from..to {
            if !self.nic.sack.test(slot, SACKED, k) && !self.nic.sack.test(slot, LOST, k) {
                self.nic.sack.set(slot, LOST, k);
                added += self.packet_payload(f, k);
                packets += 1;
            }
        }
        let flow = &mut self.nic.flows[f as usize];
        flow.not_in_flight += added;
        flow.rtx_pending += packets;
    }

    /// The first byte of the lowest packet declared lost, which is being resent now.
    #[inline(never)]
    pub(super) fn take_lost(&mut self, f: u32) -> u64 {
        let mtu = self.params.mtu;
        let slot = self.nic.sack.slot(f).expect("a flow with losses has a scoreboard");
        let from = self.nic.flows[f as usize].snd_una / mtu;
        let k = self.nic.sack.first_set(slot, LOST, from, from + self.nic.sack.bits).expect("a packet declared lost");
        self.nic.sack.clear(slot, LOST, k);
        self.nic.flows[f as usize].rtx_pending -= 1;
        k * mtu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_packet_is_full_but_the_last() {
        assert_eq!([0, 1, 2].map(|k| payload_of(k, 1_000, 2_500)), [1_000, 1_000, 500]);
        assert_eq!(payload_of(1, 1_000, 2_000), 1_000);
    }

    #[test]
    fn a_bitmap_is_a_ring_over_packet_numbers() {
        let mut s = Scoreboards::new(128, false);
        let slot = s.ensure(3);
        s.set(slot, HELD, 5);
        assert!(s.test(slot, HELD, 5) && s.test(slot, HELD, 5 + 128), "k and k + bits share a bit");
        assert!(!s.test(slot, SACKED, 5) && !s.test(slot, LOST, 5), "three maps apart");
        s.clear(slot, HELD, 133);
        assert!(!s.test(slot, HELD, 5));
    }

    #[test]
    fn the_first_set_bit_is_found_across_words_and_around_the_ring() {
        let mut s = Scoreboards::new(256, false);
        let slot = s.ensure(0);
        for k in [70, 200, 300] {
            s.set(slot, LOST, k);
        }
        assert_eq!(s.first_set(slot, LOST, 0, 256), Some(44), "300 is bit 44");
        assert_eq!(s.first_set(slot, LOST, 45, 256), Some(70));
        assert_eq!(s.first_set(slot, LOST, 71, 200), None, "the end is not included");
        assert_eq!(s.first_set(slot, LOST, 71, 201), Some(200));
        assert_eq!(s.first_set(slot, LOST, 250, 250 + 256), Some(300), "wrapping past the ring's end");
        assert_eq!(s.first_set(slot, HELD, 0, 256), None);
    }

    #[test]
    fn an_ack_carries_a_copy_of_the_held_packets_that_later_arrivals_do_not_change() {
        let mut s = Scoreboards::new(128, false);
        let slot = s.ensure(0);
        for k in [3, 64, 127] {
            s.set(slot, HELD, k);
        }
        let copy = s.snapshot_held(slot);
        s.set(slot, HELD, 5); // arrives after the ACK left
        assert_eq!(&s.ack_maps[copy as usize * 2..copy as usize * 2 + 2], &[1 << 3, 1 | 1 << 63]);
        let mut ack = Packet::new(PacketKind::Ack, 7, 64);
        (ack.flag, ack.block_start, ack.block_len) = (true, (copy >> 16) as u16, copy as u16);
        s.forget_ack_map(&ack);
        assert_eq!(s.snapshot_held(slot), copy, "the copy's slot is reused once its ACK is gone");
        // A plain ACK or a NACK frees nothing.
        s.forget_ack_map(&Packet { flag: false, ..ack });
        s.forget_ack_map(&Packet { kind: PacketKind::Nack, ..ack });
        assert!(s.ack_free.is_empty());
    }

    #[test]
    fn a_flow_gets_a_slot_on_its_first_reordering_and_a_finished_flow_gives_it_back() {
        let mut s = Scoreboards::new(64, true);
        assert_eq!(s.slot(7), None);
        s.release(7); // a flow that never needed one
        let a = s.ensure(7);
        assert_eq!(s.ensure(7), a, "the same flow, the same slot");
        let b = s.ensure(2);
        assert_ne!(a, b);
        s.release(7);
        assert_eq!(s.slot(7), None);
        assert_eq!(s.ensure(9), a, "recycled: no new memory");
        assert_eq!(s.rx.len(), 2);
        assert_eq!(s.maps.len(), 2 * 4, "four bitmaps of one word per slot, with trimming");
        assert_eq!(Scoreboards::slot_bytes(64, false), 3 * 8 + std::mem::size_of::<Receiver>());
        assert_eq!(Scoreboards::slot_bytes(64, true), 4 * 8 + std::mem::size_of::<Receiver>());
    }
}
