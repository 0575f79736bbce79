#include "models/comm/mesh_rings.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {
namespace {

/// Depth-first search for `want` edge-disjoint Hamiltonian cycles: one cycle at a time from
/// vertex 0, lowest free successor first; a cycle that leaves the next ones no completion is
/// undone. Gives up (returns false) after `budget` path extensions.
class RingSearch {
 public:
  RingSearch(int n, int want, std::int64_t budget)
      : n_(n), want_(want), budget_(budget), used_(static_cast<std::size_t>(n * n), false) {
    for (int v = 0; v < n; ++v) used_[index(v, v)] = true;
  }

  bool run() { return next_cycle(); }
  std::vector<std::vector<int>> rings() const { return rings_; }

 private:
  std::size_t index(int u, int v) const { return static_cast<std::size_t>(u * n_ + v); }

  bool next_cycle() {
    if (static_cast<int>(rings_.size()) == want_) return true;
    path_.assign(1, 0);
    seen_.assign(static_cast<std::size_t>(n_), false);
    seen_[0] = true;
    return extend();
  }

  bool extend() {
    if (--budget_ < 0) return false;
    const int u = path_.back();
    if (static_cast<int>(path_.size()) == n_) {
      if (used_[index(u, 0)]) return false;
      used_[index(u, 0)] = true;
      rings_.push_back(path_);
      const std::vector<int> path = path_;
      const std::vector<bool> seen = seen_;
      if (next_cycle()) return true;
      path_ = path;
      seen_ = seen;
      rings_.pop_back();
      used_[index(u, 0)] = false;
      return false;
    }
    for (int v = 0; v < n_ && budget_ >= 0; ++v) {
      if (seen_[static_cast<std::size_t>(v)] || used_[index(u, v)]) continue;
      seen_[static_cast<std::size_t>(v)] = true;
      used_[index(u, v)] = true;
      path_.push_back(v);
      if (extend()) return true;
      path_.pop_back();
      used_[index(u, v)] = false;
      seen_[static_cast<std::size_t>(v)] = false;
    }
    return false;
  }

  int n_;
  int want_;
  std::int64_t budget_;
  std::vector<bool> used_;  ///< directed edge (u, v) taken by a ring (or u == v)
  std::vector<std::vector<int>> rings_;
  std::vector<int> path_;
  std::vector<bool> seen_;
};

}  // namespace

std::vector<std::vector<int>> disjoint_hamiltonian_rings(int n) {
  if (n < 2) throw ConfigError(fmt::format("a ring needs at least 2 ranks, got {}", n));
  if (n == 2) return {{0, 1}};
  // Enough for every n up to 16 (n = 6 proves 5 impossible in ~10^5 extensions).
  constexpr std::int64_t kBudget = 20'000'000;
  for (int want = n - 1; want > 1; --want) {
    RingSearch search(n, want, kBudget);
    if (search.run()) return search.rings();
  }
  std::vector<int> forward(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) forward[static_cast<std::size_t>(v)] = v;
  return {forward};
}

std::vector<std::vector<int>> disjoint_hamiltonian_paths(int m) {
  if (m < 2 || m % 2 != 0) {
    throw ConfigError(fmt::format("disjoint Hamiltonian paths need an even vertex count >= 2, got {}", m));
  }
  std::vector<int> zigzag{0};
  for (int k = 1; static_cast<int>(zigzag.size()) < m; ++k) {
    zigzag.push_back(k);
    if (static_cast<int>(zigzag.size()) < m) zigzag.push_back(m - k);
  }
  std::vector<std::vector<int>> paths;
  for (int c = 0; c < m; ++c) {
    std::vector<int> path;
    for (const int v : zigzag) path.push_back((v + c) % m);
    paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace clustersim::models
