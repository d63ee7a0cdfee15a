//! `kind = "send_recv"`: point-to-point transfers; each listed pair of ranks moves `size` bytes,
//! on the pair's connection (NCCL's `ncclSend`/`ncclRecv`, as pipeline-parallel stages exchange
//! activations).

use super::catalog::info;
use super::collective::{member_flow, one, pipelined};
use super::kind::{chunks_fit, fail, positive, Ranks, Size, WorkloadKind};
use super::{CollectiveInfo, FlowDef, Workload};
use crate::cc::Check;
use crate::tags::CollectiveKind;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]            # a four-stage pipeline hands 2 MB of activations down the stages
kind = "send_recv"
pairs = [[0, 1], [1, 2], [2, 3]]
size = "2MB"
"#;

/// Point-to-point transfers: `size` bytes from the first host of each pair to the second.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SendRecvWorkload {
    /// `[source, destination]` pairs.
    pub pairs: Vec<[u32; 2]>,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
    /// Split into this many equal chunks, posted in order on each pair's connection.
    #[serde(default = "one")]
    pub chunks: u32,
}

impl WorkloadKind for SendRecvWorkload {
    fn chunks(&self) -> u32 {
        self.chunks
    }

    fn check(&self) -> Check {
        if self.pairs.is_empty() {
            return fail("workload.pairs", "no pairs; list at least one [source, destination]");
        }
        if let Some(i) = self.pairs.iter().position(|p| p[0] == p[1]) {
            return fail(format!("workload.pairs[{i}]"), format!("host {} sends to itself", self.pairs[i][0]));
        }
        positive(self.size)?;
        chunks_fit(self.chunks, self.size.0)
    }

    fn check_ranks(&self, ranks: &Ranks) -> Check {
        for (i, pair) in self.pairs.iter().enumerate() {
            ranks.has(&format!("workload.pairs[{i}]"), pair[0])?;
            ranks.has(&format!("workload.pairs[{i}]"), pair[1])?;
        }
        Ok(())
    }

    fn size(&self, _ranks: u32) -> Size {
        // The busiest direction of a host's link: the pairs it sends in, or receives in.
        let mut per_host: std::collections::BTreeMap<(u32, bool), u128> = Default::default();
        for p in &self.pairs {
            *per_host.entry((p[0], true)).or_default() += 1;
            *per_host.entry((p[1], false)).or_default() += 1;
        }
        let (pairs, size) = (self.pairs.len() as u64, u128::from(self.size.0));
        let busiest = per_host.values().max().copied().unwrap_or(0) * size;
        Size::of_flows(pairs.saturating_mul(u64::from(self.chunks)), u128::from(pairs) * size, busiest, self.start)
    }

    fn expand(&self, _ranks: u32, _seed: u64) -> Workload {
        Workload::of_flows(pipelined(self.size.0, self.chunks, |bytes| send_recv(&self.pairs, bytes, self.start)))
    }

    fn collectives(&self, _ranks: u32, _made: &Workload) -> Vec<CollectiveInfo> {
        // nccl-tests' sendrecv: the bytes each pair moves; its ranks, the hosts in a pair.
        let mut hosts: Vec<u32> = self.pairs.iter().flatten().copied().collect();
        hosts.sort_unstable();
        hosts.dedup();
        vec![info(CollectiveKind::SendRecv, 0, "direct", self.size.0, hosts.len() as u64)]
    }
}

/// The flows of one send/recv: a flow of `size` bytes per (source, destination) pair, all
/// posted at `start`, in the order listed. Each is tagged `send_recv` with a group of 2.
pub fn send_recv(pairs: &[[u32; 2]], size: u64, start: SimTime) -> Vec<FlowDef> {
    (pairs.iter()).map(|&pair| member_flow(&pair, CollectiveKind::SendRecv, start)(0, 1, size, Vec::new())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_flow_per_pair_on_a_connection_in_the_listed_order() {
        let flows = send_recv(&[[3, 5], [5, 7], [3, 5]], 1000, SimTime::from_us(2));
        let ends: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(ends, [(3, 5), (5, 7), (3, 5)]);
        assert!(flows.iter().all(|f| f.size == 1000 && f.start == SimTime::from_us(2) && f.connection == Some(0)));
        assert!(flows.iter().all(|f| f.collective.unwrap().kind == CollectiveKind::SendRecv));
    }
}
