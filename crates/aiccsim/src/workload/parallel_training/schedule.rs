//! A `parallel_training` workload as compute steps and flows.
//!
//! Each rank runs its stage's order of passes (`pipeline.rs`); all ranks of a stage run the same
//! order, each step waiting for the rank's step before it. A forward pass of a microbatch
//! through a model chunk runs, for each of the chunk's layers from the first:
//!
//! 1. the layer's forward compute;
//! 2. its tensor-parallel collectives, one after another (`tp_collectives` all-reduces of
//!    `tp_bytes` over the tensor-parallel group; with sequence parallelism each is a
//!    reduce-scatter then an all-gather of the same buffer);
//! 3. for a mixture-of-experts layer (`ep_bytes` > 0), the dispatch and combine all-to-alls
//!    over the expert-parallel group, each rank sending `ep_bytes` / ep to each other rank.
//!
//! These collectives block: each starts when the rank has received all of the one before, and
//! the rank's next step waits for all of the last. Then each rank sends `activation_bytes` to
//! the rank of its tensor- and data-parallel position on the next virtual stage, on the pair's
//! connection; that rank's forward of the microbatch waits for it.
//!
//! A backward pass mirrors it, from the chunk's last layer: the input-gradient compute, the same
//! collectives, then the weight-gradient compute, which runs while they are under way (the next
//! layer's input-gradient compute waits for them); then the gradient goes back to the previous
//! virtual stage.
//!
//! Data parallelism: when a layer's last backward of the iteration (its last microbatch's) has
//! computed its weight gradient, its `grad_bytes` join the rank's bucket; a bucket of at least
//! `dp_bucket` bytes is all-reduced over the data-parallel group at once, while the backward
//! pass goes on (ZeRO: reduce-scattered, then each rank's all-gather of its updated shard
//! follows the reduce-scatter it received); the last bucket goes when the stage's last layer
//! has joined. The next iteration's first forward of a layer waits for the rank's flows of its
//! bucket (ZeRO: of its all-gather).
//!
//! The flows are numbered as they are made: iteration by iteration, each iteration's passes in
//! an order that follows the stages' orders and never takes a pass before the pass it receives
//! from (`expand`'s loop), so every step and flow waits only for earlier ones.

use super::groups::Groups;
use super::layout::{Dim, Issued, Layout, Step};
use super::pipeline::{order, upstream, Pass, PipeOp};
use super::{DpMode, ParallelTrainingWorkload};
use crate::rng;
use crate::tags::{CollectiveKind, CollectiveTag};
use crate::time::SimTime;
use crate::workload::all_gather::{all_gather, reduce_scatter, GatherAlgorithm};
use crate::workload::all_reduce::{all_reduce, all_reduce_flows, AllReduceAlgorithm};
use crate::workload::all_to_all::{all_to_all, all_to_all_flows};
use crate::workload::kind::Size;
use crate::workload::layer_cost::{LayerCost, ModelCost};
use crate::workload::training::Phase;
use crate::workload::{ComputeDef, FlowDef, Workload};
use rand::RngExt;
use std::collections::BTreeMap;

/// Expands a validated workload on `hosts` hosts with `model`'s layers.
pub(super) fn expand(w: &ParallelTrainingWorkload, model: &ModelCost, hosts: u32, seed: u64) -> Workload {
    let ranks = w.hosts.expand(hosts);
    let groups = w.groups(ranks.len() as u32);
    let mut b = Builder::new(w, model, &ranks, groups, seed);
    for k in 0..w.iterations {
        b.iteration(k);
    }
    let Builder { flows, computes, layout, .. } = b;
    Workload { flows, computes, parallel_training: vec![layout], ..Workload::default() }
}

/// What [`expand`] makes, counted from the settings.
pub(super) fn size(w: &ParallelTrainingWorkload, model: &ModelCost, hosts: u32) -> Size {
    let n = w.hosts.len(hosts);
    let groups = w.groups(n as u32);
    let (tp, dp, pp, ep) = (groups.tp as u64, groups.dp as u64, groups.pp as u64, groups.ep as u64);
    let v = w.chunks_per_stage() as u64;
    let m = u64::from(w.microbatches);
    // A layer lives on one stage: its collectives run on that stage's groups, its bytes leave
    // that stage's ranks.
    let on_stage = n / pp.max(1);
    let stage_groups = |size: u64| on_stage / size.max(1);
    let (mut flows, mut bytes, mut compute) = (0u64, 0u128, SimTime::ZERO);
    for l in &model.layers {
        compute = compute + l.forward + l.input_grad + l.weight_grad;
        // Two passes per microbatch, each issuing the layer's collectives on every group.
        if tp > 1 && l.tp_bytes > 0 {
            let per = tp_flows(w, tp) * u64::from(l.tp_collectives) * stage_groups(tp);
            flows += 2 * m * per;
            let moved = if w.sequence_parallel { 2 * (tp - 1) * (l.tp_bytes / tp) } else { 2 * (tp - 1) * l.tp_bytes / tp };
            bytes += u128::from(2 * m * u64::from(l.tp_collectives) * moved) * u128::from(on_stage);
        }
        if ep > 1 && l.ep_bytes > 0 {
            flows += 2 * 2 * m * all_to_all_flows(ep, w.ep_algorithm, None) * stage_groups(ep);
            bytes += u128::from(4 * m * (ep - 1) * (l.ep_bytes / ep)) * u128::from(on_stage);
        }
    }
    // Pipeline sends: each microbatch crosses pp x v - 1 boundaries each way, from every rank
    // of a stage, unless the boundary stays on the rank (one stage).
    if pp > 1 && model.activation_bytes > 0 {
        let crossings = 2 * m * (pp * v - 1) * tp * dp;
        flows += crossings;
        bytes += u128::from(crossings) * u128::from(model.activation_bytes);
    }
    if dp > 1 {
        for s in 0..groups.pp {
            for bucket in buckets(w, model, &groups, s) {
                let size: u64 = bucket.iter().map(|&l| model.layers[l as usize].grad_bytes).sum();
                flows += dp_flows(w, dp) * tp;
                bytes += u128::from(2 * (dp - 1) * size / dp) * u128::from(tp * dp);
            }
        }
    }
    let k = u64::from(w.iterations);
    let per_rank_steps = 3 * model.layers.len() as u64 / pp.max(1) * m;
    let compute_per_rank = SimTime(compute.0 / pp.max(1) * m);
    Size {
        flows: flows.saturating_mul(k),
        bytes: bytes.saturating_mul(u128::from(k)),
        busiest_rank_bytes: bytes.saturating_mul(u128::from(k)) / u128::from(n.max(1)),
        latest_start: w.start,
        computes: per_rank_steps.saturating_mul(n).saturating_mul(k),
        compute_time: SimTime(compute_per_rank.0.saturating_mul(k)),
        iterations: k,
    }
}

/// Flows of one tensor-parallel collective on a group of `tp`.
fn tp_flows(w: &ParallelTrainingWorkload, tp: u64) -> u64 {
    match w.sequence_parallel {
        true => 2 * tp * (tp - 1),
        false => all_reduce_flows(tp, w.tp_algorithm, None),
    }
}

/// Flows of one gradient bucket on a data-parallel group of `dp`.
fn dp_flows(w: &ParallelTrainingWorkload, dp: u64) -> u64 {
    match w.dp_mode {
        DpMode::Zero => 2 * dp * (dp - 1),
        DpMode::AllReduce => all_reduce_flows(dp, w.dp_algorithm, None),
    }
}

/// The layers of stage `s`'s model chunk `chunk` (virtual stage chunk x pp + s).
fn chunk_layers(model: &ModelCost, g: &Groups, v: u32, s: u32, chunk: u32) -> std::ops::Range<u32> {
    let per = model.layers.len() as u32 / (g.pp * v);
    let virt = chunk * g.pp + s;
    virt * per..(virt + 1) * per
}

/// Stage `s`'s gradient buckets, in the order they fill: its layers in the order of their last
/// backward pass, cut where a bucket reaches `dp_bucket` bytes. Layers without gradient join
/// none.
fn buckets(w: &ParallelTrainingWorkload, model: &ModelCost, g: &Groups, s: u32) -> Vec<Vec<u32>> {
    let v = w.chunks_per_stage();
    let ops = order(w.schedule, g.pp, w.microbatches, v, s);
    // A chunk's last backward is its last microbatch's; chunks in the order those come.
    let mut last: Vec<(usize, u32)> = (0..v)
        .map(|c| (ops.iter().rposition(|o| o.chunk == c && o.pass == Pass::Backward).unwrap_or(0), c))
        .collect();
    last.sort_unstable();
    let (mut out, mut bucket, mut bytes) = (Vec::new(), Vec::new(), 0u64);
    for (_, c) in last {
        for l in chunk_layers(model, g, v, s, c).rev() {
            let grad = model.layers[l as usize].grad_bytes;
            if grad == 0 {
                continue;
            }
            bucket.push(l);
            bytes += grad;
            if bytes >= w.dp_bucket.0 {
                out.push(std::mem::take(&mut bucket));
                bytes = 0;
            }
        }
    }
    if !bucket.is_empty() {
        out.push(bucket);
    }
    out
}

/// The workload as it is made.
struct Builder<'a> {
    w: &'a ParallelTrainingWorkload,
    model: &'a ModelCost,
    g: Groups,
    /// Model chunks per stage.
    v: u32,
    hosts: &'a [u32],
    /// Rank (position) of each host that is one.
    rank_of: Vec<u32>,
    flows: Vec<FlowDef>,
    computes: Vec<ComputeDef>,
    layout: Layout,
    /// Per stage: its order of passes, its groups in each dimension, its buckets.
    orders: Vec<Vec<PipeOp>>,
    tp_groups: Vec<Vec<Vec<u32>>>,
    dp_groups: Vec<Vec<Vec<u32>>>,
    ep_groups: Vec<Vec<Vec<u32>>>,
    buckets: Vec<Vec<Vec<u32>>>,
    /// Per rank: its latest step, and the flows into it its next step must wait for.
    last_step: Vec<Option<u32>>,
    pending: Vec<Vec<u32>>,
    /// Per rank: its stragglers' slowdown, and its compute factor in the iteration being made
    /// (that times its jitter).
    slowdown: Vec<f64>,
    factor: Vec<f64>,
    jitter: Vec<rng::SimRng>,
    /// Pipeline sends made and not yet received: (receiving stage, microbatch, chunk, pass) to
    /// what each of that stage's ranks receives.
    inbox: BTreeMap<(u32, u32, u32, Pass), Vec<Waits>>,
    /// Per layer: the flows into each rank of its stage (by position in the stage) that its
    /// next forward waits for (its bucket's), and whether this iteration's first forward of it
    /// has been made.
    reduced: Vec<Vec<Waits>>,
    forwarded: Vec<bool>,
    /// Per layer: its backward passes made this iteration.
    backwards: Vec<u32>,
    /// Per stage: the buckets issued this iteration.
    issued: Vec<usize>,
    iteration: u32,
}

impl<'a> Builder<'a> {
    fn new(w: &'a ParallelTrainingWorkload, model: &'a ModelCost, hosts: &'a [u32], g: Groups, seed: u64) -> Self {
        let n = hosts.len();
        let mut rank_of = vec![u32::MAX; hosts.iter().max().map_or(0, |&h| h as usize + 1)];
        for (r, &h) in hosts.iter().enumerate() {
            rank_of[h as usize] = r as u32;
        }
        let v = w.chunks_per_stage();
        let stages = 0..g.pp;
        let per_stage = |f: fn(&Groups, u32) -> Vec<u32>| stages.clone().map(|s| g.stage_groups(s, f)).collect();
        let layers = model.layers.len();
        Builder {
            w,
            model,
            g,
            v,
            hosts,
            rank_of,
            flows: Vec::new(),
            computes: Vec::new(),
            layout: Layout {
                job: 0,
                ranks: hosts.to_vec(),
                groups: g,
                first_compute: 0,
                iterations: w.iterations,
                steps: Vec::new(),
                first_steps: Vec::new(),
                iteration_computes: Vec::new(),
                iteration_flows: Vec::new(),
                compute: Vec::new(),
                collectives: Vec::new(),
            },
            orders: stages.clone().map(|s| order(w.schedule, g.pp, w.microbatches, v, s)).collect(),
            tp_groups: per_stage(Groups::tp_group),
            dp_groups: per_stage(Groups::dp_group),
            ep_groups: per_stage(Groups::ep_group),
            buckets: stages.clone().map(|s| buckets(w, model, &g, s)).collect(),
            last_step: vec![None; n],
            pending: vec![Vec::new(); n],
            slowdown: (0..n as u32)
                .map(|r| {
                    let slow = w.stragglers.iter().filter(|s| s.ranks.expand(n as u32).contains(&r));
                    slow.map(|s| s.slowdown).product()
                })
                .collect(),
            factor: vec![1.0; n],
            jitter: (0..n as u64).map(|r| rng::stream(seed, "workload.parallel_training.jitter", r)).collect(),
            inbox: BTreeMap::new(),
            reduced: vec![Vec::new(); layers],
            forwarded: vec![false; layers],
            backwards: vec![0; layers],
            issued: vec![0; g.pp as usize],
            iteration: 0,
        }
    }

    /// Makes iteration `k`: the stages' passes, each as soon as what it receives is made.
    fn iteration(&mut self, k: u32) {
        self.iteration = k;
        let (first_compute, first_flow) = (self.computes.len() as u32, self.flows.len() as u32);
        self.draw_factors();
        self.forwarded.iter_mut().for_each(|f| *f = false);
        self.backwards.iter_mut().for_each(|b| *b = 0);
        self.issued.iter_mut().for_each(|i| *i = 0);
        let n = self.hosts.len();
        self.layout.first_steps.extend(std::iter::repeat_n(u32::MAX, n));
        let mut busy = vec![SimTime::ZERO; n];
        let mut next = vec![0usize; self.g.pp as usize];
        loop {
            let mut made = false;
            for s in 0..self.g.pp {
                while let Some(&op) = self.orders[s as usize].get(next[s as usize]) {
                    let received = upstream(self.g.pp, self.v, s, op).is_none()
                        || self.inbox.contains_key(&(s, op.microbatch, op.chunk, op.pass));
                    if !received {
                        break;
                    }
                    self.pass(s, op, &mut busy);
                    next[s as usize] += 1;
                    made = true;
                }
            }
            if !made {
                break;
            }
        }
        debug_assert!(
            (0..self.g.pp as usize).all(|s| next[s] == self.orders[s].len()),
            "every pipeline schedule runs to its end"
        );
        self.layout.iteration_computes.push(first_compute..self.computes.len() as u32);
        self.layout.iteration_flows.push(first_flow..self.flows.len() as u32);
        self.layout.compute.push(busy.into_iter().max().unwrap_or_default());
    }

    /// Each rank's compute factor for the iteration: its stragglers' slowdowns, times a draw
    /// from its own random stream (so that a rank's draws do not depend on the others').
    fn draw_factors(&mut self) {
        for r in 0..self.hosts.len() {
            let mut f = self.slowdown[r];
            if self.w.jitter > 0.0 {
                let u: f64 = self.jitter[r].random();
                f *= 1.0 - self.w.jitter + 2.0 * self.w.jitter * u;
            }
            self.factor[r] = f;
        }
    }

    /// Stage `s`'s pass `op`, on each of its ranks.
    fn pass(&mut self, s: u32, op: PipeOp, busy: &mut [SimTime]) {
        let mut received = self.inbox.remove(&(s, op.microbatch, op.chunk, op.pass));
        let layers = chunk_layers(self.model, &self.g, self.v, s, op.chunk);
        let (first, last) = (layers.start, layers.end - 1);
        match op.pass {
            Pass::Forward => {
                for l in layers {
                    let cost = self.model.layers[l as usize];
                    let mut waits = received.take().unwrap_or_default();
                    if !std::mem::replace(&mut self.forwarded[l as usize], true) {
                        let reduced = std::mem::take(&mut self.reduced[l as usize]);
                        if waits.len() < reduced.len() {
                            waits.resize(reduced.len(), Waits::default());
                        }
                        for (w, r) in waits.iter_mut().zip(reduced) {
                            w.flows.extend(r.flows);
                        }
                    }
                    self.step(s, op.microbatch, l, Phase::Forward, cost.forward, waits, true, busy);
                    self.layer_collectives(s, op.microbatch, l, &cost);
                }
                self.send(s, op, last);
            }
            Pass::Backward => {
                for l in layers.rev() {
                    let cost = self.model.layers[l as usize];
                    let waits = received.take().unwrap_or_default();
                    self.step(s, op.microbatch, l, Phase::InputGrad, cost.input_grad, waits, true, busy);
                    self.layer_collectives(s, op.microbatch, l, &cost);
                    self.step(s, op.microbatch, l, Phase::WeightGrad, cost.weight_grad, Vec::new(), false, busy);
                    self.backwards[l as usize] += 1;
                    if self.backwards[l as usize] == self.w.microbatches {
                        self.gradient_ready(s, l);
                    }
                }
                self.send(s, op, first);
            }
        }
    }

    /// One step of `phase` of `layer` on each rank of stage `s`, after the rank's step before,
    /// what it received (`waits`, per rank of the stage; empty for none) and, if `blocked`, the
    /// flows of the rank's last blocking collective.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        s: u32,
        microbatch: u32,
        layer: u32,
        phase: Phase,
        base: SimTime,
        mut waits: Vec<Waits>,
        blocked: bool,
        busy: &mut [SimTime],
    ) {
        let n = self.hosts.len();
        for (i, r) in self.g.stage_ranks(s).enumerate() {
            let ru = r as usize;
            let Waits { flows: mut after, step } = waits.get_mut(i).map(std::mem::take).unwrap_or_default();
            if blocked {
                after.append(&mut self.pending[ru]);
            }
            after.sort_unstable();
            after.dedup();
            let duration = scaled(base, self.factor[ru]);
            busy[ru] += duration;
            let id = self.computes.len() as u32;
            self.computes.push(ComputeDef {
                host: self.hosts[ru],
                duration,
                start: self.w.start,
                after,
                after_compute: self.last_step[ru].into_iter().chain(step).collect(),
            });
            self.last_step[ru] = Some(id);
            let at = self.iteration as usize * n + ru;
            if self.layout.first_steps[at] == u32::MAX {
                self.layout.first_steps[at] = id;
            }
            self.layout.steps.push(Step { rank: r, iteration: self.iteration, microbatch, layer, phase });
        }
    }

    /// Layer `l`'s blocking collectives after a compute step of stage `s`: tensor-parallel, then
    /// expert-parallel.
    fn layer_collectives(&mut self, s: u32, microbatch: u32, l: u32, cost: &LayerCost) {
        let (tp, ep) = (self.g.tp, self.g.ep);
        if tp > 1 && cost.tp_bytes > 0 {
            let groups = std::mem::take(&mut self.tp_groups[s as usize]);
            let (size, alg) = (cost.tp_bytes, self.w.tp_algorithm);
            let at = (s, Some(microbatch), l);
            for _ in 0..cost.tp_collectives {
                if self.w.sequence_parallel {
                    let gather = gather_algorithm(alg);
                    let rs = Made { kind: CollectiveKind::ReduceScatter, algorithm: gather.name(), size };
                    self.collective(&groups, Dim::Tp, rs, at, true, |h| reduce_scatter(h, size, gather, SimTime::ZERO));
                    let ag = Made { kind: CollectiveKind::AllGather, ..rs };
                    self.collective(&groups, Dim::Tp, ag, at, true, |h| all_gather(h, size, gather, SimTime::ZERO));
                } else {
                    let ar = Made { kind: CollectiveKind::AllReduce, algorithm: alg.name(), size };
                    self.collective(&groups, Dim::Tp, ar, at, true, |h| all_reduce(h, size, alg, 1, SimTime::ZERO));
                }
            }
            self.tp_groups[s as usize] = groups;
        }
        if ep > 1 && cost.ep_bytes > 0 {
            let groups = std::mem::take(&mut self.ep_groups[s as usize]);
            let (per_peer, alg) = (cost.ep_bytes / u64::from(ep), self.w.ep_algorithm);
            // Dispatch, then combine.
            for _ in 0..2 {
                let a2a = Made { kind: CollectiveKind::AllToAll, algorithm: alg.name(), size: cost.ep_bytes };
                let at = (s, Some(microbatch), l);
                self.collective(&groups, Dim::Ep, a2a, at, true, |h| all_to_all(h, per_peer, alg, 1, 1, 1, SimTime::ZERO));
            }
            self.ep_groups[s as usize] = groups;
        }
    }

    /// Layer `l` of stage `s` has its last weight gradient of the iteration: it joins its
    /// bucket, which goes if it is complete.
    fn gradient_ready(&mut self, s: u32, l: u32) {
        let su = s as usize;
        if self.g.dp < 2 {
            return;
        }
        let Some(bucket) = self.buckets[su].get(self.issued[su]) else { return };
        if bucket.last() != Some(&l) {
            return;
        }
        let bucket = bucket.clone();
        self.issued[su] += 1;
        let size: u64 = bucket.iter().map(|&b| self.model.layers[b as usize].grad_bytes).sum();
        let groups = std::mem::take(&mut self.dp_groups[su]);
        let (alg, at) = (self.w.dp_algorithm, (s, None, l));
        let into = match self.w.dp_mode {
            DpMode::AllReduce => {
                let ar = Made { kind: CollectiveKind::AllReduce, algorithm: alg.name(), size };
                self.collective(&groups, Dim::Dp, ar, at, false, |h| all_reduce(h, size, alg, 1, SimTime::ZERO))
            }
            DpMode::Zero => {
                let gather = gather_algorithm(alg);
                let rs = Made { kind: CollectiveKind::ReduceScatter, algorithm: gather.name(), size };
                let into =
                    self.collective(&groups, Dim::Dp, rs, at, false, |h| reduce_scatter(h, size, gather, SimTime::ZERO));
                // Each rank all-gathers its updated shard once its reduced shard is in.
                let saved = std::mem::replace(&mut self.pending, into);
                let ag = Made { kind: CollectiveKind::AllGather, ..rs };
                let into = self.collective(&groups, Dim::Dp, ag, at, true, |h| all_gather(h, size, gather, SimTime::ZERO));
                self.pending = saved;
                into
            }
        };
        self.dp_groups[su] = groups;
        let per_stage: Vec<Waits> =
            self.g.stage_ranks(s).map(|r| Waits { flows: into[r as usize].clone(), step: None }).collect();
        for &b in &bucket {
            self.reduced[b as usize] = per_stage.clone();
        }
    }

    /// Issues one collective on each group in `groups` (ranks), made by `make` on the group's
    /// hosts. Each rank's flows wait for its latest step and, if `blocking`, for the flows into
    /// it of its previous blocking collective; the flows into each rank then become what it
    /// waits for next. Returns, per rank (of the whole workload), the flows into it.
    fn collective(
        &mut self,
        groups: &[Vec<u32>],
        dim: Dim,
        made: Made,
        (stage, microbatch, layer): (u32, Option<u32>, u32),
        blocking: bool,
        make: impl Fn(&[u32]) -> Vec<FlowDef>,
    ) -> Vec<Vec<u32>> {
        let id = self.layout.collectives.len() as u32;
        let first = self.flows.len() as u32;
        let mut into = vec![Vec::new(); self.hosts.len()];
        for group in groups {
            let hosts: Vec<u32> = group.iter().map(|&r| self.hosts[r as usize]).collect();
            let base = self.flows.len() as u32;
            for mut f in make(&hosts) {
                let (src, dst) = (self.rank_of[f.src as usize] as usize, self.rank_of[f.dst as usize] as usize);
                f.after.iter_mut().for_each(|a| *a += base);
                if blocking {
                    f.after.extend_from_slice(&self.pending[src]);
                }
                f.after_compute = self.last_step[src].into_iter().collect();
                if let Some(tag) = &mut f.collective {
                    tag.id = id;
                }
                f.connection = Some(dim.connection());
                into[dst].push(self.flows.len() as u32);
                self.flows.push(f);
            }
        }
        if blocking {
            for group in groups {
                for &r in group {
                    self.pending[r as usize] = into[r as usize].clone();
                }
            }
        }
        let flows = first..self.flows.len() as u32;
        let group = groups.first().map_or(0, |g| g.len() as u32);
        self.layout.collectives.push(Issued {
            iteration: self.iteration,
            dim,
            kind: made.kind,
            algorithm: made.algorithm,
            size: made.size,
            group,
            stage,
            microbatch,
            layer,
            id,
            flows,
        });
        into
    }

    /// After stage `s`'s pass `op`: each rank sends its activations (or their gradient) to the
    /// same position on the next virtual stage (or the previous, backward); `layer` is the layer
    /// whose output (or input gradient) it carries.
    fn send(&mut self, s: u32, op: PipeOp, layer: u32) {
        let (pp, v) = (self.g.pp, self.v);
        let virt = op.chunk * pp + s;
        let to = match op.pass {
            Pass::Forward => Some(virt + 1).filter(|&x| x < pp * v),
            Pass::Backward => virt.checked_sub(1),
        };
        let Some(to) = to else { return };
        let (to_stage, to_chunk) = (to % pp, to / pp);
        let bytes = self.model.activation_bytes;
        // Without a flow (no bytes, or the next chunk on the same rank) the receiver waits for
        // the sender's step itself: the data dependency stays.
        let mut into: Vec<Waits> = (self.g.stage_ranks(s))
            .map(|r| Waits { flows: Vec::new(), step: self.last_step[r as usize].filter(|_| to_stage != s) })
            .collect();
        if to_stage != s && bytes > 0 {
            let id = self.layout.collectives.len() as u32;
            let first = self.flows.len() as u32;
            for (i, r) in self.g.stage_ranks(s).enumerate() {
                let ru = r as usize;
                let peer = self.g.on_stage(r, to_stage) as usize;
                into[i] = Waits { flows: vec![self.flows.len() as u32], step: None };
                self.flows.push(FlowDef {
                    src: self.hosts[ru],
                    dst: self.hosts[peer],
                    size: bytes,
                    start: SimTime::ZERO,
                    collective: Some(CollectiveTag { kind: CollectiveKind::SendRecv, group_size: 2, id }),
                    // The activations are ready once the pass's last collective is in.
                    after: self.pending[ru].clone(),
                    after_acked: Vec::new(),
                    after_compute: self.last_step[ru].into_iter().collect(),
                    stop: None,
                    connection: Some(Dim::Pp.connection()),
                    job: 0,
                });
            }
            self.layout.collectives.push(Issued {
                iteration: self.iteration,
                dim: Dim::Pp,
                kind: CollectiveKind::SendRecv,
                algorithm: "direct",
                size: bytes,
                group: 2,
                stage: s,
                microbatch: Some(op.microbatch),
                layer,
                id,
                flows: first..self.flows.len() as u32,
            });
        }
        // Positions match across stages: rank i of this stage sends to rank i of that one.
        self.inbox.insert((to_stage, op.microbatch, to_chunk, op.pass), into);
    }
}

/// A collective's description for the results.
#[derive(Clone, Copy)]
struct Made {
    kind: CollectiveKind,
    algorithm: &'static str,
    size: u64,
}

/// The reduce-scatter and all-gather schedule of an all-reduce algorithm the checks let through
/// for them (ring or direct).
fn gather_algorithm(a: AllReduceAlgorithm) -> GatherAlgorithm {
    match a {
        AllReduceAlgorithm::Direct => GatherAlgorithm::Direct,
        _ => GatherAlgorithm::Ring,
    }
}

/// `base` stretched by `factor`, to the picosecond.
fn scaled(base: SimTime, factor: f64) -> SimTime {
    if factor == 1.0 {
        return base;
    }
    SimTime((base.0 as f64 * factor).round() as u64)
}

/// What one rank's step waits for from other ranks: flows into it, or another rank's step.
#[derive(Clone, Debug, Default)]
struct Waits {
    flows: Vec<u32>,
    step: Option<u32>,
}
