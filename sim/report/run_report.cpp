#include "sim/report/run_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/report/result_reports.hpp"
#include "sim/report/scenario_json.hpp"
#include "sim/report/training_report.hpp"  // kResultSchemaVersion, fingerprint_hex

namespace clustersim::report {
namespace {

std::string metrics_table(const std::string& title, const platform::WorkloadResult& result) {
  std::string out = title + "\n";
  for (const platform::Metric& metric : result.metrics) {
    out += fmt::format("  {:<28} {:>16.6g} {}\n", metric.name, metric.value, metric.unit);
  }
  for (const std::string& note : result.notes) out += fmt::format("  note: {}\n", note);
  return out;
}

}  // namespace

nlohmann::json workload_result_json(const platform::WorkloadResult& result) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const platform::Metric& metric : result.metrics) {
    metrics[metric.name] = {{"value", metric.value}, {"unit", metric.unit}};
  }
  return {{"kind", result.kind}, {"metrics", metrics}, {"notes", result.notes}};
}

nlohmann::json run_result_json(const scenario::Scenario& scenario, const runner::RunResult& run) {
  nlohmann::json out;
  if (const ResultReport* hooks = result_report(run.primary->kind); hooks != nullptr && hooks->json) {
    out = hooks->json(scenario, run);
  } else {
    out = {{"schema_version", kResultSchemaVersion},
           {"scenario", scenario_identity_json(scenario)},
           {"workload", workload_result_json(*run.primary)},
           {"events", run.events},
           {"fingerprint", fingerprint_hex(run.fingerprint)}};
  }
  if (!run.jobs.empty()) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const runner::JobResult& job : run.jobs) {
      nlohmann::json entry = workload_result_json(*job.result);
      entry["name"] = job.name;
      jobs.push_back(std::move(entry));
    }
    out["jobs"] = std::move(jobs);
  }
  return out;
}

void add_calibration_effect(nlohmann::json& result, const runner::CalibrationEffect& effect) {
  nlohmann::json figures = nlohmann::json::array();
  for (std::size_t i = 0; i < effect.calibrated.size() && i < effect.default_tables.size(); ++i) {
    const platform::Metric& with = effect.calibrated[i];
    const double base = effect.default_tables[i].value;
    figures.push_back({{"name", with.name},
                       {"unit", with.unit},
                       {"calibrated", with.value},
                       {"default_tables", base},
                       {"change_pct", base != 0 ? nlohmann::json(100.0 * (with.value - base) / base) : nlohmann::json()}});
  }
  result["calibration"] = {{"table", effect.table}, {"against_default_tables", figures}};
}

std::string run_summary_table(const scenario::Scenario& scenario, const runner::RunResult& run) {
  std::string out;
  if (const ResultReport* hooks = result_report(run.primary->kind); hooks != nullptr && hooks->table) {
    out = hooks->table(scenario, run);
  } else {
    out = metrics_table(fmt::format("{} ({})", scenario.name, run.primary->kind), *run.primary);
    out += fmt::format("fingerprint {} ({} events)\n", fingerprint_hex(run.fingerprint), run.events);
  }
  for (const runner::JobResult& job : run.jobs) {
    out += metrics_table(fmt::format("job {} ({})", job.name, job.result->kind), *job.result);
  }
  return out;
}

namespace {

void flatten_scalars(const nlohmann::json& value, const std::string& path,
                     std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      if (key == "time_series") continue;
      flatten_scalars(child, path.empty() ? key : path + "." + key, out);
    }
  } else if (value.is_array()) {
    return;  // per-stage, per-tier, per-pool detail: the JSON has it
  } else if (value.is_string()) {
    out.emplace_back(path, value.get<std::string>());
  } else if (value.is_null()) {
    out.emplace_back(path, "");
  } else {
    out.emplace_back(path, value.dump());
  }
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> summary_metrics(const nlohmann::json& result) {
  std::vector<std::pair<std::string, std::string>> columns;
  for (const auto& [key, value] : result.items()) {
    if (key == "scenario" || key == "notes" || key == "provenance" || key == "schema_version" || key == "fingerprint" ||
        key == "jobs") {
      continue;
    }
    flatten_scalars(value, key, columns);
  }
  const nlohmann::json jobs = result.value("jobs", nlohmann::json::array());
  for (const nlohmann::json& job : jobs) {
    const std::string prefix = "job." + job.value("name", "") + ".";
    const nlohmann::json metrics = job.value("metrics", nlohmann::json::object());  // items() needs it alive
    for (const auto& [name, metric] : metrics.items()) {
      columns.emplace_back(prefix + metric_column(name, metric.value("unit", "")), metric.at("value").dump());
    }
  }
  return columns;
}

std::string metric_column(const std::string& name, const std::string& unit_text) {
  std::string unit = unit_text;
  if (unit.empty()) return name;
  if (unit.rfind("1/", 0) == 0) unit = "per_" + unit.substr(2);
  std::replace(unit.begin(), unit.end(), '/', '_');
  const std::string suffix = "_" + unit;
  if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return name;
  }
  return name + suffix;
}

std::string run_summary_csv(const scenario::Scenario& scenario, const runner::RunResult& run) {
  const nlohmann::json json = run_result_json(scenario, run);
  std::vector<std::pair<std::string, std::string>> columns{{"scenario", scenario.name},
                                                           {"fingerprint", json.value("fingerprint", "")}};
  for (auto& column : summary_metrics(json)) columns.push_back(std::move(column));
  std::string header, row;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on "," + std::string.
    if (i > 0) {
      header += ',';
      row += ',';
    }
    header += csv_field(columns[i].first);
    row += csv_field(columns[i].second);
  }
  return header + "\n" + row + "\n";
}

}  // namespace clustersim::report
