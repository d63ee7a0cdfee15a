//! A transformer model's cost per layer, rank and microbatch, from its shapes, its tensor- and
//! expert-parallel split and a GPU's throughput: the [`ModelCost`] a parallel training workload
//! schedules.
//!
//! A scenario's `[workload.model]` table is a [`ModelSpec`]: a `preset` (`presets.rs`) and any
//! shape key over it. [`ModelSpec::resolved`] fills in the preset and the defaults and checks
//! the result, a [`Model`]; [`Model::cost`] splits it over `tp` and `ep` ranks. The FLOPs of each
//! layer are `flops.rs`'s model (Narayanan et al., SC '21); a compute time is those FLOPs over
//! the GPU's `tflops` x `efficiency`. docs/models.md walks through it with GPT-3 13B.
//!
//! The layers, from input to output: the embedding (no compute; its table's gradient), the
//! transformer layers, and the output layer (the logits' product; its table's gradient unless it
//! is tied to the embedding's).
//!
//! Sizes per rank, as Megatron-LM partitions the model:
//! - `tp_bytes`: one microbatch's activations, micro-batch x sequence x hidden x bytes per
//!   element, the buffer of each tensor-parallel collective: 2 per pass in a transformer layer
//!   (after attention and after the MLP), 1 in the embedding (its vocabulary-parallel lookup is
//!   all-reduced in the forward pass) and 1 in the output layer (its input's gradient is
//!   all-reduced in the backward pass). `LayerCost` gives both passes as many collectives, so the
//!   schedule adds one the embedding's backward and the output layer's forward do not make.
//!   Nothing and 0 bytes with tp = 1.
//! - `ep_bytes`: the tokens a rank routes, micro-batch x sequence x `top_k` x hidden x bytes per
//!   element, over tp: Megatron-Core runs tensor and expert parallelism together only with
//!   sequence parallelism, so each tensor-parallel rank routes its 1/tp of the sequence (and the
//!   experts are split over the same tp ranks; the tensor-parallel exchange of the routed tokens
//!   is taken to be the layer's ordinary tp collectives). 0 in dense layers and with ep = 1.
//! - `grad_bytes`: the layer's weights on the rank x `grad_bytes_per_element`: 1/tp of each
//!   matrix, experts/ep of the experts, the whole router; the embedding and output tables padded
//!   as Megatron pads them (`flops.rs`). Expert weights' gradients are reduced over Megatron's
//!   expert-data-parallel group, which is smaller than the data-parallel group; the schedule
//!   decides which group reduces them. A tied output table's gradient is counted once, in the
//!   embedding (Megatron with pp > 1 keeps a copy on the last stage and all-reduces the two,
//!   which is left out).
//! - `activation_bytes`: one microbatch's activations over tp: what each rank of a stage sends
//!   the next, with Megatron's scatter/gather optimisation (Narayanan et al., section 4.1) or
//!   sequence parallelism, which both send 1/tp per rank (the all-gather over NVLink on the
//!   receiving side is left out).

mod flops;
mod presets;

pub use flops::LayerFlops;
pub use presets::{preset, PRESETS};

use super::layer_cost::{LayerCost, ModelCost};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// Transformer layers in one model at most: the schedule makes steps for each, and the largest
/// published models have a few hundred.
pub const MAX_LAYERS: u32 = 1 << 16;

/// A scenario's `[workload.model]` table: a preset, shape keys over it, training choices and
/// the GPU. Every key is optional here; [`ModelSpec::resolved`] says which are required.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// One of [`PRESETS`]: its shapes are the defaults of the shape keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Model dimension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<u32>,
    /// Transformer layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<u32>,
    /// Attention (query) heads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heads: Option<u32>,
    /// Key/value heads (grouped-query attention). Default: `heads`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_heads: Option<u32>,
    /// The MLP's inner width (each expert's). Default: 4 x `hidden`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ffn_hidden: Option<u32>,
    /// Vocabulary (before Megatron's padding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<u32>,
    /// Experts per mixture-of-experts layer; 0 or 1 (the default): a dense model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experts: Option<u32>,
    /// Experts each token goes to. Required with `experts` above 1 (unless a preset gives it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// Every `moe_every`-th layer, from the first, is a mixture of experts. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe_every: Option<u32>,
    /// Tokens per sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_len: Option<u32>,
    /// Sequences per microbatch. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_batch: Option<u32>,
    /// Bytes of an activation or weight. Default 2 (bf16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_element: Option<u32>,
    /// Bytes of a gradient as data parallelism reduces it. Default 4: Megatron-LM trains bf16
    /// with gradients accumulated and all-reduced in fp32 unless `--grad-reduce-in-bf16` is given
    /// (then 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grad_bytes_per_element: Option<u32>,
    /// The MLP: `"gelu"` (two matrices, GPT) or `"swiglu"` (three, Llama and Mixtral). Default
    /// `"gelu"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mlp: Option<Mlp>,
    /// The output layer shares the embedding's table. Default true (Megatron-LM's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tie_embeddings: Option<bool>,
    /// Activation recomputation. Default `"none"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recompute: Option<Recompute>,
    /// The GPU every rank computes on. Required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Gpu>,
}

/// The MLP of a transformer layer (of each expert).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mlp {
    /// Up- and down-projection around a GELU: 2 matrices.
    Gelu,
    /// Gate, up and down projections: 3 matrices.
    Swiglu,
}

/// What the backward pass computes again of the forward pass, to keep fewer activations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Recompute {
    #[default]
    None,
    /// The attention core (Megatron-LM's `--recompute-granularity selective`).
    Selective,
    /// The whole layer's forward pass (`--recompute-granularity full`).
    Full,
}

/// A GPU's throughput.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// Peak dense throughput for the element type, in TFLOPS (10^12 FLOP/s): an H100 SXM's BF16
    /// tensor cores 989 (NVIDIA's H100 datasheet; 1979 is with sparsity), an A100's 312.
    pub tflops: f64,
    /// The fraction of the peak that the layers' products reach. Default 0.4: Llama 3 was trained
    /// at 38% to 43% BF16 model-FLOPs utilisation on 8192 to 16384 H100s ("The Llama 3 Herd of
    /// Models", Table 4).
    #[serde(default = "default_efficiency")]
    pub efficiency: f64,
}

fn default_efficiency() -> f64 {
    0.4
}

impl Gpu {
    /// An H100 SXM in BF16 at the default efficiency.
    pub fn h100() -> Gpu {
        Gpu { tflops: 989.0, efficiency: default_efficiency() }
    }

    /// FLOP/s it sustains.
    pub fn flops_per_second(&self) -> f64 {
        self.tflops * 1e12 * self.efficiency
    }

    /// Time to compute `flops`, to the picosecond.
    pub fn time(&self, flops: f64) -> SimTime {
        SimTime::from_secs_f64(flops / self.flops_per_second())
    }
}

/// A resolved model: every key known and checked on its own ([`ModelSpec::resolved`]); the
/// parallel split is checked by [`Model::cost`].
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub hidden: u32,
    pub layers: u32,
    pub heads: u32,
    pub kv_heads: u32,
    pub ffn_hidden: u32,
    pub vocab: u32,
    /// 1 for a dense model.
    pub experts: u32,
    pub top_k: u32,
    pub moe_every: u32,
    pub seq_len: u32,
    pub micro_batch: u32,
    pub bytes_per_element: u32,
    pub grad_bytes_per_element: u32,
    pub mlp: Mlp,
    pub tie_embeddings: bool,
    pub recompute: Recompute,
    pub gpu: Gpu,
}

/// The failure of a check: the key and what is wrong.
type Failure = (String, String);

/// `workload.model.KEY`.
fn key(name: &str) -> String {
    format!("workload.model.{name}")
}

fn fail<T>(key: impl Into<String>, msg: impl Into<String>) -> Result<T, Failure> {
    Err((key.into(), msg.into()))
}

impl ModelSpec {
    /// Each key of `self`, or `base`'s where `self` leaves it out.
    fn over(&self, base: &ModelSpec) -> ModelSpec {
        ModelSpec {
            preset: self.preset.clone().or_else(|| base.preset.clone()),
            hidden: self.hidden.or(base.hidden),
            layers: self.layers.or(base.layers),
            heads: self.heads.or(base.heads),
            kv_heads: self.kv_heads.or(base.kv_heads),
            ffn_hidden: self.ffn_hidden.or(base.ffn_hidden),
            vocab: self.vocab.or(base.vocab),
            experts: self.experts.or(base.experts),
            top_k: self.top_k.or(base.top_k),
            moe_every: self.moe_every.or(base.moe_every),
            seq_len: self.seq_len.or(base.seq_len),
            micro_batch: self.micro_batch.or(base.micro_batch),
            bytes_per_element: self.bytes_per_element.or(base.bytes_per_element),
            grad_bytes_per_element: self.grad_bytes_per_element.or(base.grad_bytes_per_element),
            mlp: self.mlp.or(base.mlp),
            tie_embeddings: self.tie_embeddings.or(base.tie_embeddings),
            recompute: self.recompute.or(base.recompute),
            gpu: self.gpu.or(base.gpu),
        }
    }

    /// The model: the preset's shapes under the keys given, the defaults for the rest, checked.
    /// Fails, naming the key, on an unknown preset, a required key left out (`hidden`, `layers`,
    /// `heads`, `vocab`, `seq_len` without a preset; `top_k` for experts; `gpu`), a size of 0,
    /// heads that do not split `hidden` or into `kv_heads` groups, `top_k` above `experts`, more
    /// than [`MAX_LAYERS`] layers, or a GPU throughput that is not positive.
    pub fn resolved(&self) -> Result<Model, Failure> {
        let base = match &self.preset {
            None => ModelSpec::default(),
            Some(name) => match preset(name) {
                Some(p) => p,
                None => return fail(key("preset"), format!("unknown preset {name:?}; known: {}", PRESETS.join(", "))),
            },
        };
        let s = self.over(&base);
        let required = |value: Option<u32>, name: &str| match value {
            Some(v) => Ok(v),
            None => fail(key(name), format!("required without a preset (one of {})", PRESETS.join(", "))),
        };
        let (hidden, heads) = (required(s.hidden, "hidden")?, required(s.heads, "heads")?);
        let experts = s.experts.unwrap_or(1).max(1);
        let top_k = match s.top_k {
            Some(k) => k,
            None if experts > 1 => return fail(key("top_k"), "required with experts: how many each token goes to"),
            None => 1,
        };
        let Some(gpu) = s.gpu else {
            return fail(key("gpu"), "required: gpu = { tflops = T } (peak dense TFLOPS; an H100 SXM's BF16: 989)");
        };
        let model = Model {
            hidden,
            layers: required(s.layers, "layers")?,
            heads,
            kv_heads: s.kv_heads.unwrap_or(heads),
            ffn_hidden: s.ffn_hidden.unwrap_or(hidden.saturating_mul(4)),
            vocab: required(s.vocab, "vocab")?,
            experts,
            top_k,
            moe_every: s.moe_every.unwrap_or(1),
            seq_len: required(s.seq_len, "seq_len")?,
            micro_batch: s.micro_batch.unwrap_or(1),
            bytes_per_element: s.bytes_per_element.unwrap_or(2),
            grad_bytes_per_element: s.grad_bytes_per_element.unwrap_or(4),
            mlp: s.mlp.unwrap_or(Mlp::Gelu),
            tie_embeddings: s.tie_embeddings.unwrap_or(true),
            recompute: s.recompute.unwrap_or_default(),
            gpu,
        };
        model.check()?;
        Ok(model)
    }
}

/// `workload.tp` and `workload.ep`: the parallel kind's group sizes.
const TP: &str = "workload.tp";
const EP: &str = "workload.ep";

impl Model {
    /// The checks of the model on its own.
    fn check(&self) -> Result<(), Failure> {
        let sizes = [
            ("hidden", self.hidden),
            ("layers", self.layers),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("ffn_hidden", self.ffn_hidden),
            ("vocab", self.vocab),
            ("top_k", self.top_k),
            ("moe_every", self.moe_every),
            ("seq_len", self.seq_len),
            ("micro_batch", self.micro_batch),
            ("bytes_per_element", self.bytes_per_element),
            ("grad_bytes_per_element", self.grad_bytes_per_element),
        ];
        if let Some((name, _)) = sizes.iter().find(|(_, v)| *v == 0) {
            return fail(key(name), "must be at least 1");
        }
        if self.layers > MAX_LAYERS {
            return fail(key("layers"), format!("{} layers; at most {MAX_LAYERS}", self.layers));
        }
        if !self.hidden.is_multiple_of(self.heads) {
            return fail(key("heads"), format!("{} heads do not divide hidden = {}", self.heads, self.hidden));
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return fail(
                key("kv_heads"),
                format!("{} key/value heads do not divide heads = {}", self.kv_heads, self.heads),
            );
        }
        if self.top_k > self.experts {
            return fail(key("top_k"), format!("{} is more than experts = {}", self.top_k, self.experts));
        }
        let Gpu { tflops, efficiency } = self.gpu;
        if !(tflops.is_finite() && tflops > 0.0) {
            return fail(key("gpu.tflops"), format!("{tflops}: must be a positive number of TFLOPS"));
        }
        if !(efficiency > 0.0 && efficiency <= 1.0) {
            return fail(key("gpu.efficiency"), format!("{efficiency}: must be above 0 and at most 1"));
        }
        Ok(())
    }

    /// The checks of the model split over `tp` tensor-parallel and `ep` expert-parallel ranks:
    /// Megatron-LM splits attention by heads and key/value groups, and the MLP's inner width, so
    /// each must divide; experts are dealt out whole.
    fn check_split(&self, tp: u32, ep: u32) -> Result<(), Failure> {
        if tp == 0 {
            return fail(TP, "must be at least 1");
        }
        if ep == 0 {
            return fail(EP, "must be at least 1");
        }
        let by_tp = [
            ("hidden", self.hidden),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("ffn_hidden", self.ffn_hidden),
        ];
        if let Some((name, v)) = by_tp.iter().find(|(_, v)| !v.is_multiple_of(tp)) {
            return fail(TP, format!("tp = {tp} does not divide workload.model.{name} = {v}"));
        }
        if ep > 1 && self.experts == 1 {
            return fail(EP, format!("ep = {ep} needs a mixture of experts (workload.model.experts above 1)"));
        }
        if !self.experts.is_multiple_of(ep) {
            return fail(EP, format!("ep = {ep} does not divide workload.model.experts = {}", self.experts));
        }
        if self.experts > 1 && tp > 1 && !self.seq_len.is_multiple_of(tp) {
            let why = "experts with tp > 1 need sequence parallelism, which splits the sequence";
            return fail(TP, format!("tp = {tp} does not divide workload.model.seq_len = {}: {why}", self.seq_len));
        }
        Ok(())
    }

    /// What each layer (embedding, transformer layers, output) costs one of `tp` x `ep` ranks
    /// per microbatch. Fails, naming the key, where the split does not fit the model
    /// ([`Model::check_split`]) or a size exceeds 2^64 - 1 bytes.
    pub fn cost(&self, tp: u32, ep: u32) -> Result<ModelCost, Failure> {
        self.check_split(tp, ep)?;
        let (tp_n, ep_n) = (u128::from(tp), u128::from(ep));
        let (h, elem, grad) =
            (u128::from(self.hidden), u128::from(self.bytes_per_element), u128::from(self.grad_bytes_per_element));
        // Below 2^128: four 32-bit factors.
        let activations = u128::from(self.micro_batch) * u128::from(self.seq_len) * h * elem;
        let split = tp > 1;
        let tp_bytes = if split { bytes(activations)? } else { 0 };
        let ep_bytes = if ep > 1 { bytes(product(&[activations, u128::from(self.top_k)])? / tp_n)? } else { 0 };
        let table = bytes(product(&[u128::from(self.padded_vocab(tp)) / tp_n, h, grad])?)?;
        let (attention, mlp) = (self.attention_params() / tp_n, self.mlp_params() / tp_n);
        let dense_grad = bytes(product(&[attention + mlp, grad])?)?;
        let local_experts = product(&[u128::from(self.experts) / ep_n, mlp])?;
        let moe_grad = bytes(product(&[attention + local_experts + self.router_params(), grad])?)?;

        let flops = self.flops(tp);
        let time =
            |f: &LayerFlops| (self.gpu.time(f.forward), self.gpu.time(f.input_grad), self.gpu.time(f.weight_grad));
        let layer = |f: &LayerFlops, tp_collectives, ep_bytes, grad_bytes| {
            let (forward, input_grad, weight_grad) = time(f);
            LayerCost { forward, input_grad, weight_grad, tp_collectives, tp_bytes, ep_bytes, grad_bytes }
        };
        let (last, inner) = (flops.len() - 1, 1..flops.len() - 1);
        // Collectives: 2 per transformer layer, 1 in the embedding and in the output layer.
        let (per_layer, per_table) = if split { (2, 1) } else { (0, 0) };
        let mut layers = vec![layer(&flops[0], per_table, 0, table)];
        for (i, f) in (0..self.layers).zip(&flops[inner]) {
            layers.push(if self.is_moe(i) {
                layer(f, per_layer, ep_bytes, moe_grad)
            } else {
                layer(f, per_layer, 0, dense_grad)
            });
        }
        let output_grad = if self.tie_embeddings { 0 } else { table };
        layers.push(layer(&flops[last], per_table, 0, output_grad));
        Ok(ModelCost { layers, activation_bytes: bytes(activations / tp_n)? })
    }
}

fn too_big() -> Failure {
    ("workload.model".to_string(), "the model's sizes exceed 2^64 - 1 bytes".to_string())
}

/// `n` bytes as a 64-bit count.
fn bytes(n: u128) -> Result<u64, Failure> {
    u64::try_from(n).map_err(|_| too_big())
}

/// The product of `factors`, unless it overflows.
fn product(factors: &[u128]) -> Result<u128, Failure> {
    factors.iter().try_fold(1u128, |p, &f| p.checked_mul(f)).ok_or_else(too_big)
}

/// What each layer of `spec` costs one of `tp` x `ep` ranks per microbatch: [`ModelSpec::resolved`]
/// then [`Model::cost`]. An error names the key at fault and what is wrong.
pub fn cost(spec: &ModelSpec, tp: u32, ep: u32) -> Result<ModelCost, (String, String)> {
    spec.resolved()?.cost(tp, ep)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ModelSpec {
        ModelSpec { preset: Some(name.to_string()), gpu: Some(Gpu::h100()), ..ModelSpec::default() }
    }

    fn err_key(r: Result<impl std::fmt::Debug, Failure>) -> String {
        r.expect_err("should fail").0
    }

    #[test]
    fn a_scenario_table_reads_into_a_spec() {
        let toml = r#"
            preset = "llama3-70b"
            seq_len = 4096
            micro_batch = 2
            recompute = "selective"
            gpu = { tflops = 989 }
        "#;
        let s: ModelSpec = toml::from_str(toml).unwrap();
        let m = s.resolved().unwrap();
        assert_eq!((m.hidden, m.kv_heads, m.seq_len, m.micro_batch), (8192, 8, 4096, 2));
        assert_eq!((m.mlp, m.recompute, m.gpu), (Mlp::Swiglu, Recompute::Selective, Gpu::h100()));
        // Written back, it reads the same.
        assert_eq!(toml::from_str::<ModelSpec>(&toml::to_string(&s).unwrap()).unwrap(), s);
        assert!(toml::from_str::<ModelSpec>("preset = \"gpt3-13b\"\nhiden = 4").is_err());
        assert!(toml::from_str::<ModelSpec>("gpu = { tflops = 989, eff = 0.5 }").is_err());
    }

    #[test]
    fn without_a_preset_the_shapes_are_required_and_the_rest_defaults() {
        let bare = ModelSpec { gpu: Some(Gpu::h100()), ..ModelSpec::default() };
        assert_eq!(err_key(bare.resolved()), "workload.model.hidden");
        let s = ModelSpec {
            hidden: Some(1024),
            heads: Some(16),
            layers: Some(24),
            vocab: Some(50257),
            seq_len: Some(1024),
            ..bare
        };
        let m = s.resolved().unwrap();
        assert_eq!((m.kv_heads, m.ffn_hidden, m.experts, m.top_k, m.moe_every), (16, 4096, 1, 1, 1));
        assert_eq!((m.micro_batch, m.bytes_per_element, m.grad_bytes_per_element), (1, 2, 4));
        assert_eq!((m.mlp, m.tie_embeddings, m.recompute), (Mlp::Gelu, true, Recompute::None));
        assert_eq!(m.gpu.efficiency, 0.4);
        // A mixture of experts must say how many experts a token sees.
        assert_eq!(err_key(ModelSpec { experts: Some(4), ..s.clone() }.resolved()), "workload.model.top_k");
        assert_eq!(ModelSpec { experts: Some(0), ..s }.resolved().unwrap().experts, 1, "0 experts: dense");
    }

    #[test]
    fn keys_override_the_preset() {
        let m = ModelSpec { layers: Some(4), kv_heads: Some(8), ..spec("gpt3-13b") }.resolved().unwrap();
        assert_eq!((m.layers, m.kv_heads, m.hidden, m.seq_len), (4, 8, 5120, 2048));
    }

    #[test]
    fn errors_name_their_key() {
        let unknown = ModelSpec { preset: Some("gpt4".into()), ..spec("gpt3-13b") }.resolved().unwrap_err();
        assert_eq!(unknown.0, "workload.model.preset");
        assert!(PRESETS.iter().all(|p| unknown.1.contains(p)), "{}", unknown.1);

        let s = spec("gpt3-13b");
        let cases = [
            (ModelSpec { gpu: None, ..s.clone() }, "workload.model.gpu"),
            (ModelSpec { hidden: Some(0), ..s.clone() }, "workload.model.hidden"),
            (ModelSpec { micro_batch: Some(0), ..s.clone() }, "workload.model.micro_batch"),
            (ModelSpec { hidden: Some(5140), ..s.clone() }, "workload.model.heads"),
            (ModelSpec { kv_heads: Some(3), ..s.clone() }, "workload.model.kv_heads"),
            (ModelSpec { experts: Some(4), top_k: Some(5), ..s.clone() }, "workload.model.top_k"),
            (ModelSpec { layers: Some(MAX_LAYERS + 1), ..s.clone() }, "workload.model.layers"),
            (ModelSpec { gpu: Some(Gpu { tflops: 0.0, efficiency: 0.4 }), ..s.clone() }, "workload.model.gpu.tflops"),
            (
                ModelSpec { gpu: Some(Gpu { tflops: 989.0, efficiency: 1.5 }), ..s.clone() },
                "workload.model.gpu.efficiency",
            ),
        ];
        for (bad, want) in cases {
            assert_eq!(err_key(bad.resolved()), want, "{bad:?}");
        }

        let split = [
            ("gpt3-13b", 0, 1, TP),
            ("gpt3-13b", 1, 0, EP),
            ("gpt3-13b", 3, 1, TP),    // hidden 5120
            ("gpt3-13b", 16, 1, TP),   // heads 40
            ("llama3-70b", 16, 1, TP), // kv_heads 8
            ("gpt3-13b", 1, 2, EP),    // dense
            ("mixtral-8x7b", 1, 3, EP),
        ];
        for (name, tp, ep, want) in split {
            let e = cost(&spec(name), tp, ep).unwrap_err();
            assert_eq!(e.0, want, "{name} tp {tp} ep {ep}: {e:?}");
        }
        let msg = cost(&spec("gpt3-13b"), 16, 1).unwrap_err().1;
        assert!(msg.contains("workload.model.heads = 40"), "{msg}");
        let odd_sequence = ModelSpec { seq_len: Some(1001), ..spec("mixtral-8x7b") };
        assert_eq!(cost(&odd_sequence, 2, 1).unwrap_err().0, TP);
        let huge = ModelSpec {
            hidden: Some(1 << 31),
            heads: Some(1),
            kv_heads: Some(1),
            seq_len: Some(u32::MAX),
            micro_batch: Some(u32::MAX),
            ..spec("gpt3-13b")
        };
        assert_eq!(cost(&huge, 1, 1).unwrap_err().0, "workload.model");
    }

    #[test]
    fn per_rank_compute_halves_as_tp_doubles() {
        for name in PRESETS {
            let s = ModelSpec { seq_len: Some(2048), ..spec(name) };
            let one = cost(&s, 1, 1).unwrap();
            for tp in [2, 4, 8] {
                let split = cost(&s, tp, 1).unwrap();
                assert_eq!(split.layers.len(), one.layers.len());
                // The transformer layers exactly (to the picosecond's rounding).
                for (a, b) in one.layers[1..one.layers.len() - 1].iter().zip(&split.layers[1..]) {
                    for (whole, part) in
                        [(a.forward, b.forward), (a.input_grad, b.input_grad), (a.weight_grad, b.weight_grad)]
                    {
                        assert!((whole.ps() as f64 / f64::from(tp) - part.ps() as f64).abs() <= 1.0, "{name} tp {tp}");
                    }
                    // All but the router, which every rank keeps whole.
                    let router = if a.ep_bytes > 0 || name == "mixtral-8x7b" { 8 * 4096 * 4 } else { 0 };
                    assert_eq!((a.grad_bytes - router) / u64::from(tp), b.grad_bytes - router, "{name} tp {tp}");
                }
                // The output layer too, with its vocabulary padded to a multiple of 128 x tp.
                let (a, b) =
                    (one.layers.last().unwrap().forward.ps() as f64, split.layers.last().unwrap().forward.ps() as f64);
                let m = s.resolved().unwrap();
                let padding = m.padded_vocab(tp) as f64 / m.padded_vocab(1) as f64;
                assert!((a / f64::from(tp) * padding / b - 1.0).abs() < 1e-6, "{name} tp {tp}: {a} {b}");
                assert_eq!(split.activation_bytes, one.activation_bytes / u64::from(tp));
            }
        }
    }

    #[test]
    fn the_layers_are_embedding_transformer_layers_output() {
        let c = cost(&spec("gpt3-13b"), 8, 1).unwrap();
        assert_eq!(c.layers.len(), 42);
        let (first, last) = (c.layers[0], c.layers[41]);
        assert_eq!((first.forward, first.input_grad, first.weight_grad), (SimTime::ZERO, SimTime::ZERO, SimTime::ZERO));
        assert!(last.forward > SimTime::ZERO && last.forward == last.input_grad && last.input_grad == last.weight_grad);
        assert_eq!((first.tp_collectives, c.layers[1].tp_collectives, last.tp_collectives), (1, 2, 1));
        // Tied tables: the gradient is the embedding's alone.
        assert_eq!((first.grad_bytes, last.grad_bytes), (51200 / 8 * 5120 * 4, 0));
        // Untied (Llama): both tables.
        let llama = cost(&spec("llama3-70b"), 8, 1).unwrap();
        assert_eq!(llama.layers[0].grad_bytes, llama.layers[81].grad_bytes);
        // No tensor parallelism: no collectives and no bytes for them.
        let alone = cost(&spec("gpt3-13b"), 1, 1).unwrap();
        assert!(alone.layers.iter().all(|l| l.tp_collectives == 0 && l.tp_bytes == 0));
    }

    #[test]
    fn experts_route_top_k_copies_of_the_tokens_and_hold_experts_over_ep() {
        let s = ModelSpec { seq_len: Some(4096), ..spec("mixtral-8x7b") };
        let (h, f, e) = (4096u64, 14336u64, 8u64);
        let attention = 2 * h * h + 2 * h * 1024;
        for (tp, ep) in [(1, 2), (2, 4), (1, 8)] {
            let c = cost(&s, tp, ep).unwrap();
            let l = c.layers[1];
            assert_eq!(l.ep_bytes, 4096 * 2 * h * 2 / u64::from(tp), "tp {tp} ep {ep}");
            let grad = (attention / u64::from(tp) + e / u64::from(ep) * (3 * h * f / u64::from(tp)) + h * e) * 4;
            assert_eq!(l.grad_bytes, grad, "tp {tp} ep {ep}");
        }
        // Every expert on every rank: nothing to route.
        assert_eq!(cost(&s, 1, 1).unwrap().layers[1].ep_bytes, 0);
        // Only every second layer has experts.
        let c = cost(&ModelSpec { moe_every: Some(2), ..s }, 1, 2).unwrap();
        let routed: Vec<bool> = c.layers[1..5].iter().map(|l| l.ep_bytes > 0).collect();
        assert_eq!(routed, [true, false, true, false]);
        assert!(c.layers[1].grad_bytes > c.layers[2].grad_bytes);
    }

    #[test]
    fn compute_time_is_flops_over_throughput() {
        let m = spec("gpt3-175b").resolved().unwrap();
        let c = m.cost(8, 1).unwrap();
        let per_second = 989e12 * 0.4;
        for (l, f) in c.layers.iter().zip(m.flops(8)) {
            assert!((l.forward.as_secs_f64() - f.forward / per_second).abs() <= 1e-12);
            assert!((l.input_grad.as_secs_f64() - f.input_grad / per_second).abs() <= 1e-12);
        }
        let faster = ModelSpec { gpu: Some(Gpu { tflops: 989.0, efficiency: 0.8 }), ..spec("gpt3-175b") };
        let f = cost(&faster, 8, 1).unwrap().layers[1].forward.ps() as f64;
        assert!((f * 2.0 - c.layers[1].forward.ps() as f64).abs() <= 2.0);
    }

    /// docs/models.md's worked example: GPT-3 13B, tp = 8, one sequence of 2048, H100 at 0.4.
    #[test]
    fn the_worked_example_of_the_docs() {
        let c = cost(&spec("gpt3-13b"), 8, 1).unwrap();
        let l = c.layers[1];
        // (24·t·h² + 4·t·s·h) / 8 = 171,798,691,840 FLOPs over 395.6 TFLOP/s.
        assert_eq!(l.forward, SimTime::from_ps(434_273_741));
        assert_eq!(l.input_grad, SimTime::from_ps(461_415_850));
        assert_eq!(l.weight_grad, SimTime::from_ps(407_131_632));
        assert_eq!((l.tp_collectives, l.tp_bytes, l.ep_bytes), (2, 20_971_520, 0));
        assert_eq!(l.grad_bytes, 157_286_400);
        assert_eq!(c.activation_bytes, 2_621_440);
        let out = c.layers[41];
        assert_eq!(out.forward, SimTime::from_ps(339_276_360));
        assert_eq!(c.layers[0].grad_bytes, 131_072_000);
    }
}
