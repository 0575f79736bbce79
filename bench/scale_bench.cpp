// The scale target (issue 5): one step of Llama-3.1-405B on 16,384 H100s (TP8 PP16 DP128,
// 3-tier fat-tree) at flow fidelity, in symmetric mode (target < 10 s on one core, < 4 GiB
// peak memory) and in full mode (every rank simulated; target < 120 s). Peak memory is not a
// Google Benchmark figure: docs/performance.md measures it with /usr/bin/time -v on the CLI.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace {

void run_405b(benchmark::State& state, const std::string& mode, std::vector<std::string> extra = {}) {
  const auto file = std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "scenarios/scale/llama-3.1-405b-16k-h100.yaml";
  std::uint64_t events = 0;
  double step_s = 0;
  extra.push_back("simulation.mode=" + mode);
  for (auto _ : state) {
    const auto scenario = clustersim::scenario::load_scenario(file, extra);
    const auto result = clustersim::runner::run_training(scenario);
    events = result.events;
    step_s = result.step_time_s;
    benchmark::DoNotOptimize(result.step_time_s);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["step_s"] = step_s;
}

void BM_Llama405b16kSymmetricFlow(benchmark::State& state) { run_405b(state, "symmetric"); }
void BM_Llama405b16kFullFlow(benchmark::State& state) { run_405b(state, "full"); }
// Issue 18's speed target: 100 iterations with kernel jitter and probabilistic stragglers
// (the symmetric replay fast path, docs/reliability.md, "Faults"), < 2 minutes on one core.
void BM_Llama405b16kIterations100(benchmark::State& state) {
  run_405b(state, "symmetric",
           {"simulation.iterations=100", "simulation.variability.gemm_cv=0.01", "simulation.variability.attention_cv=0.01",
            "simulation.variability.elementwise_cv=0.005", "simulation.variability.device_cv=0.03",
            "cluster.stragglers.probability=1e-4", "cluster.stragglers.compute_speed=0.8"});
}

// Issue 29 part 5: full mode (every rank) at 1,024 GPUs with kernel and network jitter,
// probabilistic stragglers and a failed leaf-spine cable, 3 iterations (`scenarios/default.yaml`,
// flow fidelity). Counters: wall seconds per simulated step and per iteration (each iteration
// simulates the step with every cause, then with each cause alone for the attribution).
void BM_Default1024FullFaults(benchmark::State& state) {
  const auto file = std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "scenarios/default.yaml";
  const std::vector<std::string> settings{
      "simulation.mode=full", "simulation.fidelity=flow", "simulation.iterations=3",
      "simulation.variability.gemm_cv=0.03", "simulation.variability.attention_cv=0.02",
      "simulation.variability.elementwise_cv=0.01", "simulation.variability.network_cv=0.02",
      "cluster.stragglers.probability=0.01", "cluster.stragglers.compute_speed=0.8",
      "cluster.network.faults.failed.link=leaf0-spine1", "cluster.network.faults.failed.at=1 s"};
  int simulated = 0, iterations = 0;
  for (auto _ : state) {
    const auto scenario = clustersim::scenario::load_scenario(file, settings);
    const auto result = clustersim::runner::run_training(scenario);
    // The job's own step and the step on the intact network (the fault's cost) come first.
    simulated = result.iterations.simulated_steps + 2;
    iterations = result.iterations.iterations;
    benchmark::DoNotOptimize(result.step_time_s);
  }
  state.counters["simulated_steps"] = simulated;
  state.counters["s_per_simulated_step"] =
      benchmark::Counter(static_cast<double>(simulated), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["s_per_iteration"] =
      benchmark::Counter(static_cast<double>(iterations), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_Default1024FullFaults)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Llama405b16kSymmetricFlow)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Llama405b16kFullFlow)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Llama405b16kIterations100)->Unit(benchmark::kSecond)->Iterations(1);
