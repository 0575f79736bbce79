#include "timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace clustersim::kernels {

double quantile(std::vector<double> samples, double q) {
  if (samples.empty()) throw std::invalid_argument("quantile of an empty sample");
  if (!(q >= 0.0 && q <= 1.0)) {
    throw std::invalid_argument("quantile: q must be in [0, 1], got " + std::to_string(q));
  }
  std::sort(samples.begin(), samples.end());
  const double position = q * static_cast<double>(samples.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, samples.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return samples[lower] + fraction * (samples[upper] - samples[lower]);
}

TimingSummary summarize(const std::vector<double>& samples_s) {
  if (samples_s.empty()) throw std::invalid_argument("summarize: no timed repeats");
  for (double sample : samples_s) {
    if (!std::isfinite(sample) || sample < 0.0) {
      throw std::invalid_argument("summarize: invalid sample " + std::to_string(sample) +
                                  " s (must be finite and >= 0)");
    }
  }
  TimingSummary summary;
  summary.median_s = quantile(samples_s, 0.5);
  summary.spread_s = 0.5 * (quantile(samples_s, 0.75) - quantile(samples_s, 0.25));
  summary.repeats = static_cast<int>(samples_s.size());
  return summary;
}

}  // namespace clustersim::kernels
