#pragma once
/// Report sinks of a whole run (runner::RunResult), for any workload kind: the primary
/// workload's report (training's own table and JSON; for other kinds their metrics and notes),
/// then every job's metrics and notes.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario.hpp"

namespace clustersim::report {

/// A workload result's metrics and notes: {kind, metrics: {name: {value, unit}}, notes}.
nlohmann::json workload_result_json(const platform::WorkloadResult& result);

/// The run as JSON: the primary's document (training: training_result_json; serving:
/// serving_result_json; others: {schema_version, scenario: scenario_identity_json, workload,
/// events, fingerprint}) with a "jobs" array when the scenario has jobs.
nlohmann::json run_result_json(const scenario::Scenario& scenario, const runner::RunResult& run);

/// Adds `calibration` to a result document: the table and each headline figure with and without
/// it (runner::compare_with_default_tables; docs/metrics.md, "Calibration").
void add_calibration_effect(nlohmann::json& result, const runner::CalibrationEffect& effect);

/// The run's summary metrics as CSV: a header row and one value row. Columns: scenario,
/// fingerprint, then every scalar of run_result_json's metric blocks (arrays, time series,
/// notes, provenance and the scenario block left out) by dotted path, in the JSON's key
/// order; the names carry the units as the JSON's do (`_s` seconds, `_w` watts, `_j` joules,
/// `_bytes`, `_per_s` per second; unitless names are counts or fractions).
std::string run_summary_csv(const scenario::Scenario& scenario, const runner::RunResult& run);

/// The scalar metrics of a run's result JSON (run_result_json's document) by dotted path, as
/// text, in key order, then each job's metrics as `job.NAME.<metric_column>` in the jobs' order:
/// what run_summary_csv's columns after scenario and fingerprint hold and `compare` sets side
/// by side.
std::vector<std::pair<std::string, std::string>> summary_metrics(const nlohmann::json& result);

/// One summary metric as a column of a sweep's rows: its name with its unit (step_time_s,
/// memory_per_gpu_B, mfu_fraction) and its value.
struct MetricColumn {
  std::string column;
  double value = 0;
};

/// A workload metric's column name: its name with its unit appended ("busy_time", "s" ->
/// "busy_time_s"; "1/s" -> "per_s", "/" -> "_"), unless the name already ends in it or it has
/// none. Sweep rows and summary_metrics name job metrics so.
std::string metric_column(const std::string& name, const std::string& unit);

/// The run as a table: the primary's summary, then one block per job.
std::string run_summary_table(const scenario::Scenario& scenario, const runner::RunResult& run);

}  // namespace clustersim::report
