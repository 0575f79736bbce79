// The power validation (issue 28 part 4): the measured average of each kind of row, the skip
// reasons, a made-up dataset against a scenario whose power is derived by hand, and the
// `validate` command on the committed dataset with the targets.
#include "sim/validate/power_validation.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/error.hpp"
#include "tests/sim/cli/run_clustersim.hpp"
#include "tests/sim/sweep/temp_folders.hpp"

namespace power_validation_test {

using namespace clustersim;
using namespace clustersim::validate;

namespace {

const char* kHeader =
    "id,source,date,kind,benchmark,scenario,system,accelerator,accelerators,nodes,framework,precision,perf_metric,"
    "perf_value,perf_unit,power_metric,power_value,power_unit,scope,notes\n";

CsvRow row_from(const std::string& line) { return parse_csv(std::string(kHeader) + line + "\n", "p.csv").at(0); }

const clustersim::testing::TempFolders folders("clustersim-power-validation-test");

}  // namespace

TEST_CASE("the measured average: system watts as they are, energy over the time to train") {
  CHECK(measured_average_power(row_from("a,s,d,inference,b,Offline,x,H200,8,1,f,p,tokens_per_s,1,t,"
                                        "system_avg_power_w,6000,W,node,n"))
            .watts == 6000);
  // 1.2e7 J over 20 min: 10,000 W.
  const MeasuredPower energy = measured_average_power(
      row_from("b,s,d,training,b,ttt,x,H100,8,1,f,p,time_to_train_min,20,min,energy_per_result_j,12000000,J,node,n"));
  CHECK(energy.reason.empty());
  CHECK(energy.watts == doctest::Approx(10000));
  CHECK(measured_average_power(row_from("c,s,d,spec,,,x,H100,8,1,,,,,,system_max_power_w,10200,W,node,n")).reason ==
        "power_metric 'system_max_power_w' is not an average (system_avg_power_w, energy_per_result_j)");
  CHECK(measured_average_power(row_from("d,s,d,training,b,ttt,x,H100,8,1,f,p,,,,energy_per_result_j,1,J,node,n"))
            .reason.find("without a time to train") != std::string::npos);
  CHECK(measured_average_power(row_from("e,s,d,inference,b,Offline,x,H200,8,1,f,p,,,,system_avg_power_w,x,W,node,n"))
            .reason == "power_value is not a positive number");
}

TEST_CASE("a made-up row against a scenario of its own; rows without one are listed with why") {
  const std::filesystem::path root = folders.fresh("made-up");
  std::filesystem::create_directories(root / "data");
  std::filesystem::create_directories(root / "power");
  {
    std::ofstream csv(root / "data" / "power.csv");
    csv << kHeader
        << "row_one,s,d,inference,b,Offline,x,H200 SXM,8,1,f,p,tokens_per_s,1,t,system_avg_power_w,5000,W,node,n\n"
        << "row_lora,s,d,training,llama2_70b_lora,ttt,x,H100,8,1,f,p,time_to_train_min,1,min,energy_per_result_j,1,"
           "J,node,n\n";
  }
  {
    // One DGX H200 node serving Llama-2-70B offline under a 500 W limit.
    std::ofstream scenario(root / "power" / "row_one.yaml");
    scenario << "# a made-up row\nschema_version: 1\nname: row_one\ninclude: [systems/dgx-h200.yaml]\n"
                "cluster: {nodes: 1}\npower: {accelerator_limit: \"500 W\"}\nworkload:\n  kind: serving\n"
                "  model: llama-2-70b\n  pools: {main: {replicas: 8, tp: 1}}\n  precision: {weights: fp8}\n"
                "  requests: {count: 2000, arrival: {process: offline}, input: {distribution: fixed, value: 200},\n"
                "             output: {distribution: fixed, value: 200}}\nsimulation: {seed: 1}\n";
  }
  const PowerValidationReport report = validate_power_dataset(root / "data" / "power.csv");
  REQUIRE(report.rows.size() == 1);
  const PowerValidationRow& r = report.rows[0];
  CHECK(r.measured_w == 5000);
  CHECK(r.note == "a made-up row");
  // Busy every second at kernels held to the 500 W limit: 8 x 500 W of devices, a little less
  // for the ramp and drain; with the node's 1,830 W and 8 NICs of 25 W, through 0.94 supplies.
  CHECK(r.devices_w <= 8 * 500.0 + 1e-6);
  CHECK(r.devices_w >= 8 * 450.0);
  CHECK(r.predicted_w == doctest::Approx((r.devices_w + 1830 + 200) / 0.94).epsilon(1e-9));
  CHECK(r.error_pct == doctest::Approx((r.predicted_w - 5000) / 50));
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].id == "row_lora");
  CHECK(report.skipped[0].reason.find("LoRA fine-tuning is not modelled") != std::string::npos);
  // No scenarios folder: an error naming it.
  CHECK_THROWS_WITH_AS(validate_power_dataset(root / "data" / "power.csv", root / "missing"),
                       doctest::Contains("scenarios folder"), ConfigError);
}

TEST_CASE("validate on the committed power dataset: at least 10 rows on 3 accelerator kinds, median within 10 %") {
  const std::string dataset = std::string(CLUSTERSIM_SOURCE_DIR) + "/validation/data/ground_truth_power.csv";
  const auto run = cli_testing::run_clustersim("validate --dataset " + dataset + " --format json");
  REQUIRE(run.exit_code == 0);
  const auto doc = nlohmann::json::parse(run.output);
  CHECK(doc["summary"]["rows"].get<int>() >= 10);
  std::set<std::string> kinds;
  for (const auto& row : doc["rows"]) kinds.insert(row["accelerator"].get<std::string>());
  CHECK(kinds.size() >= 3);
  CHECK(doc["summary"]["median_pct"].get<double>() <= 10.0);
  // Ratings and maxima are never compared as averages.
  for (const auto& s : doc["skipped"]) {
    if (s["id"].get<std::string>().rfind("spec_", 0) == 0) {
      CHECK(s["reason"].get<std::string>().find("is not an average") != std::string::npos);
    }
  }
  const auto misuse = cli_testing::run_clustersim("validate --dataset " + dataset + " --scenario x");
  CHECK(misuse.exit_code != 0);
  CHECK(misuse.output.find("is a power dataset") != std::string::npos);
}

}  // namespace power_validation_test
