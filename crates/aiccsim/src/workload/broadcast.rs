//! Broadcast: the root's buffer onto every other rank, whole (no splitting into blocks).

use super::collective::member_flow;
use super::FlowDef;
use crate::config::BroadcastAlgorithm;
use crate::tags::CollectiveKind;
use crate::time::SimTime;

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
