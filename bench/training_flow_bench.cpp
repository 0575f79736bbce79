// The training step at flow fidelity (issue 3): every collective of every pipeline stage runs
// as max-min fair flows on one shared network, with every replica group that leaves its
// NVSwitch domain. Target: Llama-3-70B on 1,024 GPUs in a few seconds at most.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace {

void run_flow(benchmark::State& state, const char* relative_path) {
  const auto file = std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / relative_path;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto scenario = clustersim::scenario::load_scenario(file, {"simulation.fidelity=flow"});
    const auto result = clustersim::runner::run_training(scenario);
    events = result.events;
    benchmark::DoNotOptimize(result.step_time_s);
  }
  state.counters["events"] = static_cast<double>(events);
}

void BM_DefaultScenarioFlow(benchmark::State& state) { run_flow(state, "scenarios/default.yaml"); }
void BM_CongestionScatteredFlow(benchmark::State& state) {
  run_flow(state, "scenarios/congestion/placement-scattered.yaml");
}

}  // namespace

BENCHMARK(BM_DefaultScenarioFlow)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CongestionScatteredFlow)->Unit(benchmark::kMillisecond);
