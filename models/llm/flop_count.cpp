#include "models/llm/flop_count.hpp"

#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {

namespace {

void require_seq_len(const TransformerSpec& spec, std::int64_t seq_len) {
  if (seq_len <= 0) {
    throw ConfigError("model '" + spec.name + "': seq_len must be positive, got " +
                      std::to_string(seq_len));
  }
}

}  // namespace

double attention_core_flops_per_token_fwd(const TransformerSpec& spec, std::int64_t seq_len) {
  require_seq_len(spec, seq_len);
  spec.validate();
  const double s = static_cast<double>(seq_len);
  if (spec.attention == AttentionKind::mla) {
    const double heads = static_cast<double>(spec.num_attention_heads);
    return 2.0 * s * heads * static_cast<double>(spec.mla.qk_head_dim()) +
           2.0 * s * heads * static_cast<double>(spec.mla.v_head_dim);
  }
  // QK^T and PV, each 2 x seq_len x attention_width per token (full, non-causal convention).
  const double attention_width = static_cast<double>(spec.attention_width());
  return 4.0 * s * attention_width;
}

double layer_flops_per_token_fwd(const TransformerSpec& spec, std::int64_t seq_len, LayerKind kind) {
  const double core = attention_core_flops_per_token_fwd(spec, seq_len);  // validates
  double matmul_parameters = spec.attention_matmul_parameters();
  if (kind == LayerKind::dense) {
    matmul_parameters += spec.dense_mlp_parameters();
  } else {
    if (!spec.is_moe()) {
      throw ConfigError("model '" + spec.name + "': has no MoE layers (num_experts 0)");
    }
    matmul_parameters += spec.router_parameters() + spec.shared_expert_parameters() +
                         static_cast<double>(spec.moe.num_experts_per_tok) * spec.expert_parameters();
  }
  return 2.0 * matmul_parameters + core;
}

double layers_flops_per_token_fwd(const TransformerSpec& spec, std::int64_t seq_len) {
  require_seq_len(spec, seq_len);
  if (spec.is_moe()) {
    spec.validate();
    return static_cast<double>(spec.dense_layer_count()) * layer_flops_per_token_fwd(spec, seq_len, LayerKind::dense) +
           static_cast<double>(spec.moe_layer_count()) * layer_flops_per_token_fwd(spec, seq_len, LayerKind::moe);
  }
  const double matmul_flops = 2.0 * spec.layer_matmul_parameters();  // validates the spec
  const double attention_flops = attention_core_flops_per_token_fwd(spec, seq_len);
  return static_cast<double>(spec.num_hidden_layers) * (matmul_flops + attention_flops);
}

double lm_head_flops_per_token_fwd(const TransformerSpec& spec) {
  spec.validate();
  return 2.0 * static_cast<double>(spec.vocab_size) * static_cast<double>(spec.hidden_size);
}

double model_flops_per_token_fwd(const TransformerSpec& spec, std::int64_t seq_len) {
  return layers_flops_per_token_fwd(spec, seq_len) + lm_head_flops_per_token_fwd(spec);
}

double model_flops_per_token_training(const TransformerSpec& spec, std::int64_t seq_len) {
  return 3.0 * model_flops_per_token_fwd(spec, seq_len);
}

double hardware_flops_per_token_full_recompute(const TransformerSpec& spec,
                                               std::int64_t seq_len) {
  return model_flops_per_token_training(spec, seq_len) + layers_flops_per_token_fwd(spec, seq_len);
}

}  // namespace clustersim::models
