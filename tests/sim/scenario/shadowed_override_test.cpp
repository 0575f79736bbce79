// An override that has no effect because another layer sets the same quantity is a warning
// naming the key that wins, and the warning reaches the result's notes.
#include <doctest/doctest.h>

#include <string>

#include "sim/report/run_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace shadowed_override_test {

using namespace clustersim;
using namespace clustersim::scenario;

namespace {

const std::string kLibrary = CLUSTERSIM_DATA_DIR;

// An 8 x H100 node of the real library (dgx-h100 sets cluster.node.scale_up.bandwidth).
const std::string kH100 = R"(schema_version: 1
name: shadowed
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1}
workload: {model: llama-3-8b, seq_len: 4096, global_batch: 16, micro_batch: 1, parallelism: {tp: 8}}
)";

}  // namespace

TEST_CASE("a shadowed override is never silent: the warning names the key that wins and reaches the result") {
  // dgx-h100 sets cluster.node.scale_up.bandwidth, which wins over any accelerator's.
  const std::string yaml = kH100 + "accelerators: {h100-sxm: {scale_up_bandwidth: \"900 GB/s\"}}\n";
  const Scenario s = load_scenario_from_string(yaml, "t.yaml", {}, kLibrary);
  REQUIRE(s.warnings.size() == 1);
  const std::string warning = s.warnings[0].render();
  CHECK(warning.rfind("t.yaml:6:47: accelerators.h100-sxm.scale_up_bandwidth: has no effect: "
                      "cluster.node.scale_up.bandwidth (", 0) == 0);
  CHECK(warning.find(") sets the scale-up bandwidth and wins") != std::string::npos);
  CHECK(warning.find("dgx-h100.yaml") != std::string::npos);
  CHECK(s.platform.cluster.network.scale_up.bytes_per_s == 450e9);
  const runner::RunResult run = runner::run_scenario(s);
  CHECK(report::run_summary_table(s, run).find("note: warning: " + warning) != std::string::npos);
  const auto json = report::run_result_json(s, run);
  bool in_json = false;
  for (const auto& note : json["notes"]) in_json = in_json || note.get<std::string>() == "warning: " + warning;
  CHECK(in_json);
  // The library's own figures (h100-sxm's 450 GB/s under dgx-h100's) are no override: no warning.
  CHECK(load_scenario_from_string(kH100, "t.yaml", {}, kLibrary).warnings.empty());
  // A --set of the shadowed key warns too; a derived preset warns for what it sets, not for what
  // it inherits.
  const Scenario set = load_scenario_from_string(kH100, "t.yaml", {"accelerators.h100-sxm.scale_up_bandwidth=900 GB/s"},
                                                 kLibrary);
  REQUIRE(set.warnings.size() == 1);
  CHECK(set.warnings[0].file == "--set accelerators.h100-sxm.scale_up_bandwidth=900 GB/s");
  std::string derived = kH100 + "accelerators: {fast: {base: h100-sxm, memory: {hbm_bandwidth: \"6.7 TB/s\"}}}\n";
  derived.replace(derived.find("{nodes: 1}"), 10, "{nodes: 1, node: {accelerator: fast}}");
  CHECK(load_scenario_from_string(derived, "t.yaml", {}, kLibrary).warnings.empty());
  derived.replace(derived.find("memory: {"), 9, "scale_up_bandwidth: \"1 TB/s\", memory: {");
  const Scenario derived_sets = load_scenario_from_string(derived, "t.yaml", {}, kLibrary);
  REQUIRE(derived_sets.warnings.size() == 1);
  CHECK(derived_sets.warnings[0].key_path == "accelerators.fast.scale_up_bandwidth");
}

}  // namespace shadowed_override_test
