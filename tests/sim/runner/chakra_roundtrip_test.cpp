// A training step written out as Chakra traces (runner::export_chakra, `run --export-chakra`)
// and run again as a trace workload on the same platform: the same step time within 1 %.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../sweep/temp_folders.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/trace/chakra_trace.hpp"
#include "sim/training/training_result.hpp"

namespace chakra_roundtrip_test {

using namespace clustersim;

namespace {

const clustersim::testing::TempFolders folders("clustersim-chakra-roundtrip");

const std::string kPlatform = R"(schema_version: 1
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1}
)";

const std::string kTraining = kPlatform + R"(name: tiny-train
models:
  tiny-llm: {source: "invented for tests/sim/runner", hidden_size: 1024, num_hidden_layers: 8,
             num_attention_heads: 16, intermediate_size: 4096, vocab_size: 32000, hidden_act: gelu}
workload:
  kind: training
  model: tiny-llm
  seq_len: 2048
  global_batch: 16
  parallelism: {tp: 2, pp: 2, dp: 2}
)";

double trace_step_s(const std::filesystem::path& dir) {
  const auto s = scenario::load_scenario_from_string(kPlatform + "name: replay\nworkload:\n  kind: trace\n  trace: " +
                                                         (dir / "step").string() + "\n  groups_file: " +
                                                         (dir / "step.groups.json").string() +
                                                         "\n  compute: recorded\n",
                                                     "replay.yaml");
  const auto run = runner::run_scenario(s);
  for (const auto& m : run.primary->metrics) {
    if (m.name == "step_time") return m.value;
  }
  FAIL("no step_time");
  return 0;
}

}  // namespace

TEST_CASE("a training step exported as Chakra traces and run again takes the same time within 1 %") {
  if (!trace::chakra_supported()) return;  // trace_workload_test checks the error of such a build
  for (const std::string& overrides : {std::string(), std::string("workload.host_op_time=0 us"),
                                       std::string("workload.parallelism={tp: 4, pp: 2, dp: 1}")}) {
    CAPTURE(overrides);
    const auto training = scenario::load_scenario_from_string(
        kTraining, "train.yaml", overrides.empty() ? std::vector<std::string>{} : std::vector<std::string>{overrides});
    const std::filesystem::path dir = folders.fresh("export");
    const training::ChakraExport written = runner::export_chakra(training, dir);
    CHECK(written.files.size() == 8);  // one per rank of the job
    CHECK(std::filesystem::exists(written.groups_file));
    CHECK(written.nodes > 1000);
    const double original = runner::run_training(training).step_time_s;
    const double replayed = trace_step_s(dir);
    MESSAGE("step ", original, " s, replayed from the traces ", replayed, " s");
    CHECK(std::abs(replayed / original - 1) < 0.01);
  }
}

TEST_CASE("a collective whose group is whole network dimensions carries involved_dim, as ASTRA-sim reads it") {
  if (!trace::chakra_supported()) return;
  // Two DGX H100 nodes: dimensions [8, 2]. TP 8 is one node ({true, false}), DP 2 the same GPU
  // of both ({false, true}); with TP 4 and DP 4 neither group is whole dimensions.
  const auto exported = [&](const std::string& parallelism, const std::string& name) {
    const auto training = scenario::load_scenario_from_string(
        kTraining, "train.yaml", {"cluster.nodes=2", "workload.parallelism=" + parallelism, "workload.global_batch=32"});
    return runner::export_chakra(training, folders.fresh(name));
  };
  const training::ChakraExport whole = exported("{tp: 8, pp: 1, dp: 2}", "whole");
  CHECK(whole.dimensions == std::vector<int>{8, 2});
  CHECK(whole.collectives > 0);
  CHECK(whole.with_dimensions == whole.collectives);
  const trace::ChakraTrace rank9 = trace::read_chakra_file(whole.files.at(0).parent_path() / "step.9.et");
  int tp = 0, dp = 0;
  for (const trace::ChakraNode& node : rank9.nodes) {
    if (node.type != trace::ChakraNodeType::collective) continue;
    const std::vector<int>& members = whole.groups.at(node.pg_name);
    if (members == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}) {
      CHECK(node.involved_dim == std::vector<bool>{true, false});
      ++tp;
    } else {
      CHECK(members == std::vector<int>{1, 9});
      CHECK(node.involved_dim == std::vector<bool>{false, true});
      ++dp;
    }
  }
  CHECK(tp > 0);
  CHECK(dp > 0);
  const training::ChakraExport split = exported("{tp: 4, pp: 1, dp: 4}", "split");
  CHECK(split.collectives > 0);
  CHECK(split.with_dimensions == 0);
}

TEST_CASE("--export-chakra needs a training scenario") {
  const auto serving = scenario::load_scenario_from_string(kPlatform + R"(name: serve
workload:
  kind: serving
  model: llama-3-8b
  pools: {main: {replicas: 1, tp: 1}}
  requests: {count: 10}
)",
                                                           "serve.yaml");
  CHECK_THROWS_WITH_AS(runner::export_chakra(serving, folders.fresh("serving")), doctest::Contains("serving"),
                       ConfigError);
}

}  // namespace chakra_roundtrip_test
