#include "models/llm/parallel_rules.hpp"

#include <string>

namespace clustersim::models {

std::optional<config::RuleProblem> expert_parallel_problem(const TransformerSpec& model, int ep, int dp, int cp) {
  const std::string key = "parallelism.ep";
  if (ep <= 1) return std::nullopt;
  if (!model.is_moe()) {
    return config::RuleProblem{key, "expert parallelism needs a mixture-of-experts model (ep = " + std::to_string(ep) +
                                        "; model '" + model.name +
                                        "' sets no num_local_experts / n_routed_experts)"};
  }
  if (model.moe.num_experts % ep != 0) {
    return config::RuleProblem{key, "ep " + std::to_string(ep) + " does not divide the " +
                                        std::to_string(model.moe.num_experts) + " experts of model '" + model.name +
                                        "'"};
  }
  if ((static_cast<std::int64_t>(dp) * cp) % ep != 0) {
    return config::RuleProblem{
        key, "ep " + std::to_string(ep) + " does not divide dp x cp = " + std::to_string(dp) + " x " +
                 std::to_string(cp) +
                 " (the expert-parallel group is carved out of the data-parallel ranks, as in Megatron-Core)"};
  }
  return std::nullopt;
}

std::optional<config::RuleProblem> tensor_parallel_problem(const TransformerSpec& model, int tp) {
  const std::string key = "parallelism.tp";
  if (tp < 1) return config::RuleProblem{key, "tp must be >= 1, got " + std::to_string(tp)};
  if (model.num_attention_heads % tp != 0) {
    return config::RuleProblem{key, "num_attention_heads " + std::to_string(model.num_attention_heads) +
                                        " is not divisible by tp " + std::to_string(tp)};
  }
  const std::int64_t kv = model.num_key_value_heads > 0 ? model.num_key_value_heads : model.num_attention_heads;
  if (kv % tp != 0 && tp % kv != 0) {
    return config::RuleProblem{key, "num_key_value_heads " + std::to_string(kv) + " and tp " + std::to_string(tp) +
                                        " must divide one another"};
  }
  return std::nullopt;
}

std::optional<config::RuleProblem> context_parallel_problem(std::int64_t seq_len, int cp) {
  const std::int64_t chunks = cp > 1 ? 2 * static_cast<std::int64_t>(cp) : 1;
  if (cp < 1 || seq_len % chunks == 0) return std::nullopt;
  return config::RuleProblem{"seq_len", "seq_len " + std::to_string(seq_len) + " is not divisible by 2 x cp = " +
                                            std::to_string(chunks) +
                                            " (context parallelism splits each sequence into 2 x cp chunks)"};
}

std::optional<config::RuleProblem> batch_split_problem(std::int64_t global_batch, int dp, std::int64_t micro_batch) {
  const std::int64_t per_step = static_cast<std::int64_t>(dp) * micro_batch;
  if (per_step <= 0 || global_batch % per_step == 0) return std::nullopt;
  return config::RuleProblem{"global_batch", "global_batch " + std::to_string(global_batch) +
                                                 " is not divisible by dp x micro_batch = " + std::to_string(dp) +
                                                 " x " + std::to_string(micro_batch)};
}

std::optional<config::RuleProblem> virtual_pipeline_problem(int vp, std::string_view schedule, bool interleaved) {
  if (vp > 1 && !interleaved) {
    return config::RuleProblem{"parallelism.vp", "vp = " + std::to_string(vp) + " needs schedule 'interleaved', got '" +
                                                     std::string(schedule) + "'"};
  }
  if (vp <= 1 && interleaved) {
    return config::RuleProblem{"parallelism.schedule",
                               "schedule 'interleaved' needs vp > 1 (virtual pipeline chunks per stage)"};
  }
  return std::nullopt;
}

}  // namespace clustersim::models
