// Issue 16 part 1: the analytical fidelity (the closed form, with a collective's replicas
// sharing the links they cross) and the flow fidelity give the same step on the shipped
// training scenarios and on the default job over each fabric a planner compares.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "scenario_runs.hpp"
#include "sim/platform/comm_runtime.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/training/training_result.hpp"

namespace fidelity_agreement_test {

namespace fs = std::filesystem;
using namespace clustersim;

namespace {

double step_s(const fs::path& file, std::vector<std::string> overrides, const char* fidelity) {
  if (overrides.empty()) {  // the golden test's run where the file asks for this fidelity
    const auto& written = scenario_testing::run_as_written(file);
    if (platform::fidelity_name(written.scenario.simulation.fidelity) == fidelity) {
      const auto* training = dynamic_cast<const training::TrainingResult*>(written.run.primary.get());
      REQUIRE(training != nullptr);
      return training->step_time_s;
    }
  }
  overrides.push_back(std::string("simulation.fidelity=") + fidelity);
  return runner::run_training(scenario::load_scenario(file, overrides)).step_time_s;
}

/// analytical / flow - 1.
double gap(const fs::path& file, const std::vector<std::string>& overrides = {}) {
  return step_s(file, overrides, "analytical") / step_s(file, overrides, "flow") - 1.0;
}

const fs::path kScenarios = fs::path(CLUSTERSIM_SOURCE_DIR) / "scenarios";

}  // namespace

TEST_CASE("analytical and flow agree within 5 % on every shipped single-job training scenario") {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kScenarios)) {
    const fs::path& p = entry.path();
    if (!entry.is_regular_file() || p.extension() != ".yaml") continue;
    if (p.parent_path().filename() == "serving") continue;
    // Single-job training scenarios only. Two jobs on one fabric (shared-fabric, the serving
    // pair): the closed form sees only the other job's round running when a collective starts,
    // not the rounds after it (the run's notes say so); that is what the flow default is for.
    const scenario::Scenario s = scenario::load_scenario(p);
    if (s.workload->kind() != "training" || !s.jobs.empty()) continue;
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 18);
  for (const auto& file : files) {
    CAPTURE(file.string());
    CHECK(std::abs(gap(file)) <= 0.05);
  }
}

TEST_CASE("analytical and flow agree within 5 % on the default job over each fabric") {
  const fs::path file = kScenarios / "default.yaml";
  const std::vector<std::vector<std::string>> fabrics = {
      {},                                            // fat-tree 1:1
      {"cluster.network.oversubscription=4"},        // fat-tree 4:1
      {"cluster.network.tiers=3", "cluster.network.radix=16"},
      {"cluster.network.topology=rail-optimized"},
      {"cluster.network.topology=rail-optimized", "cluster.network.oversubscription=4"},
      {"cluster.network.topology=dragonfly", "cluster.network.groups=16", "cluster.network.routers_per_group=8",
       "cluster.network.terminals_per_router=8", "cluster.network.global_links_per_router=2"},
      {"cluster.network.topology=torus", "cluster.network.dims=[8,8,16]"},
  };
  for (const auto& fabric : fabrics) {
    CAPTURE(fabric.empty() ? std::string("fat-tree 1:1") : fabric.front());
    CHECK(std::abs(gap(file, fabric)) <= 0.05);
  }
  // The closed form now sees what these fabrics cost: 4:1 is slower (8.683 s against 8.521 s,
  // +1.9 %; +4.3 % until 2026-12-06, when d-mod-k put every destination of a spine's parallel
  // cables to one leaf on the same cable).
  const double non_blocking = step_s(file, {}, "analytical");
  CHECK(step_s(file, {"cluster.network.oversubscription=4"}, "analytical") > non_blocking * 1.015);
}

TEST_CASE("where different communications overlap, the closed form sees the ones already running") {
  // Tori (issue 29 part 6): the overlapped gradient reduction runs over the links of the
  // backward's TP rings. Without the overlap the two fidelities agree; with it the closed form
  // read fast (-9.8 % on the 2D torus, -9.3 % on the issue's [16, 8, 8] at 50 GB/s) until
  // 2026-12-06, when a communication started to see those running beside it (AnalyticalComm).
  const fs::path file = kScenarios / "default.yaml";
  const std::vector<std::string> torus = {"cluster.network.topology=torus", "cluster.network.dims=[32,32]"};
  auto serial = torus;
  serial.push_back("workload.overlap_grad_reduce=false");
  CHECK(std::abs(gap(file, serial)) <= 0.01);
  CHECK(std::abs(gap(file, torus)) <= 0.05);
  const std::vector<std::string> issue = {"cluster.network.topology=torus", "cluster.network.dims=[16,8,8]",
                                          "cluster.network.link.bandwidth=50 GB/s"};
  CHECK(std::abs(gap(file, issue)) <= 0.05);
}

TEST_CASE("analytical and flow agree within 5 % on the xGMI mesh, the Gaudi 3 RoCE mesh and the TPU v5p torus") {
  // Issue 16 part 3: the mesh is real point-to-point links in the flow network, and the
  // closed form counts the flows on each of them, so the two agree; the torus runs XLA's
  // bidirectional rings per dimension in both.
  // Gaudi 3 and TPU v5p presets give no exp rate, so their cases run unfused attention.
  const auto scenario_on = [](const std::string& system, int nodes, const std::string& parallelism,
                              const std::string& attention = "flash") {
    return "schema_version: 1\nname: fabric-agreement\ninclude: [systems/" + system +
           ".yaml]\ncluster:\n  nodes: " + std::to_string(nodes) +
           "\nworkload:\n  kind: training\n  model: llama-3-8b\n  seq_len: 4096\n  global_batch: 64\n"
           "  micro_batch: 1\n  precision: bf16\n  parallelism: " + parallelism + "\n  attention: " + attention +
           "\n  overlap_grad_reduce: false\n";
  };
  const auto run = [](const std::string& yaml, const char* fidelity) {
    return runner::run_training(
               scenario::load_scenario_from_string(yaml, "agreement.yaml", {std::string("simulation.fidelity=") + fidelity}))
        .step_time_s;
  };
  const std::vector<std::string> cases = {
      scenario_on("mi300x-x8", 4, "{tp: 8, pp: 1, dp: 4, cp: 1}"),
      scenario_on("mi300x-x8", 4, "{tp: 4, pp: 2, dp: 4, cp: 1}"),  // TP of 4 on the mesh: 2 rings
      scenario_on("mi300x-x8", 4, "{tp: 1, pp: 1, dp: 32, cp: 1}"),  // DP over 4 meshes: 8 channels
      scenario_on("hls-gaudi3", 2, "{tp: 8, pp: 1, dp: 2, cp: 1}", "unfused"),
      scenario_on("tpu-v5p-cube", 16, "{tp: 4, pp: 1, dp: 16, cp: 1}", "unfused"),
  };
  for (const auto& yaml : cases) {
    CAPTURE(yaml);
    const double analytical = run(yaml, "analytical");
    const double flow = run(yaml, "flow");
    CHECK(analytical > 0);
    CHECK(std::abs(analytical / flow - 1.0) <= 0.05);
  }
}

}  // namespace fidelity_agreement_test
