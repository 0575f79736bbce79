#include "sim/training/rank_layout.hpp"

namespace clustersim::training {

RankLayout::RankLayout(const ParallelismConfig& parallelism) : parallelism_(parallelism) {}

int RankLayout::rank(int tp_index, int cp_index, int dp_index, int pp_index) const {
  const auto& p = parallelism_;
  return tp_index + p.tp * (cp_index + p.cp * (dp_index + p.dp * pp_index));
}

std::vector<int> RankLayout::tp_group(int stage) const {
  std::vector<int> group;
  for (int i = 0; i < parallelism_.tp; ++i) group.push_back(rank(i, 0, 0, stage));
  return group;
}

std::vector<int> RankLayout::cp_group(int stage) const {
  std::vector<int> group;
  for (int i = 0; i < parallelism_.cp; ++i) group.push_back(rank(0, i, 0, stage));
  return group;
}

std::vector<int> RankLayout::dp_group(int stage) const {
  std::vector<int> group;
  for (int i = 0; i < parallelism_.dp; ++i) group.push_back(rank(0, 0, i, stage));
  return group;
}

std::vector<int> RankLayout::gradient_group(int stage) const {
  std::vector<int> group;
  for (int d = 0; d < parallelism_.dp; ++d) {
    for (int c = 0; c < parallelism_.cp; ++c) group.push_back(rank(0, c, d, stage));
  }
  return group;
}

}  // namespace clustersim::training
