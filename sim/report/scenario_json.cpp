#include "sim/report/scenario_json.hpp"

#include <string>

#include "sim/platform/comm_runtime.hpp"

namespace clustersim::report {

nlohmann::json scenario_identity_json(const scenario::Scenario& scenario) {
  const platform::SessionOptions& simulation = scenario.simulation;
  return {{"name", scenario.name},
          {"file", scenario.source_file},
          {"overrides", scenario.set_overrides},
          {"topology", scenario.platform.cluster.network.scale_out.topology},
          {"simulation",
           {{"fidelity", std::string(platform::fidelity_name(simulation.fidelity))},
            {"mode", std::string(platform::simulation_mode_name(simulation.mode))}}}};
}

}  // namespace clustersim::report
