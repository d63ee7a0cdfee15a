//! The FLOP model: what each layer of a resolved [`Model`] computes per microbatch, and the
//! parameters it holds.
//!
//! It is the count of Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
//! Clusters Using Megatron-LM" (SC '21), section 5.1 and appendix: only the matrix
//! multiplications count (an m x k by k x n product is 2mkn FLOPs); layer norms, softmax,
//! activation functions, dropout and the embedding lookup are left out, as they are there. For a
//! GPT layer (4h-wide GELU MLP, as many key/value heads as heads) and t = micro-batch x sequence
//! tokens, the forward pass is 24·t·h² + 4·t·s·h: the four attention projections (8·t·h²), the
//! two MLP matrices (16·t·h²), and the attention scores Q·Kᵀ and their product with V
//! (2·t·s·h each). The backward pass is twice the forward, so an iteration of B sequences over l
//! layers with a V-word output layer is 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)), or, with every
//! layer's forward run again before its backward (full activation recomputation, as the paper
//! trains), 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), its equation (3). The tests hold the sum over
//! the layers to both.
//!
//! What the paper's formula does not cover, counted the same way:
//! - Grouped-query attention: the key and value projections have `kv_heads` x head-size columns
//!   instead of `hidden`, so each costs 2·t·h·(h·kv_heads/heads).
//! - A gated MLP (SwiGLU, Llama's and Mixtral's): three `hidden` x `ffn_hidden` matrices instead
//!   of two.
//! - Mixture of experts: each token runs through `top_k` experts' MLPs, plus the router's
//!   `hidden` x `experts` product.
//!
//! The backward pass is split the way the schedule runs it. Every weight's product is done once
//! more for the gradient handed down (dX = dY·Wᵀ) and once for the weight's own gradient
//! (dW = Xᵀ·dY). The attention scores have no weights: both of their operands are activations,
//! so their backward pass, twice their forward, is all input gradient. Recomputation runs before
//! the input gradient, so it is counted there.
//!
//! Per rank, tensor parallelism splits every product of a layer over its `tp` ranks (Megatron's
//! column- then row-parallel pairs, attention split by heads), so each rank computes 1/tp.

use super::{Mlp, Model, Recompute};

/// FLOPs of one layer on one rank for one microbatch.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LayerFlops {
    pub forward: f64,
    pub input_grad: f64,
    pub weight_grad: f64,
}

impl LayerFlops {
    /// Forward, input and weight gradient of a layer whose weight products take `weighted` FLOPs
    /// and whose weightless products (the attention scores) take `weightless`, in the forward pass.
    fn of(weighted: f64, weightless: f64, recompute: f64) -> LayerFlops {
        LayerFlops {
            forward: weighted + weightless,
            input_grad: weighted + 2.0 * weightless + recompute,
            weight_grad: weighted,
        }
    }

    /// The whole layer's FLOPs: forward, input and weight gradient.
    pub fn total(&self) -> f64 {
        self.forward + self.input_grad + self.weight_grad
    }

    /// Each part divided by `n` ranks.
    fn per_rank(self, n: u32) -> LayerFlops {
        let n = f64::from(n);
        LayerFlops { forward: self.forward / n, input_grad: self.input_grad / n, weight_grad: self.weight_grad / n }
    }
}

impl Mlp {
    /// `hidden` x `ffn_hidden` matrices in one MLP (one expert).
    pub fn matrices(self) -> u128 {
        match self {
            Mlp::Gelu => 2,
            Mlp::Swiglu => 3,
        }
    }
}

impl Model {
    /// Head size: `hidden` / `heads`.
    fn head_size(&self) -> u128 {
        u128::from(self.hidden / self.heads)
    }

    /// Tokens of one microbatch.
    fn tokens(&self) -> f64 {
        f64::from(self.micro_batch) * f64::from(self.seq_len)
    }

    /// Whether transformer layer `i` (from 0) is a mixture of experts: every `moe_every`-th,
    /// starting with the first, as Megatron-Core's `--moe-layer-freq` places them.
    pub fn is_moe(&self, i: u32) -> bool {
        self.experts > 1 && i.is_multiple_of(self.moe_every)
    }

    /// The attention block's weights: query and output projections `hidden` x `hidden`, key and
    /// value projections `hidden` x (`kv_heads` x head size).
    pub fn attention_params(&self) -> u128 {
        let h = u128::from(self.hidden);
        2 * h * h + 2 * h * u128::from(self.kv_heads) * self.head_size()
    }

    /// One MLP's weights (one expert's, in a mixture of experts).
    pub fn mlp_params(&self) -> u128 {
        self.mlp.matrices() * u128::from(self.hidden) * u128::from(self.ffn_hidden)
    }

    /// The router's weights: `hidden` x `experts`.
    pub fn router_params(&self) -> u128 {
        u128::from(self.hidden) * u128::from(self.experts)
    }

    /// A vocabulary table's weights, `vocab` x `hidden` (unpadded).
    pub fn embedding_params(&self) -> u128 {
        u128::from(self.vocab) * u128::from(self.hidden)
    }

    /// Transformer layer `i`'s weights.
    fn layer_params(&self, i: u32, experts_used: u128) -> u128 {
        let mlp =
            if self.is_moe(i) { experts_used * self.mlp_params() + self.router_params() } else { self.mlp_params() };
        self.attention_params() + mlp
    }

    /// Every weight of the model, with all experts: the total that model cards publish. Biases,
    /// norm weights and GPT's learned position embeddings are left out (under 0.1% of each
    /// preset); tied input and output embeddings count once.
    pub fn params(&self) -> u128 {
        let tables = if self.tie_embeddings { 1 } else { 2 };
        let layers: u128 = (0..self.layers).map(|i| self.layer_params(i, u128::from(self.experts))).sum();
        layers + tables * self.embedding_params()
    }

    /// The weights one token runs through: `top_k` experts of each mixture of experts.
    pub fn active_params(&self) -> u128 {
        let tables = if self.tie_embeddings { 1 } else { 2 };
        let layers: u128 = (0..self.layers).map(|i| self.layer_params(i, u128::from(self.top_k))).sum();
        layers + tables * self.embedding_params()
    }

    /// Transformer layer `i`'s FLOPs on one of `tp` ranks.
    pub fn layer_flops(&self, i: u32, tp: u32) -> LayerFlops {
        let t = self.tokens();
        let mlp = if self.is_moe(i) {
            // Every token through top_k experts, and the router's product that picks them.
            f64::from(self.top_k) * self.mlp_params() as f64 + self.router_params() as f64
        } else {
            self.mlp_params() as f64
        };
        let weighted = 2.0 * t * (self.attention_params() as f64 + mlp);
        // Q·Kᵀ and scores·V: per sequence and head 2·s·s·head-size each; over the heads, hidden.
        let scores = 4.0 * t * f64::from(self.seq_len) * f64::from(self.hidden);
        let recompute = match self.recompute {
            Recompute::None => 0.0,
            // Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
            // Models" (2022): recompute only the attention core (the score products).
            Recompute::Selective => scores,
            Recompute::Full => weighted + scores,
        };
        LayerFlops::of(weighted, scores, recompute).per_rank(tp)
    }

    /// The output layer's FLOPs on one of `tp` ranks: the logits, hidden x the padded vocabulary
    /// (never recomputed; the final norm and the loss are left out).
    pub fn output_flops(&self, tp: u32) -> LayerFlops {
        let logits = 2.0 * self.tokens() * f64::from(self.hidden) * self.padded_vocab(tp) as f64;
        LayerFlops::of(logits, 0.0, 0.0).per_rank(tp)
    }

    /// The vocabulary as Megatron-LM pads it: up to a multiple of 128 x `tp`
    /// (`--make-vocab-size-divisible-by`, default 128, times the tensor-parallel size), so that
    /// each rank's slice of the embedding and output tables is whole.
    pub fn padded_vocab(&self, tp: u32) -> u64 {
        u64::from(self.vocab).next_multiple_of(128 * u64::from(tp))
    }

    /// FLOPs of every layer (embedding, transformer layers, output) on one of `tp` ranks.
    pub fn flops(&self, tp: u32) -> Vec<LayerFlops> {
        let layers = (0..self.layers).map(|i| self.layer_flops(i, tp));
        std::iter::once(LayerFlops::default()).chain(layers).chain([self.output_flops(tp)]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::presets::preset;
    use super::super::{ModelSpec, Recompute};
    use super::*;

    fn model(name: &str) -> Model {
        let spec = ModelSpec { gpu: Some(crate::workload::model::Gpu::h100()), ..preset(name).unwrap() };
        spec.resolved().unwrap()
    }

    fn within(got: f64, want: f64, tolerance: f64) -> bool {
        ((got - want) / want).abs() <= tolerance
    }

    /// One microbatch of B sequences, all layers, one rank: Narayanan et al.'s closed forms.
    #[test]
    fn an_iteration_of_gpt3_is_narayanans_closed_form() {
        for name in ["gpt3-13b", "gpt3-175b"] {
            for micro_batch in [1, 4] {
                let mut m = model(name);
                m.micro_batch = micro_batch;
                let (b, s, l, h) =
                    (f64::from(micro_batch), f64::from(m.seq_len), f64::from(m.layers), f64::from(m.hidden));
                // The formula's V is the vocabulary the output layer multiplies by: padded.
                let v = m.padded_vocab(1) as f64;
                let sum = |m: &Model| m.flops(1).iter().map(LayerFlops::total).sum::<f64>();

                let plain = 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * l * h));
                assert!(within(sum(&m), plain, 0.01), "{name}: {} vs {plain}", sum(&m));

                m.recompute = Recompute::Full;
                let eq3 = 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
                assert!(within(sum(&m), eq3, 0.01), "{name}: {} vs {eq3}", sum(&m));
            }
        }
    }

    #[test]
    fn the_backward_pass_is_twice_the_forward_without_recomputation() {
        for name in ["gpt3-13b", "llama3-70b", "mixtral-8x7b"] {
            let m = model(name);
            for f in m.flops(2) {
                assert!((f.input_grad + f.weight_grad - 2.0 * f.forward).abs() <= 1e-9 * f.forward.max(1.0), "{name}");
                // The weightless attention scores make the input gradient the larger half.
                assert!(f.input_grad >= f.weight_grad, "{name}");
            }
        }
    }

    #[test]
    fn recomputation_adds_to_the_input_gradient_only() {
        let base = model("gpt3-13b");
        let plain = base.layer_flops(0, 1);
        let mut m = base.clone();
        m.recompute = Recompute::Selective;
        let selective = m.layer_flops(0, 1);
        m.recompute = Recompute::Full;
        let full = m.layer_flops(0, 1);
        assert_eq!((selective.forward, selective.weight_grad), (plain.forward, plain.weight_grad));
        assert_eq!(full.input_grad - plain.input_grad, plain.forward);
        // Selective recomputes Q·Kᵀ and scores·V: 4·t·s·h.
        let (t, s, h) = (2048.0, 2048.0, 5120.0);
        assert_eq!(selective.input_grad - plain.input_grad, 4.0 * t * s * h);
    }

    #[test]
    fn grouped_query_attention_shrinks_only_the_key_and_value_projections() {
        let mha = Model { kv_heads: 64, ..model("llama3-70b") };
        let gqa = model("llama3-70b");
        let h = 8192u128;
        // 8 of 64 heads: k and v are h x h/8 each instead of h x h.
        assert_eq!(mha.attention_params() - gqa.attention_params(), 2 * h * h - 2 * h * h / 8);
        assert_eq!(gqa.attention_params(), 2 * h * h + 2 * h * 1024);
    }

    #[test]
    fn a_mixture_of_experts_computes_top_k_experts_per_token() {
        let moe = model("mixtral-8x7b");
        let dense = Model { experts: 1, top_k: 1, ..moe.clone() };
        let t = 32768.0 * 1.0;
        let extra = moe.layer_flops(0, 1).forward - dense.layer_flops(0, 1).forward;
        // One more expert's SwiGLU MLP (3·h·f) per token, and the router (h·E).
        let want = 2.0 * t * (3.0 * 4096.0 * 14336.0 + 4096.0 * 8.0);
        assert!(within(extra, want, 1e-12), "{extra} vs {want}");
    }

    #[test]
    fn moe_every_places_experts_from_the_first_layer() {
        let m = Model { moe_every: 2, ..model("mixtral-8x7b") };
        let moe: Vec<bool> = (0..5).map(|i| m.is_moe(i)).collect();
        assert_eq!(moe, [true, false, true, false, true]);
        assert!(!model("gpt3-13b").is_moe(0));
    }

    #[test]
    fn the_vocabulary_is_padded_as_megatron_pads_it() {
        let m = model("gpt3-13b");
        assert_eq!(m.padded_vocab(1), 50304);
        assert_eq!(m.padded_vocab(8), 51200);
        assert_eq!(model("mixtral-8x7b").padded_vocab(8), 32768);
    }
}
