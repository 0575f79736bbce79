// A training scenario with a failed spine switch, end to end: the loader accepts the keys, the
// run switches to full mode with a note, the step is slower than on the intact network, and the
// report says by how much. The flow model's stall and reroute are derived by hand in
// tests/topologies/link_faults_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/training/training_result.hpp"

namespace link_faults_run_test {

using namespace clustersim;

namespace {

/// Two DGX H100 nodes on a radix-8 two-tier fat-tree: 16 NICs, 4 leaves, 2 spines. Scattered
/// placement puts every TP group across both nodes, so its collectives cross the spines from
/// the first layer on.
std::string faulty_scenario(const std::string& faults, const std::string& simulation) {
  return R"(schema_version: 1
name: spine-failure
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 2
  placement: scattered
  network:
    topology: fat-tree
    tiers: 2
    radix: 8
)" + faults + R"(
workload:
  kind: training
  model: megatron-gpt-1.7b
  seq_len: 2048
  global_batch: 16
  parallelism: {tp: 8, pp: 1, dp: 2}
simulation: )" + simulation + "\n";
}

bool has_note(const training::TrainingResult& result, const std::string& start) {
  return std::any_of(result.notes.begin(), result.notes.end(),
                     [&](const std::string& note) { return note.rfind(start, 0) == 0; });
}

}  // namespace

TEST_CASE("a spine switch failure runs in full mode, notes it, and costs step time") {
  const std::string faults = R"(    reroute_delay: 5 ms
    faults:
      spine: {switch: spine0, at: 0 s})";
  const auto faulty = scenario::load_scenario_from_string(faulty_scenario(faults, "{fidelity: flow}"), "spine.yaml");
  const training::TrainingResult with = runner::run_training(faulty);
  CHECK(with.mode == "full");
  CHECK(has_note(with, "simulation.mode: full instead of symmetric: cluster.network.faults break the symmetry"));
  CHECK(has_note(with, "link faults (spine: switch spine0 from 0 s, down, rerouted 0.005 s later (subnet-manager))"));
  REQUIRE(with.link_faults.computed);

  const auto intact =
      scenario::load_scenario_from_string(faulty_scenario("", "{fidelity: flow, mode: full}"), "intact.yaml");
  const training::TrainingResult without = runner::run_training(intact);
  CHECK_FALSE(without.link_faults.computed);
  // The report's fault-free step is the same step on the intact network.
  CHECK(with.link_faults.step_time_without_s == doctest::Approx(without.step_time_s).epsilon(1e-9));
  // Every flow through spine0 stalls for the 5 ms reroute delay, then shares spine1: slower.
  CHECK(with.step_time_s > without.step_time_s + 1e-3);
  CHECK(with.link_faults.lost_s == doctest::Approx(with.step_time_s - without.step_time_s).epsilon(1e-9));
  CHECK(with.link_faults.lost_share == doctest::Approx(with.link_faults.lost_s / with.step_time_s).epsilon(1e-12));
}

TEST_CASE("a link fault's cost is measured beside the same other jobs, not against the step alone") {
  // scenarios/congestion/shared-fabric.yaml: a data-parallel job beside a tenant's all-to-all on
  // a 4:1 fabric (their contention triples the step), here with one leaf-spine cable at half
  // bandwidth. The fault-free baseline runs the tenant too, so its contention is not counted as
  // the fault's.
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/congestion/shared-fabric.yaml";
  const std::vector<std::string> optic = {"cluster.network.faults.optic.link=leaf0-spine0",
                                          "cluster.network.faults.optic.at=0 s",
                                          "cluster.network.faults.optic.bandwidth_fraction=0.5"};
  const training::TrainingResult with = runner::run_training(scenario::load_scenario(file, optic));
  REQUIRE(with.link_faults.computed);
  CHECK(has_note(with, "link faults: their cost is measured against the same run on the intact network, the other "
                       "jobs beside it as here"));
  // The same run without the fault, tenant included, in the full mode the fault forced.
  const training::TrainingResult beside =
      runner::run_training(scenario::load_scenario(file, {"simulation.mode=full"}));
  CHECK(with.link_faults.step_time_without_s == beside.step_time_s);
  CHECK(with.link_faults.lost_s == doctest::Approx(with.step_time_s - beside.step_time_s).epsilon(1e-12));
  // Against the step alone (the baseline until 2026-12-07) the fault was charged with the
  // tenant's contention: more than half the step.
  const training::TrainingResult alone = runner::run_training(scenario::load_scenario(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/congestion/shared-fabric-alone.yaml", {"simulation.mode=full"}));
  CHECK(with.step_time_s - alone.step_time_s > 0.5 * with.step_time_s);
  CHECK(with.link_faults.lost_share < 0.05);
}

TEST_CASE("link faults with the analytical fidelity are refused at their key") {
  const std::string faults = R"(    faults:
      spine: {switch: spine0, at: 0 s})";
  CHECK_THROWS_WITH_AS(
      scenario::load_scenario_from_string(faulty_scenario(faults, "{fidelity: analytical}"), "spine.yaml"),
      doctest::Contains("spine.yaml:12:7: cluster.network.faults: degraded and failed links need "
                        "simulation.fidelity: flow"),
      ConfigError);
}

TEST_CASE("a serving workload whose instances run no flows warns that link faults have no effect") {
  const auto serving = scenario::load_scenario(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/serving/llama3-8b-chatbot.yaml",
      {"cluster.network.faults.optic.link=gpu0-nvswitch0", "cluster.network.faults.optic.at=1 ms",
       "cluster.network.faults.optic.bandwidth_fraction=0.5"});
  const bool warned = std::any_of(serving.warnings.begin(), serving.warnings.end(), [](const config::Diagnostic& w) {
    return w.render().find("cluster.network.faults: the mapping has no effect: a serving instance's collectives inside "
                           "its scale-up domain are costed in closed form") != std::string::npos;
  });
  CHECK(warned);
}

TEST_CASE("a tail study with a failed switch runs every iteration on the faulty network") {
  // Stragglers alone (each node slow with probability 0.3, at 0.8 speed): an iteration with no
  // slow node is the nominal step, which carries the fault; one with a slow node is slower.
  const std::string faults = R"(    reroute_delay: 5 ms
    faults:
      spine: {switch: spine0, at: 0 s}
  stragglers: {probability: 0.3, compute_speed: 0.8})";
  const auto faulty = scenario::load_scenario_from_string(
      faulty_scenario(faults, "{fidelity: flow, mode: full, iterations: 6, seed: 3}"), "spine.yaml");
  // No warning that the faults act on the nominal step only (they act in every iteration).
  CHECK_FALSE(std::any_of(faulty.warnings.begin(), faulty.warnings.end(),
                          [](const config::Diagnostic& w) { return w.key_path == "cluster.network.faults"; }));
  const training::TrainingResult with = runner::run_training(faulty);
  REQUIRE(with.iterations.computed);
  REQUIRE(with.link_faults.computed);
  // The nominal step of the iterations is the job's step, fault included.
  CHECK(with.iterations.nominal_s == doctest::Approx(with.step_time_s).epsilon(1e-12));
  CHECK(with.iterations.nominal_s > with.link_faults.step_time_without_s + 1e-3);
  int fast = 0;
  for (const double t : with.iterations.step_times_s) {
    CHECK(t >= with.step_time_s * (1 - 1e-12));
    fast += t == with.step_time_s ? 1 : 0;
  }
  // The steps with nobody slow were not simulated again: the nominal step plus one per slow one.
  // (Stragglers are the only cause: their configuration alone is the one with every cause.)
  CHECK(with.iterations.simulated_steps == 1 + 6 - fast);
  CHECK(fast > 0);
  CHECK(fast < 6);
}

}  // namespace link_faults_run_test
