#include "sim/validate/power_validation.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/config/schema.hpp"
#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/serving/serving_workload.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::validate {
namespace {

/// A column's number, or -1 when it is empty or not a number.
double number(const CsvRow& row, std::string_view column) {
  return config::parse_number(row.get(column)).value_or(-1.0);
}

/// The scenario's first comment line, without its "# ".
std::string first_comment(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line.rfind("# ", 0) == 0 ? line.substr(2) : "";
}

/// The cluster's average power and the devices' part, W, from a run of `file`.
std::pair<double, double> predicted_power(const std::filesystem::path& file) {
  const scenario::Scenario scenario = scenario::load_scenario(file);
  const runner::RunResult run = runner::run_scenario(scenario);
  if (const auto* training = dynamic_cast<const training::TrainingResult*>(run.primary.get())) {
    if (!training->power.computed) throw ConfigError(file.string() + ": the run has no power report");
    return {training->power.cluster_average_w, training->power.devices_average_w};
  }
  if (const auto* serving = dynamic_cast<const serving::ServingResult*>(run.primary.get())) {
    if (!serving->energy_per_token_j) throw ConfigError(file.string() + ": the run has no power report");
    return {serving->average_power_w, serving->devices_average_power_w};
  }
  throw ConfigError(file.string() + ": a training or serving scenario is needed for power");
}

PowerSummary summarise(const std::vector<PowerValidationRow>& rows, const std::string& group) {
  std::vector<std::pair<std::string, double>> errors;
  for (const auto& r : rows) {
    if (group.empty() || r.accelerator == group) errors.emplace_back(r.id, r.error_pct);
  }
  PowerSummary s;
  static_cast<ErrorSummary&>(s) = summarise_errors(errors);
  s.group = group;
  return s;
}

}  // namespace

bool is_power_dataset(const std::vector<CsvRow>& rows) {
  return !rows.empty() && rows.front().fields.count("power_metric") > 0 && rows.front().fields.count("power_value") > 0;
}

MeasuredPower measured_average_power(const CsvRow& row) {
  const std::string& metric = row.get("power_metric");
  const double value = number(row, "power_value");
  if (value <= 0) return {0, "power_value is not a positive number"};
  if (metric == "system_avg_power_w") return {value, ""};
  if (metric == "energy_per_result_j") {
    const double minutes = number(row, "perf_value");
    if (row.get("perf_metric") != "time_to_train_min" || minutes <= 0) {
      return {0, "energy per result without a time to train (perf_metric time_to_train_min)"};
    }
    return {value / (minutes * 60.0), ""};
  }
  return {0, "power_metric '" + metric + "' is not an average (system_avg_power_w, energy_per_result_j)"};
}

PowerValidationReport validate_power_dataset(const std::filesystem::path& dataset,
                                             const std::filesystem::path& scenarios) {
  PowerValidationReport report;
  report.dataset = dataset.string();
  const std::filesystem::path folder =
      scenarios.empty() ? (dataset.parent_path() / ".." / "power").lexically_normal() : scenarios;
  report.scenarios = folder.string();
  if (!std::filesystem::is_directory(folder)) {
    throw ConfigError(fmt::format("power validation: scenarios folder '{}' does not exist (one <id>.yaml per row)",
                                  folder.string()));
  }
  for (const CsvRow& row : read_csv_file(dataset)) {
    const std::string id = row.get("id");
    const MeasuredPower measured = measured_average_power(row);
    const std::filesystem::path file = folder / (id + ".yaml");
    if (!measured.reason.empty()) {
      report.skipped.push_back({id, measured.reason});
      continue;
    }
    if (!std::filesystem::is_regular_file(file)) {
      report.skipped.push_back({id, "no scenario " + (folder.filename() / (id + ".yaml")).string() +
                                        (row.get("benchmark").find("lora") != std::string::npos
                                             ? ": LoRA fine-tuning is not modelled (frozen weights, adapters' "
                                               "gradients only)"
                                             : "")});
      continue;
    }
    PowerValidationRow r;
    r.id = id;
    r.accelerator = row.get("accelerator");
    r.measured_w = measured.watts;
    std::tie(r.predicted_w, r.devices_w) = predicted_power(file);
    r.error_pct = (r.predicted_w - r.measured_w) / r.measured_w * 100.0;
    r.note = first_comment(file);
    report.rows.push_back(r);
  }
  report.summary = summarise(report.rows, "");
  std::vector<std::string> groups;
  for (const auto& r : report.rows) {
    if (std::find(groups.begin(), groups.end(), r.accelerator) == groups.end()) groups.push_back(r.accelerator);
  }
  for (const std::string& group : groups) report.per_accelerator.push_back(summarise(report.rows, group));
  return report;
}

std::string render_power_validation_table(const PowerValidationReport& report) {
  std::string out = fmt::format("power: {} against {} (scenarios in {})\n", report.dataset, "the model", report.scenarios);
  out += fmt::format("{:<42} {:<26} {:>12} {:>12} {:>12} {:>8}\n", "id", "accelerator", "measured W", "predicted W",
                     "devices W", "error");
  for (const auto& r : report.rows) {
    out += fmt::format("{:<42} {:<26} {:>12.0f} {:>12.0f} {:>12.0f} {:>+7.1f}%\n", r.id, r.accelerator.substr(0, 26),
                       r.measured_w, r.predicted_w, r.devices_w, r.error_pct);
  }
  if (!report.skipped.empty()) {
    out += fmt::format("skipped {} rows:\n", report.skipped.size());
    for (const auto& s : report.skipped) out += fmt::format("  {:<40} {}\n", s.id, s.reason);
  }
  const auto line = [&out](const std::string& label, const ErrorSummary& s) {
    out += fmt::format("{:<34} {:>3} rows  median {:5.1f} %  MAPE {:5.1f} %  worst {:5.1f} % ({})\n", label, s.rows,
                       s.median_pct, s.mape_pct, s.max_pct, s.worst_id);
  };
  for (const auto& s : report.per_accelerator) line(s.group.substr(0, 34), s);
  line("all rows", report.summary);
  return out;
}

nlohmann::json power_validation_json(const PowerValidationReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : report.rows) {
    rows.push_back({{"id", r.id}, {"accelerator", r.accelerator}, {"measured_w", r.measured_w},
                    {"predicted_w", r.predicted_w}, {"devices_w", r.devices_w}, {"error_pct", r.error_pct},
                    {"note", r.note}});
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& s : report.per_accelerator) {
    nlohmann::json g = summary_json(s);
    g["accelerator"] = s.group;
    groups.push_back(g);
  }
  return {{"dataset", report.dataset}, {"scenarios", report.scenarios}, {"summary", summary_json(report.summary)},
          {"per_accelerator", groups}, {"rows", rows}, {"skipped", skipped_json(report.skipped)}};
}

}  // namespace clustersim::validate
