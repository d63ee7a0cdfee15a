//! `kind = "reduce_scatter"`: every rank ends with its block of the buffer summed over every rank.
//! It shares its settings and schedules with `all_gather.rs`.

use super::all_gather::{reduce_scatter, GatherWorkload};
use super::kind::{Ranks, Size, WorkloadKind};
use super::{CollectiveInfo, Workload};
use crate::cc::Check;
use crate::tags::CollectiveKind;
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]
kind = "reduce_scatter"
size = "1MB"
algorithm = "direct"
"#;

/// A reduce-scatter among `hosts`: the keys of an all-gather.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub struct ReduceScatterWorkload(pub GatherWorkload);

impl WorkloadKind for ReduceScatterWorkload {
    fn chunks(&self) -> u32 {
        self.0.chunks
    }
    fn check(&self) -> Check {
        self.0.check()
    }
    fn check_ranks(&self, ranks: &Ranks) -> Check {
        self.0.check_ranks(ranks)
    }
    fn size(&self, ranks: u32) -> Size {
        self.0.size(ranks)
    }
    fn expand(&self, ranks: u32, _seed: u64) -> Workload {
        self.0.expand(ranks, reduce_scatter)
    }
    fn collectives(&self, ranks: u32, _made: &Workload) -> Vec<CollectiveInfo> {
        self.0.collectives(CollectiveKind::ReduceScatter, ranks)
    }
}
