// Parallelism search speed (issue 5): one candidate evaluated analytically on one core
// (target <= 0.2 ms), and the whole search for GPT-3 175B on 1,024 A100s on 2 cores
// (target < 60 s). Figures: docs/performance.md, "Parallelism search".
#include <benchmark/benchmark.h>

#include <filesystem>
#include <vector>

#include "sim/scenario/scenario_loader.hpp"
#include "sim/sweep/candidate_evaluator.hpp"
#include "sim/sweep/parallelism_search.hpp"

namespace {

clustersim::scenario::Scenario gpt3_scenario() {
  return clustersim::scenario::load_scenario(std::filesystem::path(CLUSTERSIM_SOURCE_DIR) /
                                             "tests/data/search/gpt3-175b-1024-a100.yaml");
}

/// Evaluates `candidates` once per iteration with one evaluator (one core, the per-thread
/// reuse of the search); `seconds_per_candidate` is CPU time / candidates. A pass takes
/// seconds, so each repetition is usually one iteration with a fresh (cold) evaluator.
void evaluate_all(benchmark::State& state, const clustersim::scenario::Scenario& scenario,
                  const std::vector<clustersim::sweep::Candidate>& candidates) {
  clustersim::sweep::CandidateEvaluator evaluator(scenario, clustersim::sweep::Objective::throughput);
  for (auto _ : state) {
    double sum = 0;
    for (const auto& c : candidates) sum += evaluator.evaluate(c, false, false).score;
    benchmark::DoNotOptimize(sum);
  }
  state.counters["candidates"] = static_cast<double>(candidates.size());
  state.counters["seconds_per_candidate"] =
      benchmark::Counter(static_cast<double>(candidates.size()),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

/// Every candidate of the GPT-3 space: memory check, and the closed-form step when it fits.
void BM_EvaluateEveryCandidate(benchmark::State& state) {
  const auto scenario = gpt3_scenario();
  evaluate_all(state, scenario, clustersim::sweep::enumerate_candidates(scenario, {}));
}

/// Only the candidates that fit (each runs the full closed-form estimate); the filtering pass
/// has warmed the evaluator's caches before timing starts.
void BM_EvaluateFeasibleCandidate(benchmark::State& state) {
  const auto scenario = gpt3_scenario();
  clustersim::sweep::CandidateEvaluator evaluator(scenario, clustersim::sweep::Objective::throughput);
  std::vector<clustersim::sweep::Candidate> feasible;
  for (const auto& c : clustersim::sweep::enumerate_candidates(scenario, {})) {
    if (evaluator.evaluate(c, false, false).status == clustersim::sweep::CandidateStatus::feasible) {
      feasible.push_back(c);
    }
  }
  evaluate_all(state, scenario, feasible);
}

/// The whole `clustersim search` (enumerate, evaluate on `threads` threads, rank, re-simulate
/// the best 5 with the event simulation).
void BM_FullSearchGpt3_1024(benchmark::State& state) {
  const auto scenario = gpt3_scenario();
  clustersim::sweep::SearchOptions options;
  options.threads = static_cast<int>(state.range(0));
  std::int64_t enumerated = 0, feasible = 0;
  for (auto _ : state) {
    const auto result = clustersim::sweep::search_parallelism(scenario, options);
    enumerated = result.enumerated;
    feasible = result.feasible;
    benchmark::DoNotOptimize(result.top.front().analytical.score);
  }
  state.counters["enumerated"] = static_cast<double>(enumerated);
  state.counters["feasible"] = static_cast<double>(feasible);
}

}  // namespace

BENCHMARK(BM_EvaluateEveryCandidate)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EvaluateFeasibleCandidate)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullSearchGpt3_1024)->Arg(2)->Unit(benchmark::kSecond)->Iterations(1);
