//! `kind = "parallel_training"`: iterations of a model trained with tensor, pipeline, data and
//! expert parallelism, as Megatron-LM runs it: ranks grouped as Megatron-LM groups them
//! (`parallel_training/groups.rs`), microbatches through the pipeline stages in GPipe, 1F1B or
//! interleaved 1F1B order (`pipeline.rs`), expanded into compute steps and flows
//! (`schedule.rs`), with what the results need recorded as it goes (`layout.rs`).
//!
//! What each layer costs one rank is a [`ModelCost`] (`layer_cost.rs`): written here as a table
//! of layers, or made by a model preset. [`ParallelTrainingWorkload::model`] is the one place
//! that reads it from the settings.

mod groups;
mod layout;
mod pipeline;
mod schedule;

pub use groups::Groups;
pub use layout::{Dim, Issued, Layout, Step};
pub use pipeline::{order, Pass, PipeOp, PipelineSchedule};

use super::all_reduce::AllReduceAlgorithm;
use super::all_to_all::AllToAllAlgorithm;
use super::catalog::info;
use super::kind::{fail, Ranks, Size, WorkloadKind};
use super::layer_cost::{LayerCost, ModelCost};
use super::model::{self, ModelSpec};
use super::training::MAX_COMPUTE_STEPS;
use super::{CollectiveInfo, HostSet, Workload};
use crate::cc::Check;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]         # 4 ranks: 2-way tensor parallel, 2 pipeline stages
kind = "parallel_training"
hosts = "0..4"
iterations = 2
tp = 2
pp = 2
microbatches = 4
activation_bytes = "64KB"
layers = [{ forward = "20us", input_grad = "20us", weight_grad = "20us", tp_bytes = "64KB", repeat = 4 }]
"#;

/// Training iterations of a model on `hosts`, split over tp x pp x dp ranks.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ParallelTrainingWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    pub iterations: u32,
    /// When the first stage starts the first iteration.
    #[serde(default)]
    pub start: SimTime,
    /// Tensor-parallel ranks per group (consecutive ranks).
    #[serde(default = "one")]
    pub tp: u32,
    /// Pipeline stages.
    #[serde(default = "one")]
    pub pp: u32,
    /// Data-parallel ranks per group; absent: the ranks / (tp x pp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp: Option<u32>,
    /// Expert-parallel ranks per group, out of the data-parallel ranks; divides dp.
    #[serde(default = "one")]
    pub ep: u32,
    /// Microbatches per iteration.
    #[serde(default = "one")]
    pub microbatches: u32,
    #[serde(default)]
    pub schedule: PipelineSchedule,
    /// Model chunks per stage (interleaved 1F1B only).
    #[serde(default = "one")]
    pub virtual_stages: u32,
    /// Megatron-LM's sequence parallelism: each tensor-parallel all-reduce becomes a
    /// reduce-scatter and an all-gather of the same buffer.
    #[serde(default)]
    pub sequence_parallel: bool,
    #[serde(default)]
    pub dp_mode: DpMode,
    /// Gradients are reduced in buckets of at least this many bytes.
    #[serde(default = "default_bucket")]
    pub dp_bucket: ByteSize,
    #[serde(default)]
    pub tp_algorithm: AllReduceAlgorithm,
    #[serde(default)]
    pub dp_algorithm: AllReduceAlgorithm,
    #[serde(default)]
    pub ep_algorithm: AllToAllAlgorithm,
    /// Bytes one stage sends the next per microbatch, and gets back as their gradient; absent:
    /// the model's (`model`), or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_bytes: Option<ByteSize>,
    /// From the model's input to its output; see [`LayerRow`]. Give these or `model`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<LayerRow>,
    /// A model preset or its shapes and a GPU (`docs/models.md`): every layer's costs from its
    /// FLOP model. Give this or `layers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Box<ModelSpec>>,
    /// Compute times that replace those of the layers given (by their place in the whole model,
    /// from 0; with `model`, 0 is the embedding).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layer_times: Vec<LayerTimes>,
    /// Ranks that compute slower than the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stragglers: Vec<Straggler>,
    /// Each rank's compute times in each iteration are multiplied by a factor drawn uniformly
    /// from [1 - jitter, 1 + jitter] (seeded by the scenario's seed).
    #[serde(default)]
    pub jitter: f64,
}

fn one() -> u32 {
    1
}

/// PyTorch DDP's default bucket.
fn default_bucket() -> ByteSize {
    ByteSize(25_000_000)
}

/// How data parallelism reduces the gradients.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DpMode {
    /// Each bucket is all-reduced (DDP, Megatron-LM's default).
    #[default]
    AllReduce,
    /// ZeRO (stages 1 and 2): each bucket is reduce-scattered, each rank updates its shard, and
    /// the updated parameters are all-gathered.
    Zero,
}

/// One row of the layer table: a layer's costs (`layer_cost.rs` defines each), written once for
/// `repeat` identical layers.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerRow {
    pub forward: SimTime,
    pub input_grad: SimTime,
    pub weight_grad: SimTime,
    #[serde(default = "two")]
    pub tp_collectives: u32,
    #[serde(default)]
    pub tp_bytes: ByteSize,
    #[serde(default)]
    pub ep_bytes: ByteSize,
    #[serde(default)]
    pub grad_bytes: ByteSize,
    #[serde(default = "one")]
    pub repeat: u32,
}

fn two() -> u32 {
    2
}

/// Compute times given for some of the model's layers, over what the model or layer table says.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerTimes {
    /// The layers (places in the model, from 0), as a list or a range.
    pub layers: HostSet,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward: Option<SimTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_grad: Option<SimTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_grad: Option<SimTime>,
}

/// Ranks whose compute takes `slowdown` times as long.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Straggler {
    /// Ranks (positions in `hosts`, from 0), as a list or a range.
    pub ranks: HostSet,
    pub slowdown: f64,
}

impl ParallelTrainingWorkload {
    /// The model the settings describe: the model's costs (`model`) or the layer table, with
    /// `layer_times` and `activation_bytes` over them. Only for settings that passed `check`.
    pub fn model(&self) -> ModelCost {
        let mut cost = match &self.model {
            Some(spec) => model::cost(spec, self.tp, self.ep).expect("the checks built the model"),
            None => self.table(),
        };
        if let Some(bytes) = self.activation_bytes {
            cost.activation_bytes = bytes.0;
        }
        let n = cost.layers.len() as u32;
        for times in &self.layer_times {
            for l in times.layers.expand(n) {
                let layer = &mut cost.layers[l as usize];
                layer.forward = times.forward.unwrap_or(layer.forward);
                layer.input_grad = times.input_grad.unwrap_or(layer.input_grad);
                layer.weight_grad = times.weight_grad.unwrap_or(layer.weight_grad);
            }
        }
        cost
    }

    /// The layer table's model.
    fn table(&self) -> ModelCost {
        let layers = (self.layers.iter())
            .flat_map(|row| {
                let cost = LayerCost {
                    forward: row.forward,
                    input_grad: row.input_grad,
                    weight_grad: row.weight_grad,
                    tp_collectives: row.tp_collectives,
                    tp_bytes: row.tp_bytes.0,
                    ep_bytes: row.ep_bytes.0,
                    grad_bytes: row.grad_bytes.0,
                };
                std::iter::repeat_n(cost, row.repeat as usize)
            })
            .collect();
        ModelCost { layers, activation_bytes: 0 }
    }

    /// Layers in the model, counted without building its table (a model's are its
    /// transformer layers, its embedding and its output layer).
    fn layer_count(&self) -> u64 {
        match &self.model {
            Some(spec) => spec.resolved().map_or(0, |m| u64::from(m.layers) + 2),
            None => self.layers.iter().map(|l| u64::from(l.repeat)).sum(),
        }
    }

    /// Exactly one of `layers` and `model`, a model that builds, and `layer_times` that name
    /// layers of it.
    fn check_model(&self) -> Check {
        match (&self.model, self.layers.is_empty()) {
            (Some(_), false) => {
                return fail("workload.model", "give the model's layers as a table (layers) or as a model (model), not both");
            }
            (None, true) => {
                return fail(
                    "workload.layers",
                    "the model has no layers; add at least one [[workload.layers]] with forward, input_grad and weight_grad, or a [workload.model] (docs/models.md)",
                );
            }
            (Some(spec), true) => {
                model::cost(spec, self.tp.max(1), self.ep.max(1))?;
            }
            (None, false) => {}
        }
        let n = self.layer_count() as u32;
        for (i, t) in self.layer_times.iter().enumerate() {
            let key = format!("workload.layer_times[{i}].layers");
            t.layers.members(n, "layer", "the model has layers").map_err(|m| (key.clone(), m))?;
            if t.forward.is_none() && t.input_grad.is_none() && t.weight_grad.is_none() {
                return fail(format!("workload.layer_times[{i}]"), "gives no time: add forward, input_grad or weight_grad");
            }
        }
        Ok(())
    }

    /// Model chunks per stage.
    fn chunks_per_stage(&self) -> u32 {
        match self.schedule {
            PipelineSchedule::Interleaved1F1B => self.virtual_stages,
            _ => 1,
        }
    }

    /// The groups on `n` ranks; only for settings that passed the checks.
    pub fn groups(&self, n: u32) -> Groups {
        let dp = self.dp.unwrap_or(n / (self.tp * self.pp).max(1));
        Groups { tp: self.tp, pp: self.pp, dp, ep: self.ep }
    }

    /// `aiccsim validate`'s lines on the resolved groups, where rank r of the job (or of the
    /// `[workload]`) runs on fabric host `job_hosts[r]`.
    pub fn describe_groups(&self, job_hosts: &[u32]) -> String {
        let hosts = self.fabric_hosts(job_hosts);
        self.groups(hosts.len() as u32).describe(&hosts)
    }

    /// A warning when a tensor-parallel group spans servers of `per_server` GPUs (its
    /// all-reduces, every layer and microbatch, then cross the fabric instead of NVLink), where
    /// rank r of the job runs on fabric host `job_hosts[r]`.
    pub fn tp_warning(&self, job_hosts: &[u32], per_server: u32) -> Option<String> {
        let hosts = self.fabric_hosts(job_hosts);
        let (tp, server) = (self.tp as usize, |h: u32| h / per_server.max(1));
        let split = hosts.chunks(tp).find(|g| g.iter().any(|&h| server(h) != server(g[0])))?;
        Some(format!(
            "the tensor-parallel group on hosts {split:?} spans servers of {per_server} GPUs: its all-reduces, two per layer, microbatch and pass, cross the fabric; use a tp that divides the {per_server} GPUs of a server, or hosts whose groups of {tp} sit on one server"
        ))
    }

    /// The fabric hosts of the workload's ranks, in rank order: its `hosts` are ranks of the
    /// job, which runs rank r on `job_hosts[r]`.
    fn fabric_hosts(&self, job_hosts: &[u32]) -> Vec<u32> {
        let ranks = self.hosts.expand(job_hosts.len() as u32);
        ranks.iter().map(|&r| job_hosts.get(r as usize).copied().unwrap_or(r)).collect()
    }
}

impl WorkloadKind for ParallelTrainingWorkload {
    fn check(&self) -> Check {
        if self.iterations == 0 {
            return fail("workload.iterations", "must be at least 1");
        }
        if self.microbatches == 0 {
            return fail("workload.microbatches", "must be at least 1 (the microbatches of one iteration)");
        }
        for (key, v) in [("tp", self.tp), ("pp", self.pp), ("ep", self.ep), ("virtual_stages", self.virtual_stages)] {
            if v == 0 {
                return fail(format!("workload.{key}"), "must be at least 1 (1: not split in this dimension)");
            }
        }
        if self.dp == Some(0) {
            return fail("workload.dp", "must be at least 1, or left out for ranks / (tp x pp)");
        }
        self.check_model()?;
        for (i, row) in self.layers.iter().enumerate() {
            if row.repeat == 0 {
                return fail(format!("workload.layers[{i}].repeat"), "must be at least 1 (the number of such layers)");
            }
        }
        self.check_schedule()?;
        let plain = |a: AllReduceAlgorithm| matches!(a, AllReduceAlgorithm::Ring | AllReduceAlgorithm::Direct);
        for (key, a, split) in [
            ("tp_algorithm", self.tp_algorithm, self.sequence_parallel),
            ("dp_algorithm", self.dp_algorithm, self.dp_mode == DpMode::Zero),
        ] {
            if a == AllReduceAlgorithm::Hierarchical {
                return fail(
                    format!("workload.{key}"),
                    "hierarchical needs groups of consecutive ranks on each server, which a parallel dimension's groups are not; use ring, direct or halving_doubling",
                );
            }
            if split && !plain(a) {
                let why = if key == "tp_algorithm" { "sequence_parallel" } else { "dp_mode = \"zero\"" };
                return fail(
                    format!("workload.{key}"),
                    format!("{why} reduce-scatters and all-gathers, which run ring or direct; use one of those"),
                );
            }
        }
        if self.ep_algorithm == AllToAllAlgorithm::Hierarchical {
            return fail(
                "workload.ep_algorithm",
                "hierarchical needs groups of consecutive ranks on each server, which expert-parallel groups are not; use direct or pairwise",
            );
        }
        if self.dp_bucket.0 == 0 {
            return fail("workload.dp_bucket", "must be at least 1 byte (1B: a bucket per layer)");
        }
        if !(0.0..1.0).contains(&self.jitter) {
            return fail("workload.jitter", format!("{} is outside [0, 1): a compute factor must stay positive", self.jitter));
        }
        for (i, s) in self.stragglers.iter().enumerate() {
            if !(s.slowdown.is_finite() && s.slowdown > 0.0) {
                return fail(
                    format!("workload.stragglers[{i}].slowdown"),
                    format!("{} is not a positive factor (1.5: compute takes 50% longer)", s.slowdown),
                );
            }
        }
        Ok(())
    }

    fn check_ranks(&self, ranks: &Ranks) -> Check {
        ranks.set("workload.hosts", &self.hosts, 1)?;
        let n = self.hosts.len(ranks.n);
        let (tp, pp) = (u64::from(self.tp), u64::from(self.pp));
        let dp = match self.dp {
            Some(dp) if tp * pp * u64::from(dp) != n => {
                return fail(
                    "workload.dp",
                    format!(
                        "tp x pp x dp = {tp} x {pp} x {dp} = {} but the workload has {n} ranks; set dp = {} or leave it out (ranks / (tp x pp)), or change tp or pp",
                        tp * pp * u64::from(dp),
                        n / (tp * pp).max(1)
                    ),
                );
            }
            Some(dp) => u64::from(dp),
            None if !n.is_multiple_of(tp * pp) => {
                return fail(
                    "workload.tp",
                    format!("tp x pp = {tp} x {pp} = {} does not divide the {n} ranks; choose tp and pp whose product divides {n}", tp * pp),
                );
            }
            None => n / (tp * pp),
        };
        if !dp.is_multiple_of(u64::from(self.ep)) {
            return fail(
                "workload.ep",
                format!("expert-parallel groups are carved out of the {dp} data-parallel ranks, so ep must divide dp, got ep = {}; use a divisor of {dp}", self.ep),
            );
        }
        for (i, s) in self.stragglers.iter().enumerate() {
            let within = Ranks::new(n as u32, "rank", "the workload has ranks");
            within.set(&format!("workload.stragglers[{i}].ranks"), &s.ranks, 1)?;
        }
        for (key, a, size) in [("tp_algorithm", self.tp_algorithm, tp), ("dp_algorithm", self.dp_algorithm, dp)] {
            if a == AllReduceAlgorithm::HalvingDoubling && !size.is_power_of_two() {
                return fail(
                    format!("workload.{key}"),
                    format!("halving_doubling needs a power-of-two group, got {size} ranks; use ring or direct"),
                );
            }
        }
        self.check_sizes(tp, dp)?;
        let steps = self.size(ranks.n).computes;
        if steps > MAX_COMPUTE_STEPS {
            return fail(
                "workload.iterations",
                format!(
                    "makes {steps} compute steps (3 per layer, microbatch, rank and iteration), more than the {MAX_COMPUTE_STEPS} aiccsim runs in one scenario; lower iterations or microbatches, or use fewer layers or ranks"
                ),
            );
        }
        Ok(())
    }

    fn size(&self, ranks: u32) -> Size {
        schedule::size(self, &self.model(), ranks)
    }

    fn expand(&self, ranks: u32, seed: u64) -> Workload {
        schedule::expand(self, &self.model(), ranks, seed)
    }

    fn collectives(&self, _ranks: u32, made: &Workload) -> Vec<CollectiveInfo> {
        let Some(layout) = made.parallel_training.first() else { return Vec::new() };
        let infos = layout.collectives.iter().map(|c| info(c.kind, c.id, c.algorithm, c.size, u64::from(c.group)));
        infos.collect()
    }

    fn too_many_flows(&self) -> (&'static str, &'static str) {
        ("iterations", "lower iterations or microbatches, or use fewer ranks")
    }
}

impl ParallelTrainingWorkload {
    /// The schedule's own rules: virtual stages with the interleaved schedule only, layers that
    /// split evenly over the (virtual) stages, Megatron-LM's microbatch rule for interleaving.
    fn check_schedule(&self) -> Check {
        let (pp, v, m) = (self.pp, self.virtual_stages, self.microbatches);
        let interleaved = self.schedule == PipelineSchedule::Interleaved1F1B;
        if v > 1 && !interleaved {
            return fail(
                "workload.virtual_stages",
                format!("{v} model chunks per stage need schedule = \"interleaved_1f1b\"; {} runs one chunk per stage", self.schedule.name()),
            );
        }
        if interleaved && v < 2 {
            return fail(
                "workload.virtual_stages",
                "interleaved_1f1b needs at least 2 model chunks per stage; set virtual_stages, or use schedule = \"1f1b\"",
            );
        }
        if interleaved && !m.is_multiple_of(pp) {
            return fail(
                "workload.microbatches",
                format!("interleaved_1f1b runs microbatches in groups of pp (as Megatron-LM requires), so microbatches must be a multiple of pp = {pp}, got {m}; use {} or {}", (m / pp).max(1) * pp, (m / pp + 1) * pp),
            );
        }
        let (layers, parts) = (self.layer_count(), u64::from(pp) * u64::from(v));
        if !layers.is_multiple_of(parts) {
            let split = if v > 1 { format!("pp x virtual_stages = {pp} x {v} = {parts}") } else { format!("pp = {pp}") };
            return fail(
                "workload.layers",
                format!("{layers} layers do not split evenly over {split} (virtual) stages; use a multiple of {parts} layers (repeat), or another pp"),
            );
        }
        Ok(())
    }

    /// Each collective's buffer splits into its group's pieces of at least a byte.
    fn check_sizes(&self, tp: u64, dp: u64) -> Check {
        for (i, row) in self.layers.iter().enumerate() {
            let key = |k: &str| format!("workload.layers[{i}].{k}");
            let fits = |size: ByteSize, n: u64| size.0 == 0 || n < 2 || size.0 >= n;
            if !fits(row.tp_bytes, tp) {
                return fail(key("tp_bytes"), format!("{} cannot be split among tp = {tp} ranks; raise it, or \"0B\" for no tensor-parallel collectives", row.tp_bytes));
            }
            if !fits(row.ep_bytes, u64::from(self.ep)) {
                return fail(key("ep_bytes"), format!("{} cannot be spread over ep = {} ranks; raise it, or \"0B\" for a dense layer", row.ep_bytes, self.ep));
            }
            if !fits(row.grad_bytes, dp) {
                return fail(key("grad_bytes"), format!("{} cannot be split among dp = {dp} ranks; raise it, or \"0B\" for a layer without weights", row.grad_bytes));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::CollectiveKind;
    use crate::workload::WorkloadConfig;

    /// GPT-3 13B's shapes with 4 transformer layers: 6 layers with the embedding and output.
    const MODEL: &str = "model = { preset = \"gpt3-13b\", layers = 4, gpu = { tflops = 989 } }";

    #[test]
    fn a_model_gives_the_layers_and_layer_times_replace_their_times() {
        let w = parse(&format!("tp = 2\npp = 2\n{MODEL}\nlayer_times = [{{ layers = \"1..3\", forward = \"7us\" }}]"));
        checked(&w, 8).unwrap();
        let spec = w.model.clone().unwrap();
        let mut expected = model::cost(&spec, 2, 1).unwrap();
        for l in &mut expected.layers[1..3] {
            l.forward = SimTime::from_us(7);
        }
        let cost = w.model();
        assert_eq!(cost, expected);
        assert_eq!(cost.layers.len(), 6);
        assert!(cost.activation_bytes > 0 && cost.layers[3].forward > SimTime::from_us(7));
        // An explicit activation size replaces the model's.
        let w = parse(&format!("tp = 2\npp = 2\nactivation_bytes = \"1KB\"\n{MODEL}"));
        assert_eq!(w.model().activation_bytes, 1000);
    }

    fn parse(body: &str) -> ParallelTrainingWorkload {
        let text = format!("kind = \"parallel_training\"\niterations = 2\n{body}");
        match toml::from_str::<WorkloadConfig>(&text).unwrap_or_else(|e| panic!("{e}")) {
            WorkloadConfig::ParallelTraining(w) => w,
            other => panic!("{other:?}"),
        }
    }

    /// Its checks, on `ranks` ranks.
    fn checked(w: &ParallelTrainingWorkload, ranks: u32) -> Check {
        w.check()?;
        w.check_ranks(&Ranks::new(ranks, "host", "the topology has hosts"))
    }

    const LAYER: &str = r#"forward = "10us", input_grad = "10us", weight_grad = "10us""#;

    #[test]
    fn the_counted_size_is_what_expand_makes() {
        let dense = format!("layers = [{{ {LAYER}, tp_bytes = \"64KB\", grad_bytes = \"3MB\", repeat = 8 }}]");
        let moe = format!("layers = [{{ {LAYER}, tp_bytes = \"64KB\", ep_bytes = \"40KB\", grad_bytes = \"1MB\", repeat = 4 }}, {{ {LAYER}, grad_bytes = \"2MB\", repeat = 4 }}]");
        let cases = [
            (16, format!("tp = 2\npp = 2\nmicrobatches = 4\nactivation_bytes = \"1MB\"\n{dense}")),
            (16, format!("tp = 2\npp = 2\nmicrobatches = 4\nsequence_parallel = true\ndp_mode = \"zero\"\ndp_bucket = \"5MB\"\nactivation_bytes = \"1MB\"\n{dense}")),
            (16, format!("tp = 2\npp = 2\nmicrobatches = 4\nschedule = \"interleaved_1f1b\"\nvirtual_stages = 2\ntp_algorithm = \"halving_doubling\"\ndp_algorithm = \"direct\"\nactivation_bytes = \"1MB\"\n{dense}")),
            (16, format!("pp = 2\nep = 4\nmicrobatches = 3\nschedule = \"gpipe\"\nep_algorithm = \"pairwise\"\nactivation_bytes = \"1KB\"\n{moe}")),
            (12, format!("tp = 3\npp = 4\nmicrobatches = 5\nactivation_bytes = \"0B\"\n{dense}")),
        ];
        for (ranks, body) in cases {
            let w = parse(&body);
            checked(&w, ranks).unwrap_or_else(|e| panic!("{body}: {e:?}"));
            let (size, made) = (w.size(ranks), w.expand(ranks, 7));
            assert_eq!(size.flows, made.flows.len() as u64, "{body}");
            assert_eq!(size.computes, made.computes.len() as u64, "{body}");
            let layout = &made.parallel_training[0];
            assert_eq!(layout.steps.len(), made.computes.len());
            // Every dependency points back, and every collective's flows carry its id.
            for (i, f) in made.flows.iter().enumerate() {
                assert!(f.after.iter().all(|&a| (a as usize) < i), "{body}: flow {i} waits for a later flow");
            }
            for c in &layout.collectives {
                let flows = &made.flows[c.flows.start as usize..c.flows.end as usize];
                assert!(flows.iter().all(|f| f.collective.unwrap().id == c.id && f.connection == Some(c.dim.connection())));
            }
            for (i, c) in made.computes.iter().enumerate() {
                assert!(c.after_compute.iter().all(|&a| (a as usize) < i), "{body}: step {i} waits for a later step");
                let step = layout.step(i as u32);
                assert_eq!(c.host, layout.ranks[step.rank as usize]);
            }
        }
    }

    #[test]
    fn each_dimension_uses_its_groups() {
        // 8 ranks: tp 2, pp 2, dp 2; one TP all-reduce per pass, 2 layers per stage.
        let w = parse(&format!(
            "tp = 2\npp = 2\nmicrobatches = 2\nactivation_bytes = \"1KB\"\nlayers = [{{ {LAYER}, tp_collectives = 1, tp_bytes = \"8KB\", grad_bytes = \"4KB\", repeat = 4 }}]"
        ));
        let made = w.expand(8, 1);
        let layout = &made.parallel_training[0];
        for c in &layout.collectives {
            for f in &made.flows[c.flows.start as usize..c.flows.end as usize] {
                let g = layout.groups;
                let (a, b) = (f.src, f.dst);
                match c.dim {
                    Dim::Tp => assert!(a / 2 == b / 2, "{c:?}: {a} -> {b}"),
                    Dim::Dp => assert!(a % 2 == b % 2 && g.stage(a) == g.stage(b) && a != b, "{c:?}: {a} -> {b}"),
                    Dim::Pp => assert_eq!(a % 4, b % 4, "{c:?}: {a} -> {b}"),
                    Dim::Ep => panic!("no expert parallelism here"),
                }
                assert_eq!(g.stage(a), c.stage, "issued on its stage");
            }
        }
        // Per iteration: TP 2 passes x 2 microbatches x 4 layers x 2 groups per stage = 32
        // all-reduces; PP 2 microbatches x 2 passes = 4 sends; DP one bucket per stage.
        let count = |dim| layout.collectives.iter().filter(|c| c.dim == dim && c.iteration == 0).count();
        assert_eq!((count(Dim::Tp), count(Dim::Pp), count(Dim::Dp)), (16, 4, 2));
        assert!(layout.collectives.iter().all(|c| c.dim != Dim::Tp || c.kind == CollectiveKind::AllReduce));
        // Sequence parallelism: a reduce-scatter and an all-gather in place of each all-reduce.
        let sp = parse(&format!(
            "tp = 2\npp = 2\nmicrobatches = 2\nsequence_parallel = true\nlayers = [{{ {LAYER}, tp_collectives = 1, tp_bytes = \"8KB\", repeat = 4 }}]"
        ));
        let made = sp.expand(8, 1);
        let kinds: Vec<CollectiveKind> = made.parallel_training[0].collectives.iter().take(2).map(|c| c.kind).collect();
        assert_eq!(kinds, [CollectiveKind::ReduceScatter, CollectiveKind::AllGather]);
    }

    #[test]
    fn bad_settings_name_their_key_and_the_fix() {
        let layers = |n: u32| format!("layers = [{{ {LAYER}, repeat = {n} }}]");
        let cases = [
            (8, format!("tp = 2\npp = 2\ndp = 3\n{}", layers(4)), "workload.dp", "set dp = 2"),
            (8, format!("tp = 3\n{}", layers(4)), "workload.tp", "does not divide the 8 ranks"),
            (8, format!("tp = 2\nep = 3\n{}", layers(4)), "workload.ep", "ep must divide dp"),
            (8, format!("pp = 4\n{}", layers(6)), "workload.layers", "multiple of 4 layers"),
            (
                8,
                format!("pp = 2\nschedule = \"interleaved_1f1b\"\nvirtual_stages = 2\nmicrobatches = 3\n{}", layers(8)),
                "workload.microbatches",
                "multiple of pp = 2",
            ),
            (
                8,
                format!("pp = 2\nschedule = \"interleaved_1f1b\"\nvirtual_stages = 3\nmicrobatches = 4\n{}", layers(8)),
                "workload.layers",
                "pp x virtual_stages = 2 x 3 = 6",
            ),
            (8, format!("microbatches = 0\n{}", layers(4)), "workload.microbatches", "at least 1"),
            (8, format!("virtual_stages = 2\n{}", layers(4)), "workload.virtual_stages", "interleaved_1f1b"),
            (8, format!("jitter = 1.5\n{}", layers(4)), "workload.jitter", "outside [0, 1)"),
            (8, format!("stragglers = [{{ ranks = [9], slowdown = 2.0 }}]\n{}", layers(4)), "workload.stragglers[0].ranks", "rank 9"),
            (8, format!("sequence_parallel = true\ntp = 2\ntp_algorithm = \"halving_doubling\"\n{}", layers(4)), "workload.tp_algorithm", "ring or direct"),
            (8, format!("{MODEL}\n{}", layers(4)), "workload.model", "not both"),
            (8, String::from("pp = 2"), "workload.layers", "[workload.model]"),
            (8, format!("pp = 4\n{MODEL}"), "workload.layers", "6 layers do not split evenly"),
            (8, format!("tp = 3\n{MODEL}"), "workload.tp", "does not divide"),
            (8, format!("{MODEL}\nlayer_times = [{{ layers = [6], forward = \"1us\" }}]"), "workload.layer_times[0].layers", "layer 6 does not exist"),
            (8, format!("{MODEL}\nlayer_times = [{{ layers = [1] }}]"), "workload.layer_times[0]", "gives no time"),
        ];
        for (ranks, body, key, says) in cases {
            let (k, msg) = checked(&parse(&body), ranks).expect_err(&body);
            assert_eq!(k, key, "{body}: {msg}");
            assert!(msg.contains(says), "{body}: {msg}");
        }
    }

    #[test]
    fn a_tensor_parallel_group_across_servers_is_warned_about() {
        let w = parse(&format!("tp = 4\nlayers = [{{ {LAYER} }}]"));
        let all: Vec<u32> = (0..16).collect();
        assert_eq!(w.tp_warning(&all, 8), None);
        let warning = w.tp_warning(&all, 2).unwrap();
        assert!(warning.contains("[0, 1, 2, 3] spans servers of 2 GPUs"), "{warning}");
        // A job's ranks are its own: ranks 0-3 on hosts 4-7 sit on one server of 4 GPUs, on
        // hosts 2-5 they span two, named by fabric host.
        let on_one: Vec<u32> = (4..20).collect();
        assert_eq!(w.tp_warning(&on_one, 4), None);
        let across: Vec<u32> = (2..18).collect();
        let warning = w.tp_warning(&across, 4).unwrap();
        assert!(warning.contains("[2, 3, 4, 5] spans servers of 4 GPUs"), "{warning}");
        assert!(w.describe_groups(&across).contains("# tp = 4: 4 groups, the first on hosts [2, 3, 4, 5]"));
    }
}
