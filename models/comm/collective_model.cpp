#include "models/comm/collective_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/comm/plan_evaluators.hpp"
#include "sim/engine/error.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::models {
namespace {

/// The size the lines are measured at; any size > 0 gives the same line.
constexpr double kReferenceBytes = 1 << 20;

void check_bytes(CollectiveKind kind, double bytes) {
  if (!std::isfinite(bytes) || bytes < 0) {
    throw ConfigError(fmt::format("{} bytes must be a finite number >= 0, got {}", collective_name(kind), bytes));
  }
}

}  // namespace

CollectiveModel::CollectiveModel(const topologies::Topology& topology, CommConfig config,
                                 CollectiveHardware hardware)
    : tuner_(topology, config.tuner, hardware), config_(std::move(config)) {}

const std::vector<CollectiveModel::Line>& CollectiveModel::lines(CollectiveKind kind,
                                                                 std::span<const int> group) const {
  // FNV-1a-style fold over the ranks (one multiply each: groups of hundreds of ranks are costed
  // millions of times), finalised with SplitMix64.
  std::uint64_t hash = static_cast<std::uint64_t>(kind) + 1;
  for (const int rank : group) hash = engine::fnv_fold(hash, static_cast<std::uint32_t>(rank));
  hash = engine::splitmix64(hash);
  auto& bucket = cache_[hash];
  for (const CachedLines& entry : bucket) {
    if (entry.kind == kind && std::equal(entry.group.begin(), entry.group.end(), group.begin(), group.end())) {
      return entry.lines;
    }
  }
  // A group is validated once, when it is first costed.
  const CollectiveLowering& lowering = tuner_.lowering();
  lowering.check_group(kind, group, kReferenceBytes);
  std::vector<Algorithm> algorithms;
  if (config_.algorithm && lowering.inapplicable_reason(kind, *config_.algorithm, group).empty()) {
    algorithms.push_back(*config_.algorithm);
  } else {
    algorithms = tuner_.auto_candidates(kind, group);
  }
  if (algorithms.empty()) {
    throw ConfigError(fmt::format("no collective algorithm can run {} on this group of {}", collective_name(kind),
                                  group.size()));
  }
  std::vector<Line> result;
  for (const Algorithm algorithm : algorithms) {
    for (const Protocol protocol : lowering.protocols(algorithm)) {
      const CollectivePlan plan = lowering.lower(kind, algorithm, protocol, group, kReferenceBytes);
      double latency_s = plan.base_latency_s;
      for (const Phase& phase : plan.phases) latency_s += phase.fixed_latency_s;
      const double total_s = analytical_time_s(plan, lowering.topology());
      result.push_back({algorithm, protocol, latency_s, (total_s - latency_s) / kReferenceBytes});
    }
  }
  bucket.push_back({kind, std::vector<int>(group.begin(), group.end()), std::move(result)});
  return bucket.back().lines;
}

const CollectiveModel::Line& CollectiveModel::best_line(CollectiveKind kind, std::span<const int> group,
                                                        double bytes) const {
  const auto& candidates = lines(kind, group);
  const Line* best = &candidates.front();
  for (const Line& line : candidates) {
    if (line.latency_s + bytes * line.seconds_per_byte < best->latency_s + bytes * best->seconds_per_byte) best = &line;
  }
  return *best;
}

double CollectiveModel::time_s(CollectiveKind kind, std::span<const int> group, double bytes) const {
  check_bytes(kind, bytes);
  check_single(kind, group);
  if (group.size() == 1) return 0.0;
  if (bytes == 0) {
    tuner_.lowering().check_group(kind, group, 1.0);
    return 0.0;
  }
  const Line& line = best_line(kind, group, bytes);  // validates the group when it is new
  return line.latency_s + bytes * line.seconds_per_byte;
}

CollectiveModel::Curve CollectiveModel::curve(CollectiveKind kind, std::span<const int> group) const {
  check_single(kind, group);
  Curve result;
  result.kind_ = kind;
  if (group.size() > 1) result.lines_ = lines(kind, group);  // validates the group when it is new
  return result;
}

double CollectiveModel::Curve::time_s(double bytes) const {
  check_bytes(kind_, bytes);
  if (lines_.empty() || bytes == 0) return 0.0;
  double best = lines_.front().latency_s + bytes * lines_.front().seconds_per_byte;
  for (const Line& line : lines_.subspan(1)) best = std::min(best, line.latency_s + bytes * line.seconds_per_byte);
  return best;
}

void CollectiveModel::check_single(CollectiveKind kind, std::span<const int> group) const {
  if (group.empty()) {
    throw ConfigError(fmt::format("{} needs a non-empty group of accelerators", collective_name(kind)));
  }
  if (group.size() == 1) {
    if (kind == CollectiveKind::send_recv) {
      throw ConfigError("send-recv needs a group of exactly 2 (source, destination), got 1");
    }
    const int count = topology().accelerator_count();
    if (group[0] < 0 || group[0] >= count) {
      throw ConfigError(fmt::format("{} group has accelerator {} outside [0, {})", collective_name(kind), group[0], count));
    }
  }
}

double CollectiveModel::send_recv_time_s(int src, int dst, double bytes) const {
  if (src == dst) {
    check_bytes(CollectiveKind::send_recv, bytes);
    (void)topology().path(src, dst);  // range check
    return 0.0;
  }
  const int pair[2] = {src, dst};
  return time_s(CollectiveKind::send_recv, pair, bytes);
}

TunedPlan CollectiveModel::plan(CollectiveKind kind, std::span<const int> group, double bytes) const {
  tuner_.lowering().check_group(kind, group, bytes);
  const Line& line = best_line(kind, group, bytes);
  return tuner_.choose(kind, line.algorithm, group, bytes, line.protocol);
}

std::vector<CollectivePlan> CollectiveModel::replica_plans(CollectiveKind kind,
                                                          std::span<const std::vector<int>> groups,
                                                          double bytes) const {
  std::vector<CollectivePlan> plans;
  std::optional<TunedPlan> representative;
  const CollectiveLowering& lowering = tuner_.lowering();
  for (const auto& group : groups) {
    if (group.size() < 2) continue;
    if (!representative) representative = plan(kind, group, bytes);
    const CollectivePlan& chosen = representative->plan;
    plans.push_back(lowering.inapplicable_reason(kind, chosen.algorithm, group).empty()
                        ? lowering.lower(kind, chosen.algorithm, chosen.protocol, group, bytes)
                        : plan(kind, group, bytes).plan);
  }
  return plans;
}

}  // namespace clustersim::models
