// End-to-end time of whole scenarios: load + validate the YAML, build the network and the
// models, simulate one training step. The default scenario's target is < 5 s.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace {

void run_scenario(benchmark::State& state, const char* relative_path, std::vector<std::string> overrides = {}) {
  const auto file = std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / relative_path;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto scenario = clustersim::scenario::load_scenario(file, overrides);
    const auto result = clustersim::runner::run_training(scenario);
    events = result.events;
    benchmark::DoNotOptimize(result.step_time_s);
  }
  state.counters["events"] = static_cast<double>(events);
}

void BM_DefaultScenario(benchmark::State& state) { run_scenario(state, "scenarios/default.yaml"); }
/// The default scenario at the analytical fidelity (what BM_DefaultScenario ran until flow
/// became the default on 2026-12-04).
void BM_DefaultScenarioAnalytical(benchmark::State& state) {
  run_scenario(state, "scenarios/default.yaml", {"simulation.fidelity=analytical"});
}
void BM_Sc21Gpt1T(benchmark::State& state) { run_scenario(state, "scenarios/megatron-sc21/gpt-1t.yaml"); }

}  // namespace

BENCHMARK(BM_DefaultScenario)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefaultScenarioAnalytical)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sc21Gpt1T)->Unit(benchmark::kMillisecond);
