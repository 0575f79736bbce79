#pragma once
// Summary statistics of repeated timings: the median and half the inter-quartile range.

#include <vector>

namespace clustersim::kernels {

/// Median and spread of a set of timed repeats.
struct TimingSummary {
  double median_s = 0.0;  ///< median of the samples, seconds
  double spread_s = 0.0;  ///< half the inter-quartile range (Q3 - Q1) / 2, seconds
  int repeats = 0;        ///< number of samples
};

/// Quantile q in [0, 1] of the samples by linear interpolation between order statistics
/// (Hyndman-Fan type 7, the default of numpy and R). Throws std::invalid_argument when the
/// samples are empty or q is outside [0, 1].
double quantile(std::vector<double> samples, double q);

/// Median and half-IQR of the samples (seconds). Throws std::invalid_argument when the samples
/// are empty or hold a negative or non-finite value.
TimingSummary summarize(const std::vector<double>& samples_s);

}  // namespace clustersim::kernels
