//! What fast-forward remembers of the recent past: at every check, a snapshot of each running
//! connection's counters and of each grouped port's, kept for the last [`DEPTH`] checks. A group
//! is judged over four consecutive windows of 1 to 16 check intervals (`steady.rs`), the
//! shortest that shows it steady: long enough to average an oscillating algorithm's sawtooth
//! and to hold enough packets of every member, short enough to catch a short steady stretch.

use super::groups::NONE;

/// Window lengths, in check intervals, that steadiness is judged over.
pub(crate) const SCALES: [u64; 5] = [1, 2, 4, 8, 16];
/// Windows compared at one scale.
pub(crate) const WINDOWS: u64 = 4;
/// Snapshots kept: enough for four windows at the longest scale.
pub(crate) const DEPTH: usize = (WINDOWS * SCALES[SCALES.len() - 1] + 1) as usize;

/// A flow's counters at one check.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FlowSnap {
    /// Bytes acknowledged in order (`snd_una`), and the highest byte handed to the NIC.
    pub acked: u64,
    pub sent: u64,
    /// When `acked` last moved: rates measured between two such instants are exact, where
    /// counts between two checks are off by up to a packet.
    pub acked_at: crate::time::SimTime,
    /// The algorithm's steady signal (NaN: none, the flow is never steady).
    pub signal: f64,
    pub acks: u32,
    pub cnps: u32,
    pub feedback_acks: u32,
    /// Timeouts, NACKs and retransmitted bytes together: any change means a loss was handled.
    pub trouble: u64,
}

/// A port's counters at one check.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PortSnap {
    pub queued: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub ecn_marks: u64,
    /// PAUSE and RESUME frames sent, and packets dropped.
    pub pfc: u64,
    pub drops: u64,
}

pub(crate) struct History {
    /// Checks taken so far; check `k`'s snapshots sit at `k % DEPTH`.
    pub checks: u64,
    flows: Vec<[FlowSnap; DEPTH]>,
    /// Per flow: its row in `flows` while it is active (`NONE` otherwise); rows are reused.
    slot: Vec<u32>,
    free: Vec<u32>,
    ports: Vec<[PortSnap; DEPTH]>,
}

impl History {
    pub(crate) fn new(flows: usize, ports: usize) -> History {
        History {
            checks: 0,
            flows: Vec::new(),
            slot: vec![NONE; flows],
            free: Vec::new(),
            ports: vec![[PortSnap::default(); DEPTH]; ports],
        }
    }

    /// Flow `f`'s row, made for it if it has none.
    pub(crate) fn track(&mut self, f: u32) -> &mut [FlowSnap; DEPTH] {
        let s = match self.slot[f as usize] {
            NONE => {
                let s = self.free.pop().unwrap_or_else(|| {
                    self.flows.push([FlowSnap::default(); DEPTH]);
                    self.flows.len() as u32 - 1
                });
                self.slot[f as usize] = s;
                s
            }
            s => s,
        };
        &mut self.flows[s as usize]
    }

    /// Flow `f` is no longer active: its row goes back to the pool.
    pub(crate) fn forget(&mut self, f: u32) {
        let s = std::mem::replace(&mut self.slot[f as usize], NONE);
        if s != NONE {
            self.free.push(s);
        }
    }

    /// Flow `f`'s snapshot `back` checks before the latest.
    pub(crate) fn flow(&self, f: u32, back: u64) -> &FlowSnap {
        &self.flows[self.slot[f as usize] as usize][Self::at(self.checks - 1 - back)]
    }

    pub(crate) fn port(&self, p: u32, back: u64) -> &PortSnap {
        &self.ports[p as usize][Self::at(self.checks - 1 - back)]
    }

    pub(crate) fn port_row(&mut self, p: u32) -> &mut [PortSnap; DEPTH] {
        &mut self.ports[p as usize]
    }

    /// Where check `k`'s snapshot goes.
    pub(crate) fn at(k: u64) -> usize {
        (k % DEPTH as u64) as usize
    }
}
