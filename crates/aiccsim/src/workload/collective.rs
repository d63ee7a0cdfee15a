//! Collectives broken into point-to-point flows with dependencies, as a collective library
//! schedules them: a flow that forwards data another rank sent waits for that data to arrive.

use super::FlowDef;
use crate::config::{AllReduceAlgorithm, CollectiveKind, CollectiveTag};
use crate::time::SimTime;

/// Bytes of chunk `k` when `size` is split into `n` chunks as evenly as possible.
fn chunk(size: u64, n: usize, k: usize) -> u64 {
    size / n as u64 + u64::from((k as u64) < size % n as u64)
}

/// The flows of one all-reduce of `size` bytes per rank among `ranks`.
pub fn all_reduce(ranks: &[u32], size: u64, algorithm: AllReduceAlgorithm, start: SimTime) -> Vec<FlowDef> {
    let n = ranks.len();
    let tag = Some(CollectiveTag { kind: CollectiveKind::AllReduce, group_size: n as u32, id: 0 });
    let flow = |src: usize, dst: usize, size: u64, after: Vec<u32>| FlowDef {
        src: ranks[src],
        dst: ranks[dst],
        size,
        start,
        collective: tag,
        after,
    };
    let mut flows = Vec::new();
    match algorithm {
        AllReduceAlgorithm::Ring => {
            // Step s: rank i sends chunk (i - s) mod n to rank i + 1. Reduce-scatter is steps
            // 0..n-1, all-gather steps n-1..2(n-1); from step 1 on, rank i forwards what rank
            // i - 1 sent it in the step before. Flow id = s * n + i.
            for s in 0..2 * (n - 1) {
                for i in 0..n {
                    let c = (i + n - s % n) % n;
                    let after = if s == 0 { vec![] } else { vec![((s - 1) * n + (i + n - 1) % n) as u32] };
                    flows.push(flow(i, (i + 1) % n, chunk(size, n, c), after));
                }
            }
        }
        AllReduceAlgorithm::Direct => {
            // Reduce-scatter: rank i sends chunk j to rank j. Then rank j, once it holds every
            // contribution to chunk j, sends the reduced chunk to every other rank.
            let mut into = vec![Vec::new(); n];
            for i in 0..n {
                for (j, into_j) in into.iter_mut().enumerate() {
                    if i != j {
                        into_j.push(flows.len() as u32);
                        flows.push(flow(i, j, chunk(size, n, j), vec![]));
                    }
                }
            }
            for (j, into_j) in into.iter().enumerate() {
                for i in 0..n {
                    if i != j {
                        flows.push(flow(j, i, chunk(size, n, j), into_j.clone()));
                    }
                }
            }
        }
    }
    flows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the schedule's data flow: a flow carries its sender's own contribution to its
    /// chunk plus what the flows it waited for brought the sender for that chunk; in the end
    /// every rank must hold every chunk with every rank's contribution.
    fn check_all_reduce(flows: &[FlowDef], n: usize, chunk_of: impl Fn(usize) -> usize) {
        let mut carries = vec![0u64; flows.len()];
        for (id, f) in flows.iter().enumerate() {
            let c = chunk_of(id);
            let mut bits = 1u64 << f.src;
            for &d in &f.after {
                let d = d as usize;
                assert!(d < id, "flow {id} listed before its dependency {d}");
                if flows[d].dst == f.src && chunk_of(d) == c {
                    bits |= carries[d];
                }
            }
            carries[id] = bits;
        }
        let all = (1u64 << n) - 1;
        for r in 0..n {
            for c in 0..n {
                let held = flows
                    .iter()
                    .enumerate()
                    .filter(|&(id, f)| f.dst as usize == r && chunk_of(id) == c)
                    .fold(1u64 << r, |acc, (id, _)| acc | carries[id]);
                assert_eq!(held, all, "rank {r} chunk {c} misses contributions");
            }
        }
    }

    #[test]
    fn ring_all_reduce_reduces_everything_in_2n_minus_2_steps() {
        let ranks: Vec<u32> = (0..8).collect();
        let flows = all_reduce(&ranks, 8000, AllReduceAlgorithm::Ring, SimTime::ZERO);
        assert_eq!(flows.len(), 2 * 7 * 8);
        assert!(flows.iter().all(|f| f.dst == (f.src + 1) % 8 && f.size == 1000));
        check_all_reduce(&flows, 8, |id| (id % 8 + 8 - (id / 8) % 8) % 8);
        // Each rank sends 2(n-1)/n of its buffer: the ring's bandwidth-optimal volume.
        let sent: u64 = flows.iter().filter(|f| f.src == 3).map(|f| f.size).sum();
        assert_eq!(sent, 2 * 7 * 1000);
    }

    #[test]
    fn direct_all_reduce_reduces_everything_and_splits_uneven_sizes() {
        let ranks: Vec<u32> = vec![4, 5, 6];
        let flows = all_reduce(&ranks, 10, AllReduceAlgorithm::Direct, SimTime::ZERO);
        assert_eq!(flows.len(), 2 * 3 * 2);
        let total: u64 = (0..3).map(|k| chunk(10, 3, k)).sum();
        assert_eq!(total, 10);
        let local: Vec<FlowDef> =
            flows.iter().map(|f| FlowDef { src: f.src - 4, dst: f.dst - 4, ..f.clone() }).collect();
        // Reduce-scatter flows carry their destination's chunk, all-gather flows their source's.
        let chunk_of = |id: usize| if id < 6 { local[id].dst as usize } else { local[id].src as usize };
        check_all_reduce(&local, 3, chunk_of);
    }
}
