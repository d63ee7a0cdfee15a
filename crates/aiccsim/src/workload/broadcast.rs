//! `kind = "broadcast"`: the root's buffer onto every other rank, whole (no splitting into
//! blocks).

use super::catalog::info;
use super::collective::{member_flow, one, pipelined};
use super::kind::{chunks_fit, fail, positive, Ranks, Size, WorkloadKind};
use super::{CollectiveInfo, FlowDef, HostSet, Workload};
use crate::cc::Check;
use crate::tags::CollectiveKind;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]
kind = "broadcast"
root = 2
size = "500KB"
algorithm = "binomial_tree"
"#;

/// A broadcast of `size` bytes from `root` to the other members of `hosts`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BroadcastWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    /// The host that holds the buffer; the first member of `hosts` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<u32>,
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: BroadcastAlgorithm,
    #[serde(default)]
    pub start: SimTime,
    /// Split into this many equal chunks, each run through the whole schedule, pipelined: a
    /// chunk's step waits only for the same chunk's step before, and on each connection the
    /// chunks go in order.
    #[serde(default = "one")]
    pub chunks: u32,
}

/// How a broadcast is broken into point-to-point sends.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BroadcastAlgorithm {
    /// A chain along the ring from the root: each rank forwards the buffer to the next once it
    /// has arrived (n-1 steps).
    #[default]
    Ring,
    /// The root sends the buffer to every other rank at once.
    Direct,
    /// A binomial tree: in step k every rank that holds the buffer sends it to the rank 2^k
    /// places further on (ceil(log2 n) steps).
    BinomialTree,
}

impl BroadcastAlgorithm {
    /// Its name in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            BroadcastAlgorithm::Ring => "ring",
            BroadcastAlgorithm::Direct => "direct",
            BroadcastAlgorithm::BinomialTree => "binomial_tree",
        }
    }
}

impl WorkloadKind for BroadcastWorkload {
    fn chunks(&self) -> u32 {
        self.chunks
    }

    fn check(&self) -> Check {
        positive(self.size)?;
        chunks_fit(self.chunks, self.size.0)
    }

    fn check_ranks(&self, ranks: &Ranks) -> Check {
        ranks.set("workload.hosts", &self.hosts, 2)?;
        if let Some(root) = self.root {
            ranks.has("workload.root", root)?;
            if !self.hosts.expand(ranks.n).contains(&root) {
                return fail(
                    "workload.root",
                    format!("host {root} is not one of the broadcast's hosts; add it to workload.hosts or pick a member"),
                );
            }
        }
        Ok(())
    }

    fn size(&self, ranks: u32) -> Size {
        let n = self.hosts.len(ranks);
        let flows = n.saturating_sub(1).saturating_mul(u64::from(self.chunks));
        // Every rank but the root receives the buffer once; the root sends it up to n-1 times.
        let bytes = u128::from(n.saturating_sub(1)) * u128::from(self.size.0);
        Size::of_flows(flows, bytes, bytes, self.start)
    }

    fn expand(&self, ranks: u32, _seed: u64) -> Workload {
        let members = self.hosts.expand(ranks);
        let root = self.root.and_then(|r| members.iter().position(|&h| h == r)).unwrap_or(0);
        Workload::of_flows(pipelined(self.size.0, self.chunks, |bytes| {
            broadcast(&members, root, bytes, self.algorithm, self.start)
        }))
    }

    fn collectives(&self, ranks: u32, _made: &Workload) -> Vec<CollectiveInfo> {
        vec![info(CollectiveKind::Broadcast, 0, self.algorithm.name(), self.size.0, self.hosts.len(ranks))]
    }
}

/// The flows of one broadcast of `size` bytes from rank `root` (a position in `ranks`). Ranks
/// are counted from the root: relative rank v is `ranks[(root + v) % n]`.
pub fn broadcast(ranks: &[u32], root: usize, size: u64, algorithm: BroadcastAlgorithm, start: SimTime) -> Vec<FlowDef> {
    let n = ranks.len();
    let flow = member_flow(ranks, CollectiveKind::Broadcast, start);
    let at = |v: usize| (root + v) % n;
    let mut flows = Vec::with_capacity(n - 1);
    match algorithm {
        BroadcastAlgorithm::Ring => {
            // Flow v - 1 takes the buffer from relative rank v - 1 to v, once flow v - 2 has
            // brought it there.
            for v in 1..n {
                let after = if v == 1 { vec![] } else { vec![(v - 2) as u32] };
                flows.push(flow(at(v - 1), at(v), size, after));
            }
        }
        BroadcastAlgorithm::Direct => {
            for v in 1..n {
                flows.push(flow(at(0), at(v), size, vec![]));
            }
        }
        BroadcastAlgorithm::BinomialTree => {
            // Step k: every relative rank v < 2^k that holds the buffer sends it to v + 2^k. A
            // send waits for the buffer to have reached its sender and for the sender's send of
            // the step before (a rank sends one copy at a time).
            let mut into: Vec<Option<u32>> = vec![None; n];
            let mut last_sent: Vec<Option<u32>> = vec![None; n];
            let mut k = 1;
            while k < n {
                for v in 0..k.min(n - k) {
                    let after = into[v].into_iter().chain(last_sent[v]).collect();
                    let id = flows.len() as u32;
                    flows.push(flow(at(v), at(v + k), size, after));
                    into[v + k] = Some(id);
                    last_sent[v] = Some(id);
                }
                k *= 2;
            }
        }
    }
    flows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_receives_the_buffer_once_after_it_reached_the_sender() {
        let ranks: Vec<u32> = (20..27).collect();
        for algorithm in [BroadcastAlgorithm::Ring, BroadcastAlgorithm::Direct, BroadcastAlgorithm::BinomialTree] {
            let flows = broadcast(&ranks, 3, 500, algorithm, SimTime::ZERO);
            assert_eq!(flows.len(), 6, "{algorithm:?}");
            let mut receivers: Vec<u32> = flows.iter().map(|f| f.dst).collect();
            receivers.sort_unstable();
            assert_eq!(receivers, [20, 21, 22, 24, 25, 26], "{algorithm:?}: every rank but the root (23)");
            for f in &flows {
                // The sender is the root, or got the buffer through a flow it waits for.
                let fed = f.src == 23 || f.after.iter().any(|&d| flows[d as usize].dst == f.src);
                assert!(fed && f.size == 500, "{algorithm:?}: {f:?}");
            }
        }
        // The tree takes ceil(log2 7) = 3 steps: its longest chain of flows, each waiting for the
        // one before, is 3 long (the ring's is 6, the direct one's 1).
        for (algorithm, steps) in
            [(BroadcastAlgorithm::BinomialTree, 3), (BroadcastAlgorithm::Ring, 6), (BroadcastAlgorithm::Direct, 1)]
        {
            let flows = broadcast(&ranks, 0, 500, algorithm, SimTime::ZERO);
            let mut depth = vec![0; flows.len()];
            for (id, f) in flows.iter().enumerate() {
                depth[id] = 1 + f.after.iter().map(|&a| depth[a as usize]).max().unwrap_or(0);
            }
            assert_eq!(depth.into_iter().max(), Some(steps), "{algorithm:?}");
        }
    }
}
