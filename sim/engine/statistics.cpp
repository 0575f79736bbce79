#include "sim/engine/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim::engine {

double percentile(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (rank - static_cast<double>(below));
}

Distribution summarize(std::vector<double>& values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  d.count = static_cast<std::int64_t>(values.size());
  d.mean = sum / static_cast<double>(values.size());
  d.p50 = percentile(values, 50);
  d.p90 = percentile(values, 90);
  d.p99 = percentile(values, 99);
  d.max = values.back();
  return d;
}

}  // namespace clustersim::engine
