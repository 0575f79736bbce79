#pragma once
/// Model and hardware FLOPs of a dense transformer, in the Megatron-LM / NeMo convention.
///
/// Convention (Narayanan et al., SC21, arXiv:2104.04473, Sec. 5.1 / Appendix; NeMo and
/// Megatron-Core "model TFLOP/s"): a matmul of an [s, a] by [a, b] matrix is 2 s a b FLOPs;
/// attention is counted as *full* (non-causal) QK^T and PV products, 2 x 2 x s x h per token
/// and layer, even when the run is causal; embedding lookup, norms, softmax and other
/// elementwise work are not counted; backward = 2 x forward.
///
/// For a GPT with an MHA, 4h gelu MLP (12 h^2 matmul parameters per layer), L layers and
/// vocabulary V this gives, per sequence of s tokens (B = 1):
///   model FLOPs    = 3 x forward               = 72 s L h^2 (1 + s/(6h) + V/(12 L h))
///   hardware FLOPs = model + recomputed forward of the layers (full activation recompute;
///                    the LM head is not recomputed)
///                                              = 96 s L h^2 (1 + s/(6h) + V/(16 L h))
/// (SC21 Eq. 3 is the latter; its "% of peak" is therefore hardware FLOPs utilization.)
/// All functions validate the spec (ConfigError) and need seq_len > 0 (ConfigError).
#include <cstdint>

#include "models/llm/transformer_spec.hpp"

namespace clustersim::models {

/// Forward FLOPs per token of the transformer layers only (no LM head):
/// L x (2 x layer_matmul_parameters + 4 x seq_len x num_attention_heads x head_dim).
/// The caller adds this once more per recomputed forward (full recompute).
double layers_flops_per_token_fwd(const TransformerSpec& spec, std::int64_t seq_len);

/// Forward FLOPs per token of the LM head (logits): 2 x vocab_size x hidden_size. Counted
/// whether or not the embedding is tied.
double lm_head_flops_per_token_fwd(const TransformerSpec& spec);

/// Forward model FLOPs per token: layers_flops_per_token_fwd + lm_head_flops_per_token_fwd.
double model_flops_per_token_fwd(const TransformerSpec& spec, std::int64_t seq_len);

/// Training (forward + backward) model FLOPs per token = 3 x model_flops_per_token_fwd.
/// This is the numerator of MFU and of NeMo's "model TFLOP/s".
double model_flops_per_token_training(const TransformerSpec& spec, std::int64_t seq_len);

/// Training hardware FLOPs per token with full activation recompute =
/// model_flops_per_token_training + layers_flops_per_token_fwd (SC21 Eq. 3).
double hardware_flops_per_token_full_recompute(const TransformerSpec& spec,
                                               std::int64_t seq_len);

}  // namespace clustersim::models
