//! Packet trimming (`[switch.trimming]`): on a lossy fabric, a switch that has no room for a data
//! packet cuts it to its header and forwards the header at the control priority, instead of
//! dropping it. The receiver learns at once, and exactly, which packet to ask for again (it NACKs
//! it, `nic/selective.rs`), a round trip after the loss rather than a reordering window or a
//! timeout later; the sender's algorithm hears the NACK as a trim (`CcEvent::Nack`'s `trimmed`).
//!
//! The Ultra Ethernet specification (UE 1.0, 2025) makes trimming a switch option of its
//! transport's lossy profile; the UEC's htsim (ultraethernet/uet-htsim, `CompositeQueue`) is
//! the model this follows:
//!
//! - When: a data packet that would be dropped (the buffer, or drop-tail's `egress_alpha` share,
//!   has no room), or whose egress queue at its priority would pass `trimming.threshold`, is
//!   trimmed. (htsim's queue is full at its `maxsize`, one bandwidth-delay product by default
//!   with trimming; here the threshold plays that part, and without one the buffer's limit.)
//! - What: only data packets; the trimmed packet keeps `trimming.header` bytes (htsim's
//!   `trimsize`, 64 B) and everything the receiver needs to name it (flow, sequence, send time),
//!   loses its telemetry, and is never ECN-marked (htsim marks its data queue only).
//! - Where it goes: the control priority, served before data (htsim's high-priority queue, served
//!   100 000 to 1 over its data queue). It takes shared buffer as ACKs do; a header that finds no
//!   room is dropped after all, counted as a drop (`ports.csv` `drops`, `packets_dropped`) and in
//!   `trimming.headers_dropped`. A trimmed packet is not trimmed again.
//!
//! Where this differs from htsim: htsim, with its queue full, trims the arriving packet or (one
//! time in two, at random) the last one queued and queues the arrival in its place; here it is
//! always the arrival. htsim's headers have a queue of their own of twice the data queue's size;
//! here they share the switch's buffer. htsim can bounce a header it cannot queue back to its
//! sender (return-to-sender, off by default); here it is dropped.

use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use crate::metrics::trace::TraceEvent;
use crate::wire::packet::{PacketKind, CONTROL_PRIORITY};
use crate::wire::telemetry::NO_INT;

impl Simulation {
    /// Packet `id`, from `in_port` and routed to egress `out` of switch `sw`, found no room (or,
    /// data, its queue past the threshold). A data packet is cut to its header and forwarded at
    /// the control priority; anything else (a trimmed packet among them) is dropped, and so is a
    /// data packet whose header finds no room either.
    #[cold]
    #[inline(never)]
    pub(super) fn trim_or_drop(&mut self, sw: usize, in_port: u32, out: u32, id: PacketId) {
        if self.net.packets[id].kind != PacketKind::Data || !self.trim(sw, in_port, out, id) {
            self.drop_packet(out, id);
            return;
        }
        // As `switch_receive` forwards a packet, at the control priority, which is never paused
        // and needs no credits (trimming runs on lossy fabrics only).
        let size = self.net.packets[id].size as u64;
        let port = &mut self.net.ports[out as usize];
        if self.now >= port.busy_until && port.nonempty == 0 && port.pfc_frames == 0 {
            port.max_queued = port.max_queued.max(size);
            self.leave_buffer(out, id);
            self.start_tx(out, id);
        } else {
            port.enqueue(id, &self.net.packets[id]);
            self.kick(out);
        }
    }

    /// Cuts data packet `id` to its header and admits that at the control priority, counting
    /// the trim at `out`. False if not even the header fits.
    fn trim(&mut self, sw: usize, in_port: u32, out: u32, id: PacketId) -> bool {
        let size = self.net.packets[id].size as u64;
        // A packet no longer than a header (a short last packet) keeps what it has.
        let kept = self.params.trim_header.min(size);
        if !self.admit(sw, in_port, out, CONTROL_PRIORITY, kept, PacketKind::Trimmed) {
            self.observe.counters.headers_dropped += 1;
            return false;
        }
        // The reference's NACK says whether the trim was at the last hop (its receiver compares
        // hop counts, uec.cpp `UecSink::processTrimmed`): here, whether `out` faces a host.
        let last_hop = self.net.ports[self.net.ports[out as usize].peer as usize].is_host;
        let pkt = &mut self.net.packets[id];
        pkt.kind = PacketKind::Trimmed;
        pkt.flag = last_hop; // was the data packet's AR
        pkt.size = kept as u32;
        pkt.priority = CONTROL_PRIORITY;
        // The telemetry went with the payload: a NACK echoes none.
        let int = std::mem::replace(&mut pkt.int, NO_INT);
        pkt.pint = 0;
        self.net.int_pool.release(int);
        self.net.trims[out as usize] += 1;
        self.observe.counters.packets_trimmed += 1;
        self.observe.counters.data_bytes_trimmed += size - kept;
        if self.observe.tracer.is_some() {
            self.trace_packet(TraceEvent::Trim, out, id);
        }
        true
    }
}
