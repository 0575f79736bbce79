// Latency statistics: exact percentiles and the log-bucketed histogram.
#include "sim/serving/metrics.hpp"

#include <doctest/doctest.h>

#include <random>

namespace metrics_test {

using namespace clustersim::serving;

TEST_CASE("percentiles interpolate between closest ranks; summaries are exact") {
  std::vector<double> v{5, 1, 4, 2, 3};
  const Distribution d = summarize(v);
  CHECK(d.count == 5);
  CHECK(d.mean == 3);
  CHECK(d.p50 == 3);
  CHECK(d.p90 == doctest::Approx(4.6));
  CHECK(d.max == 5);
  std::vector<double> empty;
  CHECK(summarize(empty).count == 0);
}

TEST_CASE("the histogram's percentiles are within 0.1 % of the exact ones; mean and max exact") {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> draw(std::log(0.01), 0.8);
  std::vector<double> values;
  LatencyHistogram histogram;
  for (int i = 0; i < 50000; ++i) {
    values.push_back(draw(rng));
    histogram.add(values.back());
  }
  const Distribution approx = histogram.summary();
  const Distribution exact = summarize(values);
  CHECK(approx.count == 50000);
  CHECK(approx.mean == doctest::Approx(exact.mean).epsilon(1e-9));
  CHECK(approx.max == exact.max);
  CHECK(approx.p50 == doctest::Approx(exact.p50).epsilon(1e-3));
  CHECK(approx.p99 == doctest::Approx(exact.p99).epsilon(1e-3));
  LatencyHistogram weighted;
  weighted.add(0.002, 99);
  weighted.add(1.0, 1);
  CHECK(weighted.percentile(50) == doctest::Approx(0.002).epsilon(1e-3).scale(0));
  CHECK(weighted.summary().max == 1.0);
  weighted.merge(histogram);
  CHECK(weighted.count() == 50100);
}

}  // namespace metrics_test
