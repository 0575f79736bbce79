#include "sim/platform/session.hpp"

#include "sim/platform/flow_comm.hpp"
#include "sim/platform/platform.hpp"

namespace clustersim::platform {

const config::NameTable<SimulationMode>& simulation_mode_names() {
  static const config::NameTable<SimulationMode> names(
      "simulation mode", {{"symmetric", SimulationMode::symmetric}, {"full", SimulationMode::full}});
  return names;
}

std::string_view simulation_mode_name(SimulationMode mode) { return simulation_mode_names().name(mode); }

Session::Session(const models::CollectiveModel& collectives, SessionOptions options)
    : options_(options), engine_(options.seed) {
  engine_.set_event_limit(static_cast<std::uint64_t>(options.limits.events));
  if (options.fidelity == Fidelity::flow) {
    comm_ = std::make_unique<FlowComm>(engine_, collectives);
  } else {
    comm_ = std::make_unique<AnalyticalComm>(engine_, collectives);
  }
}

Session::Session(const Platform& platform, SessionOptions options, bool intact_baseline)
    : Session(platform.collectives(), options) {
  intact_baseline_ = intact_baseline;
  // The analytical fidelity has no links: the loader refuses faults with it (training) or warns
  // that they have no effect (serving).
  if (options.fidelity == Fidelity::flow && !intact_baseline) comm_->apply_link_faults(platform.link_faults());
}

}  // namespace clustersim::platform
