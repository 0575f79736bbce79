#include "models/comm/comm_fidelity.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {

std::string_view comm_fidelity_name(CommFidelity fidelity) {
  return fidelity == CommFidelity::flow ? "flow" : "analytical";
}

CommFidelity parse_comm_fidelity(std::string_view name) {
  if (name == "analytical") return CommFidelity::analytical;
  if (name == "flow") return CommFidelity::flow;
  throw ConfigError(fmt::format("unknown fidelity '{}'; valid: analytical, flow", name));
}

}  // namespace clustersim::models
