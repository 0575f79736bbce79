#pragma once
/// Estimator (1): interpolation among measured kernel times, in log space over the shape.
#include <optional>
#include <vector>

#include "models/accelerator/op_class.hpp"

namespace clustersim::models {

/// One measured point: its shape, its measured time and the reference time the model gives the
/// same shape (ComputeModel: the fitted model, or the roofline where no fit exists).
struct MeasuredPoint {
  KernelShape shape;
  double time_s = 0;       ///< measured time, seconds
  double reference_s = 0;  ///< reference (fitted or roofline) time of the same shape, seconds
};

/// Default reach of interpolation: the nearest measured point must lie within this distance in
/// natural-log shape space, measured as the largest per-coordinate difference (ln 2: no
/// dimension more than a factor of 2 away).
inline constexpr double kDefaultMaxLogDistance = 0.6931471805599453;

/// Interpolates the ratio measured / reference time among measured points of the same kind
/// (the reference already carries the FLOP and byte counts, wave and tile quantization and the
/// fitted trend, so the ratio varies slowly with the shape; at a measured point the estimate
/// is the measurement).
///
/// Candidates share the query's op (gemm and batched_gemm are one kind), its dtype (matrix ops
/// only; bandwidth ops ignore dtype: the bytes already count it), and for attention head_dim,
/// causal, backward and heads / kv_heads. Coordinates are natural logs of: m, n, k, batch
/// (GEMM); batch x heads, seq_q, seq_kv (attention); bytes (bandwidth ops).
/// Applicable only when the query lies inside the candidates' bounding box in every coordinate
/// and the nearest candidate is within `max_log_distance` (largest per-coordinate log
/// difference). Every candidate within that reach contributes: the ratio is
/// exp(sum w_i log(ratio_i) / sum w_i) with w_i = 1 / d_i^2, d_i the Euclidean distance in log
/// space (inverse-distance weighting); at a measured point (d = 0) it is the geometric mean
/// of the points there, so measured points are reproduced exactly.
class MeasuredTable {
 public:
  MeasuredTable() = default;
  explicit MeasuredTable(std::vector<MeasuredPoint> points,
                         double max_log_distance = kDefaultMaxLogDistance);

  /// Interpolated measured / reference time ratio for `query`, or nullopt when not applicable.
  std::optional<double> time_ratio(const KernelShape& query) const;

  bool empty() const { return points_.empty(); }

 private:
  std::vector<MeasuredPoint> points_;
  double max_log_distance_ = kDefaultMaxLogDistance;
};

/// True when measured point `point` may inform `query` (same kind, see MeasuredTable).
bool same_kernel_kind(const KernelShape& point, const KernelShape& query);
/// Log-space coordinates of a shape (see MeasuredTable).
std::vector<double> log_coordinates(const KernelShape& shape);

}  // namespace clustersim::models
