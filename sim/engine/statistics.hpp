#pragma once
/// Summary statistics of a set of samples (request latencies, step times over iterations).
#include <cstdint>
#include <span>
#include <vector>

namespace clustersim::engine {

/// Mean, percentiles and maximum of a set of values.
struct Distribution {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  std::int64_t count = 0;
};

/// Percentile `p` (0-100) of `sorted` (ascending), by linear interpolation between the closest
/// ranks (numpy's default). 0 for an empty set.
double percentile(std::span<const double> sorted, double p);

/// The Distribution of `values` (sorted in place).
Distribution summarize(std::vector<double>& values);

}  // namespace clustersim::engine
