#include "sim/validate/dataset_validation.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/accelerator/calibration_table.hpp"
#include "sim/engine/error.hpp"
#include "sim/validate/base_cluster.hpp"
#include "sim/validate/error_summary.hpp"
#include "sim/validate/importers.hpp"
#include "sim/validate/power_validation.hpp"
#include "sim/validate/serving_validation.hpp"
#include "sim/validate/training_validation.hpp"

namespace clustersim::validate {
namespace {

/// The rows compared in both runs, joined by id: their errors on the default tables and on the
/// calibration, per row and per source (training rows' `conventions`, serving rows' `source`).
void add_calibration_comparison(const nlohmann::json& before, const std::filesystem::path& calibration,
                                DatasetValidation& after) {
  std::map<std::string, const nlohmann::json*> by_id;
  for (const auto& row : before.at("rows")) by_id[row.at("id").get<std::string>()] = &row;
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::string> groups;
  using Errors = std::vector<std::pair<std::string, double>>;  // (row id, signed error %)
  std::map<std::string, std::pair<Errors, Errors>> errors;
  std::size_t width = 2;
  for (const auto& row : after.json.at("rows")) width = std::max(width, row.at("id").get<std::string>().size());
  std::string table = fmt::format("\ncalibration {}: each row's error on the default tables, then on it\n", calibration.string());
  table += fmt::format("{:<{}} {:>10} {:>10} {:>10} {:>9} {:>9}\n", "id", width, "measured", "default", "calibrated",
                       "error", "error");
  for (const auto& row : after.json.at("rows")) {
    const auto id = row.at("id").get<std::string>();
    const auto found = by_id.find(id);
    if (found == by_id.end()) continue;  // compared in one run only: in that run's own lists
    const nlohmann::json& old = *found->second;
    const std::string group = row.value("source", row.value("conventions", std::string()));
    if (!errors.contains(group)) groups.push_back(group);
    errors[group].first.emplace_back(id, old.at("error_pct").get<double>());
    errors[group].second.emplace_back(id, row.at("error_pct").get<double>());
    rows.push_back({{"id", id},
                    {"group", group},
                    {"measured", row.at("measured")},
                    {"predicted_default", old.at("predicted")},
                    {"predicted_calibrated", row.at("predicted")},
                    {"error_default_pct", old.at("error_pct")},
                    {"error_calibrated_pct", row.at("error_pct")}});
    table += fmt::format("{:<{}} {:>10.4g} {:>10.4g} {:>10.4g} {:>+8.1f}% {:>+8.1f}%\n", id, width,
                         row.at("measured").get<double>(), old.at("predicted").get<double>(),
                         row.at("predicted").get<double>(), old.at("error_pct").get<double>(),
                         row.at("error_pct").get<double>());
  }
  nlohmann::json per_group = nlohmann::json::array();
  for (const auto& group : groups) {
    const ErrorSummary before_table = summarise_errors(errors.at(group).first);
    const ErrorSummary on_table = summarise_errors(errors.at(group).second);
    per_group.push_back({{"group", group},
                         {"rows", before_table.rows},
                         {"mape_default_pct", before_table.mape_pct},
                         {"mape_calibrated_pct", on_table.mape_pct},
                         {"median_default_pct", before_table.median_pct},
                         {"median_calibrated_pct", on_table.median_pct}});
    table += fmt::format("{:<18} rows {:>3}  MAPE {:6.2f} % -> {:6.2f} %  median {:6.2f} % -> {:6.2f} %\n", group,
                         before_table.rows, before_table.mape_pct, on_table.mape_pct, before_table.median_pct,
                         on_table.median_pct);
  }
  if (rows.empty()) table += "no row was compared in both runs\n";
  after.json["calibration"] = {{"table", calibration.string()}, {"rows", rows}, {"per_source", per_group}};
  after.table += table;
}

DatasetValidation validate_once(const std::filesystem::path& dataset, const std::vector<CsvRow>& rows,
                                const DatasetValidationOptions& options, const std::filesystem::path& calibration) {
  if (is_inference_dataset(rows)) {
    if (!options.base.empty()) {
      throw ConfigError(fmt::format("--base applies to training datasets; {} is an inference dataset", dataset.string()));
    }
    const auto report = validate_serving_rows(rows, dataset.string(), calibration);
    return {serving_validation_json(report), render_serving_validation_table(report), report.summary.rows};
  }
  if (options.threads < 0) {
    throw ConfigError(fmt::format("--threads must be >= 0 (0: every core), got {}", options.threads));
  }
  std::optional<BaseCluster> base;
  if (!options.base.empty()) base = load_base_cluster(options.base);
  TrainingValidationOptions training;
  training.base = base ? &*base : nullptr;
  training.calibration = calibration;
  training.threads = options.threads;
  training.on_progress = options.on_progress;
  const auto report = validate_training_dataset(dataset, training);
  return {validation_json(report), render_validation_table(report), report.summary.rows};
}

}  // namespace

DatasetValidation validate_dataset(const std::filesystem::path& dataset, const DatasetValidationOptions& options) {
  const auto rows = read_dataset_rows(dataset);
  if (is_power_dataset(rows)) {
    if (!options.base.empty()) {
      throw ConfigError(fmt::format("--base applies to training datasets; {} is a power dataset (its rows' "
                                    "scenarios are validation/power/<id>.yaml)",
                                    dataset.string()));
    }
    if (!options.calibration.empty()) {
      throw ConfigError(fmt::format("--calibration applies to training and inference datasets; {} is a power dataset",
                                    dataset.string()));
    }
    const auto report = validate_power_dataset(dataset);
    return {power_validation_json(report), render_power_validation_table(report), report.summary.rows};
  }
  if (!options.calibration.empty()) {
    // Read once up front, so a bad table is one error naming it, not one per row.
    (void)models::read_calibration_path(options.calibration);
    const DatasetValidation before = validate_once(dataset, rows, options, {});
    DatasetValidation after = validate_once(dataset, rows, options, options.calibration);
    add_calibration_comparison(before.json, options.calibration, after);
    return after;
  }
  return validate_once(dataset, rows, options, {});
}

}  // namespace clustersim::validate
