#include "sim/training/gradient_buckets.hpp"

#include <doctest/doctest.h>

#include "sim/engine/error.hpp"

namespace gradient_buckets_test {

using namespace clustersim;
using namespace clustersim::training;

TEST_CASE("buckets close once they reach the size; the last may be smaller") {
  const auto buckets = form_gradient_buckets({30e6, 30e6, 50e6, 10e6, 5e6}, 40e6);
  REQUIRE(buckets.size() == 3);
  CHECK(buckets[0].units == std::vector<int>{0, 1});
  CHECK(buckets[0].parameters == doctest::Approx(60e6));
  CHECK(buckets[1].units == std::vector<int>{2});
  CHECK(buckets[2].units == std::vector<int>{3, 4});
  CHECK(buckets[2].parameters == doctest::Approx(15e6));
  CHECK(form_gradient_buckets({}, 1).empty());
}

TEST_CASE("Megatron's default bucket is max(40M, 1M x dp) parameters") {
  CHECK(megatron_bucket_parameters(8) == doctest::Approx(40e6));
  CHECK(megatron_bucket_parameters(128) == doctest::Approx(128e6));
}

TEST_CASE("a non-positive bucket size is rejected") {
  CHECK_THROWS_WITH_AS(form_gradient_buckets({1}, 0), "gradient bucket size must be positive, got 0",
                       ConfigError);
}

}  // namespace gradient_buckets_test
