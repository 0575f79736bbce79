#include "sim/runner/scenario_runner.hpp"

#include <doctest/doctest.h>

#include "sim/engine/error.hpp"
#include "sim/scenario/scenario_loader.hpp"

using namespace clustersim;

namespace {

scenario::Scenario two_node_scenario() {
  return scenario::load_scenario_from_string(R"(schema_version: 1
name: runner-test
include: [systems/dgx-a100.yaml]
cluster: {nodes: 2}
workload:
  kind: training
  model: megatron-gpt-1.7b
  seq_len: 2048
  global_batch: 32
  parallelism: {tp: 8, pp: 2, dp: 1}
)",
                                             "runner-test.yaml");
}

}  // namespace

TEST_CASE("the runner builds the models the scenario names and simulates a step") {
  const auto scenario = two_node_scenario();
  const auto result = runner::run_training(scenario);
  CHECK(result.gpus == 16);
  CHECK(result.microbatches == 32);
  CHECK(result.step_time_s > 0);
  // tokens/s is the global batch over the step time.
  CHECK(result.tokens_per_s == doctest::Approx(32.0 * 2048 / result.step_time_s));
  CHECK(result.peak_tflops_per_gpu == doctest::Approx(312));
  // A faster accelerator (same network) can only shorten the step.
  auto faster = scenario;
  for (auto& [dtype, peak] : faster.cluster.accelerator.peak_flops_per_s) peak *= 2;
  faster.cluster.accelerator.hbm_bytes_per_s *= 2;
  CHECK(runner::run_training(faster).step_time_s < result.step_time_s);
}

TEST_CASE("fidelities and modes the runner cannot honestly simulate are errors, not numbers") {
  auto scenario = two_node_scenario();
  scenario.simulation.mode = scenario::SimulationMode::full;
  CHECK_THROWS_WITH_AS(runner::run_training(scenario),
                       "simulation.mode 'full' is not implemented yet; use 'symmetric'",
                       SimulationError);
}

TEST_CASE("a network the topology builder rejects is reported as a configuration error") {
  auto scenario = two_node_scenario();
  scenario.cluster.network.scale_out.radix = 63;
  CHECK_THROWS_AS(runner::run_training(scenario), ConfigError);
}
