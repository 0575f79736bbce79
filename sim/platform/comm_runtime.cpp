#include "sim/platform/comm_runtime.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/comm/plan_evaluators.hpp"

#include "sim/engine/error.hpp"
#include "sim/engine/time.hpp"

namespace clustersim::platform {

exec::Work AnalyticalComm::collective(models::CollectiveKind kind, std::span<const std::vector<int>> groups,
                                      double bytes) {
  if (groups.empty()) return {};
  const double alone_s = time_s(kind, groups.front(), bytes);
  if (alone_s == 0) return {};
  return {engine::seconds_to_ps(alone_s * sharing_factor(kind, groups, bytes)), {}};
}

double AnalyticalComm::sharing_factor(models::CollectiveKind kind, std::span<const std::vector<int>> groups,
                                      double bytes) {
  const auto replicas = std::count_if(groups.begin(), groups.end(), [](const auto& g) { return g.size() >= 2; });
  if (replicas < 2 || groups.front().size() < 2 || bytes == 0) return 1.0;
  if (const auto known = index_.find(kind, groups, bytes)) return factors_[static_cast<std::size_t>(*known)];
  const std::vector<models::CollectivePlan> plans = collectives().replica_plans(kind, groups, bytes);
  const topologies::Topology& topology = collectives().topology();
  // Send-recv replicas are independent pipeline sends: the first group's transfer ends the
  // communication and the others only load the links (as FlowComm); collectives synchronise.
  const std::size_t gating = kind == models::CollectiveKind::send_recv ? 1 : plans.size();
  const double alone_s = models::analytical_time_s(plans.front(), topology);
  const double shared_s = models::shared_analytical_time_s(plans, gating, topology);
  const double factor = alone_s > 0 ? shared_s / alone_s : 1.0;
  index_.insert(kind, groups, bytes, static_cast<int>(factors_.size()));
  factors_.push_back(factor);
  return factor;
}

void AnalyticalComm::apply_link_profile(topologies::LinkId link, const engine::Profile& /*profile*/) {
  throw SimulationError(fmt::format("link {}: the analytical fidelity has no links whose capacity could change "
                                    "(use simulation.fidelity: flow)",
                                    link));
}

void AnalyticalComm::apply_link_faults(const topologies::NetworkFaultPlan& plan) {
  throw SimulationError(fmt::format("cluster.network.faults ({}): the analytical fidelity has no links to degrade or fail "
                                    "(use simulation.fidelity: flow)",
                                    plan.faults.empty() ? "none" : plan.faults.front().element));
}

}  // namespace clustersim::platform
