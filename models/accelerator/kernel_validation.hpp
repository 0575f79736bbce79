#pragma once
/// Comparison of compute-model predictions with kernel measurements (calibration rows), with
/// an optional deterministic hold-out split: fit on part of the rows, predict the rest.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/accelerator/calibration_table.hpp"
#include "models/accelerator/compute_model.hpp"

namespace clustersim::models {

/// Rows used for calibration and rows held out for prediction.
struct HoldoutSplit {
  std::vector<CalibrationRow> fit;
  std::vector<CalibrationRow> held_out;
};

/// Validation group of a row: accelerator, kind ("gemm" for gemm and batched_gemm,
/// "attention", or the bandwidth op class), dtype for matrix ops, direction for attention.
std::string validation_group(const CalibrationRow& row);

/// Deterministic stratified split. Within each validation_group the rows are ordered by a hash
/// of (seed, row shape) and the first round(fraction x n) are held out, keeping at least one
/// row for the fit (a group of one row is never held out). The result does not depend on the
/// order of `rows`. fraction 0 holds nothing out. Throws ConfigError unless 0 <= fraction < 1.
HoldoutSplit split_holdout(const std::vector<CalibrationRow>& rows, double fraction,
                           std::uint64_t seed);

/// One measured row and the model's predictions for it.
struct KernelComparison {
  CalibrationRow row;
  OpEstimate best;                ///< estimate(): table, else fit, else roofline
  std::optional<double> fitted_s; ///< the fitted model alone, when a fit exists
  double roofline_s = 0;          ///< the analytical roofline alone
  /// |predicted - measured| / measured of each.
  double best_error = 0;
  std::optional<double> fitted_error;
  double roofline_error = 0;
};

/// Median errors of one set of comparisons.
struct ErrorSummary {
  std::size_t count = 0;
  double best_median = 0;
  double fitted_median = 0;   ///< over the rows that have a fit
  std::size_t fitted_count = 0;
  double roofline_median = 0;
};

/// Attention validated across accelerators. The public data has one attention point per
/// accelerator, so no per-accelerator hold-out exists. The fused-attention model
/// (attention_cost.hpp) predicts each row from that accelerator's own rates (matrix peak x
/// best-GEMM efficiency x MMA-path fraction, special-function and fp32 vector rates) and the
/// kernel family, with no constant fitted to attention rows: every row is out of sample.
/// For comparison, the model is also scaled by a kernel-family efficiency fitted leave one
/// accelerator out: the geometric mean of the other accelerators' measured / model ratios of
/// the same family, dtype, direction and masking.
struct AttentionTransfer {
  CalibrationRow row;
  AttentionKernelFamily family = AttentionKernelFamily::fa2;  ///< the family the model used
  AttentionScoreCost per_score;  ///< the model's per-score-element parts on this accelerator
  double model_s = 0;            ///< the model alone (uncalibrated ComputeModel::roofline)
  double model_error = 0;        ///< |model - measured| / measured
  double own_ratio = 0;          ///< (measured - launch) / (model - launch) of this row
  double pooled_ratio = 0;       ///< geometric mean of the other accelerators' own ratios (0: none)
  std::size_t pooled_rows = 0;   ///< how many rows it pools
  double pooled_s = 0;           ///< launch + pooled_ratio x (model - launch) (0: no other rows)
  double pooled_error = 0;       ///< |pooled - measured| / measured (when pooled_rows > 0)
};
/// The whole comparison.
struct KernelValidationReport {
  double holdout_fraction = 0;
  std::uint64_t seed = 1;
  std::size_t fit_rows = 0;                   ///< rows the models were calibrated with
  std::vector<KernelComparison> comparisons;  ///< held-out rows (all rows without hold-out)
  std::vector<std::string> skipped;           ///< "file:line: why" for rows not compared
  ErrorSummary overall;
  std::map<std::string, ErrorSummary> by_kind;  ///< "gemm", "attention", "bandwidth"
  /// Every attention row the model can cost (independent of the hold-out split), in row order.
  std::vector<AttentionTransfer> attention_transfer;
  double attention_transfer_median = 0;         ///< median model error over those rows
  double attention_transfer_pooled_median = 0;  ///< median error with the pooled ratio
  std::size_t attention_transfer_pooled_count = 0;  ///< rows that have a pooled ratio
};

/// Calibrates one ComputeModel per accelerator with the fit rows and predicts the compared rows
/// (the held-out ones, or every row when holdout_fraction is 0). `spec_for` resolves a library
/// accelerator name (it may throw ConfigError for an unknown one). layer_fwd/layer_bwd rows are
/// skipped (the compute model does not cost whole layers). `attention_kernel` is the fused
/// kernel family of the attention rows (the CSV format does not record it); unset: each
/// accelerator's default.
///
/// `roofline_clock`, when set, gives the roofline column at the clock the rows ran at (e.g. the
/// clock a power limit settles at, for rows timed after long warm-ups): called with the row's
/// accelerator, shape and the full-clock roofline, it returns seconds. Only the roofline column
/// (the model no row calibrates) uses it.
using RooflineClock = std::function<double(const std::string& accelerator, const KernelShape& shape,
                                           const OpEstimate& full_clock)>;
KernelValidationReport validate_kernels(
    const std::vector<CalibrationRow>& rows,
    const std::function<AcceleratorSpec(const std::string&)>& spec_for, double holdout_fraction,
    std::uint64_t seed, std::optional<AttentionKernelFamily> attention_kernel = std::nullopt,
    const RooflineClock& roofline_clock = {});

/// Fills report.attention_transfer (see AttentionTransfer) from the attention rows of `rows`;
/// `spec_for` as in validate_kernels (which calls this). A row the model cannot cost (e.g. an
/// accelerator without a special-function rate) goes to report.skipped with the reason.
void attention_across_accelerators(
    const std::vector<CalibrationRow>& rows,
    const std::function<AcceleratorSpec(const std::string&)>& spec_for,
    KernelValidationReport& report);

/// Plain-text table: one line per compared row (shape, measured, best with provenance, fitted,
/// roofline, and their errors), then the medians overall and per kind, then the
/// leave-one-accelerator-out attention table (when there is one), then skipped rows.
std::string render_kernel_validation(const KernelValidationReport& report);

/// Median of `values` (mean of the two middle values for an even count); 0 when empty.
double median_of(std::vector<double> values);

}  // namespace clustersim::models
