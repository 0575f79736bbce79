// Scenario::resolved: every key as run (written, from includes and presets, overridden by
// --set) plus the defaults of the declared keys nobody wrote; what manifests hash and record.
#include <doctest/doctest.h>

#include "sim/report/scenario_json.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace resolved_scenario_test {

namespace scenario = clustersim::scenario;

namespace {

constexpr const char* kYaml = R"(schema_version: 1
name: tiny
include: [systems/dgx-h100.yaml]
cluster:
  nodes: 1
workload:
  kind: training
  model: llama-3-8b
  seq_len: 2048
  global_batch: 8
  parallelism: {tp: 2, pp: 2, dp: 2}
)";

scenario::Scenario load(std::vector<std::string> overrides = {}) {
  return scenario::load_scenario_from_string(kYaml, "tiny.yaml", overrides);
}

}  // namespace

TEST_CASE("the resolved scenario holds written keys, --set values and unwritten defaults") {
  const auto s = load({"workload.global_batch=16"});
  const auto& r = s.resolved;
  CHECK(r.at("name") == "tiny");
  CHECK(r.at("cluster.nodes") == "1");
  CHECK(r.at("workload.seq_len") == "2048");
  CHECK(r.at("workload.parallelism.tp") == "2");
  CHECK(r.at("workload.global_batch") == "16");  // the override, not the file's 8
  // Not written anywhere: the declared defaults (SessionOptions' initialisers).
  CHECK(r.at("simulation.fidelity") == "flow");
  CHECK(r.at("simulation.mode") == "symmetric");
  CHECK(r.at("simulation.seed") == "1");
  // From the included system file.
  CHECK(r.at("cluster.node.accelerator") == "h100-sxm");
  CHECK(!r.contains("include"));
}

TEST_CASE("the resolved hash follows the inputs, not the load") {
  CHECK(clustersim::report::resolved_hash(load()) == clustersim::report::resolved_hash(load()));
  CHECK(clustersim::report::resolved_hash(load()) != clustersim::report::resolved_hash(load({"simulation.seed=2"})));
  // Writing a default explicitly is the same input as leaving it out.
  CHECK(clustersim::report::resolved_hash(load()) ==
        clustersim::report::resolved_hash(load({"simulation.fidelity=flow"})));
  const auto manifest = clustersim::report::manifest_json(load({"simulation.seed=7"}), 0xabc, 12, "9.9");
  CHECK(manifest["seed"] == 7);
  CHECK(manifest["version"] == "9.9");
  CHECK(manifest["fingerprint"] == "0000000000000abc");
  CHECK(manifest["resolved"]["simulation.seed"] == "7");
  CHECK(manifest["scenario"]["overrides"][0] == "simulation.seed=7");
}

TEST_CASE("the resolved scenario holds a job's unwritten defaults, by its kind") {
  const std::string yaml = std::string(kYaml) + R"(jobs:
  tenant:
    kind: collective-loop
    accelerators: {first: 4, count: 4}
    bytes: "1 GB"
)";
  const auto with_job = scenario::load_scenario_from_string(yaml, "job.yaml", {"workload.parallelism.dp=1"});
  const auto& r = with_job.resolved;
  CHECK(r.at("jobs.tenant.kind") == "collective-loop");
  CHECK(r.at("jobs.tenant.bytes") == "1 GB");
  CHECK(r.at("jobs.tenant.rounds") == "0");                  // not written: its kind's default
  CHECK(r.at("jobs.tenant.collective") == "all-reduce");
  // Writing a job's default is the same input as leaving it out.
  const auto explicit_rounds = scenario::load_scenario_from_string(
      yaml, "job.yaml", {"workload.parallelism.dp=1", "jobs.tenant.rounds=0"});
  CHECK(clustersim::report::resolved_hash(with_job) == clustersim::report::resolved_hash(explicit_rounds));
}

}  // namespace resolved_scenario_test
