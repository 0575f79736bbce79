// A setting the rest of the scenario makes ineffective (at the chosen mode or fidelity, for the
// chosen split or workload kind) is a warning naming the key, its value and why, and the warning
// reaches the result's notes: never silently ignored.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/report/run_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace ineffective_settings_test {

using namespace clustersim;
using namespace clustersim::scenario;

namespace {

// One DGX A100 node, GPT 1.7B data-parallel over its 8 GPUs (tp 1).
const std::string kTraining = R"(schema_version: 1
name: ineffective
include: [systems/dgx-a100.yaml]
cluster: {nodes: 1}
workload:
  model: megatron-gpt-1.7b
  seq_len: 2048
  global_batch: 16
  tp_comm_overlap: true
  parallelism: {tp: 1, dp: 8}
)";

// One DGX H100 node serving Llama-3-8B on 8 single-GPU instances.
const std::string kServing = R"(schema_version: 1
name: serving
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1}
workload:
  kind: serving
  model: llama-3-8b
  pools:
    main: {replicas: 8}
  requests: {count: 20, arrival: {rate: 10}}
)";

std::vector<std::string> rendered(const Scenario& s) {
  std::vector<std::string> out;
  for (const config::Diagnostic& warning : s.warnings) out.push_back(warning.render());
  return out;
}

bool warns(const Scenario& s, const std::string& text) {
  const auto all = rendered(s);
  return std::any_of(all.begin(), all.end(), [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("training: TP settings without tensor parallelism warn, and the warning reaches the notes") {
  const Scenario s = load_scenario_from_string(kTraining, "t.yaml");
  REQUIRE(s.warnings.size() == 1);
  CHECK(rendered(s).front() ==
        "t.yaml:9:20: workload.tp_comm_overlap: true has no effect: parallelism.tp is 1, so there are no "
        "tensor-parallel collectives");
  const runner::RunResult run = runner::run_scenario(s);
  const auto json = report::run_result_json(s, run);
  bool noted = false;
  for (const auto& note : json["notes"]) noted = noted || note.get<std::string>() == "warning: " + rendered(s).front();
  CHECK(noted);
  // A --set names itself as the place; with tp 2 the same keys matter and nothing warns.
  const Scenario set = load_scenario_from_string(kTraining, "t.yaml", {"workload.tp_async_backward=false"});
  CHECK(warns(set, "--set workload.tp_async_backward=false: workload.tp_async_backward: false has no effect: "
                   "parallelism.tp is 1"));
  CHECK(load_scenario_from_string(kTraining, "t.yaml",
                                  {"workload.parallelism.tp=2", "workload.parallelism.dp=4",
                                   "workload.parallelism.sequence_parallel=true"})
            .warnings.empty());
}

TEST_CASE("training: ZeRO-3 settings under another stage, and overlap_grad_reduce where nothing overlaps, warn") {
  const Scenario zero1 = load_scenario_from_string(
      kTraining, "t.yaml",
      {"workload.parallelism.zero3_granularity=tensor", "workload.memory.zero3_max_live_parameters=2e8"});
  CHECK(warns(zero1, "workload.parallelism.zero3_granularity: tensor has no effect: parallelism.zero is 1; only "
                     "ZeRO 3 reads it"));
  CHECK(warns(zero1, "workload.memory.zero3_max_live_parameters: 2e8 has no effect: parallelism.zero is 1"));
  const Scenario zero3 = load_scenario_from_string(
      kTraining, "t.yaml", {"workload.parallelism.zero=3", "workload.overlap_grad_reduce=false",
                            "workload.parallelism.zero3_granularity=tensor"});
  CHECK(warns(zero3, "workload.overlap_grad_reduce: false has no effect: ZeRO 3 reduce-scatters every "
                     "micro-batch's gradients during its backward"));
  CHECK_FALSE(warns(zero3, "zero3_granularity"));
  const Scenario alone = load_scenario_from_string(
      kTraining, "t.yaml", {"workload.parallelism.tp=8", "workload.parallelism.dp=1", "workload.overlap_grad_reduce=true"});
  CHECK(warns(alone, "workload.overlap_grad_reduce: true has no effect: dp x cp is 1, so there is no gradient "
                     "reduction"));
}

TEST_CASE("training: power.apply_throttling without a TDP warns") {
  // An accelerator of the scenario's own with no power figures.
  const std::string no_tdp =
      kTraining +
      "accelerators:\n"
      "  plain-gpu: {peak: {bf16: \"312 TFLOP/s\"}, vector_fp32: \"19.5 TFLOP/s\", compute_units: 108,\n"
      "              memory: {hbm_capacity: \"80 GB\", hbm_bandwidth: \"2 TB/s\"}, scale_up_bandwidth: \"300 GB/s\"}\n";
  const std::vector<std::string> throttle = {"cluster.node.accelerator=plain-gpu", "power.apply_throttling=true"};
  CHECK(warns(load_scenario_from_string(no_tdp, "t.yaml", throttle),
              "power.apply_throttling: true has no effect: accelerator 'plain-gpu' has no power.tdp, so there is no "
              "throttle factor to apply"));
  CHECK_FALSE(warns(load_scenario_from_string(kTraining, "t.yaml", {"power.apply_throttling=true"}), "apply_throttling"));
}

TEST_CASE("serving: simulation.mode never applies, simulation.fidelity only with a network to share") {
  const Scenario plain = load_scenario_from_string(kServing, "s.yaml");
  CHECK(plain.warnings.empty());
  const Scenario options = load_scenario_from_string(
      kServing, "s.yaml", {"simulation.mode=full", "simulation.fidelity=flow", "power.apply_throttling=true"});
  CHECK(warns(options, "--set simulation.mode=full: simulation.mode: full has no effect: a serving workload simulates "
                       "every instance and request"));
  CHECK(warns(options, "simulation.fidelity: flow has no effect: without prefill and decode pools, other jobs or an "
                       "instance spanning scale-up domains nothing runs on the network model"));
  CHECK(warns(options, "power.apply_throttling: true has no effect: a serving workload reports its power but never "
                       "slows its clock"));
  // A disaggregated deployment moves its KV caches over the network: the fidelity matters.
  const Scenario disaggregated = load_scenario_from_string(
      kServing, "s.yaml",
      {"simulation.fidelity=flow", "workload.pools.main.role=prefill", "workload.pools.main.replicas=4",
       "workload.pools.decode={role: decode, replicas: 4}"});
  CHECK_FALSE(warns(disaggregated, "simulation.fidelity"));
  // An instance across two nodes (tp 16 of 8-GPU domains) runs its collectives on the network,
  // as does an instance straddling a node boundary; instances inside a node do not.
  const Scenario across = load_scenario_from_string(
      kServing, "s.yaml", {"cluster.nodes=2", "simulation.fidelity=flow", "workload.pools.main={replicas: 1, tp: 16}"});
  CHECK_FALSE(warns(across, "simulation.fidelity"));
  CHECK_FALSE(warns(across, "cluster.network.faults"));
  const Scenario straddling = load_scenario_from_string(
      kServing, "s.yaml", {"cluster.nodes=2", "simulation.fidelity=flow", "workload.pools.main={replicas: 1, tp: 4}",
                           "workload.pools.other={replicas: 1, tp: 8}"});
  CHECK_FALSE(warns(straddling, "simulation.fidelity"));
  const Scenario inside = load_scenario_from_string(
      kServing, "s.yaml", {"cluster.nodes=2", "simulation.fidelity=flow", "workload.pools.main={replicas: 2, tp: 8}"});
  CHECK(warns(inside, "simulation.fidelity"));
}

}  // namespace ineffective_settings_test

namespace ineffective_settings_test {

TEST_CASE("serving: kv_offload settings no tier reads, and tiers no request can hit, warn") {
  const Scenario idle = load_scenario_from_string(
      kServing, "s.yaml", {"workload.kv_offload={write: write_back, host_capacity: 64 GiB}"});
  CHECK(warns(idle, "workload.kv_offload.write: write_back has no effect: kv_offload.tiers lists no tier"));
  CHECK(warns(idle, "workload.kv_offload.host_capacity: 64 GiB has no effect: kv_offload.tiers lists no tier"));
  const Scenario unlisted = load_scenario_from_string(
      kServing, "s.yaml",
      {"workload.scheduler.prefix_caching=true", "workload.kv_offload={tiers: [host], cxl_capacity: 64 GiB}"});
  CHECK(warns(unlisted, "workload.kv_offload.cxl_capacity: 64 GiB has no effect: kv_offload.tiers does not list cxl"));
  // The requests share no prefix: nothing is ever read back.
  CHECK(warns(unlisted, "workload.kv_offload.tiers: the list has no effect: no request shares a prefix"));
  const Scenario sessions = load_scenario_from_string(
      kServing, "s.yaml",
      {"workload.scheduler.prefix_caching=true", "workload.kv_offload={tiers: [host]}",
       "workload.requests.prefix={groups: 2, tokens: 512}"});
  CHECK(sessions.warnings.empty());
}

}  // namespace ineffective_settings_test
