#include "sim/validate/training_validation.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace clustersim::validate;

namespace {

const char* kHeader =
    "id,source,model,params_b,layers,hidden,heads,seq_len,global_batch,gpus,gpu_type,tp,pp,dp,cp,ep,vp,"
    "precision,metric,value,unit,notes\n";

CsvRow row_from(const std::string& line) { return parse_csv(std::string(kHeader) + line + "\n", "t.csv").at(0); }

}  // namespace

TEST_CASE("an SC21 row maps to a scenario with the documented SC21 defaults") {
  const auto mapping = map_training_row(
      row_from("meg21_t1_0_tflops,src,GPT-1.7B,1.7,24,2304,24,2048,512,32,A100,1,1,32,,,,mixed,tflops_per_gpu,137,TFLOP/s,"));
  REQUIRE(mapping.scenario_yaml.has_value());
  REQUIRE(mapping.conventions != nullptr);
  CHECK(mapping.conventions->id_prefix == "meg21_t1");
  const auto& yaml = *mapping.scenario_yaml;
  CHECK(yaml.find("include: [systems/dgx-a100.yaml]") != std::string::npos);
  CHECK(yaml.find("nodes: 4\n") != std::string::npos);
  CHECK(yaml.find("vocab_size: 51200") != std::string::npos);
  CHECK(yaml.find("intermediate_size: 9216") != std::string::npos);
  CHECK(yaml.find("recompute: full") != std::string::npos);
  CHECK(yaml.find("{tp: 1, pp: 1, dp: 32, cp: 1") != std::string::npos);
}

TEST_CASE("rows that cannot be mapped say why") {
  SUBCASE("unknown source") {
    const auto m = map_training_row(row_from("bloom_176b_tflops,s,BLOOM,176,70,14336,112,2048,2048,384,A100,4,12,8,,,,bf16,tflops_per_gpu,156,TFLOP/s,"));
    CHECK_FALSE(m.scenario_yaml);
    CHECK(m.skip_reason == "no documented framework defaults for source 'bloom' yet");
  }
  SUBCASE("unsupported metric") {
    const auto m = map_training_row(row_from("meg21_t1_0_x,s,GPT,1.7,24,2304,24,2048,512,32,A100,1,1,32,,,,m,est_days,90,d,"));
    CHECK(m.skip_reason == "metric 'est_days' is not supported");
  }
  SUBCASE("missing split") {
    const auto m = map_training_row(row_from("meg21_t1_9_x,s,GPT,1.7,24,2304,24,2048,512,32,A100,,,,,,,m,tflops_per_gpu,1,TFLOP/s,"));
    CHECK(m.skip_reason == "row does not state tp, pp, dp");
  }
  SUBCASE("interleaved schedule") {
    const auto m = map_training_row(row_from("mcore_h100_x,s,GPT,1.7,24,2048,16,4096,192,48,H100,1,2,24,1,1,4,bf16,mfu,41,%,"));
    CHECK(m.skip_reason == "interleaved pipeline schedule (vp=4) is not implemented yet");
  }
  SUBCASE("partial node") {
    const auto m = map_training_row(row_from("mcore_h100_y,s,GPT,1.7,24,2048,16,4096,192,12,H100,1,1,12,,,,bf16,mfu,41,%,"));
    CHECK(m.skip_reason == "12 GPUs is not a whole number of 8-GPU nodes");
  }
}

TEST_CASE("validate lists skipped rows and rejects bad measured values without simulating") {
  const auto path = std::filesystem::temp_directory_path() / "clustersim_validate_skips.csv";
  std::ofstream(path) << kHeader
                      << "bloom_x,s,BLOOM,176,70,14336,112,2048,2048,384,A100,4,12,8,,,,bf16,tflops_per_gpu,156,TFLOP/s,\n"
                      << "meg21_t1_0_bad,s,GPT,1.7,24,2304,24,2048,512,32,A100,1,1,32,,,,m,tflops_per_gpu,n/a,TFLOP/s,\n";
  const auto report = validate_training_dataset(path);
  CHECK(report.rows.empty());
  REQUIRE(report.skipped.size() == 2);
  CHECK(report.skipped[0].id == "bloom_x");
  CHECK(report.skipped[1].reason == "measured value 'n/a' is not a positive number");
  CHECK(report.summary.rows == 0);
  const auto json = validation_json(report);
  CHECK(json["summary"]["rows"] == 0);
  CHECK(json["skipped"].size() == 2);
  CHECK(render_validation_table(report).find("no row could be compared") != std::string::npos);
  std::filesystem::remove(path);
}
