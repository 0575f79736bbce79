#pragma once
/// Model and hardware FLOPs of a transformer, in the Megatron-LM / NeMo convention.
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
///
/// Mixture of experts: a token's FLOPs are those of the parameters it uses — the router
/// (2 h E: its logits are a GEMM), the num_experts_per_tok routed experts and the shared
/// experts; the experts a token skips cost nothing. The router's softmax / sigmoid and top-k,
/// the permutation and the weighted combine are elementwise and not counted. Model FLOPs are a
/// property of the architecture: tokens a capacity factor drops are still counted (as
/// Megatron-Core's `num_floating_point_operations` does), and load imbalance changes time,
/// not FLOPs.
///
/// MLA: the seven projections (MlaProjectionParameters) are GEMMs, 2 x parameters per token;
/// QK^T over qk_head_dim = qk_nope_head_dim + qk_rope_head_dim per head and PV over
/// v_head_dim, full (non-causal) as above: 2 s a qk_head_dim + 2 s a v_head_dim per token.
/// W_UK and W_UV are applied to every token (training does not absorb them into W_UQ / W_O).
///
/// All functions validate the spec (ConfigError) and need seq_len > 0 (ConfigError).
#include <cstdint>

#include "models/llm/transformer_spec.hpp"

namespace clustersim::models {

/// Forward FLOPs per token of one layer's attention core (QK^T and PV, full non-causal):
/// MHA/GQA 4 x seq_len x num_attention_heads x head_dim; MLA 2 x seq_len x num_attention_heads
/// x (qk_head_dim + v_head_dim).
double attention_core_flops_per_token_fwd(const TransformerSpec& spec, std::int64_t seq_len);

/// Forward model FLOPs per token of one layer of `kind`: 2 x its matmul parameters a token
/// uses (dense: attention + dense MLP; moe: attention + router + top-k routed + shared
/// experts) + attention_core_flops_per_token_fwd. Throws ConfigError for kind moe on a dense
/// model.
double layer_flops_per_token_fwd(const TransformerSpec& spec, std::int64_t seq_len, LayerKind kind);

/// Forward FLOPs per token of the transformer layers only (no LM head): the sum of
/// layer_flops_per_token_fwd over the layers; for a dense model
/// L x (2 x layer_matmul_parameters + attention_core_flops_per_token_fwd).
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
