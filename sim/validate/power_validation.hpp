#pragma once
/// `clustersim validate --dataset` for measured power (the columns of
/// validation/data/ground_truth_power.csv): a row is compared when the scenarios folder
/// (validation/power beside the dataset's folder) holds `<id>.yaml`, a scenario written from what
/// the row's source states (system, accelerators, split, precision, power limit, node and
/// cooling; each assumption in its header); it is run and the cluster's average power compared
/// with the measured average: system_avg_power_w as it is, energy_per_result_j over the time to
/// train. Every other row is listed with why it is not compared.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/validate/csv_table.hpp"
#include "sim/validate/error_summary.hpp"

namespace clustersim::validate {

/// Is this dataset in the power format (it has power_metric and power_value columns)?
bool is_power_dataset(const std::vector<CsvRow>& rows);

/// The measured average power of a row, W, or the reason it has none: a system_avg_power_w
/// row's value; an energy_per_result_j row's energy over its time_to_train_min; ratings and
/// maxima are not averages.
struct MeasuredPower {
  double watts = 0;
  std::string reason;  ///< "" when watts is set
};
MeasuredPower measured_average_power(const CsvRow& row);

struct PowerValidationRow {
  std::string id, accelerator;
  double measured_w = 0, predicted_w = 0;
  double devices_w = 0;  ///< the accelerators' board power alone, predicted
  double error_pct = 0;  ///< (predicted - measured) / measured x 100
  std::string note;      ///< the scenario's first header line
};

struct SkippedPowerRow {
  std::string id, reason;
};

struct PowerSummary : ErrorSummary {
  std::string group;  ///< an accelerator; "" for all rows
};

struct PowerValidationReport {
  std::string dataset, scenarios;
  std::vector<PowerValidationRow> rows;
  std::vector<SkippedPowerRow> skipped;
  PowerSummary summary;
  std::vector<PowerSummary> per_accelerator;  ///< in first-appearance order
};

/// Runs every row that has a scenario in `scenarios` (empty: `validation/power` beside the
/// dataset's folder). Throws ConfigError when the folder does not exist; a scenario that fails
/// to load or run is an error naming its file.
PowerValidationReport validate_power_dataset(const std::filesystem::path& dataset,
                                             const std::filesystem::path& scenarios = {});

/// Text: per-row measured and predicted power, the devices' part, error; skipped rows; then
/// median and worst per accelerator and overall.
std::string render_power_validation_table(const PowerValidationReport& report);
/// JSON: {dataset, scenarios, summary, per_accelerator[], rows[], skipped[]}.
nlohmann::json power_validation_json(const PowerValidationReport& report);

}  // namespace clustersim::validate
