#include "sim/validate/training_row_settings.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/scenario/preset_library.hpp"
#include "sim/validate/csv_table.hpp"

namespace training_row_settings_test {

using namespace clustersim::validate;

namespace {

/// One row with the given optional columns (header and values as CSV text).
CsvRow row_with(const std::string& header, const std::string& values) {
  return parse_csv("id," + header + "\nr1," + values + "\n", "t.csv").at(0);
}

/// The problems reading one optional column with `value` gives.
std::vector<std::string> problems_of(const std::string& column, const std::string& value) {
  std::vector<std::string> problems;
  read_row_settings(row_with(column, value), problems);
  return problems;
}

}  // namespace

TEST_CASE("optional columns set their workload keys; empty or absent ones set nothing") {
  std::vector<std::string> problems;
  const auto s = read_row_settings(
      row_with("micro_batch,vp,stage_layers,recompute,sequence_parallel,zero,attention,tp_comm_overlap,overlap_grad_reduce,"
               "framework,cross_entropy,gradient_reduce_dtype",
               "4,2,\"5;6 6,5\",op,false,3,fa3,True,no,torchtitan,compiled,fp32"),
      problems);
  CHECK(problems.empty());
  CHECK(s.micro_batch == 4);
  CHECK(s.vp == 2);
  CHECK(s.stage_layers == std::vector<std::int64_t>{5, 6, 6, 5});
  CHECK(s.recompute == "op");
  CHECK(s.sequence_parallel == false);
  CHECK(s.zero == 3);
  CHECK(s.attention == "fa3");
  CHECK(s.tp_comm_overlap == true);
  CHECK(s.overlap_grad_reduce == false);
  CHECK(s.framework == "torchtitan");
  CHECK(s.cross_entropy == "compiled");
  CHECK(s.gradient_reduce_dtype == "fp32");
  // vp is the format's own column: not listed as an addition.
  CHECK(s.columns_set == std::vector<std::string>{"micro_batch", "stage_layers", "recompute", "sequence_parallel",
                                                  "zero", "attention", "tp_comm_overlap", "overlap_grad_reduce",
                                                  "framework", "cross_entropy", "gradient_reduce_dtype"});
  const auto none = read_row_settings(row_with("micro_batch,recompute", ","), problems);
  CHECK(problems.empty());
  CHECK_FALSE(none.micro_batch);
  CHECK_FALSE(none.recompute);
  CHECK(none.columns_set.empty());
  CHECK(read_row_settings(row_with("stage_layers", "\"[3, 4]\""), problems).stage_layers == std::vector<std::int64_t>{3, 4});
  CHECK(problems.empty());
}

TEST_CASE("an invalid optional column names the column, the value, the valid choices and the key") {
  CHECK(problems_of("recompute", "partial") ==
        std::vector<std::string>{"column 'recompute': 'partial' is not one of none, selective, full, op (workload.recompute)"});
  CHECK(problems_of("attention", "xformers") ==
        std::vector<std::string>{
            "column 'attention': 'xformers' is not one of flash, fa2, fa3, cudnn, fa4, fused_sdpa, pallas, unfused (workload.attention)"});
  CHECK(problems_of("framework", "deepspeed") ==
        std::vector<std::string>{"column 'framework': 'deepspeed' is not one of megatron, torchtitan (workload.framework)"});
  CHECK(problems_of("gradient_reduce_dtype", "fp8") ==
        std::vector<std::string>{
            "column 'gradient_reduce_dtype': 'fp8' is not one of bf16, fp32 (workload.gradient_reduce_dtype)"});
  CHECK(problems_of("zero", "4") ==
        std::vector<std::string>{"column 'zero': '4' is not an integer from 0 to 3 (workload.parallelism.zero)"});
  CHECK(problems_of("micro_batch", "0") ==
        std::vector<std::string>{
            "column 'micro_batch': '0' is not an integer from 1 to 1000000000 (workload.micro_batch)"});
  CHECK(problems_of("micro_batch", "1.5") ==
        std::vector<std::string>{
            "column 'micro_batch': '1.5' is not an integer from 1 to 1000000000 (workload.micro_batch)"});
  CHECK(problems_of("vp", "x") ==
        std::vector<std::string>{"column 'vp': 'x' is not an integer from 1 to 1000000 (workload.parallelism.vp)"});
  CHECK(problems_of("sequence_parallel", "maybe") ==
        std::vector<std::string>{
            "column 'sequence_parallel': 'maybe' is not true or false (workload.parallelism.sequence_parallel)"});
  CHECK(problems_of("tp_comm_overlap", "2") ==
        std::vector<std::string>{"column 'tp_comm_overlap': '2' is not true or false (workload.tp_comm_overlap)"});
  CHECK(problems_of("stage_layers", "4 x 4") ==
        std::vector<std::string>{
            "column 'stage_layers': '4 x 4' is not integers >= 1, one per pipeline stage (or virtual stage), separated "
            "by spaces or ';' (workload.parallelism.stage_layers)"});
  CHECK(problems_of("stage_layers", "0;4").size() == 1);
  // A setting the simulator does not have is never silently ignored.
  const auto fp8 = problems_of("fp8_recipe", "delayed");
  REQUIRE(fp8.size() == 1);
  CHECK(fp8[0].rfind("column 'fp8_recipe': 'delayed' cannot be simulated: the workload has no FP8 recipe key", 0) == 0);
  // Every problem of a row, in column order.
  std::vector<std::string> problems;
  read_row_settings(row_with("recompute,zero", "partial,9"), problems);
  CHECK(problems.size() == 2);
}

TEST_CASE("the precision column of a row without conventions is a declared precision") {
  std::vector<std::string> problems;
  CHECK(read_row_precision(row_with("precision", "fp8"), problems) == "fp8");
  CHECK_FALSE(read_row_precision(row_with("precision", ""), problems));
  CHECK(problems.empty());
  CHECK_FALSE(read_row_precision(row_with("precision", "mixed"), problems));
  CHECK(problems ==
        std::vector<std::string>{"column 'precision': 'mixed' is not one of fp32, tf32, bf16, fp16, fp8 (workload.precision)"});
}

TEST_CASE("gpu_type names a system preset, never by a guess") {
  CHECK(system_for_gpu_type("H100") == "dgx-h100");
  CHECK(system_for_gpu_type("h100-sxm5-80gb") == "dgx-h100");
  CHECK(system_for_gpu_type("H100 (DGX H100, our cluster)") == "dgx-h100");  // a remark in parentheses
  CHECK(system_for_gpu_type("A100-SXM4-80GB") == "dgx-a100");
  CHECK(system_for_gpu_type("MI300X") == "mi300x-x8");
  CHECK(system_for_gpu_type("H100-PCIe") == "h100-pcie-x8");
  CHECK(system_for_gpu_type("dgx-b200") == "dgx-b200");  // a preset's own name
  // MLPerf's spellings, as the serving rows (and clustersim import mlperf) write them.
  CHECK(system_for_gpu_type("H100-SXM-80GB") == "dgx-h100");
  CHECK(system_for_gpu_type("H200-SXM-141GB") == "dgx-h200");
  CHECK(system_for_gpu_type("B200-SXM-180GB") == "dgx-b200");
  CHECK_FALSE(system_for_gpu_type("H100 PCIe 2"));
  CHECK_FALSE(system_for_gpu_type("A100-40GB"));  // the library has no 40 GB A100
  CHECK_FALSE(system_for_gpu_type(""));
  CHECK_FALSE(system_for_gpu_type("TPU v5p"));
  // Every system of the table is a library preset, and the message lists each name.
  const auto systems = clustersim::scenario::library_names(clustersim::scenario::LibraryKind::systems);
  const std::string choices = gpu_type_choices();
  for (const auto& entry : gpu_type_systems()) {
    CAPTURE(entry.system);
    CHECK(std::find(systems.begin(), systems.end(), entry.system) != systems.end());
    CHECK(choices.find("(" + entry.system + ")") != std::string::npos);
  }
  CHECK(choices.rfind("A100, A100-SXM, A100-SXM4-80GB, A100-80GB (dgx-a100); H100, ", 0) == 0);
}

}  // namespace training_row_settings_test
