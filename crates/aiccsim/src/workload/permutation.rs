//! `kind = "permutation"`: each host of the set sends one flow to another, paired by a seeded
//! random permutation without fixed points.

use super::kind::{positive, Ranks, Size, WorkloadKind};
use super::{FlowDef, HostSet, Workload};
use crate::cc::Check;
use crate::rng;
use crate::time::{ByteSize, SimTime};
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]
kind = "permutation"
hosts = "0..4"
size = "1MB"
"#;

/// Each host of `hosts` sends one flow of `size` to a distinct other host, chosen by a seeded
/// random permutation without fixed points.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PermutationWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
}

impl WorkloadKind for PermutationWorkload {
    fn check(&self) -> Check {
        positive(self.size)
    }

    fn check_ranks(&self, ranks: &Ranks) -> Check {
        ranks.set("workload.hosts", &self.hosts, 2)
    }

    fn size(&self, ranks: u32) -> Size {
        let n = self.hosts.len(ranks);
        let size = u128::from(self.size.0);
        Size::of_flows(n, u128::from(n) * size, size, self.start)
    }

    fn expand(&self, ranks: u32, seed: u64) -> Workload {
        let members = self.hosts.expand(ranks);
        let mut rng = rng::stream(seed, "workload.permutation", 0);
        // Sattolo's algorithm: a uniformly random single cycle, so nobody sends to itself.
        let mut target = members.clone();
        for i in (1..target.len()).rev() {
            let j = rng.random_range(0..i);
            target.swap(i, j);
        }
        let flow = |(&src, &dst): (&u32, &u32)| FlowDef {
            src,
            dst,
            size: self.size.0,
            start: self.start,
            collective: None,
            after: Vec::new(),
            after_acked: Vec::new(),
            after_compute: Vec::new(),
            stop: None,
            connection: None,
            job: 0,
        };
        Workload::of_flows(members.iter().zip(&target).map(flow).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_has_no_fixed_points_and_covers_everyone() {
        let w = PermutationWorkload { hosts: HostSet::All, size: ByteSize(1000), start: SimTime::ZERO };
        let flows = w.expand(64, 3).flows;
        assert_eq!(flows.len(), 64);
        let mut dsts: Vec<u32> = flows.iter().map(|f| f.dst).collect();
        assert!(flows.iter().all(|f| f.src != f.dst));
        dsts.sort_unstable();
        assert_eq!(dsts, (0..64).collect::<Vec<_>>());
        assert_eq!(flows, w.expand(64, 3).flows, "same seed, same permutation");
        assert_ne!(flows, w.expand(64, 4).flows, "another seed, another permutation");
    }
}
