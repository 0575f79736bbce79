#include "sim/serving/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim::serving {
namespace {

constexpr double kLowest = 1e-6;       // seconds: the first bucket's upper edge
constexpr double kRatio = 1.001;       // each bucket's upper edge / lower edge
const double kLogRatio = std::log(kRatio);
constexpr std::size_t kBuckets = 23040;  // ln(1e10) / ln(1.001) = 23,037: up to 10^4 s

std::size_t bucket_of(double seconds) {
  if (seconds <= kLowest) return 0;
  const double index = std::ceil(std::log(seconds / kLowest) / kLogRatio);
  return std::min(kBuckets - 1, static_cast<std::size_t>(index));
}

}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBuckets, 0.0) {}

void LatencyHistogram::add(double seconds, double weight) {
  if (!(weight > 0)) return;
  buckets_[bucket_of(seconds)] += weight;
  count_ += weight;
  sum_ += seconds * weight;
  max_ = std::max(max_, seconds);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

double LatencyHistogram::percentile(double p) const {
  if (count_ <= 0) return 0;
  const double target = std::clamp(p, 0.0, 100.0) / 100.0 * count_;
  double seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= target && buckets_[i] > 0) {
      if (i == 0) return 0;
      const double upper = kLowest * std::pow(kRatio, static_cast<double>(i));
      return std::min(max_, upper / std::sqrt(kRatio));
    }
  }
  return max_;
}

Distribution LatencyHistogram::summary() const {
  Distribution d;
  d.count = static_cast<std::int64_t>(std::llround(count_));
  if (count_ <= 0) return d;
  d.mean = sum_ / count_;
  d.p50 = percentile(50);
  d.p90 = percentile(90);
  d.p99 = percentile(99);
  d.max = max_;
  return d;
}

}  // namespace clustersim::serving
