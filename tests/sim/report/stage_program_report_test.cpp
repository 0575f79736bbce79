#include "sim/report/stage_program_report.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/engine/time.hpp"

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
