//! Losing chosen data packets on purpose (Rust API: [`Simulation::lose_packet`]), to test loss
//! recovery on a loss it can know in advance: a lossless fabric drops nothing, and a buffer
//! overflow drops what congestion happens to drop.

use crate::engine::Simulation;
use crate::metrics::trace::TraceEvent;
use crate::time::SimTime;
use crate::wire::packet::Packet;

/// Which of the `losses` to come ((flow, byte) each), if any, a data packet of flow `flow`
/// carrying bytes `seq..seq + payload` is.
#[inline]
pub(crate) fn lost_here(losses: &[(u32, u64)], flow: u32, seq: u64, payload: u64) -> Option<usize> {
    losses.iter().position(|&(f, byte)| f == flow && (seq..seq + payload).contains(&byte))
}

impl Simulation {
    /// The first data packet of flow `f` that carries byte `seq` is lost on the last link, just
    /// before its receiver's NIC; a resend gets through. Counted as a drop (`packets_dropped`,
    /// the `drops` of the receiver's port in `ports.csv`, the dropped data bytes), and as one
    /// in a trace. Call before the run, once per packet to lose.
    pub fn lose_packet(&mut self, f: u32, seq: u64) {
        assert!(self.now == SimTime::ZERO && self.observe.counters.events == 0, "losses are set before the run");
        assert!((f as usize) < self.nic.flows.len(), "no flow {f}");
        assert!(
            !self.is_fluid(f),
            "flow {f} crosses NVLink as a fluid (simulation.nvlink = \"fluid\"): it has no packets"
        );
        self.nic.losses.push((f, seq));
    }

    /// Data packet `pkt` reached host port `p`: whether it is one to lose (and so lost).
    #[cold]
    #[inline(never)]
    pub(super) fn lose(&mut self, p: u32, pkt: &Packet) -> bool {
        let payload = pkt.size as u64 - self.params.header;
        let Some(i) = lost_here(&self.nic.losses, pkt.flow, pkt.seq, payload) else { return false };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packet_carrying_the_byte_of_its_flow_is_the_one_lost() {
        let losses = [(2, 5_000), (1, 3_000)];
        assert_eq!(lost_here(&losses, 1, 3_000, 1_000), Some(1), "its first byte");
        assert_eq!(lost_here(&losses, 1, 2_001, 1_000), Some(1), "its last byte");
        assert_eq!(lost_here(&losses, 1, 2_000, 1_000), None, "the packet before");
        assert_eq!(lost_here(&losses, 1, 3_001, 1_000), None, "the packet after");
        assert_eq!(lost_here(&losses, 3, 3_000, 1_000), None, "another flow's byte");
        assert_eq!(lost_here(&losses, 2, 4_500, 1_000), Some(0));
        assert_eq!(lost_here(&[], 2, 4_500, 1_000), None);
    }
}
