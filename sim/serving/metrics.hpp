#pragma once
/// Latency statistics of a serving run: exact percentiles of per-request values, and a
/// log-bucketed histogram for inter-token latencies (one sample per generated token: 20
/// million for 100,000 requests of 200 tokens, too many to keep).
#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/statistics.hpp"

namespace clustersim::serving {

// Mean, percentiles and maximum: shared with training's many-iteration statistics.
using engine::Distribution;
using engine::percentile;
using engine::summarize;

/// Weighted samples in logarithmic buckets: 1 us to 10^4 s, each bucket 0.1 % wide, so a
/// percentile is within 0.1 % of the exact one; values below 1 us (two tokens of one
/// speculative step) are one bucket. Mean, count and maximum are exact.
class LatencyHistogram {
 public:
  LatencyHistogram();
  void add(double seconds, double weight = 1);
  void merge(const LatencyHistogram& other);
  Distribution summary() const;
  /// Percentile `p` (0-100): the geometric middle of the bucket holding it.
  double percentile(double p) const;
  double count() const { return count_; }

 private:
  std::vector<double> buckets_;
  double count_ = 0, sum_ = 0, max_ = 0;
};

}  // namespace clustersim::serving
