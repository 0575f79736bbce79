#include "sim/report/scenario_json.hpp"

#include <string>

#include <fmt/format.h>

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

std::string resolved_hash(const scenario::Scenario& scenario) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const auto add = [&hash](const std::string& text) {
    for (const unsigned char c : text) {
      hash ^= c;
      hash *= 0x100000001b3ULL;
    }
  };
  for (const auto& [key, value] : scenario.resolved) add(key + "=" + value + "\n");
  return fmt::format("{:016x}", hash);
}

nlohmann::json manifest_json(const scenario::Scenario& scenario, std::uint64_t fingerprint, std::uint64_t events,
                             const std::string& version) {
  nlohmann::json resolved = nlohmann::json::object();
  for (const auto& [key, value] : scenario.resolved) resolved[key] = value;
  return {{"schema_version", 1},
          {"version", version},
          {"scenario", scenario_identity_json(scenario)},
          {"seed", scenario.simulation.seed},
          {"resolved", std::move(resolved)},
          {"resolved_hash", resolved_hash(scenario)},
          {"fingerprint", fmt::format("{:016x}", fingerprint)},
          {"events", events}};
}

}  // namespace clustersim::report
