#include "sim/validate/base_cluster.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/config/diagnostics.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace base_cluster_test {

using namespace clustersim::validate;

namespace {

const std::filesystem::path kOwnCluster = std::filesystem::path(CLUSTERSIM_TEST_DATA_DIR) / "validate" / "own_cluster.yaml";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a base scenario keeps its platform and model presets, not its workload") {
  const BaseCluster base = load_base_cluster(kOwnCluster);
  CHECK(base.file == kOwnCluster.string());
  CHECK(base.accelerators_per_node == 4);
  CHECK(base.accelerator == "h100-sxm");
  CHECK(base.model_names == std::vector<std::string>{"lab-gpt-1b"});
  CHECK(has(base.model_entries_yaml, "  \"lab-gpt-1b\": {\"hidden_size\": \"2048\""));
  // The include is resolved: the DGX H100 node with the file's own per_node and NICs on top.
  CHECK(has(base.cluster_entries_yaml, "\"accelerator\": \"h100-sxm\""));
  CHECK(has(base.cluster_entries_yaml, "\"per_node\": \"4\""));
  CHECK(has(base.cluster_entries_yaml, "\"tiers\": \"2\""));
  CHECK_FALSE(has(base.cluster_entries_yaml, "nodes\":"));  // the row sets the node count
  CHECK_FALSE(has(base.sections_yaml, "workload"));
  CHECK_FALSE(has(base.sections_yaml, "lab-h100-4gpu"));  // name and description are the row's

  // The pieces make a scenario that loads: the base cluster at the row's node count.
  const std::string yaml = "schema_version: 1\nname: t\n" + base.sections_yaml + "models:\n" + base.model_entries_yaml +
                           "cluster:\n  nodes: 3\n" + base.cluster_entries_yaml +
                           "workload: {kind: training, model: lab-gpt-1b, seq_len: 2048, global_batch: 12}\n";
  const auto scenario = clustersim::scenario::load_scenario_from_string(yaml, "t.yaml");
  CHECK(scenario.platform.cluster.accelerator_count() == 12);
  CHECK(scenario.training().model.vocab_size == 50304);
}

TEST_CASE("flow_yaml writes every scalar quoted, so text the loader reads alike round-trips") {
  std::vector<clustersim::config::Diagnostic> diagnostics;
  const auto node = clustersim::config::parse_config(
      "a: {b: \"x: y # z\", c: [1, true, ~]}\nd: 'it''s \"quoted\"'\n", "t.yaml", diagnostics);
  REQUIRE(diagnostics.empty());
  const std::string flow = flow_yaml(node);
  CHECK(flow == R"({"a": {"b": "x: y # z", "c": ["1", "true", null]}, "d": "it's \"quoted\""})");
  const auto again = clustersim::config::parse_config(flow, "flow.yaml", diagnostics);
  REQUIRE(diagnostics.empty());
  CHECK(flow_yaml(again) == flow);
}

TEST_CASE("a base scenario with a problem is reported at its own file and line") {
  const auto path = std::filesystem::temp_directory_path() / "clustersim_bad_base.yaml";
  std::ofstream(path) << "schema_version: 1\nname: b\ninclude: [systems/dgx-h100.yaml]\ncluster:\n  nodes: 1\n"
                         "  node: {per_nod: 4}\nworkload: {kind: training, model: llama-3-8b, seq_len: 8, "
                         "global_batch: 8}\n";
  try {
    load_base_cluster(path);
    FAIL("expected a ScenarioError");
  } catch (const clustersim::config::ScenarioError& e) {
    const std::string message = e.what();
    CHECK(has(message, path.string() + ":6:"));
    CHECK(has(message, "per_node"));
  }
  std::filesystem::remove(path);
}

}  // namespace base_cluster_test
