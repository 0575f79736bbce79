// Every scenario in scenarios/ is a golden test: its summary is compared with the reviewed
// `<scenario>.golden.json` beside it. To accept a change, run scripts/update-goldens.sh (sets
// CLUSTERSIM_UPDATE_GOLDENS=1), review `git diff scenarios/`, and give the reason in the commit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario_runs.hpp"
#include "sim/report/run_report.hpp"
#include "sim/report/training_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace golden_test {

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> scenario_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(CLUSTERSIM_SOURCE_DIR) / "scenarios")) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// The part of the result JSON a golden pins: predictions and the event fingerprint (serving:
/// its section without the per-second time series).
nlohmann::json golden_view(const nlohmann::json& result) {
  if (result.contains("serving")) {
    nlohmann::json serving = result["serving"];
    serving.erase("time_series");
    return {{"serving", serving}, {"fingerprint", result["fingerprint"]}, {"events", result["events"]}};
  }
  return {{"training", result["training"]}, {"breakdown", result["breakdown"]},
          {"fingerprint", result["fingerprint"]}, {"events", result["events"]}};
}

void compare_numbers(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& where) {
  for (const auto& [key, value] : expected.items()) {
    const std::string path = where + "." + key;
    INFO(path);
    REQUIRE(actual.contains(key));
    if (value.is_object()) {
      compare_numbers(value, actual[key], path);
    } else if (value.is_array() && actual[key].is_array() && actual[key].size() == value.size()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        compare_numbers({{std::to_string(i), value[i]}}, {{std::to_string(i), actual[key][i]}}, path);
      }
    } else if (value.is_number_float()) {
      const double e = value.get<double>();
      const double a = actual[key].get<double>();
      // 0.1 % relative (plus a picosecond-scale absolute floor): tolerant of libm differences,
      // far tighter than any modelling change.
      CHECK(std::abs(a - e) <= 1e-3 * std::abs(e) + 1e-12);
    } else {
      CHECK(actual[key] == value);
    }
  }
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("every scenario matches its reviewed golden summary") {
    const bool update = std::getenv("CLUSTERSIM_UPDATE_GOLDENS") != nullptr;
    const auto files = scenario_files();
    REQUIRE(files.size() >= 11);  // the default scenario and the ten SC21 Table 1 rows
    for (const auto& file : files) {
      CAPTURE(file.string());
      const auto& written = clustersim::scenario_testing::run_as_written(file);
      const auto actual = golden_view(clustersim::report::run_result_json(written.scenario, written.run));
      auto golden_path = file;
      golden_path.replace_extension(".golden.json");
      if (update) {
        std::ofstream(golden_path) << actual.dump(2) << '\n';
        continue;
      }
      std::ifstream in(golden_path);
      INFO("missing golden; run scripts/update-goldens.sh and review the diff");
      REQUIRE(in.good());
      const auto expected = nlohmann::json::parse(in);
      compare_numbers(expected, actual, file.filename().string());
    }
  }

  TEST_CASE("the same scenario run twice has the same fingerprint") {
    const auto file = fs::path(CLUSTERSIM_SOURCE_DIR) / "scenarios" / "default.yaml";
    const auto scenario = clustersim::scenario::load_scenario(file, {});
    const auto first = clustersim::runner::run_training(scenario);
    const auto second = clustersim::runner::run_training(scenario);
    CHECK(first.fingerprint == second.fingerprint);
    CHECK(first.events == second.events);
    CHECK(first.step_time_s == second.step_time_s);
    // A different split changes the event history, hence the fingerprint.
    const auto other = clustersim::scenario::load_scenario(
        file, {"workload.parallelism.pp=8", "workload.parallelism.dp=16"});
    CHECK(clustersim::runner::run_training(other).fingerprint != first.fingerprint);
  }
}

}  // namespace golden_test
