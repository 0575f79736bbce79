#include "models/accelerator/measured_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clustersim::models {

namespace {


double log_of(std::int64_t value) { return std::log(static_cast<double>(std::max<std::int64_t>(value, 1))); }

}  // namespace

bool same_kernel_kind(const KernelShape& point, const KernelShape& query) {
  if (is_gemm_op(point.op) && is_gemm_op(query.op)) return point.dtype == query.dtype;
  if (point.op != query.op) return false;
  if (point.op == OpClass::attention) {
    return point.dtype == query.dtype && point.head_dim == query.head_dim &&
           point.causal == query.causal && point.backward == query.backward &&
           point.heads * query.kv_heads == query.heads * point.kv_heads;
  }
  return true;
}

std::vector<double> log_coordinates(const KernelShape& shape) {
  if (is_gemm_op(shape.op)) {
    return {log_of(shape.m), log_of(shape.n), log_of(shape.k), log_of(shape.batch)};
  }
  if (shape.op == OpClass::attention) {
    return {log_of(shape.batch * shape.heads), log_of(shape.seq_q), log_of(shape.seq_kv)};
  }
  return {std::log(std::max(shape.bytes, 1.0))};
}

MeasuredTable::MeasuredTable(std::vector<MeasuredPoint> points, double max_log_distance)
    : points_(std::move(points)), max_log_distance_(max_log_distance) {}

std::optional<double> MeasuredTable::time_ratio(const KernelShape& query) const {
  const std::vector<double> q = log_coordinates(query);
  constexpr double kEpsilon = 1e-9;
  std::vector<double> low(q.size(), std::numeric_limits<double>::infinity());
  std::vector<double> high(q.size(), -std::numeric_limits<double>::infinity());
  // (largest per-coordinate gap, Euclidean distance, log ratio) of each candidate
  struct Candidate {
    double gap, distance, log_ratio;
  };
  std::vector<Candidate> candidates;
  double nearest = std::numeric_limits<double>::infinity();
  for (const auto& point : points_) {
    if (!same_kernel_kind(point.shape, query)) continue;
    const std::vector<double> p = log_coordinates(point.shape);
    double squared = 0, largest_gap = 0;
    for (std::size_t d = 0; d < q.size(); ++d) {
      low[d] = std::min(low[d], p[d]);
      high[d] = std::max(high[d], p[d]);
      squared += (p[d] - q[d]) * (p[d] - q[d]);
      largest_gap = std::max(largest_gap, std::abs(p[d] - q[d]));
    }
    nearest = std::min(nearest, largest_gap);
    candidates.push_back({largest_gap, std::sqrt(squared), std::log(point.time_s / point.reference_s)});
  }
  if (candidates.empty()) return std::nullopt;
  for (std::size_t d = 0; d < q.size(); ++d) {
    if (q[d] < low[d] - kEpsilon || q[d] > high[d] + kEpsilon) return std::nullopt;
  }
  if (nearest > max_log_distance_ + kEpsilon) return std::nullopt;

  double weight_sum = 0, weighted = 0;
  for (const auto& candidate : candidates) {
    if (nearest <= kEpsilon) {
      if (candidate.distance > kEpsilon) continue;
      weight_sum += 1;
      weighted += candidate.log_ratio;
    } else if (candidate.gap <= max_log_distance_ + kEpsilon) {
      const double weight = 1.0 / (candidate.distance * candidate.distance);
      weight_sum += weight;
      weighted += weight * candidate.log_ratio;
    }
  }
  return std::exp(weighted / weight_sum);
}

}  // namespace clustersim::models
