#include "sim/training/rank_layout.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::training {

RankLayout::RankLayout(const ParallelismConfig& parallelism, std::vector<int> placement)
    : parallelism_(parallelism), placement_(std::move(placement)) {
  if (placement_.empty()) return;
  const auto world = static_cast<std::size_t>(parallelism_.world_size());
  if (placement_.size() != world) {
    throw ConfigError(fmt::format("placement maps {} ranks but the job has tp * pp * dp * cp = {}",
                                  placement_.size(), world));
  }
  std::vector<std::uint8_t> seen(world, 0);
  for (std::size_t r = 0; r < world; ++r) {
    const int a = placement_[r];
    if (a < 0 || static_cast<std::size_t>(a) >= world || seen[static_cast<std::size_t>(a)] != 0) {
      throw ConfigError(fmt::format("placement is not a permutation: rank {} -> accelerator {}", r, a));
    }
    seen[static_cast<std::size_t>(a)] = 1;
  }
}

int RankLayout::rank(int tp_index, int cp_index, int dp_index, int pp_index) const {
  const auto& p = parallelism_;
  const int r = tp_index + p.tp * (cp_index + p.cp * (dp_index + p.dp * pp_index));
  return placement_.empty() ? r : placement_[static_cast<std::size_t>(r)];
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

int RankLayout::gradient_rank(int tp_index, int i, int stage) const {
  return rank(tp_index, i % parallelism_.cp, i / parallelism_.cp, stage);
}

std::vector<int> RankLayout::expert_group(int stage) const {
  std::vector<int> group;
  for (int i = 0; i < parallelism_.ep; ++i) group.push_back(gradient_rank(0, i, stage));
  return group;
}

std::vector<int> RankLayout::expert_gradient_group(int stage) const {
  std::vector<int> group;
  for (int i = 0; i < parallelism_.dp * parallelism_.cp; i += parallelism_.ep) group.push_back(gradient_rank(0, i, stage));
  return group;
}

}  // namespace clustersim::training
