#include "sim/engine/random_draws.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace random_draws_test {

using namespace clustersim;
using namespace clustersim::engine;

TEST_CASE("draws are pure functions of their key, uniform in (0, 1)") {
  CHECK(uniform_open01(draw_key(7, {1, 2, 3})) == uniform_open01(draw_key(7, {1, 2, 3})));
  CHECK(uniform_open01(draw_key(7, {1, 2, 3})) != uniform_open01(draw_key(7, {1, 2, 4})));
  CHECK(uniform_open01(draw_key(7, {1, 2, 3})) != uniform_open01(draw_key(8, {1, 2, 3})));
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double u = uniform_open01(draw_key(1, {static_cast<std::uint64_t>(i)}));
    REQUIRE(u > 0);
    REQUIRE(u < 1);
    sum += u;
  }
  CHECK(sum / n == doctest::Approx(0.5).epsilon(0.005));
}

TEST_CASE("normal and lognormal quantiles: textbook values, mean 1 and the requested CV") {
  CHECK(normal_quantile_upper(0.025) == doctest::Approx(1.959964).epsilon(1e-6));
  CHECK(std::abs(normal_quantile_upper(0.5)) < 1e-12);
  CHECK(lognormal_mean1_upper_quantile(0.0, 0.01) == 1.0);
  // Median of a mean-1 lognormal is exp(-s^2/2), s^2 = ln(1 + cv^2): cv 0.5 -> 1/sqrt(1.25).
  CHECK(lognormal_mean1_upper_quantile(0.5, 0.5) == doctest::Approx(1.0 / std::sqrt(1.25)).epsilon(1e-9));
  double sum = 0, sum2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = lognormal_mean1_upper_quantile(0.2, uniform_open01(draw_key(3, {static_cast<std::uint64_t>(i)})));
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / n;
  CHECK(mean == doctest::Approx(1.0).epsilon(0.002));
  CHECK(std::sqrt(sum2 / n - mean * mean) / mean == doctest::Approx(0.2).epsilon(0.02));
}

TEST_CASE("the maximum of n draws from its order statistics matches the maximum of n draws") {
  // E[max of n iid] drawn as F^-1(U^(1/n)) vs drawing n values and taking the largest.
  for (const int group : {2, 8, 64}) {
    CAPTURE(group);
    const int trials = 20000;
    double from_order_statistics = 0, brute_force = 0;
    std::vector<double> fast, slow;
    for (int t = 0; t < trials; ++t) {
      const double u = uniform_open01(draw_key(5, {static_cast<std::uint64_t>(t)}));
      fast.push_back(lognormal_mean1_upper_quantile(0.1, max_upper_tail(u, group)));
      double largest = 0;
      for (int r = 0; r < group; ++r) {
        const double v = uniform_open01(draw_key(6, {static_cast<std::uint64_t>(t), static_cast<std::uint64_t>(r)}));
        largest = std::max(largest, lognormal_mean1_upper_quantile(0.1, v));
      }
      slow.push_back(largest);
      from_order_statistics += fast.back();
      brute_force += largest;
    }
    CHECK(from_order_statistics / trials == doctest::Approx(brute_force / trials).epsilon(0.002));
    std::sort(fast.begin(), fast.end());
    std::sort(slow.begin(), slow.end());
    CHECK(fast[trials * 99 / 100] == doctest::Approx(slow[trials * 99 / 100]).epsilon(0.01));
  }
  // E[max of 2 standard normals] = 1/sqrt(pi): the lognormal of small CV is nearly normal.
  double sum = 0;
  const int trials = 200000;
  for (int t = 0; t < trials; ++t) {
    sum += normal_quantile_upper(max_upper_tail(uniform_open01(draw_key(9, {static_cast<std::uint64_t>(t)})), 2));
  }
  CHECK(sum / trials == doctest::Approx(1.0 / std::sqrt(M_PI)).epsilon(0.01));
  CHECK(max_upper_tail(0.25, 1) == doctest::Approx(0.75).epsilon(1e-12));
}

TEST_CASE("Poisson quantiles by hand") {
  // Mean 2: P(0) = 0.1353, P(1) = 0.2707, P(2) = 0.2707: P(N > 0) = 0.8647, P(N > 1) = 0.5940,
  // P(N > 2) = 0.3233.
  CHECK(poisson_upper_quantile(2.0, 0.9) == 0);
  CHECK(poisson_upper_quantile(2.0, 0.8) == 1);
  CHECK(poisson_upper_quantile(2.0, 0.5) == 2);
  CHECK(poisson_upper_quantile(0.0, 0.001) == 0);
  // A rare event: mean 1e-3, q 5e-4 < P(N > 0) = 9.995e-4: one hit.
  CHECK(poisson_upper_quantile(1e-3, 5e-4) == 1);
  CHECK(poisson_upper_quantile(1e-3, 2e-3) == 0);
}

}  // namespace random_draws_test
