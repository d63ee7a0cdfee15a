//! `kind = "all_reduce"`: every rank ends with the sum of every rank's buffer.

use super::catalog::info;
use super::collective::{chunk, member_flow, one, pipelined};
use super::kind::{chunks_fit, fail, groups_do_not_fit, positive, splits, Ranks, Size, WorkloadKind};
use super::{CollectiveInfo, FlowDef, HostSet, Workload};
use crate::cc::Check;
use crate::tags::CollectiveKind;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]
kind = "all_reduce"
size = "1MB"
algorithm = "halving_doubling"
hosts = "1..=4"
"#;

/// An all-reduce of `size` bytes per rank among `hosts`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AllReduceWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    /// Bytes each rank contributes (the gradient buffer).
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: AllReduceAlgorithm,
    /// Ranks per group of `hierarchical` (consecutive ranks in `hosts` order); filled in from
    /// the topology's servers (`gpus_per_server`) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_ranks: Option<u32>,
    #[serde(default)]
    pub start: SimTime,
    /// Split into this many equal chunks, each run through the whole schedule, pipelined: a
    /// chunk's step waits only for the same chunk's step before, and on each connection the
    /// chunks go in order.
    #[serde(default = "one")]
    pub chunks: u32,
}

/// How an all-reduce is broken into point-to-point sends.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AllReduceAlgorithm {
    /// Reduce-scatter then all-gather around a ring: 2(n-1) steps of size/n to the next rank,
    /// each step waiting for the chunk from the previous rank.
    #[default]
    Ring,
    /// Reduce-scatter then all-gather, each rank exchanging size/n with every other rank at
    /// once; a rank's all-gather waits for its reduce-scatter chunks.
    Direct,
    /// Recursive halving then recursive doubling (Thakur et al., 2005): log2(n) steps in which
    /// each rank exchanges half of what it holds with a rank ever closer, then log2(n) steps in
    /// which it exchanges all it holds with a rank ever farther. Needs a power-of-two n.
    HalvingDoubling,
    /// Two dimensions (the "2D" all-reduce of Khan et al., HOTI 2022): the ranks form groups of `local_ranks` consecutive
    /// ranks (a server's GPUs); a direct reduce-scatter inside each group, a direct
    /// reduce-scatter among the ranks of the same local index across groups, then the
    /// all-gathers in reverse order. Only 1/local_ranks of the buffer leaves a group.
    Hierarchical,
}

impl AllReduceAlgorithm {
    /// Whether the algorithm runs on `n` ranks (in groups of `local` for `hierarchical`).
    pub fn fits(self, n: u64, local: Option<u32>) -> bool {
        match self {
            AllReduceAlgorithm::HalvingDoubling => n.is_power_of_two(),
            AllReduceAlgorithm::Hierarchical => local.is_some_and(|g| g >= 1 && n.is_multiple_of(u64::from(g))),
            _ => true,
        }
    }

    /// Its name in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            AllReduceAlgorithm::Ring => "ring",
            AllReduceAlgorithm::Direct => "direct",
            AllReduceAlgorithm::HalvingDoubling => "halving_doubling",
            AllReduceAlgorithm::Hierarchical => "hierarchical",
        }
    }
}

impl WorkloadKind for AllReduceWorkload {
    fn chunks(&self) -> u32 {
        self.chunks
    }

    fn fill_local_ranks(&mut self, group: u32) {
        if self.algorithm == AllReduceAlgorithm::Hierarchical {
            self.local_ranks.get_or_insert(group);
        }
    }

    fn check(&self) -> Check {
        positive(self.size)?;
        chunks_fit(self.chunks, self.size.0)
    }

    fn check_ranks(&self, ranks: &Ranks) -> Check {
        ranks.set("workload.hosts", &self.hosts, 2)?;
        let n = self.hosts.len(ranks.n);
        splits(self.size, n.saturating_mul(u64::from(self.chunks)), "pieces (ranks x chunks)")?;
        fits("workload.algorithm", self.algorithm, n, self.local_ranks)
    }

    fn size(&self, ranks: u32) -> Size {
        let n = self.hosts.len(ranks);
        let flows = all_reduce_flows(n, self.algorithm, self.local_ranks).saturating_mul(u64::from(self.chunks));
        let per_rank = bytes_per_rank(n.max(1), self.size.0, self.algorithm, self.local_ranks);
        Size::of_flows(flows, u128::from(n.max(1)) * per_rank, per_rank, self.start)
    }

    fn expand(&self, ranks: u32, _seed: u64) -> Workload {
        let (members, local) = (self.hosts.expand(ranks), self.local_ranks.unwrap_or(1) as usize);
        Workload::of_flows(pipelined(self.size.0, self.chunks, |bytes| {
            all_reduce(&members, bytes, self.algorithm, local, self.start)
        }))
    }

    fn collectives(&self, ranks: u32, _made: &Workload) -> Vec<CollectiveInfo> {
        vec![info(CollectiveKind::AllReduce, 0, self.algorithm.name(), self.size.0, self.hosts.len(ranks))]
    }
}

/// Whether all-reduce `algorithm` runs on `ranks` ranks (in groups of `local`); `key` is its
/// `algorithm` key (a training layer's too).
pub(super) fn fits(key: &str, algorithm: AllReduceAlgorithm, ranks: u64, local: Option<u32>) -> Check {
    if algorithm.fits(ranks, local) {
        return Ok(());
    }
    if algorithm == AllReduceAlgorithm::Hierarchical {
        let at = key.rsplit_once('.').map_or("workload", |(head, _)| head);
        let at = if at.starts_with("workload.layers") { "workload" } else { at };
        return groups_do_not_fit(at, ranks, local);
    }
    let (below, above) = (ranks.next_power_of_two() / 2, ranks.next_power_of_two());
    fail(
        key,
        format!("halving_doubling needs a power-of-two number of ranks, got {ranks}; use {below} or {above} ranks, or algorithm = \"ring\" or \"direct\""),
    )
}

/// Flows of one all-reduce among `ranks` ranks, saturating. Ring: 2(n-1) steps of n flows;
/// direct: n(n-1) reduce-scatter and as many all-gather; halving-doubling: 2 log2(n) steps of n
/// flows; hierarchical (groups of g): 2n(g-1) inside the groups and 2n(n/g-1) across.
pub(super) fn all_reduce_flows(ranks: u64, algorithm: AllReduceAlgorithm, local: Option<u32>) -> u64 {
    match algorithm {
        AllReduceAlgorithm::Hierarchical => {
            let g = u64::from(local.unwrap_or(1).max(1));
            let inside = g.saturating_sub(1);
            let across = (ranks / g).saturating_sub(1);
            ranks.saturating_mul(2).saturating_mul(inside.saturating_add(across))
        }
        AllReduceAlgorithm::Ring | AllReduceAlgorithm::Direct => {
            ranks.saturating_mul(ranks.saturating_sub(1)).saturating_mul(2)
        }
        AllReduceAlgorithm::HalvingDoubling => {
            ranks.saturating_mul(2 * u64::from(ranks.max(1).next_power_of_two().trailing_zeros()))
        }
    }
}

/// Bytes each of `n` (at least 1) ranks of an all-reduce of `size` sends (and receives): 2(n-1)/n
/// of its buffer, except hierarchically: 2(g-1)/g inside its group and 2(s-1)/s of a g-th across.
pub(super) fn bytes_per_rank(n: u64, size: u64, algorithm: AllReduceAlgorithm, local: Option<u32>) -> u128 {
    let (n, size) = (u128::from(n), u128::from(size));
    match algorithm {
        AllReduceAlgorithm::Hierarchical => {
            let g = u128::from(local.unwrap_or(1).max(1));
            let s = (n / g).max(1);
            2 * (g - 1) * size / g + 2 * (s - 1) * size / (g * s)
        }
        _ => 2 * (n - 1) * size / n,
    }
}

/// The flows of one all-reduce of `size` bytes per rank among `ranks`; `local` is the group
/// size of `hierarchical` (a divisor of the ranks), ignored by the others.
pub fn all_reduce(
    ranks: &[u32],
    size: u64,
    algorithm: AllReduceAlgorithm,
    local: usize,
    start: SimTime,
) -> Vec<FlowDef> {
    let n = ranks.len();
    let flow = member_flow(ranks, CollectiveKind::AllReduce, start);
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
        AllReduceAlgorithm::HalvingDoubling => {
            for (src, dst, blocks, after) in halving_doubling(n) {
                flows.push(flow(src, dst, blocks.map(|b| chunk(size, n, b)).sum(), after));
            }
        }
        AllReduceAlgorithm::Hierarchical => {
            for (src, dst, bytes, after) in hierarchical(n, local, size) {
                flows.push(flow(src, dst, bytes, after));
            }
        }
    }
    flows
}

/// The 2D all-reduce on n ranks in groups of `g` consecutive ranks (s = n / g groups), as
/// (sender, receiver, bytes, flows waited for). Rank (group a, local index i) is a * g + i.
/// The buffer is g pieces, piece j of `chunk(size, g, j)` bytes, each in s sub-pieces.
///
/// 1. Inside each group, rank i sends piece j to local rank j (direct reduce-scatter): local
///    rank j then holds piece j summed over its group.
/// 2. Across groups, among local ranks j, the rank of group a sends sub-piece b of piece j to
///    the rank of group b: it then holds sub-piece a summed over every rank.
/// 3. Across groups, each sends its reduced sub-piece to the others of its local index.
/// 4. Inside each group, local rank j sends the reduced piece j to every other local rank.
///
/// Every send waits for everything its sender has received so far, as in `halving_doubling`.
fn hierarchical(n: usize, g: usize, size: u64) -> Vec<(usize, usize, u64, Vec<u32>)> {
    debug_assert!(g >= 1 && n.is_multiple_of(g), "validation requires groups that divide the ranks");
    let s = n / g;
    let rank = |group: usize, local: usize| group * g + local;
    let piece = |j: usize| chunk(size, g, j);
    let sub = |j: usize, b: usize| chunk(piece(j), s, b);
    let mut out: Vec<(usize, usize, u64, Vec<u32>)> = Vec::new();
    let mut received: Vec<Vec<u32>> = vec![Vec::new(); n];
    // One phase: every (sender, receiver, bytes) waits for what its sender received before the
    // phase; the phase's flows then count as received.
    let mut phase = |sends: Vec<(usize, usize, u64)>, out: &mut Vec<(usize, usize, u64, Vec<u32>)>| {
        let first = out.len();
        for (src, dst, bytes) in sends {
            out.push((src, dst, bytes, received[src].clone()));
        }
        for id in first..out.len() {
            received[out[id].1].push(id as u32);
        }
    };
    let inside = |bytes_of: &dyn Fn(usize, usize) -> u64| {
        let mut v = Vec::new();
        for a in 0..s {
            for i in 0..g {
                for j in (0..g).filter(|&j| j != i) {
                    v.push((rank(a, i), rank(a, j), bytes_of(i, j)));
                }
            }
        }
        v
    };
    let across = |bytes_of: &dyn Fn(usize, usize, usize) -> u64| {
        let mut v = Vec::new();
        for j in 0..g {
            for a in 0..s {
                for b in (0..s).filter(|&b| b != a) {
                    v.push((rank(a, j), rank(b, j), bytes_of(j, a, b)));
                }
            }
        }
        v
    };
    phase(inside(&|_, j| piece(j)), &mut out);
    phase(across(&|j, _, b| sub(j, b)), &mut out);
    phase(across(&|j, a, _| sub(j, a)), &mut out);
    phase(inside(&|i, _| piece(i)), &mut out);
    out
}

/// Recursive halving then recursive doubling on n = 2^m ranks, as (sender, receiver, blocks
/// sent, flows waited for); the buffer is n blocks, block i ending reduced on rank i after the
/// halving. Flow id = step * n + sender.
///
/// Halving step j (distance n / 2^(j+1)): rank i holds a range of n / 2^j blocks; it keeps the
/// half that holds block i and sends the other half to rank i XOR distance, which sends it the
/// kept half's counterpart. Doubling step j (distance 2^j): rank i sends the 2^j blocks it holds
/// to rank i XOR distance, and holds twice as many. Every send waits for everything the rank has
/// received so far: its data is only complete once those arrived.
fn halving_doubling(n: usize) -> Vec<(usize, usize, std::ops::Range<usize>, Vec<u32>)> {
    debug_assert!(n.is_power_of_two(), "validation requires a power-of-two n");
    let m = n.trailing_zeros() as usize;
    let mut out = Vec::with_capacity(2 * m * n);
    // The blocks each rank holds, and the flows that have come into it.
    let mut held: Vec<std::ops::Range<usize>> = vec![0..n; n];
    let mut received: Vec<Vec<u32>> = vec![Vec::new(); n];
    for step in 0..2 * m {
        let halving = step < m;
        let distance = if halving { n >> (step + 1) } else { 1 << (step - m) };
        let mut next_held = held.clone();
        for i in 0..n {
            let r = held[i].clone();
            let mid = r.start + r.len() / 2;
            let (keep, send) = if !halving {
                (r.start.min(held[i ^ distance].start)..r.end.max(held[i ^ distance].end), r.clone())
            } else if i & distance == 0 {
                (r.start..mid, mid..r.end)
            } else {
                (mid..r.end, r.start..mid)
            };
            out.push((i, i ^ distance, send, received[i].clone()));
            next_held[i] = keep;
        }
        for i in 0..n {
            received[i ^ distance].push((step * n + i) as u32);
        }
        held = next_held;
    }
    out
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
        let flows = all_reduce(&ranks, 8000, AllReduceAlgorithm::Ring, 1, SimTime::ZERO);
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
        let flows = all_reduce(&ranks, 10, AllReduceAlgorithm::Direct, 1, SimTime::ZERO);
        assert_eq!(flows.len(), 2 * 3 * 2);
        let total: u64 = (0..3).map(|k| chunk(10, 3, k)).sum();
        assert_eq!(total, 10);
        let local: Vec<FlowDef> =
            flows.iter().map(|f| FlowDef { src: f.src - 4, dst: f.dst - 4, ..f.clone() }).collect();
        // Reduce-scatter flows carry their destination's chunk, all-gather flows their source's.
        let chunk_of = |id: usize| if id < 6 { local[id].dst as usize } else { local[id].src as usize };
        check_all_reduce(&local, 3, chunk_of);
    }

    #[test]
    fn hierarchical_reduces_everything_and_sends_a_gth_across_groups() {
        for (n, g) in [(8usize, 4usize), (6, 3), (4, 1), (4, 4), (12, 4)] {
            let size = 12_000u64;
            let schedule = hierarchical(n, g, size);
            assert_eq!(
                schedule.len() as u64,
                all_reduce_flows(n as u64, AllReduceAlgorithm::Hierarchical, Some(g as u32))
            );
            // Follow every byte range's contributions: a flow's bytes are a range of the buffer
            // (its piece, or a sub-piece of it), carrying its sender's part plus what the flows
            // it waited for brought the sender for the same bytes.
            let s = n / g;
            let range_of = |id: usize| -> std::ops::Range<u64> {
                // Recompute which bytes each flow carries from the phase it is in.
                let (inside, across) = (n * (g - 1), n * (s - 1));
                let (src, dst, _, _) = &schedule[id];
                let piece = |j: usize| {
                    let lo: u64 = (0..j).map(|k| chunk(size, g, k)).sum();
                    lo..lo + chunk(size, g, j)
                };
                let sub = |j: usize, b: usize| {
                    let p = piece(j);
                    let lo: u64 = p.start + (0..b).map(|k| chunk(p.end - p.start, s, k)).sum::<u64>();
                    lo..lo + chunk(p.end - p.start, s, b)
                };
                match id {
                    i if i < inside => piece(dst % g),
                    i if i < inside + across => sub(src % g, dst / g),
                    i if i < inside + 2 * across => sub(src % g, src / g),
                    _ => piece(src % g),
                }
            };
            // One probe byte per sub-piece: the first of each.
            let probes: Vec<u64> = (0..g)
                .flat_map(|j| (0..s).map(move |b| (j, b)))
                .map(|(j, b)| {
                    let lo: u64 = (0..j).map(|k| chunk(size, g, k)).sum();
                    lo + (0..b).map(|k| chunk(chunk(size, g, j), s, k)).sum::<u64>()
                })
                .collect();
            // carries[id][p]: the ranks whose contribution to probe p flow id carries.
            let mut carries: Vec<Vec<u64>> = Vec::new();
            for (id, (src, _, bytes, after)) in schedule.iter().enumerate() {
                let r = range_of(id);
                assert_eq!(r.end - r.start, *bytes);
                let mut c = vec![0u64; probes.len()];
                for (p, &probe) in probes.iter().enumerate().filter(|(_, &probe)| r.contains(&probe)) {
                    c[p] = 1u64 << src;
                    for &d in after {
                        assert!((d as usize) < id && schedule[d as usize].1 == *src);
                        if range_of(d as usize).contains(&probe) {
                            c[p] |= carries[d as usize][p];
                        }
                    }
                }
                carries.push(c);
            }
            for rank in 0..n {
                for (p, &probe) in probes.iter().enumerate() {
                    let held = (0..schedule.len())
                        .filter(|&id| schedule[id].1 == rank && range_of(id).contains(&probe))
                        .fold(1u64 << rank, |acc, id| acc | carries[id][p]);
                    assert_eq!(held, (1u64 << n) - 1, "n {n} g {g}: rank {rank} misses contributions at byte {probe}");
                }
            }
            // Across groups, each rank sends 2(s-1)/s of a g-th of the buffer.
            let across_bytes: u64 = schedule.iter().filter(|(a, b, _, _)| *a == 0 && a / g != b / g).map(|f| f.2).sum();
            let expected = 2 * (0..s).filter(|&b| b != 0).map(|b| chunk(chunk(size, g, 0), s, b)).sum::<u64>();
            assert_eq!(across_bytes, expected);
        }
    }

    #[test]
    fn halving_doubling_reduces_everything_in_2_log2_n_steps() {
        for n in [2usize, 4, 8, 16] {
            let schedule = halving_doubling(n);
            assert_eq!(schedule.len(), 2 * n * n.trailing_zeros() as usize);
            // Follow every block's contributions: a flow carries, for each block it sends, its
            // sender's own part plus what the flows it waited for brought the sender.
            let mut carries: Vec<Vec<u64>> = Vec::new();
            for (id, (src, _, blocks, after)) in schedule.iter().enumerate() {
                let mut c = vec![0u64; n];
                for b in blocks.clone() {
                    c[b] = 1 << src;
                    for &d in after {
                        let (_, to, sent, _) = &schedule[d as usize];
                        assert!((d as usize) < id && to == src, "flow {id} waits for flow {d}, not into its sender");
                        if sent.contains(&b) {
                            c[b] |= carries[d as usize][b];
                        }
                    }
                }
                carries.push(c);
            }
            for (r, b) in (0..n).flat_map(|r| (0..n).map(move |b| (r, b))) {
                let held = (schedule.iter().enumerate())
                    .filter(|(_, (_, to, sent, _))| *to == r && sent.contains(&b))
                    .fold(1u64 << r, |acc, (id, _)| acc | carries[id][b]);
                assert_eq!(held, (1u64 << n) - 1, "n {n}: rank {r} block {b} misses contributions");
            }
        }
        // Each rank sends 2(n-1)/n of its buffer, as the ring does, in 2 log2(n) steps.
        let ranks: Vec<u32> = (0..8).collect();
        let flows = all_reduce(&ranks, 8000, AllReduceAlgorithm::HalvingDoubling, 1, SimTime::ZERO);
        let sent: Vec<u64> = flows.iter().filter(|f| f.src == 5).map(|f| f.size).collect();
        assert_eq!(sent, [4000, 2000, 1000, 1000, 2000, 4000]);
    }
}
