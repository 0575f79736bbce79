#pragma once
/// A relative tolerance for doctest comparisons of small quantities.
///
/// doctest::Approx passes when |a - b| < epsilon * (scale + max(|a|, |b|)), with epsilon 1.19e-5
/// and scale 1 by default: for a quantity far below 1 (microsecond latencies, picojoules, small
/// times) that is an ABSOLUTE tolerance of about 1.2e-5, so CHECK(latency_s ==
/// doctest::Approx(2e-6)) passes for 0 and for 10e-6 as well. relative_approx sets the scale to 0:
/// the tolerance is epsilon times the larger magnitude, whatever the unit.
/// tests/source/approx_tolerance_test.cpp rejects a small doctest::Approx without it.
#include <doctest/doctest.h>

#include <limits>

namespace clustersim::tolerance {

/// doctest's default epsilon, now relative: 100 float epsilons, about 1.19e-5.
inline constexpr double kRelativeEpsilon = std::numeric_limits<float>::epsilon() * 100;

/// Matches values within `epsilon` times the larger magnitude of `expected` and the actual
/// value (0 matches only 0).
inline doctest::Approx relative_approx(double expected, double epsilon = kRelativeEpsilon) {
  return doctest::Approx(expected).epsilon(epsilon).scale(0);
}

}  // namespace clustersim::tolerance
