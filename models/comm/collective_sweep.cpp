#include "models/comm/collective_sweep.hpp"

#include <cmath>

#include <fmt/format.h>

#include "models/comm/plan_evaluators.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::models {

std::vector<double> sweep_sizes(double min_bytes, double max_bytes, double factor) {
  if (!std::isfinite(min_bytes) || !std::isfinite(max_bytes) || min_bytes <= 0 || max_bytes < min_bytes) {
    throw ConfigError(fmt::format("size range needs 0 < min <= max, got min {} bytes, max {} bytes", min_bytes, max_bytes));
  }
  if (!std::isfinite(factor) || factor <= 1) {
    throw ConfigError(fmt::format("size factor must be > 1, got {}", factor));
  }
  std::vector<double> sizes;
  // A relative slack keeps max itself in when repeated multiplication lands a hair above it.
  for (double s = min_bytes; s <= max_bytes * (1 + 1e-12); s *= factor) sizes.push_back(s);
  return sizes;
}

std::vector<SweepPoint> run_collective_sweep(const CollectiveTuner& tuner, const SweepRequest& request) {
  const auto sizes = sweep_sizes(request.min_bytes, request.max_bytes, request.factor);
  const double bus_factor = bus_bandwidth_factor(request.kind, static_cast<int>(request.group.size()));
  std::vector<SweepPoint> points;
  points.reserve(sizes.size());
  for (const double bytes : sizes) {
    const TunedPlan tuned = tuner.choose(request.kind, request.algorithm, request.group, bytes);
    SweepPoint point;
    point.bytes = bytes;
    point.time_s = request.fidelity == CommFidelity::flow
                       ? flow_time_s(tuned.plan, tuner.lowering().topology())
                       : tuned.analytical_time_s;
    point.algbw_bytes_per_s = bytes / point.time_s;
    point.busbw_bytes_per_s = point.algbw_bytes_per_s * bus_factor;
    point.algorithm = tuned.plan.algorithm;
    point.protocol = tuned.plan.protocol;
    points.push_back(point);
  }
  return points;
}

}  // namespace clustersim::models
