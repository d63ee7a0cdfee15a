//! Collective tags: which collective a flow belongs to. The workload writes them and the
//! algorithms that know the traffic pattern (PC4) read them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What collective a flow belongs to; algorithms that know the traffic pattern (PC4) read it.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveKind {
    AllReduce,
    AllToAll,
    AllGather,
    ReduceScatter,
    Broadcast,
    /// Point-to-point sends between pairs of ranks.
    SendRecv,
    Other,
}

impl fmt::Display for CollectiveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            CollectiveKind::AllReduce => "all_reduce",
            CollectiveKind::AllToAll => "all_to_all",
            CollectiveKind::AllGather => "all_gather",
            CollectiveKind::ReduceScatter => "reduce_scatter",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::SendRecv => "send_recv",
            CollectiveKind::Other => "other",
        };
        f.write_str(s)
    }
}

impl CollectiveKind {
    /// nccl-tests' bus-bandwidth factor for `ranks` ranks: the bytes a rank moves on its busiest
    /// link per byte of buffer.
    pub fn bus_factor(self, ranks: u32) -> f64 {
        let n = f64::from(ranks.max(1));
        match self {
            CollectiveKind::AllReduce => 2.0 * (n - 1.0) / n,
            CollectiveKind::AllGather | CollectiveKind::ReduceScatter | CollectiveKind::AllToAll => (n - 1.0) / n,
            CollectiveKind::Broadcast | CollectiveKind::SendRecv | CollectiveKind::Other => 1.0,
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CollectiveTag {
    pub kind: CollectiveKind,
    /// Number of ranks taking part.
    pub group_size: u32,
    /// Which collective instance (flows with the same id belong together).
    #[serde(default)]
    pub id: u32,
}
