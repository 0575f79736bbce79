#include "sim/engine/random_draws.hpp"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/normal.hpp>

#include "sim/engine/mix.hpp"

namespace clustersim::engine {

std::uint64_t draw_key(std::uint64_t seed, std::initializer_list<std::uint64_t> parts) {
  std::uint64_t key = splitmix64(seed ^ 0x6472617773ULL);  // "draws": apart from the RNG streams
  for (const std::uint64_t part : parts) key = splitmix64(key ^ part);
  return key;
}

double uniform_open01(std::uint64_t key) {
  return (static_cast<double>(splitmix64(key) >> 11U) + 0.5) * 0x1.0p-53;
}

double normal_quantile_upper(double q) {
  // In double precision throughout: boost's default promotes to long double, several times
  // slower for the same double result to within an ulp or two (a draw per task instance).
  using Double = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
  static const boost::math::normal_distribution<double, Double> standard;
  return boost::math::quantile(boost::math::complement(standard, q));
}

double max_upper_tail(double u, double n) {
  // 1 - u^(1/n) = -expm1(ln(u) / n): no cancellation when u^(1/n) is close to 1.
  return -std::expm1(std::log(u) / n);
}

double lognormal_mean1_upper_quantile(double cv, double q) {
  if (cv <= 0) return 1.0;
  const double s2 = std::log1p(cv * cv);
  return std::exp(-0.5 * s2 + std::sqrt(s2) * normal_quantile_upper(q));
}

std::int64_t poisson_upper_quantile(double mean, double q) {
  if (mean <= 0) return 0;
  if (mean > 1e4) {
    const double k = std::ceil(mean + std::sqrt(mean) * normal_quantile_upper(q) - 0.5);
    return static_cast<std::int64_t>(std::max(0.0, k));
  }
  // Walk the CDF from 0 in log space (no underflow of e^-mean for large means).
  const double log_mean = std::log(mean);
  double cdf = 0;
  for (std::int64_t k = 0;; ++k) {
    cdf += std::exp(static_cast<double>(k) * log_mean - mean - std::lgamma(static_cast<double>(k) + 1.0));
    if (1.0 - cdf <= q || static_cast<double>(k) > mean + 40.0 * std::sqrt(mean) + 40.0) return k;
  }
}

}  // namespace clustersim::engine
