#include "sim/sweep/parallelism_search.hpp"

#include <atomic>
#include <algorithm>
#include <fmt/format.h>
#include <memory>
#include <numeric>
#include <optional>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"

namespace clustersim::sweep {
namespace {

void check_options(const SearchOptions& o) {
  if (o.top_n < 1) throw ConfigError(fmt::format("search: top must be >= 1, got {}", o.top_n));
  if (o.resimulate < 0) throw ConfigError(fmt::format("search: resimulate must be >= 0, got {}", o.resimulate));
  if (o.threads < 0) throw ConfigError(fmt::format("search: threads must be >= 0 (0: every core), got {}", o.threads));
}

/// The objective's score of a re-simulated candidate (lower is better).
std::optional<double> simulated_score(const RankedCandidate& ranked, Objective objective) {
  const auto value = simulated_objective_value(ranked, objective);
  if (value && objective == Objective::throughput) return -*value;
  return value;
}

}  // namespace

std::optional<double> simulated_objective_value(const RankedCandidate& ranked, Objective objective) {
  if (!ranked.simulated) return std::nullopt;
  const training::TrainingResult& r = *ranked.simulated;
  switch (objective) {
    case Objective::throughput:
      return r.tokens_per_s;
    case Objective::cost:
      if (!r.power.cost_computed) return std::nullopt;
      return r.power.usd_per_million_tokens;
    case Objective::energy:
      if (!r.power.computed) return std::nullopt;
      return r.power.energy_per_token_j;
  }
  return std::nullopt;
}

void rerank_by_simulation(SearchResult& result, std::size_t resimulated) {
  const auto first = result.top.begin();
  const auto last = first + static_cast<std::ptrdiff_t>(std::min(resimulated, result.top.size()));
  // Simulated candidates first, by their simulated score; a candidate whose simulation gave no
  // score keeps its closed-form order behind them. Stable: ties keep the closed-form order.
  std::stable_sort(first, last, [&](const RankedCandidate& a, const RankedCandidate& b) {
    const auto sa = simulated_score(a, result.objective);
    const auto sb = simulated_score(b, result.objective);
    if (sa && sb) return *sa < *sb;
    return sa.has_value() && !sb.has_value();
  });
  for (std::size_t r = 0; r < result.top.size(); ++r) result.top[r].rank = static_cast<int>(r + 1);
}

SearchResult search_parallelism(const scenario::Scenario& scenario, const SearchOptions& options) {
  check_options(options);
  SearchResult result;
  result.scenario_name = scenario.name;
  result.objective = options.objective;
  result.accelerators = training_accelerators(scenario);

  const std::vector<Candidate> candidates = enumerate_candidates(scenario, options.space);
  result.enumerated = static_cast<std::int64_t>(candidates.size());
  // Built on this thread first, so that a missing power/cost block is reported once, here.
  CandidateEvaluator main_evaluator(scenario, options.objective);

  // Each slot is written by exactly one task; results never depend on which thread ran it.
  std::vector<CandidateOutcome> outcomes(candidates.size());
  std::atomic<std::size_t> costed{0};
  if (options.on_progress) options.on_progress("search: closed form", "candidates", 0, candidates.size());
  tbb::task_arena arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic);
  tbb::enumerable_thread_specific<std::unique_ptr<CandidateEvaluator>> evaluators;
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, candidates.size(), 16),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        auto& evaluator = evaluators.local();
                        if (!evaluator) evaluator = std::make_unique<CandidateEvaluator>(scenario, options.objective);
                        for (std::size_t i = range.begin(); i != range.end(); ++i) {
                          outcomes[i] = evaluator->evaluate(candidates[i], false, false);
                        }
                        costed += range.size();
                        if (options.on_progress) {
                          options.on_progress("search: closed form", "candidates", costed, candidates.size());
                        }
                      });
  });

  std::vector<std::size_t> feasible;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    switch (outcomes[i].status) {
      case CandidateStatus::feasible: feasible.push_back(i); break;
      case CandidateStatus::does_not_fit:
        if (result.does_not_fit++ == 0) {
          result.does_not_fit_example =
              candidates[i].label() + ": " + main_evaluator.evaluate(candidates[i], true, false).reason;
        }
        break;
      case CandidateStatus::invalid:
        if (result.invalid++ == 0) {
          result.invalid_example =
              candidates[i].label() + ": " + main_evaluator.evaluate(candidates[i], true, false).reason;
        }
        break;
    }
  }
  result.feasible = static_cast<std::int64_t>(feasible.size());
  if (feasible.empty()) {
    std::string message = fmt::format("no feasible parallel split for '{}' on {} accelerators: {} candidates "
                                      "enumerated, {} do not fit in memory, {} rejected by the models",
                                      scenario.name, result.accelerators, result.enumerated, result.does_not_fit,
                                      result.invalid);
    if (!result.does_not_fit_example.empty()) message += "; e.g. " + result.does_not_fit_example;
    if (!result.invalid_example.empty()) message += "; e.g. " + result.invalid_example;
    if (result.enumerated == 0) {
      message += " (no TP/PP/CP degree divides the model's heads, layers and sequence and the accelerator count)";
    }
    throw SimulationError(message);
  }
  // Candidates are in key order, so a stable sort by score breaks ties by the key.
  std::stable_sort(feasible.begin(), feasible.end(),
                   [&](std::size_t a, std::size_t b) { return outcomes[a].score < outcomes[b].score; });

  const std::size_t shown = std::min(feasible.size(), static_cast<std::size_t>(options.top_n));
  for (std::size_t r = 0; r < shown; ++r) {
    RankedCandidate ranked;
    ranked.rank = static_cast<int>(r + 1);
    ranked.closed_form_rank = ranked.rank;
    ranked.candidate = candidates[feasible[r]];
    ranked.analytical = main_evaluator.evaluate(ranked.candidate, true, true);
    result.top.push_back(std::move(ranked));
  }

  const std::size_t resimulated = std::min(shown, static_cast<std::size_t>(options.resimulate));
  arena.execute([&] {
    std::atomic<std::size_t> simulated{0};
    if (options.on_progress) options.on_progress("search: re-simulating", "candidates", 0, resimulated);
    tbb::parallel_for(std::size_t{0}, resimulated, [&](std::size_t r) {
      RankedCandidate& ranked = result.top[r];
      scenario::Scenario variant = scenario;
      variant.set_training(apply_candidate(scenario.training(), ranked.candidate));
      try {
        ranked.simulated = runner::run_training(variant);
      } catch (const Error& e) {
        ranked.simulation_error = e.what();
      }
      if (options.on_progress) options.on_progress("search: re-simulating", "candidates", ++simulated, resimulated);
    });
  });
  rerank_by_simulation(result, resimulated);
  return result;
}

}  // namespace clustersim::sweep
