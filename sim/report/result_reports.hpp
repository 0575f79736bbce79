#pragma once
/// How the report shows each workload kind's result: the result JSON, the run table, the HTML
/// page, the trace's counter tracks and a sweep row's columns. Each kind's hooks are registered here under its
/// `WorkloadResult::kind`; a kind without hooks gets the generic metrics table, JSON and page
/// (run_report.cpp, html_report.cpp), so a new workload kind adds an entry, not a branch in
/// each of the report's outputs. A hook is called only for a result of its own kind.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/chrome_trace.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/run_report.hpp"
#include "sim/report/run_timeline.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario.hpp"

namespace clustersim::report {

struct ResultReport {
  /// The run's result document (run_result_json adds the jobs).
  std::function<nlohmann::json(const scenario::Scenario&, const runner::RunResult&)> json;
  /// The run table (run_summary_table adds the jobs).
  std::function<std::string(const scenario::Scenario&, const runner::RunResult&)> table;
  /// report.html.
  std::function<std::string(const scenario::Scenario&, const runner::RunResult&, const RunReportInputs&)> html;
  /// Counter tracks the trace gets after the run (empty: none); returns the tracks added.
  std::function<int(ChromeTrace&, const runner::RunResult&, const RunTimeline&)> counters;
  /// The summary metrics a sweep row holds, one column each, in a fixed order (empty: the
  /// result's generic metrics).
  std::function<void(const runner::RunResult&, std::vector<MetricColumn>&)> columns;
  /// report.html lists the stage programs' estimators (RunReportInputs::programs).
  bool wants_stage_programs = false;
};

/// The hooks of workload kind `kind`, or nullptr for a kind that has none.
const ResultReport* result_report(std::string_view kind);

}  // namespace clustersim::report
