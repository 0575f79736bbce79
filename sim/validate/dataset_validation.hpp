#pragma once
/// `clustersim validate DATASET` whichever kind of dataset it is: measured power (each row with
/// its own scenario), inference rows (the serving simulator) or training rows (the training
/// simulator); a benchmark tool's own output is imported first (read_dataset_rows). The CLI and
/// the Python module's `clustersim.validate` both run it.
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace clustersim::validate {

struct DatasetValidationOptions {
  /// Training datasets: a scenario file whose cluster, network and presets every row runs on
  /// (`--base`); empty: the system each row's source or gpu_type names.
  std::filesystem::path base;
  /// Training and inference datasets: a calibration table (docs/calibration-format.md) to run
  /// every row on as well (`--calibration`): the report is the calibrated run's, and a
  /// `calibration` section gives each row's and each source's error on the default tables and
  /// on this one. Empty: the default tables only.
  std::filesystem::path calibration;
  int threads = 0;  ///< training simulations at once (0: every core)
  /// Training rows done and to simulate (TrainingValidationOptions::on_progress); may be empty.
  std::function<void(int done_rows, int total_rows)> on_progress;
};

/// A dataset's report in both of the CLI's forms.
struct DatasetValidation {
  nlohmann::json json;     ///< what `--format json` prints
  std::string table;       ///< what the table form prints
  int compared_rows = 0;   ///< rows compared with a prediction (0: none; the CLI exits 1)
};

/// Validates `dataset`. Throws ConfigError for an option that does not apply to its kind
/// (`base` on a power or inference dataset, threads < 0) and what the validators throw.
DatasetValidation validate_dataset(const std::filesystem::path& dataset, const DatasetValidationOptions& options = {});

}  // namespace clustersim::validate
