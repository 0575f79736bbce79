// The report's hooks per workload kind (result_reports.hpp): training and serving register
// theirs; a kind without hooks gets the generic metrics table, JSON, page and no counters.
#include "sim/report/result_reports.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "sim/report/run_report.hpp"
#include "sim/report/trace_counters.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace result_reports_test {

using namespace clustersim;

TEST_CASE("result reports: each kind's hooks, and the generic report for a kind without any") {
  const report::ResultReport* training = report::result_report("training");
  REQUIRE(training != nullptr);
  CHECK(training->json);
  CHECK(training->table);
  CHECK(training->html);
  CHECK(training->counters);
  CHECK(training->wants_stage_programs);
  const report::ResultReport* serving = report::result_report("serving");
  REQUIRE(serving != nullptr);
  CHECK(serving->json);
  CHECK(serving->table);
  CHECK(serving->html);
  CHECK_FALSE(serving->counters);  // serving streams its KV-cache counters while it runs
  CHECK_FALSE(serving->wants_stage_programs);
  CHECK(report::result_report("collective-loop") == nullptr);

  // A result of a kind without hooks: its metrics, in every output.
  const auto scenario = scenario::load_scenario(std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "scenarios" /
                                                "default.yaml");
  runner::RunResult run;
  auto result = std::make_unique<platform::WorkloadResult>();
  result->kind = "custom";
  result->metrics.push_back({"widgets", 3, "count"});
  run.primary = std::move(result);
  const std::string table = report::run_summary_table(scenario, run);
  CHECK(table.find("(custom)") != std::string::npos);
  CHECK(table.find("widgets") != std::string::npos);
  CHECK(report::run_result_json(scenario, run)["workload"]["kind"] == "custom");
  CHECK(report::run_report_html(scenario, run).find("widgets") != std::string::npos);
  std::ostringstream out;
  report::ChromeTrace trace(out, {});
  const report::RunTimeline timeline;
  CHECK(report::add_run_counters(trace, run, timeline) == 0);
}

}  // namespace result_reports_test
