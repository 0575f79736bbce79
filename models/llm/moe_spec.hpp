#pragma once
/// Mixture-of-experts architecture of a transformer, with Hugging Face field names
/// (`MixtralConfig`, `DeepseekV3Config`). Runtime routing settings (capacity factor, load
/// imbalance) are not architecture: they are in moe_runtime.hpp.
#include <cstdint>

namespace clustersim::models {

/// Which MLP a layer has.
enum class LayerKind {
  dense,  ///< one MLP of intermediate_size
  moe,    ///< router + routed experts + shared experts
};

/// MoE sizes. num_experts == 0 means a dense model (every other field then keeps its default).
/// Layer l (0-based) is an MoE layer when l >= first_k_dense_replace and l % moe_layer_freq == 0,
/// the rule of Hugging Face's DeepseekV3 modelling code; Mixtral: every layer.
struct MoeSpec {
  /// Routed experts per MoE layer: HF `num_local_experts` (Mixtral), `n_routed_experts`
  /// (DeepSeek). 0: dense model.
  std::int64_t num_experts = 0;
  /// Routed experts each token goes to (top-k), HF `num_experts_per_tok`; 1..num_experts.
  std::int64_t num_experts_per_tok = 0;
  /// Experts every token goes to, HF `n_shared_experts` (DeepSeek-V3: 1). Hugging Face builds
  /// them as one MLP of n_shared_experts x moe_intermediate_size; the FLOPs are the same.
  std::int64_t n_shared_experts = 0;
  /// FFN width of one expert (routed or shared), HF `moe_intermediate_size`; Mixtral's config
  /// has none and its experts are `intermediate_size` wide (the loader fills it in).
  std::int64_t moe_intermediate_size = 0;
  /// Dense layers before the first MoE layer, HF `first_k_dense_replace` (DeepSeek-V3: 3).
  std::int64_t first_k_dense_replace = 0;
  /// Every moe_layer_freq-th layer (by index) is MoE, HF `moe_layer_freq` (DeepSeek-V3: 1).
  std::int64_t moe_layer_freq = 1;

  /// True for a mixture-of-experts model (num_experts > 0).
  bool enabled() const { return num_experts > 0; }
};

}  // namespace clustersim::models
