#pragma once
/// `clustersim collective --compare CSV`: predicted vs measured nccl-tests bus bandwidth for the
/// all-reduce rows of a ground_truth_kernels.csv-style file, per GPU type.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clustersim::validate {

/// One compared size point.
struct NcclPoint {
  std::string id;
  double bytes = 0;                 ///< power-of-two size the row's label stands for
  double measured_busbw_bytes_per_s = 0;
  double predicted_busbw_bytes_per_s = 0;
  double error_pct = 0;             ///< (predicted - measured) / measured x 100
  std::string algorithm;            ///< chosen by auto, e.g. "nvls/Simple"
};

/// All points of one GPU type and its errors from 1 MiB up (the target range).
struct NcclGpuComparison {
  std::string gpu_type;  ///< the CSV's gpu_type
  std::string system;    ///< system preset used (models/data/systems)
  int ranks = 0;
  std::vector<NcclPoint> points;
  double median_abs_error_pct_from_1mib = 0;
  double max_abs_error_pct_from_1mib = 0;
};

/// The whole comparison.
struct NcclComparison {
  std::string dataset;
  std::vector<NcclGpuComparison> gpus;
  std::vector<std::string> skipped;  ///< "gpu_type: reason", one per skipped GPU type
  double median_abs_error_pct_from_1mib = 0;  ///< over every GPU's points >= 1 MiB
  double max_abs_error_pct_from_1mib = 0;
};

/// Size label of nccl-tests output as transcribed ("1K", "132K", "8G": decimal prefixes of the
/// power-of-two sizes nccl-tests runs) -> the power of two nearest to it. Throws ConfigError
/// for a label that is not a number with an optional K, M or G.
double nccl_size_label_bytes(const std::string& label);

/// Reads the CSV (nccl-tests and rccl-tests rows alike), keeps the all-reduce rows with metric
/// busbw, maps each GPU type to a system preset (A100 -> dgx-a100, H100 -> dgx-h100, H200 ->
/// dgx-h200, GB200 -> gb200-nvl72, AMD Instinct MI300X -> mi300x-x8 on its xGMI mesh; others,
/// and rows without a GPU count, are skipped with a reason), and predicts every size with `auto`
/// (analytical) on one node of that system.
NcclComparison compare_nccl_dataset(const std::filesystem::path& dataset);

/// Per GPU type: size, measured and predicted busbw (GB/s), error (%), algorithm; then the
/// median and worst absolute error from 1 MiB up, and the skipped GPU types.
std::string nccl_comparison_table(const NcclComparison& comparison);

/// The comparison as JSON (same fields, GB/s and %).
nlohmann::json nccl_comparison_json(const NcclComparison& comparison);

}  // namespace clustersim::validate
