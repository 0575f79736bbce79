#pragma once
/// Runtime routing of a mixture-of-experts workload (`workload.moe` in a scenario): how many
/// tokens an expert accepts and how unevenly the router spreads them. Not architecture (that is
/// MoeSpec); the same model can be trained dropless or with a capacity factor.
///
/// Load model: in one MoE layer the EP group's T tokens make T x k token copies (k =
/// num_experts_per_tok), a mean of T k / E per expert. The busiest expert gets `imbalance` x
/// that mean; the other E - 1 experts share the rest evenly, (E - imbalance) / (E - 1) x the
/// mean each, so every token copy is routed somewhere (conservation). With a capacity factor c
/// each expert keeps at most its capacity and drops the rest (GShard, arXiv:2006.16668;
/// Megatron-Core `--moe-expert-capacity-factor`, which computes the capacity per source rank as
/// ceil(c x local tokens x k / E) and drops without padding by default). The busiest EP rank
/// holds the busiest expert and E / ep - 1 others; it sets the pace of the layer.
#include <cstdint>

#include "models/llm/moe_spec.hpp"

namespace clustersim::models {

/// Routing settings of an MoE workload.
struct MoeRuntime {
  /// Tokens an expert accepts = capacity_factor x tokens x top-k / experts (tokens of the
  /// routing rank, Megatron-Core's per-rank capacity); the rest are dropped. 0: no capacity,
  /// nothing dropped (dropless, Megatron-Core's default). >= 0.
  double capacity_factor = 0;
  /// Busiest expert's token copies / mean token copies per expert, >= 1 (1: perfectly
  /// balanced). At most experts / top-k: an expert receives each token at most once.
  double imbalance = 1;

  /// True when a capacity factor is set (tokens beyond an expert's capacity are dropped).
  bool drops_tokens() const { return capacity_factor > 0; }
  /// Throws ConfigError naming the field: capacity_factor < 0, imbalance < 1, or (against the
  /// model) imbalance > num_experts / num_experts_per_tok. A dense `moe` accepts only the
  /// defaults.
  void validate(const MoeSpec& moe) const;
};

/// Token copies of one MoE layer for one micro-batch, on the expert-parallel group.
struct ExpertLoad {
  int local_experts = 0;                   ///< routed experts per EP rank: num_experts / ep
  double mean_tokens_per_expert = 0;       ///< T k / E token copies, before dropping
  double capacity_tokens_per_expert = 0;   ///< ep x ceil(c x tokens_per_rank x k / E); 0: no capacity
  double busiest_expert_tokens = 0;        ///< min(imbalance x mean, capacity)
  double other_expert_tokens = 0;          ///< each other expert: min((E - imbalance)/(E - 1) x mean, capacity)
  double busiest_rank_tokens = 0;          ///< copies the busiest EP rank computes, after dropping
  double mean_rank_tokens = 0;             ///< tokens_per_rank x k: copies per EP rank if balanced and dropless
  double dropped_fraction = 0;             ///< of all T k copies, dropped by the capacity (0 when dropless)

  /// busiest_rank_tokens / mean_rank_tokens: how much more expert work (and expert-input
  /// memory) the slowest EP rank has than a balanced, dropless rank. 1 when balanced.
  double busiest_rank_load_factor() const {
    return mean_rank_tokens > 0 ? busiest_rank_tokens / mean_rank_tokens : 0.0;
  }
};

/// Load of one MoE layer when each of the `ep` ranks of an expert-parallel group routes
/// `tokens_per_rank` tokens (so T = tokens_per_rank x ep). Throws ConfigError for a dense
/// `moe`, ep < 1, num_experts not divisible by ep, negative tokens or an invalid runtime.
ExpertLoad expert_load(const MoeSpec& moe, const MoeRuntime& runtime, double tokens_per_rank, int ep);

/// The grouped expert GEMM the busiest EP rank runs under `load` (each of its two projections:
/// `experts` equal GEMMs of m = `tokens`). Only the experts that receive a token copy run: with
/// the rank's copies spread uniformly over its E_local experts one stays idle with probability
/// (1 - 1/E_local)^copies, so ceil(E_local x (1 - that)) run (1..E_local; all of them for a
/// training micro-batch, a few for a decode batch), each over ceil(copies / running) tokens, at
/// least 1. transformer_forward_ops sizes its expert GEMMs with it; the trace importer gives a
/// measured vLLM fused-MoE call the same shape.
struct GroupedExpertGemm {
  std::int64_t experts = 1;  ///< GEMMs in the group (GemmShape::batch): local experts reached
  std::int64_t tokens = 1;   ///< rows of each (GemmShape::m): the rank's copies over `experts`
};
GroupedExpertGemm grouped_expert_gemm(const ExpertLoad& load);

}  // namespace clustersim::models
