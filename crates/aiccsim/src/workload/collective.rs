//! What every collective's schedule is made of: point-to-point flows between ranks, with
//! dependencies, as a collective library schedules them (a flow that forwards data another rank
//! sent waits for that data to arrive). One file per kind: `all_reduce.rs`, `all_gather.rs` (with
//! the schedules reduce-scatter shares), `reduce_scatter.rs`, `all_to_all.rs`, `broadcast.rs`,
//! `send_recv.rs`.

use super::FlowDef;
use crate::tags::{CollectiveKind, CollectiveTag};
use crate::time::SimTime;

/// The default of a count that is 1 unless given (`chunks`, `flows_per_sender`, ...).
pub(super) fn one() -> u32 {
    1
}

/// Bytes of chunk `k` when `size` is split into `n` chunks as evenly as possible.
pub(super) fn chunk(size: u64, n: usize, k: usize) -> u64 {
    size / n as u64 + u64::from((k as u64) < size % n as u64)
}

/// A flow between two ranks (by position) of a collective.
pub(super) fn member_flow(
    ranks: &[u32],
    kind: CollectiveKind,
    start: SimTime,
) -> impl Fn(usize, usize, u64, Vec<u32>) -> FlowDef + '_ {
    let tag = Some(CollectiveTag { kind, group_size: ranks.len() as u32, id: 0 });
    move |src, dst, size, after| FlowDef {
        src: ranks[src],
        dst: ranks[dst],
        size,
        start,
        collective: tag,
        after,
        after_acked: Vec::new(),
        after_compute: Vec::new(),
        stop: None,
        // One connection between each pair of ranks, as a collective library keeps.
        connection: Some(0),
        job: 0,
    }
}

/// A collective split into `chunks` pipelined chunks: `make(bytes)` gives the schedule of one
/// chunk of `bytes`; chunk k is made of `chunk(size, chunks, k)` bytes and follows chunk k-1 in
/// the list (so each connection carries chunk k-1's transfer before chunk k's), its flows
/// waiting only for flows of its own chunk.
pub(super) fn pipelined(size: u64, chunks: u32, make: impl Fn(u64) -> Vec<FlowDef>) -> Vec<FlowDef> {
    let chunks = chunks.max(1) as usize;
    if chunks == 1 {
        return make(size);
    }
    let mut flows = Vec::new();
    for k in 0..chunks {
        let base = flows.len() as u32;
        for mut f in make(chunk(size, chunks, k)) {
            for a in &mut f.after {
                *a += base;
            }
            flows.push(f);
        }
    }
    flows
}
