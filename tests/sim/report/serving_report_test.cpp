#include "sim/report/serving_report.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/scenario/scenario_loader.hpp"

namespace serving_report_test {

using namespace clustersim;

namespace {

// Two DGX H100 nodes: an fp8 Llama-3-8B on a mixed pool of the cluster's H100s and a pool of
// H200s (no simulation, only the report of what the scenario asks for).
constexpr const char* kTwoPools = R"(schema_version: 1
name: two-pools
include: [systems/dgx-h100.yaml]
cluster: {nodes: 2}
workload:
  kind: serving
  model: llama-3-8b
  framework: sglang-0.4
  precision: {weights: fp8, kv_cache: fp8}
  pools:
    fast: {replicas: 2, tp: 4}
    big: {accelerator: h200-sxm, replicas: 1, tp: 8}
  requests: {count: 10}
)";

}  // namespace

TEST_CASE("the serving JSON's scenario block names the precision, pools, topology and --set overrides") {
  const std::vector<std::string> overrides = {"workload.pools.fast.tp=2", "workload.pools.fast.replicas=4"};
  const scenario::Scenario s = scenario::load_scenario_from_string(kTwoPools, "pools.yaml", overrides);
  const auto json = report::serving_result_json(s, serving::ServingResult{}, runner::RunResult{});
  const auto& scenario = json["scenario"];
  CHECK(scenario["name"] == "two-pools");
  CHECK(scenario["file"] == "pools.yaml");
  CHECK(scenario["overrides"].get<std::vector<std::string>>() == overrides);
  CHECK(scenario["topology"] == "rail-optimized");  // the DGX preset's
  CHECK(scenario["simulation"]["fidelity"] == "flow");  // the default
  CHECK(scenario["simulation"]["mode"] == "symmetric");
  CHECK(scenario["model"] == "llama-3-8b");
  CHECK(scenario["framework"] == "sglang-0.4");
  CHECK(scenario["precision"]["weights"] == "fp8");
  CHECK(scenario["precision"]["activations"] == "bf16");
  CHECK(scenario["precision"]["kv_cache"] == "fp8");
  // Pools in name order, each with its accelerator (the cluster's where it names none) and
  // its split as the overrides left it.
  const auto& pools = scenario["pools"];
  REQUIRE(pools.size() == 2);
  CHECK(pools[0]["name"] == "big");
  CHECK(pools[0]["accelerator"] == "h200-sxm");
  CHECK(pools[0]["role"] == "mixed");
  CHECK(pools[0]["tp"] == 8);
  CHECK(pools[1]["name"] == "fast");
  CHECK(pools[1]["accelerator"] == "h100-sxm");
  CHECK(pools[1]["replicas"] == 4);
  CHECK(pools[1]["tp"] == 2);
  CHECK(pools[1]["pp"] == 1);
  CHECK(pools[1]["ep"] == 1);
}

}  // namespace serving_report_test
