// Serving simulation speed (issue 15): 100,000 requests of Llama-3-70B on 8 instances of
// 8 x H100 (TP8, fp8), ShareGPT-like lengths, Poisson arrivals; target < 2 s on one core,
// with the same answer as the exact per-iteration costing within 1 %. And the capacity
// search on that scenario; target < 30 s on 2 cores.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/serving_workload.hpp"
#include "sim/sweep/capacity.hpp"

namespace {

// ShareGPT-like lengths: lognormal prompts (mean 300, sd 350 tokens) and answers (mean 250,
// sd 250), the shape of the ShareGPT_V3 conversations vLLM's and Vidur's benchmarks replay.
constexpr const char* kScenario = R"(schema_version: 1
name: serving-bench-llama3-70b-8x8xh100
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 8
  network: {topology: fat-tree, tiers: 2, radix: 64}
workload:
  kind: serving
  model: llama-3-70b
  framework: vllm-0.8
  precision: {weights: fp8, kv_cache: fp8}
  pools:
    main: {replicas: 8, tp: 8}
  requests:
    count: 100000
    arrival: {process: poisson, rate: 100}
    input: {distribution: lognormal, mean: 300, stddev: 350, max: 4096}
    output: {distribution: lognormal, mean: 250, stddev: 250, max: 2048}
  slo: {ttft: 500 ms, tpot: 50 ms}
simulation: {seed: 1}
)";

void serve(benchmark::State& state, bool exact) {
  const std::vector<std::string> overrides = {exact ? "workload.exact_cost=true" : "workload.exact_cost=false",
                                              "workload.requests.count=" + std::to_string(state.range(0))};
  const auto scenario = clustersim::scenario::load_scenario_from_string(kScenario, "serving-bench.yaml", overrides);
  const auto platform = clustersim::runner::build_platform(scenario);
  double output_tokens_per_s = 0, ttft_p99 = 0, tpot_mean = 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto run = clustersim::runner::run_scenario(scenario, *platform);
    const auto& r = dynamic_cast<const clustersim::serving::ServingResult&>(*run.primary);
    output_tokens_per_s = r.output_tokens_per_s;
    ttft_p99 = r.ttft_s.p99;
    tpot_mean = r.tpot_s.mean;
    events = run.events;
  }
  state.counters["requests"] = static_cast<double>(state.range(0));
  state.counters["events"] = static_cast<double>(events);
  state.counters["output_tok_per_s"] = output_tokens_per_s;
  state.counters["ttft_p99_ms"] = ttft_p99 * 1e3;
  state.counters["tpot_mean_ms"] = tpot_mean * 1e3;
}

void BM_Serving70B(benchmark::State& state) { serve(state, false); }
void BM_Serving70BExact(benchmark::State& state) { serve(state, true); }

void BM_Capacity70B(benchmark::State& state) {
  const auto file = std::filesystem::temp_directory_path() / "clustersim-serving-bench.yaml";
  std::ofstream(file) << kScenario;
  clustersim::sweep::CapacityOptions options;
  options.threads = static_cast<int>(state.range(0));
  double rate = 0;
  std::size_t trials = 0;
  for (auto _ : state) {
    const auto result = clustersim::sweep::find_capacity(file, {}, options);
    rate = result.answer ? result.answer->rate_per_s : 0;
    trials = result.trials.size();
  }
  state.counters["rate"] = rate;
  state.counters["trials"] = static_cast<double>(trials);
}

}  // namespace

BENCHMARK(BM_Serving70B)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Serving70BExact)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Capacity70B)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
