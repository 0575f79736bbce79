// `clustersim validate` on a user's own training measurements: defaults, --base, --threads, and
// the errors a bad row or option gives (exit 1, file and line).
#include <doctest/doctest.h>

#include "run_clustersim.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace validate_cli_test {

namespace {

using clustersim::cli_testing::run_clustersim;

const std::string kOwnData = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/validate/";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("validate compares a user's own CSV, prints the defaults, and runs on --base") {
  const auto table = run_clustersim("validate --dataset " + kOwnData + "own_training.csv");
  REQUIRE(table.exit_code == 0);
  CHECK(has(table.output, "assumed (documented framework defaults; never chosen per row):\n"
                          "  defaults: rows of any other source take the settings of the mcore_h100 entry"));
  CHECK(has(table.output, "rows 3  MAPE"));
  CHECK_FALSE(has(table.output, "validate: "));  // progress only on a terminal; this stderr is a pipe

  const auto json_run = run_clustersim("validate --dataset " + kOwnData + "own_training.csv --base " + kOwnData +
                                       "own_cluster.yaml --threads 2 --format json");
  REQUIRE(json_run.exit_code == 0);
  const auto doc = nlohmann::json::parse(json_run.output);
  CHECK(doc["summary"]["rows"] == 3);
  CHECK(doc["per_source"][0]["conventions"] == "defaults");
  CHECK(doc["assumptions"][0].get<std::string>().rfind("--base " + kOwnData + "own_cluster.yaml: every row runs", 0) ==
        0);

  const auto shown = run_clustersim("validate --dataset " + kOwnData + "own_training.csv --base " + kOwnData +
                                    "own_cluster.yaml --scenario lab_gpt_1b_step");
  REQUIRE(shown.exit_code == 0);
  CHECK(has(shown.output, "cluster:\n  nodes: 2\n"));
  CHECK(has(shown.output, "model: lab-gpt-1b\n"));
}

TEST_CASE("validate: a bad row, a bad --base and a bad option exit 1 and say where") {
  const auto bad_csv = std::filesystem::temp_directory_path() / "clustersim_validate_cli_bad.csv";
  {
    std::ifstream in(kOwnData + "own_training.csv");
    std::string header, first;
    std::getline(in, header);
    std::getline(in, first);
    // The same row with an invalid recompute column (the header's 24th column).
    std::ofstream(bad_csv) << header << "\n" << first << "\n"
                           << "lab_bad,s,Llama-3-8B,8,,,,8192,128,8,H100,1,1,8,,,,bf16,tflops_per_gpu,400,T,,1,"
                              "partial,\n";
  }
  const auto bad = run_clustersim("validate --dataset " + bad_csv.string());
  CHECK(bad.exit_code == 1);
  CHECK(has(bad.output, "error: 1 row problem (docs/validation.md, \"Validating your own measurements\"):\n" +
                            bad_csv.string() +
                            ":3: column 'recompute': 'partial' is not one of none, selective, full, op (workload.recompute)"));
  const auto bad_row = run_clustersim("validate --dataset " + bad_csv.string() + " --scenario lab_bad");
  CHECK(bad_row.exit_code == 1);
  CHECK(has(bad_row.output, bad_csv.string() + ":3: column 'recompute'"));
  std::filesystem::remove(bad_csv);

  const auto no_base = run_clustersim("validate --dataset " + kOwnData + "own_training.csv --base no_such.yaml");
  CHECK(no_base.exit_code == 1);
  CHECK(has(no_base.output, "no_such.yaml"));
  const auto inference = run_clustersim("validate --dataset " + std::string(CLUSTERSIM_SOURCE_DIR) +
                                        "/validation/data/ground_truth_inference.csv --base " + kOwnData +
                                        "own_cluster.yaml");
  CHECK(inference.exit_code == 1);
  CHECK(has(inference.output, "--base applies to training datasets"));
  const auto threads = run_clustersim("validate --dataset " + kOwnData + "own_training.csv --threads -1");
  CHECK(threads.exit_code == 1);
  CHECK(has(threads.output, "--threads must be >= 0 (0: every core), got -1"));
  // A calibration table has nothing to act on when the row's scenario is only printed.
  const std::string table = std::string(CLUSTERSIM_SOURCE_DIR) + "/models/data/calibration/h100-sxm.csv";
  const auto printed = run_clustersim("validate --dataset " + kOwnData +
                                      "own_training.csv --scenario lab_llama3_8b_tflops --calibration " + table);
  CHECK(printed.exit_code == 1);
  CHECK(has(printed.output, "--calibration has no effect with --scenario"));
  const auto missing = run_clustersim("validate --dataset " + kOwnData + "own_training.csv --calibration no_such.csv");
  CHECK(missing.exit_code != 0);
  CHECK(has(missing.output, "no_such.csv"));
}

}  // namespace validate_cli_test
