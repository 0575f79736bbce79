#include "models/llm/moe_runtime.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {

void MoeRuntime::validate(const MoeSpec& moe) const {
  if (!(capacity_factor >= 0)) {
    throw ConfigError(fmt::format("moe capacity_factor must be >= 0 (0: no capacity), got {}", capacity_factor));
  }
  if (!(imbalance >= 1)) {
    throw ConfigError(fmt::format("moe imbalance (busiest expert's load / mean load) must be >= 1, got {}", imbalance));
  }
  if (!moe.enabled()) {
    if (capacity_factor != 0 || imbalance != 1) {
      throw ConfigError("moe capacity_factor and imbalance apply only to a mixture-of-experts model");
    }
    return;
  }
  const double most = static_cast<double>(moe.num_experts) / static_cast<double>(moe.num_experts_per_tok);
  if (imbalance > most) {
    throw ConfigError(fmt::format(
        "moe imbalance {} exceeds num_experts / num_experts_per_tok = {} / {} = {:g} (an expert receives each "
        "token at most once)",
        imbalance, moe.num_experts, moe.num_experts_per_tok, most));
  }
}

ExpertLoad expert_load(const MoeSpec& moe, const MoeRuntime& runtime, double tokens_per_rank, int ep) {
  if (!moe.enabled()) throw ConfigError("expert_load needs a mixture-of-experts model (num_experts 0)");
  runtime.validate(moe);
  if (ep < 1 || moe.num_experts % ep != 0) {
    throw ConfigError(fmt::format("expert-parallel degree {} must be >= 1 and divide the {} experts", ep,
                                  moe.num_experts));
  }
  if (!(tokens_per_rank >= 0)) throw ConfigError(fmt::format("tokens per rank must not be negative, got {}", tokens_per_rank));
  const double experts = static_cast<double>(moe.num_experts);
  const double top_k = static_cast<double>(moe.num_experts_per_tok);
  const double copies = tokens_per_rank * static_cast<double>(ep) * top_k;
  ExpertLoad load;
  load.local_experts = static_cast<int>(moe.num_experts / ep);
  load.mean_tokens_per_expert = copies / experts;
  load.mean_rank_tokens = tokens_per_rank * top_k;
  const double busiest = runtime.imbalance * load.mean_tokens_per_expert;
  // With one expert the imbalance is 1 (validated: imbalance <= E / k = 1).
  const double other = moe.num_experts > 1 ? (experts - runtime.imbalance) / (experts - 1.0) * load.mean_tokens_per_expert
                                           : load.mean_tokens_per_expert;
  double kept_busiest = busiest;
  double kept_other = other;
  if (runtime.drops_tokens()) {
    // Megatron-Core: capacity per expert per source rank, ceil(c x local tokens x k / E).
    load.capacity_tokens_per_expert =
        static_cast<double>(ep) * std::ceil(runtime.capacity_factor * tokens_per_rank * top_k / experts);
    kept_busiest = std::min(busiest, load.capacity_tokens_per_expert);
    kept_other = std::min(other, load.capacity_tokens_per_expert);
  }
  load.busiest_expert_tokens = kept_busiest;
  load.other_expert_tokens = kept_other;
  load.busiest_rank_tokens = kept_busiest + static_cast<double>(load.local_experts - 1) * kept_other;
  const double kept = kept_busiest + (experts - 1.0) * kept_other;
  load.dropped_fraction = copies > 0 ? std::max(0.0, 1.0 - kept / copies) : 0.0;
  return load;
}

GroupedExpertGemm grouped_expert_gemm(const ExpertLoad& load) {
  const double idle = std::pow(1.0 - 1.0 / static_cast<double>(load.local_experts), load.busiest_rank_tokens);
  const std::int64_t running = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::ceil(static_cast<double>(load.local_experts) * (1.0 - idle))), 1,
      load.local_experts);
  const auto busiest = static_cast<std::int64_t>(std::ceil(load.busiest_rank_tokens / static_cast<double>(running)));
  return {running, std::max<std::int64_t>(1, busiest)};
}

}  // namespace clustersim::models
