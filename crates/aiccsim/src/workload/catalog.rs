//! What each collective of a workload is, as a collective library reports it: its kind,
//! algorithm, size and ranks. `collectives.csv` joins this with the flows' times to give each
//! collective's completion time and bandwidths.

use super::kind::WorkloadKind;
use super::Workload;
use crate::tags::CollectiveKind;

/// One collective the workload issues.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveInfo {
    /// Its number in the run (the id of its flows' collective tag).
    pub id: u32,
    /// The job that issued it (empty for a `[workload]`).
    pub job: String,
    pub kind: CollectiveKind,
    /// The schedule's name, as in the scenario (`ring`, `direct`, ...).
    pub algorithm: &'static str,
    /// Bytes of each rank's buffer, as nccl-tests counts a collective's size: the buffer an
    /// all-reduce reduces, the whole gathered buffer of an all-gather or reduce-scatter, all a
    /// rank sends in an all-to-all (its own share included), the broadcast buffer.
    pub size: u64,
    pub ranks: u32,
    /// Pipelined chunks it is split into.
    pub chunks: u32,
}

impl CollectiveInfo {
    /// `kind:id`, the `collective` of its flows in `flows.csv`.
    pub fn name(&self) -> String {
        format!("{}:{}", self.kind, self.id)
    }

    /// nccl-tests' bus-bandwidth factor: bus bandwidth = size / time x this, the bytes a rank
    /// moves on its busiest link per byte of buffer, so that a collective running at link speed
    /// shows the link's speed whatever the rank count.
    pub fn bus_factor(&self) -> f64 {
        self.kind.bus_factor(self.ranks)
    }
}

/// A collective of `kind` numbered `id`, of one chunk (the caller sets `chunks`).
pub(super) fn info(kind: CollectiveKind, id: u32, algorithm: &'static str, size: u64, ranks: u64) -> CollectiveInfo {
    CollectiveInfo { id, job: String::new(), kind, algorithm, size, ranks: ranks as u32, chunks: 1 }
}

/// The collectives a workload of `kind` issued, as `made` on `ranks` ranks.
pub fn collectives(kind: &dyn WorkloadKind, ranks: u32, made: &Workload) -> Vec<CollectiveInfo> {
    let mut infos = kind.collectives(ranks, made);
    for c in &mut infos {
        c.chunks = kind.chunks();
    }
    infos
}
