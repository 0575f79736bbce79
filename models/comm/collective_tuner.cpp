#include "models/comm/collective_tuner.hpp"

#include <set>

#include "models/comm/plan_evaluators.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::models {

CollectiveTuner::CollectiveTuner(const topologies::Topology& topology, TunerParams params,
                                 CollectiveHardware hardware)
    : lowering_(topology, std::move(params), hardware) {}

std::vector<Algorithm> CollectiveTuner::auto_candidates(CollectiveKind kind, std::span<const int> group) const {
  const auto& topology = lowering_.topology();
  std::set<int> domains;
  for (const int rank : group) domains.insert(topology.scale_up_domain_of(rank));
  std::vector<Algorithm> candidates;
  for (const Algorithm a : {Algorithm::ring, Algorithm::tree, Algorithm::nvls, Algorithm::sharp,
                            Algorithm::torus_rings, Algorithm::pairwise}) {
    if (a == Algorithm::tree && domains.size() < 2) continue;  // NCCL: trees only across nodes
    if (lowering_.inapplicable_reason(kind, a, group).empty()) candidates.push_back(a);
  }
  return candidates;
}

TunedPlan CollectiveTuner::choose(CollectiveKind kind, std::optional<Algorithm> algorithm,
                                  std::span<const int> group, double bytes,
                                  std::optional<Protocol> protocol) const {
  lowering_.check_group(kind, group, bytes);
  std::vector<Algorithm> candidates;
  if (algorithm) {
    candidates.push_back(*algorithm);
  } else {
    candidates = auto_candidates(kind, group);
    if (candidates.empty()) throw ConfigError("no collective algorithm can run this operation on this group");
  }
  std::optional<TunedPlan> best;
  for (const Algorithm a : candidates) {
    const std::vector<Protocol> protocols = protocol ? std::vector<Protocol>{*protocol} : lowering_.protocols(a);
    for (const Protocol p : protocols) {
      CollectivePlan plan = lowering_.lower(kind, a, p, group, bytes);
      const double time_s = analytical_time_s(plan, lowering_.topology());
      if (!best || time_s < best->analytical_time_s) best = TunedPlan{std::move(plan), time_s};
    }
  }
  return std::move(*best);
}

}  // namespace clustersim::models
