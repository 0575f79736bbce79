#include "sim/validate/dataset_validation.hpp"

#include <optional>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/validate/base_cluster.hpp"
#include "sim/validate/importers.hpp"
#include "sim/validate/power_validation.hpp"
#include "sim/validate/serving_validation.hpp"
#include "sim/validate/training_validation.hpp"

namespace clustersim::validate {

DatasetValidation validate_dataset(const std::filesystem::path& dataset, const DatasetValidationOptions& options) {
  const auto rows = read_dataset_rows(dataset);
  if (is_power_dataset(rows)) {
    if (!options.base.empty()) {
      throw ConfigError(fmt::format("--base applies to training datasets; {} is a power dataset (its rows' "
                                    "scenarios are validation/power/<id>.yaml)",
                                    dataset.string()));
    }
    const auto report = validate_power_dataset(dataset);
    return {power_validation_json(report), render_power_validation_table(report), report.summary.rows};
  }
  if (is_inference_dataset(rows)) {
    if (!options.base.empty()) {
      throw ConfigError(fmt::format("--base applies to training datasets; {} is an inference dataset", dataset.string()));
    }
    const auto report = validate_serving_rows(rows, dataset.string());
    return {serving_validation_json(report), render_serving_validation_table(report), report.summary.rows};
  }
  if (options.threads < 0) {
    throw ConfigError(fmt::format("--threads must be >= 0 (0: every core), got {}", options.threads));
  }
  std::optional<BaseCluster> base;
  if (!options.base.empty()) base = load_base_cluster(options.base);
  TrainingValidationOptions training;
  training.base = base ? &*base : nullptr;
  training.threads = options.threads;
  training.on_progress = options.on_progress;
  const auto report = validate_training_dataset(dataset, training);
  return {validation_json(report), render_validation_table(report), report.summary.rows};
}

}  // namespace clustersim::validate
