//! Losing chosen data packets on purpose (Rust API: [`Simulation::lose_packet`]), to test loss
//! recovery on a loss it can know in advance: a lossless fabric drops nothing, and a buffer
//! overflow drops what congestion happens to drop.

use crate::engine::Simulation;
use crate::metrics::trace::TraceEvent;
use crate::time::SimTime;
use crate::wire::packet::Packet;

impl Simulation {
    /// The first data packet of flow `f` that carries byte `seq` is lost on the last link, just
    /// before its receiver's NIC; a resend gets through. Counted as a drop (`packets_dropped`,
    /// the `drops` of the receiver's port in `ports.csv`, the dropped data bytes), and as one
    /// in a trace. Call before the run, once per packet to lose.
    pub fn lose_packet(&mut self, f: u32, seq: u64) {
        assert!(self.now == SimTime::ZERO && self.observe.counters.events == 0, "losses are set before the run");
        assert!((f as usize) < self.nic.flows.len(), "no flow {f}");
        self.nic.losses.push((f, seq));
    }

    /// Data packet `pkt` reached host port `p`: whether it is one to lose (and so lost).
    #[cold]
    #[inline(never)]
    pub(super) fn lose(&mut self, p: u32, pkt: &Packet) -> bool {
        let payload = pkt.size as u64 - self.params.header;
        let hit = |&(f, seq): &(u32, u64)| f == pkt.flow && (pkt.seq..pkt.seq + payload).contains(&seq);
        let Some(i) = self.nic.losses.iter().position(hit) else { return false };
        self.nic.losses.swap_remove(i);
        let port = &self.net.ports[p as usize];
        if let Some(t) = self.observe.tracer.as_deref_mut() {
            t.record(self.now, TraceEvent::Drop, port.node, port.local, pkt, Some(port.queued));
        }
        self.net.ports[p as usize].stats.drops += 1;
        self.observe.counters.packets_dropped += 1;
        self.observe.counters.data_bytes_dropped += pkt.size as u64;
        self.net.int_pool.release(pkt.int);
        true
    }
}
