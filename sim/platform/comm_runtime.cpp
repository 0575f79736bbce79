#include "sim/platform/comm_runtime.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::platform {

const config::NameTable<Fidelity>& fidelity_names() {
  static const config::NameTable<Fidelity> names("fidelity", {{"analytical", Fidelity::analytical}, {"flow", Fidelity::flow}});
  return names;
}

std::string_view fidelity_name(Fidelity fidelity) { return fidelity_names().name(fidelity); }

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
