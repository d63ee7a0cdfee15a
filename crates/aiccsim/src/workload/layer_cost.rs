//! What one layer of a model costs one rank, for one microbatch: its compute times and the
//! communication each parallel dimension adds. It is the meeting point of the two halves of a
//! parallel training workload: the model presets (`model/`) compute it from a model's shapes and
//! a GPU's throughput, or a scenario writes it per layer; the schedule (`parallel_training/`)
//! turns it into compute steps and flows on every rank of every microbatch.
//!
//! Sizes are what one rank holds, after tensor parallelism has split the layer (Megatron-LM's
//! partitioning): a tensor-parallel rank computes 1/tp of a layer and keeps 1/tp of its weights.

use crate::time::SimTime;

/// One layer on one rank, one microbatch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerCost {
    /// Forward compute.
    pub forward: SimTime,
    /// Backward compute of the gradient handed to the layer below (done first).
    pub input_grad: SimTime,
    /// Backward compute of the layer's own weight gradient (done second).
    pub weight_grad: SimTime,
    /// Tensor-parallel collectives in each pass (a transformer layer has 2: after attention and
    /// after the MLP); the backward pass has as many. 0 for a layer that tensor parallelism does
    /// not split.
    pub tp_collectives: u32,
    /// The buffer each of those collectives reduces, per rank: the layer's activations for the
    /// microbatch (micro-batch x sequence x hidden x bytes per element). An all-reduce of it, or
    /// with sequence parallelism a reduce-scatter then an all-gather of it.
    pub tp_bytes: u64,
    /// Mixture of experts: the tokens this rank routes to experts, in bytes (its tokens x top-k x
    /// hidden x bytes per element), spread evenly over its expert-parallel group by each
    /// all-to-all. Each pass has a dispatch and a combine all-to-all of it. 0 for a dense layer.
    pub ep_bytes: u64,
    /// The layer's weight gradient on this rank, in bytes: what data parallelism reduces once per
    /// iteration, after the last microbatch's backward compute of the layer.
    pub grad_bytes: u64,
}

/// A whole model as one rank of a pipeline stage sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelCost {
    /// Every layer, from the input to the output; the schedule splits them into stages.
    pub layers: Vec<LayerCost>,
    /// Bytes one stage sends the next per microbatch (its output activations), and the next
    /// sends back in the backward pass (their gradient).
    pub activation_bytes: u64,
}
