#include "models/comm/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {
namespace {

void check_bytes(CollectiveKind kind, double bytes) {
  if (!std::isfinite(bytes) || bytes < 0) {
    throw ConfigError(fmt::format("{} bytes must be a finite number >= 0, got {}",
                                  collective_name(kind), bytes));
  }
}

/// Bandwidth (bytes/s, before efficiency) and latency (s, before step latency) of a ring.
struct RingCost {
  double bytes_per_s = std::numeric_limits<double>::infinity();
  double latency_s = 0;
};

RingCost ring_cost(const topologies::Topology& topology, std::span<const int> group) {
  const std::size_t n = group.size();
  std::vector<const topologies::Path*> hops;
  hops.reserve(n);
  std::vector<topologies::LinkId> crossed;
  for (std::size_t i = 0; i < n; ++i) {
    const topologies::Path& path = topology.path(group[i], group[(i + 1) % n]);
    hops.push_back(&path);
    crossed.insert(crossed.end(), path.links.begin(), path.links.end());
  }
  // Crossings per directed link: sort the ids and run-length count (deterministic, O(m log m)).
  std::sort(crossed.begin(), crossed.end());
  std::vector<std::pair<topologies::LinkId, int>> crossings;
  for (const topologies::LinkId id : crossed) {
    if (crossings.empty() || crossings.back().first != id) {
      crossings.emplace_back(id, 1);
    } else {
      ++crossings.back().second;
    }
  }
  const auto& links = topology.links();
  RingCost cost;
  for (const topologies::Path* path : hops) {
    cost.latency_s = std::max(cost.latency_s, path->latency_s);
    for (const topologies::LinkId id : path->links) {
      const auto it = std::lower_bound(
          crossings.begin(), crossings.end(), id,
          [](const std::pair<topologies::LinkId, int>& c, topologies::LinkId v) { return c.first < v; });
      const double share_bytes_per_s =
          links[static_cast<std::size_t>(id)].bytes_per_s / static_cast<double>(it->second);
      cost.bytes_per_s = std::min(cost.bytes_per_s, share_bytes_per_s);
    }
  }
  return cost;
}

}  // namespace

CollectiveModel::CollectiveModel(const topologies::Topology& topology, CommParams params)
    : topology_(&topology), params_(params) {
  if (!std::isfinite(params_.step_latency_s) || params_.step_latency_s < 0) {
    throw ConfigError(fmt::format("comm step_latency_s must be a finite number >= 0, got {}",
                                  params_.step_latency_s));
  }
  if (!(params_.bandwidth_efficiency > 0 && params_.bandwidth_efficiency <= 1)) {
    throw ConfigError(fmt::format("comm bandwidth_efficiency must be in (0, 1], got {}",
                                  params_.bandwidth_efficiency));
  }
}

double CollectiveModel::time_s(CollectiveKind kind, std::span<const int> group,
                               double bytes) const {
  check_bytes(kind, bytes);
  if (group.empty()) {
    throw ConfigError(fmt::format("{} needs a non-empty group of accelerators", collective_name(kind)));
  }
  const int count = topology_->accelerator_count();
  std::vector<int> sorted(group.begin(), group.end());
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= count) {
      throw ConfigError(fmt::format("{} group has accelerator {} outside [0, {})",
                                    collective_name(kind), sorted[i], count));
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      throw ConfigError(fmt::format("{} group lists accelerator {} more than once",
                                    collective_name(kind), sorted[i]));
    }
  }
  if (kind == CollectiveKind::send_recv) {
    if (group.size() != 2) {
      throw ConfigError(fmt::format("send-recv needs a group of exactly 2 (source, destination), got {}",
                                    group.size()));
    }
    return send_recv_time_s(group[0], group[1], bytes);
  }
  if (group.size() == 1) return 0.0;

  const RingCost ring = ring_cost(*topology_, group);
  const double n = static_cast<double>(group.size());
  const double bandwidth_bytes_per_s = ring.bytes_per_s * params_.bandwidth_efficiency;
  const double alpha_s = ring.latency_s + params_.step_latency_s;
  const double steps = kind == CollectiveKind::all_reduce ? 2.0 * (n - 1) : n - 1;
  const double volume_bytes = (kind == CollectiveKind::broadcast || kind == CollectiveKind::reduce)
                                  ? bytes
                                  : steps / n * bytes;
  return volume_bytes / bandwidth_bytes_per_s + steps * alpha_s;
}

double CollectiveModel::send_recv_time_s(int src, int dst, double bytes) const {
  check_bytes(CollectiveKind::send_recv, bytes);
  const topologies::Path& path = topology_->path(src, dst);
  if (src == dst) return 0.0;
  return path.latency_s + params_.step_latency_s +
         bytes / (path.bottleneck_bytes_per_s * params_.bandwidth_efficiency);
}

}  // namespace clustersim::models
