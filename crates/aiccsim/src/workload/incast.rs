//! `kind = "incast"`: many senders to one receiver, all starting together.

use super::collective::one;
use super::kind::{fail, positive, Ranks, Size, WorkloadKind};
use super::{FlowDef, HostSet, Workload};
use crate::cc::Check;
use crate::tags::CollectiveTag;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]
kind = "incast"
senders = "1..=4"
receiver = 0
size = "200KB"
flows_per_sender = 2
"#;

/// Every sender sends `flows_per_sender` flows of `size` to `receiver`, all starting at `start`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IncastWorkload {
    pub senders: HostSet,
    pub receiver: u32,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
    #[serde(default = "one")]
    pub flows_per_sender: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveTag>,
}

impl WorkloadKind for IncastWorkload {
    fn check(&self) -> Check {
        positive(self.size)?;
        if self.flows_per_sender == 0 {
            return fail("workload.flows_per_sender", "must be at least 1");
        }
        if let Some(c) = self.collective {
            if c.group_size < 2 {
                return fail("workload.collective.group_size", "a collective needs at least 2 ranks");
            }
        }
        Ok(())
    }

    fn check_ranks(&self, ranks: &Ranks) -> Check {
        ranks.has("workload.receiver", self.receiver)?;
        ranks.set("workload.senders", &self.senders, 1)?;
        if self.senders.expand(ranks.n).contains(&self.receiver) {
            return fail(
                "workload.senders",
                format!("includes the receiver {}, which would send to itself", self.receiver),
            );
        }
        Ok(())
    }

    fn size(&self, ranks: u32) -> Size {
        let flows = self.senders.len(ranks).saturating_mul(u64::from(self.flows_per_sender));
        let bytes = u128::from(flows) * u128::from(self.size.0);
        Size::of_flows(flows, bytes, bytes, self.start)
    }

    fn expand(&self, ranks: u32, _seed: u64) -> Workload {
        let senders = self.senders.expand(ranks);
        let mut flows = Vec::with_capacity(senders.len() * self.flows_per_sender as usize);
        for &s in &senders {
            for _ in 0..self.flows_per_sender {
                flows.push(FlowDef {
                    src: s,
                    dst: self.receiver,
                    size: self.size.0,
                    start: self.start,
                    collective: self.collective,
                    after: Vec::new(),
                    after_acked: Vec::new(),
                    after_compute: Vec::new(),
                    stop: None,
                    connection: None,
                    job: 0,
                });
            }
        }
        Workload::of_flows(flows)
    }

    fn too_many_flows(&self) -> (&'static str, &'static str) {
        ("flows_per_sender", "lower flows_per_sender or use fewer senders")
    }
}
