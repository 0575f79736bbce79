#include "sim/platform/comm_runtime.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::platform {

exec::Work AnalyticalComm::collective(models::CollectiveKind kind, std::span<const std::vector<int>> groups,
                                      double bytes) {
  if (groups.empty()) return {};
  return {engine::seconds_to_ps(time_s(kind, groups.front(), bytes)), {}};
}

void AnalyticalComm::apply_link_profile(topologies::LinkId link, const engine::Profile& /*profile*/) {
  throw SimulationError(fmt::format("link {}: the analytical fidelity has no links whose capacity could change "
                                    "(use simulation.fidelity: flow)",
                                    link));
}

}  // namespace clustersim::platform
