//! Named models: the shapes their papers and model cards publish. A preset fills in the shape
//! keys a scenario leaves out; the training choices (`micro_batch`, precision, recomputation)
//! and the GPU are the scenario's. docs/models.md lists them with their sources.

use super::{Mlp, ModelSpec};

/// Every preset, as a scenario names it.
pub const PRESETS: [&str; 4] = ["gpt3-13b", "gpt3-175b", "llama3-70b", "mixtral-8x7b"];

/// The shape keys of preset `name`; `None` for a name not in [`PRESETS`].
pub fn preset(name: &str) -> Option<ModelSpec> {
    let gpt3 = |hidden, layers, heads| ModelSpec {
        hidden: Some(hidden),
        layers: Some(layers),
        heads: Some(heads),
        kv_heads: Some(heads),
        ffn_hidden: Some(4 * hidden),
        // GPT-2's byte-pair encoding, which GPT-3 reuses.
        vocab: Some(50257),
        experts: Some(1),
        top_k: Some(1),
        seq_len: Some(2048),
        mlp: Some(Mlp::Gelu),
        tie_embeddings: Some(true),
        ..ModelSpec::default()
    };
    Some(match name {
        // Brown et al., "Language Models are Few-Shot Learners" (2020), Table 2.1: 40 layers,
        // 40 heads of 128, n_ctx 2048. The table prints d_model = 5140, which 40 heads of 128 do
        // not make; 5120 = 40 x 128 is what Megatron-LM and NeMo train as GPT-3 13B, and it gives
        // the 12,850M parameters of the paper's Table D.1.
        "gpt3-13b" => gpt3(5120, 40, 40),
        // The same Table 2.1: 96 layers, d_model 12288, 96 heads of 128, n_ctx 2048 (Table D.1:
        // 174,600M parameters).
        "gpt3-175b" => gpt3(12288, 96, 96),
        // Llama Team, "The Llama 3 Herd of Models" (2024), Table 3: 80 layers, model dimension
        // 8192, FFN dimension 28672, 64 attention heads, 8 key/value heads, SwiGLU; pre-trained on
        // sequences of 8192 tokens (the Meta-Llama-3-70B model card: context length 8k). The
        // vocabulary is the released config.json's 128256 (the paper rounds it to 128K); input
        // and output embeddings are separate. 70.6B parameters.
        "llama3-70b" => ModelSpec {
            hidden: Some(8192),
            layers: Some(80),
            heads: Some(64),
            kv_heads: Some(8),
            ffn_hidden: Some(28672),
            vocab: Some(128256),
            experts: Some(1),
            top_k: Some(1),
            seq_len: Some(8192),
            mlp: Some(Mlp::Swiglu),
            tie_embeddings: Some(false),
            ..ModelSpec::default()
        },
        // Jiang et al., "Mixtral of Experts" (2024), Table 1: dim 4096, 32 layers, head_dim 128,
        // hidden_dim 14336, 32 heads, 8 kv heads, context_len 32768, vocab_size 32000, 8 experts,
        // top 2, every layer a mixture of SwiGLU experts; separate input and output embeddings.
        // 46.7B parameters, 12.9B active per token.
        "mixtral-8x7b" => ModelSpec {
            hidden: Some(4096),
            layers: Some(32),
            heads: Some(32),
            kv_heads: Some(8),
            ffn_hidden: Some(14336),
            vocab: Some(32000),
            experts: Some(8),
            top_k: Some(2),
            moe_every: Some(1),
            seq_len: Some(32768),
            mlp: Some(Mlp::Swiglu),
            tie_embeddings: Some(false),
            ..ModelSpec::default()
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Gpu, Model};
    use super::*;

    fn model(name: &str) -> Model {
        ModelSpec { gpu: Some(Gpu::h100()), ..preset(name).unwrap() }.resolved().unwrap()
    }

    fn within_2_percent(got: u128, published: f64) -> bool {
        (got as f64 - published).abs() / published <= 0.02
    }

    #[test]
    fn every_listed_preset_resolves() {
        for name in PRESETS {
            assert!(preset(name).is_some(), "{name}");
            model(name);
        }
        assert!(preset("gpt3-13B").is_none(), "names are exact");
    }

    /// The totals their sources publish (GPT-3's Table D.1 in millions, the model cards'), within 2%.
    #[test]
    fn parameter_counts_match_the_published_totals() {
        let published =
            [("gpt3-13b", 12.85e9), ("gpt3-175b", 174.6e9), ("llama3-70b", 70.6e9), ("mixtral-8x7b", 46.7e9)];
        for (name, total) in published {
            let got = model(name).params();
            assert!(within_2_percent(got, total), "{name}: {got} vs {total}");
        }
        let active = model("mixtral-8x7b").active_params();
        assert!(within_2_percent(active, 12.9e9), "{active}");
        // A dense model runs every weight for every token.
        assert_eq!(model("llama3-70b").active_params(), model("llama3-70b").params());
    }

    #[test]
    fn presets_split_over_eight_tensor_parallel_ranks() {
        for name in PRESETS {
            let m = model(name);
            assert_eq!(m.hidden % m.heads, 0, "{name}");
            assert_eq!(m.heads % 8, 0, "{name}");
            assert_eq!(m.kv_heads % 8, 0, "{name}");
            assert_eq!(m.ffn_hidden % 8, 0, "{name}");
        }
    }
}
