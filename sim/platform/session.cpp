#include "sim/platform/session.hpp"

#include "sim/platform/flow_comm.hpp"
#include "sim/platform/platform.hpp"

namespace clustersim::platform {

std::string_view simulation_mode_name(SimulationMode mode) {
  return mode == SimulationMode::full ? "full" : "symmetric";
}

Session::Session(const models::CollectiveModel& collectives, SessionOptions options)
    : options_(options), engine_(options.seed) {
  if (options.fidelity == Fidelity::flow) {
    comm_ = std::make_unique<FlowComm>(engine_, collectives);
  } else {
    comm_ = std::make_unique<AnalyticalComm>(collectives);
  }
}

Session::Session(const Platform& platform, SessionOptions options) : Session(platform.collectives(), options) {}

}  // namespace clustersim::platform
