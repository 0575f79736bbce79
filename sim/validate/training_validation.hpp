#pragma once
/// `clustersim validate --dataset`: map rows of published training measurements to scenarios,
/// predict each row's metric, and report per-row error and MAPE / median / worst.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/validate/csv_table.hpp"

namespace clustersim::validate {

/// Settings a source leaves unstated, filled from that source's documented framework defaults
/// of its era (never chosen per row). One entry per source family, keyed by row-id prefix.
struct SourceConventions {
  std::string id_prefix;      ///< rows whose id starts with this use these conventions
  std::string description;    ///< framework, era and where the defaults come from
  std::string system;         ///< system preset (models/data/systems) for the row's gpu_type
  std::int64_t vocab_size = 0;
  std::int64_t micro_batch = 1;
  std::string recompute;      ///< none | selective | full
  std::string attention;      ///< flash | unfused
  bool sequence_parallel = false;
  bool overlap_grad_reduce = false;
  int zero = 0;
  std::string precision;      ///< bf16 | fp16 | fp8
  /// How the source counts `tflops_per_gpu`: "hardware" (recompute counted, SC21 Eq. 3) or
  /// "model" (Megatron-Core / NeMo model FLOPs).
  std::string tflops_counting;
  bool tp_comm_overlap = false;  ///< Transformer Engine TP-communication overlap
};

/// The documented conventions, in match order.
const std::vector<SourceConventions>& source_conventions();

/// One compared row.
struct ValidationRow {
  std::string id;
  std::string metric;
  std::string unit;
  double measured = 0;
  double predicted = 0;
  double error_pct = 0;  ///< (predicted - measured) / measured x 100
  double step_time_s = 0;
  std::string conventions;  ///< id_prefix of the conventions used
};

/// A row that could not be mapped, with the reason.
struct SkippedRow {
  std::string id;
  std::string reason;
};

struct ValidationSummary {
  int rows = 0;
  double mape_pct = 0;
  double median_pct = 0;  ///< median of absolute errors
  double max_pct = 0;     ///< worst absolute error
  std::string worst_id;
};

struct ValidationReport {
  std::string dataset;
  std::vector<ValidationRow> rows;
  std::vector<SkippedRow> skipped;
  ValidationSummary summary;
  std::vector<std::string> assumptions;  ///< conventions applied, one line per source family
};

/// Builds the scenario YAML for a row, or returns the reason it cannot be mapped.
struct RowMapping {
  std::optional<std::string> scenario_yaml;
  std::string skip_reason;
  const SourceConventions* conventions = nullptr;
};
RowMapping map_training_row(const CsvRow& row);

/// Runs every row of the dataset. Rows are never dropped silently: each is compared or skipped.
ValidationReport validate_training_dataset(const std::filesystem::path& dataset);

/// Text table: per-row measured, predicted, error; then skipped rows; then MAPE/median/max.
std::string render_validation_table(const ValidationReport& report);
/// JSON: {summary{mape_pct, median_pct, max_pct, rows}, rows[], skipped[], assumptions[]}.
nlohmann::json validation_json(const ValidationReport& report);

}  // namespace clustersim::validate
