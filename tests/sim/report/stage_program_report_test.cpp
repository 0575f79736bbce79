#include "sim/report/stage_program_report.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "sim/engine/time.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace stage_program_report_test {

using namespace clustersim;

namespace {

/// A stage with one dense layer: a measured GEMM and an overlapped collective.
training::StageProgram small_program() {
  training::StageProgram program;
  program.chunk_layers = {1};
  program.chunk_first_layer = {0};
  program.kinds = {models::LayerKind::dense};
  training::StageOp gemm{"qkv", training::OpKind::compute, engine::seconds_to_ps(100e-6), 50e9};
  gemm.provenance = models::Provenance::measured_table;
  gemm.kernel_flops = 50e9;
  training::StageOp gather{"tp all-gather", training::OpKind::tp_comm, engine::seconds_to_ps(20e-6), 0.0,
                           models::CollectiveKind::all_gather, 1e6};
  gather.provenance = models::Provenance::collective_model;
  gather.overlap = training::Overlap::with_next;
  program.dense.forward = {gather, gemm};
  program.optimizer_ps = engine::seconds_to_ps(1e-3);
  program.optimizer_provenance = models::Provenance::fitted;
  return program;
}

}  // namespace

TEST_CASE("the ops table and JSON name each op's estimator") {
  const auto program = small_program();
  const std::string table = report::stage_program_table(program);
  CHECK(table.find("TFLOP/s  estimator        overlap") != std::string::npos);
  // 50 GFLOP in 100 us: 500 TFLOP/s, from the measured table.
  CHECK(table.find("  qkv                                compute          100.00       50.000      500.0  "
                   "measured_table   \n") != std::string::npos);
  CHECK(table.find("collective_model beside next") != std::string::npos);
  const auto json = report::stage_program_json(program);
  const auto& ops = json["sections"]["dense layer forward"];
  REQUIRE(ops.size() == 2);
  CHECK(ops[0]["provenance"] == "collective_model");
  CHECK(ops[1]["provenance"] == "measured_table");
  CHECK(json["optimizer_provenance"] == "fitted");
}

TEST_CASE("ops: a causal attention kernel's rate counts the FLOPs it does, never above the accelerator's peak") {
  // Long sequences on H100: attention is a large share of the layer, and Megatron's model-FLOP
  // count (non-causal) over the kernel's time would claim about twice the kernel's rate.
  const scenario::Scenario s = scenario::load_scenario_from_string(R"(schema_version: 1
name: long-context
include: [systems/dgx-h100.yaml]
cluster: {nodes: 1}
workload:
  model: llama-3-8b
  seq_len: 16384
  global_batch: 8
  parallelism: {tp: 8}
)",
                                                                   "long-context.yaml");
  const double peak_tflops = s.platform.cluster.accelerator.peak_flops_per_s.at(models::Dtype::bf16) / 1e12;
  const auto programs = runner::stage_programs(s);
  REQUIRE(programs.size() == 1);
  const training::StageProgram& program = programs.front();
  int attention_ops = 0;
  for (const auto* ops : {&program.dense.forward, &program.dense.backward}) {
    for (const training::StageOp& op : *ops) {
      if (op.name.find("attn") == std::string::npos || training::is_communication(op.kind)) continue;
      CAPTURE(op.name);
      ++attention_ops;
      const double seconds = engine::ps_to_seconds(op.duration_ps);
      REQUIRE(seconds > 0);
      CHECK(op.kernel_flops / seconds / 1e12 <= peak_tflops);
      // The model-FLOP convention is unchanged: the forward counts the full score matrix, twice
      // the causal kernel's pairs (backward: 2 x forward against the kernel's 2.5 x).
      const bool backward = op.name.find("bwd") != std::string::npos;
      CHECK(op.flops / op.kernel_flops == doctest::Approx(backward ? 2.0 * 2.0 / 2.5 : 2.0).epsilon(0.01));
    }
  }
  CHECK(attention_ops == 3);  // attn, attn recompute (selective), attn bwd
  // The table prints that rate: every attention row's TFLOP/s column is at most the peak.
  std::istringstream table(report::stage_program_table(program));
  int rows = 0;
  for (std::string line; std::getline(table, line);) {
    std::istringstream fields(line);
    std::string name, word, kind;
    fields >> name;
    if (name != "attn") continue;
    // "attn [bwd|recompute] KIND time GFLOP TFLOP/s estimator"
    std::vector<std::string> words;
    for (std::string w; fields >> w;) words.push_back(w);
    const std::size_t kind_at = words.size() > 0 && (words[0] == "bwd" || words[0] == "recompute") ? 1 : 0;
    REQUIRE(words.size() >= kind_at + 5);
    CAPTURE(line);
    CHECK(std::stod(words[kind_at + 3]) <= peak_tflops);
    ++rows;
  }
  CHECK(rows == 3);
}

}  // namespace stage_program_report_test
