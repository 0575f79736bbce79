#include "models/llm/fit_remedy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/llm/parallel_rules.hpp"
#include "sim/config/units.hpp"

namespace clustersim::models {

namespace {

double peak_of(const FootprintInputs& inputs) { return training_footprint(inputs).peak().total_bytes; }

/// `inputs` split as tp x pp x dp (cp kept), if the split obeys the rules; nullopt otherwise.
std::optional<FootprintInputs> resplit(const FootprintInputs& inputs, int tp, int pp, int dp) {
  const std::int64_t global_batch = inputs.microbatches * inputs.dp * inputs.micro_batch;
  const auto layers = static_cast<int>(inputs.model.num_hidden_layers);
  if (tensor_parallel_problem(inputs.model, tp) || batch_split_problem(global_batch, dp, inputs.micro_batch) ||
      expert_parallel_problem(inputs.model, inputs.ep, dp, inputs.cp) || layers % (pp * inputs.vp) != 0) {
    return std::nullopt;
  }
  FootprintInputs out = inputs;
  out.tp = tp;
  out.pp = pp;
  out.dp = dp;
  out.microbatches = global_batch / (static_cast<std::int64_t>(dp) * inputs.micro_batch);
  out.stage_layers.clear();  // an even split
  out.sequence_parallel = inputs.sequence_parallel && tp > 1;
  if (pp == 1) out.vp = 1;
  return out;
}

}  // namespace

std::vector<FitRemedy> fit_remedies(const FootprintInputs& inputs, double capacity_bytes, std::size_t max_count) {
  std::vector<FitRemedy> remedies;
  const auto add_if_fits = [&](const FootprintInputs& candidate, std::string change) {
    if (remedies.size() >= max_count) return;
    const double peak = peak_of(candidate);
    if (peak <= capacity_bytes) remedies.push_back({std::move(change), peak});
  };
  if (inputs.recompute != RecomputePolicy::full) {
    FootprintInputs full = inputs;
    full.recompute = RecomputePolicy::full;
    add_if_fits(full, "recompute: full");
  }
  if (static_cast<std::int64_t>(inputs.dp) * inputs.cp > 1) {
    for (int zero = inputs.zero + 1; zero <= 3; ++zero) {
      FootprintInputs sharded = inputs;
      sharded.zero = zero;
      const std::size_t before = remedies.size();
      add_if_fits(sharded, fmt::format("zero: {}", zero));
      if (remedies.size() > before) break;  // the lowest stage that fits
    }
  }
  // Other splits of the same accelerators, least model parallelism (tp x pp) first.
  const std::int64_t accelerators = static_cast<std::int64_t>(inputs.tp) * inputs.pp * inputs.dp * inputs.cp;
  struct Split {
    int tp, pp, dp;
  };
  std::vector<Split> splits;
  for (int tp = 1; tp <= 64 && tp * inputs.cp <= accelerators; tp *= 2) {
    for (int pp = 1; pp <= inputs.model.num_hidden_layers && tp * pp * inputs.cp <= accelerators; ++pp) {
      if (accelerators % (static_cast<std::int64_t>(tp) * pp * inputs.cp) != 0) continue;
      if (tp == inputs.tp && pp == inputs.pp) continue;
      splits.push_back({tp, pp, static_cast<int>(accelerators / (static_cast<std::int64_t>(tp) * pp * inputs.cp))});
    }
  }
  std::stable_sort(splits.begin(), splits.end(),
                   [](const Split& a, const Split& b) { return a.tp * a.pp < b.tp * b.pp; });
  for (const Split& split : splits) {
    const auto candidate = resplit(inputs, split.tp, split.pp, split.dp);
    if (!candidate) continue;
    const std::string change = fmt::format("tp {}, pp {}, dp {}", split.tp, split.pp, split.dp);
    if (peak_of(*candidate) <= capacity_bytes) {
      add_if_fits(*candidate, change);
      continue;
    }
    FootprintInputs lean = *candidate;
    lean.zero = lean.dp * lean.cp > 1 ? 3 : lean.zero;
    lean.recompute = RecomputePolicy::full;
    add_if_fits(lean, change + (lean.zero == 3 && inputs.zero != 3 ? ", zero: 3" : "") +
                          (inputs.recompute != RecomputePolicy::full ? ", recompute: full" : ""));
  }
  return remedies;
}

std::optional<std::string> does_not_fit_message(const FootprintInputs& inputs, double capacity_bytes) {
  const TrainingFootprint footprint = training_footprint(inputs);
  try {
    check_fits(footprint, capacity_bytes);
    return std::nullopt;
  } catch (const DoesNotFitError& e) {
    const std::vector<FitRemedy> remedies = fit_remedies(inputs, capacity_bytes);
    if (remedies.empty()) {
      return fmt::format("{}; no other split of these {} accelerators, ZeRO stage or full recompute fits: use more "
                         "accelerators or a smaller model",
                         e.what(), static_cast<std::int64_t>(inputs.tp) * inputs.pp * inputs.dp * inputs.cp);
    }
    std::string options;
    for (std::size_t i = 0; i < remedies.size(); ++i) {
      options += fmt::format("{}{} ({:.1f} GiB)", i == 0 ? "" : i + 1 == remedies.size() ? ", or " : ", ",
                             remedies[i].change, remedies[i].peak_bytes / config::kGiB);
    }
    return fmt::format("{}; it fits with {}", e.what(), options);
  }
}

}  // namespace clustersim::models
