#pragma once
/// `report.html`, the one-file report `clustersim run --out DIR` and `clustersim sweep --out DIR`
/// write (docs/outputs.md): a title with the scenario's name, file, resolved hash and
/// fingerprint, a key-metrics table, then charts as inline SVG (svg_chart.hpp) with axis
/// titles, units and legends, and tables. Self-contained: no external script, style, font or
/// network access; the only script sorts tables when a header is clicked and, once it has
/// run, marks the page (`<body data-report-ready="1">`, which the browser test checks).
/// Deterministic: the same run writes the same bytes.
///
/// Chart ids (the browser test asserts them): training: chart-timeline, chart-breakdown,
/// chart-memory, chart-hbm, chart-network, chart-network-time, chart-power, table-estimators;
/// serving: chart-ttft-cdf, chart-tpot-cdf, chart-e2e-cdf, chart-throughput, chart-queue,
/// chart-kv, chart-pools; sweep: chart-pareto, table-points. Other workload kinds get the
/// key-metrics table.
#include <string>
#include <utility>
#include <vector>

#include "sim/report/run_timeline.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/serving/serving_workload.hpp"
#include "sim/training/stage_program.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::report {

/// What a run's report draws beside its result.
struct RunReportInputs {
  const RunTimeline* timeline = nullptr;  ///< the run's recorded timeline (training charts); may be null
  /// The costed stage programs (training: the estimator table); may be null.
  const std::vector<training::StageProgram>* programs = nullptr;
};

/// The report of one run: its kind's page (result_reports.hpp), the metrics table for a kind
/// without one.
std::string run_report_html(const scenario::Scenario& scenario, const runner::RunResult& run,
                            const RunReportInputs& inputs = {});

/// The training and serving pages (the hooks result_reports.cpp registers).
std::string training_report_html(const scenario::Scenario& scenario, const runner::RunResult& run,
                                 const training::TrainingResult& result, const RunReportInputs& inputs);
std::string serving_report_html(const scenario::Scenario& scenario, const runner::RunResult& run,
                                const serving::ServingResult& result);

/// One point of a sweep as the report shows it.
struct SweepReportPoint {
  std::string id;
  bool ok = false;
  std::string reason;  ///< why it failed
  bool pareto = false;
  std::vector<std::pair<std::string, std::string>> values;  ///< the varied keys
  std::vector<std::pair<std::string, double>> metrics;      ///< column (with its unit) -> value
};

/// A sweep's report: the scatter of `minimize` (x) against `maximize` (y) with the Pareto
/// front, and a sortable table of every point (failed ones with their reason).
struct SweepReport {
  std::string name;
  std::string fingerprint;
  std::string maximize, minimize;  ///< the two objectives' columns
  std::vector<SweepReportPoint> points;
  std::vector<std::string> notes;
};
std::string sweep_report_html(const SweepReport& sweep);

}  // namespace clustersim::report
