#include "sim/sweep/search_space.hpp"

#include <algorithm>
#include <utility>
#include <fmt/format.h>

#include "models/llm/parallel_rules.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::sweep {
namespace {

std::vector<int> divisors_up_to(std::int64_t value, std::int64_t limit) {
  std::vector<int> out;
  for (std::int64_t d = 1; d <= std::min(value, limit); ++d) {
    if (value % d == 0) out.push_back(static_cast<int>(d));
  }
  return out;
}

std::vector<std::int64_t> powers_of_two_dividing(std::int64_t value, std::int64_t limit) {
  std::vector<std::int64_t> out;
  for (std::int64_t p = 1; p <= std::min(value, limit); p *= 2) {
    if (value % p == 0) out.push_back(p);
  }
  return out;
}

void check_options(const SearchSpaceOptions& o) {
  auto non_negative = [](std::int64_t value, const char* name) {
    if (value < 0) throw ConfigError(fmt::format("search: {} must be >= 0 (0: derive from the scenario), got {}", name, value));
  };
  non_negative(o.max_tp, "max_tp");
  non_negative(o.max_pp, "max_pp");
  non_negative(o.max_micro_batch, "max_micro_batch");
  non_negative(o.max_ep, "max_ep");
  if (o.max_cp < 1) throw ConfigError(fmt::format("search: max_cp must be >= 1, got {}", o.max_cp));
  if (o.max_vp < 1) throw ConfigError(fmt::format("search: max_vp must be >= 1, got {}", o.max_vp));
  if (o.zero_stages.empty()) throw ConfigError("search: the list of ZeRO stages is empty");
  if (o.recompute_policies.empty()) throw ConfigError("search: the list of recompute policies is empty");
  for (int z : o.zero_stages) {
    if (z < 0 || z > 3) throw ConfigError(fmt::format("search: ZeRO stage must be 0..3, got {}", z));
  }
}

}  // namespace

std::string Candidate::label() const {
  return fmt::format("tp{} pp{} dp{} cp{} vp{} mb{} zero{} {}{}{}", tp, pp, dp, cp, vp, micro_batch, zero,
                     recompute_name(recompute), ep > 1 ? fmt::format(" ep{}", ep) : std::string(),
                     ends_lighter ? " ends-1" : "");
}

const char* recompute_name(training::Recompute recompute) {
  return training::recompute_names().name(recompute).c_str();
}

int scale_up_domain_size(const scenario::Scenario& scenario) {
  return scenario.platform.cluster.network.scale_up_domain_size();
}

int training_accelerators(const scenario::Scenario& scenario) {
  return scenario.primary_allocation().count;
}

std::vector<Candidate> enumerate_candidates(const scenario::Scenario& scenario, const SearchSpaceOptions& options) {
  check_options(options);
  const training::TrainingWorkload& w = scenario.training();
  const models::TransformerSpec& model = w.model;
  const std::int64_t accelerators = training_accelerators(scenario);
  const std::int64_t max_tp = options.max_tp > 0 ? options.max_tp : scale_up_domain_size(scenario);
  const std::int64_t max_pp = options.max_pp > 0 ? options.max_pp : model.num_hidden_layers;

  std::vector<int> zero_stages = options.zero_stages;
  std::sort(zero_stages.begin(), zero_stages.end());
  zero_stages.erase(std::unique(zero_stages.begin(), zero_stages.end()), zero_stages.end());
  std::vector<training::Recompute> policies = options.recompute_policies;
  std::sort(policies.begin(), policies.end());
  policies.erase(std::unique(policies.begin(), policies.end()), policies.end());

  std::vector<Candidate> out;
  for (int tp : divisors_up_to(model.num_attention_heads, max_tp)) {
    if (models::tensor_parallel_problem(model, tp) || accelerators % tp != 0) continue;
    // Pipeline depths: even splits (pp divides the layers), and layouts where the embedding
    // and the loss each take a layer's place ((layers + 2) divides over pp x vp virtual stages).
    std::vector<int> depths = divisors_up_to(model.num_hidden_layers, max_pp);
    for (int pp : divisors_up_to(model.num_hidden_layers + 2, max_pp)) {
      if (pp > 1) depths.push_back(pp);
    }
    std::sort(depths.begin(), depths.end());
    depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
    for (int pp : depths) {
      if (accelerators % (static_cast<std::int64_t>(tp) * pp) != 0) continue;
      // (vp, ends_lighter) layouts of this depth. The lighter ends need >= 2 layer slots per
      // virtual stage, and differ from the even split only past 2 virtual stages.
      std::vector<std::pair<int, bool>> layouts;
      if (model.num_hidden_layers % pp == 0) {
        layouts.emplace_back(1, false);
        if (pp > 1) {
          for (int vp : divisors_up_to(model.num_hidden_layers / pp, options.max_vp)) {
            if (vp > 1) layouts.emplace_back(vp, false);
          }
        }
      }
      if (pp > 1 && (model.num_hidden_layers + 2) % pp == 0) {
        const std::int64_t slots = (model.num_hidden_layers + 2) / pp;
        for (int vp : divisors_up_to(slots, options.max_vp)) {
          if (slots / vp >= 2 && pp * vp > 2) layouts.emplace_back(vp, true);
        }
      }
      for (std::int64_t cp : powers_of_two_dividing(w.seq_len, options.max_cp)) {
        if (models::context_parallel_problem(w.seq_len, static_cast<int>(cp))) continue;
        const std::int64_t tp_pp_cp = static_cast<std::int64_t>(tp) * pp * cp;
        if (accelerators % tp_pp_cp != 0) continue;
        const std::int64_t dp = accelerators / tp_pp_cp;
        if (w.global_batch % dp != 0) continue;
        const std::int64_t per_replica = w.global_batch / dp;
        std::vector<int> eps{1};
        if (model.is_moe()) {
          const std::int64_t ep_limit = options.max_ep > 0 ? options.max_ep : model.moe.num_experts;
          for (int ep : divisors_up_to(model.moe.num_experts, ep_limit)) {
            if (ep > 1 && !models::expert_parallel_problem(model, ep, static_cast<int>(dp), static_cast<int>(cp))) {
              eps.push_back(ep);
            }
          }
        }
        for (const auto& [vp, ends_lighter] : layouts) {
          const std::int64_t mb_limit = options.max_micro_batch > 0 ? options.max_micro_batch : per_replica;
          for (std::int64_t mb : powers_of_two_dividing(per_replica, mb_limit)) {
            const std::int64_t microbatches = per_replica / mb;
            if (vp > 1 && microbatches % pp != 0) continue;
            for (int ep : eps) {
              for (int zero : zero_stages) {
                for (training::Recompute recompute : policies) {
                  out.push_back(Candidate{tp, pp, static_cast<int>(dp), static_cast<int>(cp), vp, mb, zero, recompute,
                                          ep, ends_lighter});
                }
              }
            }
          }
        }
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

training::TrainingWorkload apply_candidate(const training::TrainingWorkload& base, const Candidate& candidate) {
  training::TrainingWorkload w = base;
  auto& p = w.parallelism;
  p.tp = candidate.tp;
  p.pp = candidate.pp;
  p.dp = candidate.dp;
  p.cp = candidate.cp;
  p.ep = candidate.ep;
  p.vp = candidate.vp;
  p.zero = candidate.zero;
  if (candidate.vp > 1) {
    p.schedule = training::PipelineSchedule::interleaved;
  } else if (p.schedule == training::PipelineSchedule::interleaved) {
    p.schedule = training::PipelineSchedule::one_f_one_b;
  }
  // The search lays layers out itself: evenly, or with the ends one layer lighter (one count
  // per virtual stage). A scenario's own stage_layers belong to its own pp and vp.
  p.stage_layers.clear();
  if (candidate.ends_lighter) {
    const int virtual_stages = candidate.pp * candidate.vp;
    const auto slots = static_cast<int>((w.model.num_hidden_layers + 2) / virtual_stages);
    p.stage_layers.assign(static_cast<std::size_t>(virtual_stages), slots);
    p.stage_layers.front() -= 1;
    p.stage_layers.back() -= 1;
  }
  w.micro_batch = candidate.micro_batch;
  w.recompute = candidate.recompute;
  return w;
}

}  // namespace clustersim::sweep
