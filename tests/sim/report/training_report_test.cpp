#include "sim/report/training_report.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace training_report_test {

using namespace clustersim;

namespace {

scenario::Scenario small_scenario() {
  return scenario::load_scenario_from_string(R"(schema_version: 1
name: report-test
include: [systems/dgx-a100.yaml]
cluster: {nodes: 1}
workload:
  kind: training
  model: megatron-gpt-1.7b
  seq_len: 2048
  global_batch: 16
  parallelism: {tp: 8, pp: 1, dp: 1}
)",
                                             "report-test.yaml");
}

training::TrainingResult sample_result() {
  training::TrainingResult r;
  r.step_time_s = 2.0;
  r.tokens_per_s = 16384;
  r.model_tflops_per_gpu = 150.25;
  r.hardware_tflops_per_gpu = 200.5;
  r.mfu = 0.48;
  r.hfu = 0.64;
  r.peak_tflops_per_gpu = 312;
  r.microbatches = 16;
  r.gpus = 8;
  r.breakdown.compute_s = 1.5;
  r.breakdown.exposed_tp_s = 0.25;
  r.breakdown.bubble_s = 0.25;
  r.fingerprint = 0xabcdef;
  r.events = 42;
  r.notes = {"an assumption"};
  return r;
}

}  // namespace

TEST_CASE("the summary table carries units, the breakdown shares and the fingerprint") {
  const auto table = report::training_summary_table(small_scenario(), sample_result());
  CHECK(table.find("scenario report-test") != std::string::npos);
  CHECK(table.find("2.000 s") != std::string::npos);
  CHECK(table.find("150.2 TFLOP/s") != std::string::npos);
  CHECK(table.find("48.0 % of 312 TFLOP/s") != std::string::npos);
  CHECK(table.find("1.500 s   75.0 %") != std::string::npos);      // compute share
  CHECK(table.find("250.000 ms   12.5 %") != std::string::npos);  // TP and bubble shares
  CHECK(table.find("note: an assumption") != std::string::npos);
  CHECK(table.find("fingerprint 0000000000abcdef (42 events)") != std::string::npos);
}

TEST_CASE("memory per pipeline stage and a training run appear in the table and the JSON") {
  auto r = sample_result();
  r.memory.computed = true;
  r.memory.capacity_bytes = 80.0 * (1 << 30);
  r.memory.total_bytes = 40.0 * (1 << 30);
  r.memory.stages = {{0, 40.0 * (1 << 30), 4.0 * (1 << 30), 8.0 * (1 << 30), 1.0 * (1 << 30), 20.0 * (1 << 30)},
                     {1, 30.0 * (1 << 30), 4.0 * (1 << 30), 8.0 * (1 << 30), 1.0 * (1 << 30), 10.0 * (1 << 30)}};
  r.run = {true, 1e12, 30518, 30518 * 2.0, 30518 * 2.0 * 8 / 3600, 0, false, 0};
  const auto table = report::training_summary_table(small_scenario(), r);
  CHECK(table.find("memory per pipeline stage (per device)") != std::string::npos);
  CHECK(table.find("  1         30.00 GiB    4.00 GiB    8.00 GiB    1.00 GiB   10.00 GiB") != std::string::npos);
  CHECK(table.find("training run of 1e+12 tokens") != std::string::npos);
  CHECK(table.find("0.71 days (17.0 h)") != std::string::npos);
  const auto json = report::training_result_json(small_scenario(), r);
  CHECK(json["memory"]["stages"].size() == 2);
  CHECK(json["memory"]["stages"][1]["activations_bytes"].get<double>() == doctest::Approx(10.0 * (1 << 30)));
  CHECK(json["training_run"]["steps"].get<std::int64_t>() == 30518);
  CHECK(json["training_run"]["cost_usd"].is_null());
  CHECK(report::training_result_json(small_scenario(), sample_result())["training_run"].is_null());
}

TEST_CASE("a zero step time prints no shares instead of dividing by zero") {
  auto r = sample_result();
  r.step_time_s = 0;
  const auto table = report::training_summary_table(small_scenario(), r);
  CHECK(table.find("nan") == std::string::npos);
  CHECK(table.find("inf") == std::string::npos);
}

TEST_CASE("the JSON document is schema-versioned and names every documented field") {
  const auto json = report::training_result_json(small_scenario(), sample_result());
  CHECK(json["schema_version"] == report::kResultSchemaVersion);
  CHECK(json["training"]["step_time_s"] == 2.0);
  CHECK(json["training"]["tokens_per_s"] == 16384);
  CHECK(json["training"]["model_tflops_per_gpu"] == 150.25);
  CHECK(json["training"]["mfu"] == 0.48);
  CHECK(json["breakdown"]["exposed_tp_s"] == 0.25);
  CHECK(json["breakdown"]["bubble_s"] == 0.25);
  CHECK(json["scenario"]["parallelism"]["tp"] == 8);
  CHECK(json["scenario"]["accelerator"] == "a100-sxm-80gb");
  CHECK(json["fingerprint"] == "0000000000abcdef");
  CHECK(report::fingerprint_hex(0) == "0000000000000000");
  CHECK(report::fingerprint_hex(~0ULL) == "ffffffffffffffff");
}

TEST_CASE("the JSON scenario block says what produced the result, --set overrides included") {
  const std::vector<std::string> overrides = {"workload.parallelism.pp=2", "workload.parallelism.tp=4",
                                              "workload.parallelism.zero=0", "simulation.mode=full"};
  const auto s = scenario::load_scenario_from_string(R"(schema_version: 1
name: report-test
include: [systems/dgx-a100.yaml]
cluster: {nodes: 1}
workload:
  kind: training
  model: megatron-gpt-1.7b
  seq_len: 2048
  global_batch: 16
  precision: fp16
  parallelism: {tp: 8, pp: 1, dp: 1, vp: 2, schedule: interleaved}
)",
                                                     "report-test.yaml", overrides);
  const auto json = report::training_result_json(s, sample_result());
  const auto& scenario = json["scenario"];
  CHECK(scenario["name"] == "report-test");
  CHECK(scenario["file"] == "report-test.yaml");
  CHECK(scenario["overrides"].get<std::vector<std::string>>() == overrides);  // as given, in order
  const auto& parallelism = scenario["parallelism"];
  CHECK(parallelism["tp"] == 4);
  CHECK(parallelism["pp"] == 2);
  CHECK(parallelism["dp"] == 1);
  CHECK(parallelism["cp"] == 1);
  CHECK(parallelism["ep"] == 1);
  CHECK(parallelism["vp"] == 2);
  CHECK(parallelism["sequence_parallel"] == true);
  CHECK(parallelism["zero"] == 0);
  CHECK(parallelism["schedule"] == "interleaved");
  CHECK(scenario["precision"] == "fp16");
  CHECK(scenario["topology"] == "rail-optimized");  // the DGX A100 preset's
  CHECK(scenario["simulation"]["fidelity"] == "flow");  // the default
  CHECK(scenario["simulation"]["mode"] == "full");
  // Without --set the list is there, empty.
  const auto plain = report::training_result_json(small_scenario(), sample_result())["scenario"];
  CHECK(plain["overrides"].is_array());
  CHECK(plain["overrides"].empty());
  CHECK(plain["simulation"]["mode"] == "symmetric");
  CHECK(plain["parallelism"]["schedule"] == "1f1b");
  CHECK(plain["parallelism"]["zero"] == 1);
  CHECK(plain["precision"] == "bf16");
}

TEST_CASE("flow fidelity results carry a per-tier link utilisation summary in the table and JSON") {
  auto r = sample_result();
  r.fidelity = "flow";
  training::TierUtilisation edge;
  edge.tier = 1;
  edge.links = 16;
  edge.bytes = 4e9;
  edge.capacity_bytes_per_s = 16 * 50e9;
  edge.mean_utilisation = 0.0025;
  edge.max_utilisation = 0.125;
  edge.peak_utilisation = 0.375;
  edge.peak_link_utilisation = 0.75;
  r.network_tiers = {edge};
  const auto table = report::training_summary_table(small_scenario(), r);
  CHECK(table.find("network link utilisation (flow fidelity") != std::string::npos);
  CHECK(table.find("tier 1 (endpoint-leaf)") != std::string::npos);
  CHECK(table.find("mean 0.2 %, max 12.5 % over 16 links, peak 37.5 % (tier) 75.0 % (link), 4.000 GB carried") !=
        std::string::npos);
  const auto json = report::training_result_json(small_scenario(), r);
  CHECK(json["network"]["fidelity"] == "flow");
  REQUIRE(json["network"]["tiers"].size() == 1);
  CHECK(json["network"]["tiers"][0]["tier"] == 1);
  CHECK(json["network"]["tiers"][0]["name"] == "endpoint-leaf");
  CHECK(json["network"]["tiers"][0]["links"] == 16);
  CHECK(json["network"]["tiers"][0]["max_utilisation"] == 0.125);
  CHECK(json["network"]["tiers"][0]["mean_utilisation"] == 0.0025);
  CHECK(json["network"]["tiers"][0]["peak_utilisation"] == 0.375);
  CHECK(json["network"]["tiers"][0]["peak_link_utilisation"] == 0.75);
  // The same as scalars (CSV columns, compare rows).
  CHECK(json["network"]["utilisation"]["tier_1"]["peak_link_utilisation"] == 0.75);
  CHECK(json["network"]["utilisation"]["tier_1"]["mean_utilisation"] == 0.0025);
  // Analytical results have no tiers: no utilisation block in the table, an empty list in JSON.
  const auto analytical = sample_result();
  CHECK(report::training_summary_table(small_scenario(), analytical).find("link utilisation") == std::string::npos);
  CHECK(report::training_result_json(small_scenario(), analytical)["network"]["tiers"].empty());
  CHECK(report::training_result_json(small_scenario(), analytical)["network"]["fidelity"] == "analytical");
}

TEST_CASE("the provenance section counts each stage's op time per step by estimator") {
  // megatron-gpt-1.7b, tp 8, 16 micro-batches of 2,048 tokens on one DGX A100: roofline compute,
  // collective-model TP collectives.
  const auto scenario = small_scenario();
  const auto json = report::training_result_json(scenario, runner::run_training(scenario));
  const auto& section = json["provenance"];
  CHECK(section["critical_stage"] == 0);
  CHECK(section["basis"].get<std::string>().find("op time x layers x micro-batches") != std::string::npos);
  REQUIRE(section["stages"].size() == 1);
  const auto& stage = section["stages"][0];
  const auto program = runner::stage_programs(scenario).front();
  double compute_s = 0, communication_s = 0;
  const auto add = [&](const std::vector<training::StageOp>& ops, double repeats) {
    for (const auto& op : ops) {
      (training::is_communication(op.kind) ? communication_s : compute_s) += repeats * engine::ps_to_seconds(op.duration_ps);
    }
  };
  for (const auto* ops : {&program.embedding_forward, &program.embedding_backward, &program.head_forward,
                          &program.head_backward}) {
    add(*ops, 16);
  }
  add(program.dense.forward, 16.0 * program.local_layers());
  add(program.dense.backward, 16.0 * program.local_layers());
  compute_s += engine::ps_to_seconds(program.optimizer_ps);
  CHECK(stage["roofline_s"].get<double>() == doctest::Approx(compute_s).epsilon(1e-12));
  CHECK(stage["collective_model_s"].get<double>() == doctest::Approx(communication_s).epsilon(1e-12));
  CHECK(stage["measured_table_s"] == 0.0);
  CHECK(stage["fitted_s"] == 0.0);
  CHECK(stage["total_s"].get<double>() == doctest::Approx(compute_s + communication_s).epsilon(1e-12));
  CHECK(communication_s > 0);
}

}  // namespace training_report_test
