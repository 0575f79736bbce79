#include "sim/training/rank_layout.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace rank_layout_test {

using namespace clustersim::training;

TEST_CASE("Megatron rank order: tp fastest, then cp, dp, pp") {
  ParallelismConfig p;
  p.tp = 2;
  p.cp = 2;
  p.dp = 3;
  p.pp = 2;
  const RankLayout layout(p);
  CHECK(layout.rank(1, 0, 0, 0) == 1);
  CHECK(layout.rank(0, 1, 0, 0) == 2);
  CHECK(layout.rank(0, 0, 1, 0) == 4);
  CHECK(layout.rank(0, 0, 0, 1) == 12);
  CHECK(layout.rank(1, 1, 2, 1) == 23);  // the last of 24 ranks
  CHECK(layout.representative(1) == 12);
  CHECK(layout.tp_group(1) == std::vector<int>{12, 13});
  CHECK(layout.cp_group(0) == std::vector<int>{0, 2});
  CHECK(layout.dp_group(1) == std::vector<int>{12, 16, 20});
  CHECK(layout.gradient_group(0) == std::vector<int>{0, 2, 4, 6, 8, 10});
}

}  // namespace rank_layout_test
