#include "sim/sweep/objective.hpp"

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::sweep {

Objective parse_objective(std::string_view name) {
  if (name == "throughput") return Objective::throughput;
  if (name == "cost") return Objective::cost;
  if (name == "energy") return Objective::energy;
  throw ConfigError(fmt::format("unknown search objective '{}'; valid objectives: throughput, cost, energy", name));
}

const char* objective_name(Objective objective) {
  switch (objective) {
    case Objective::throughput: return "throughput";
    case Objective::cost: return "cost";
    case Objective::energy: return "energy";
  }
  return "throughput";
}

const char* objective_unit(Objective objective) {
  switch (objective) {
    case Objective::throughput: return "tokens/s";
    case Objective::cost: return "USD/Mtoken";
    case Objective::energy: return "J/token";
  }
  return "tokens/s";
}

}  // namespace clustersim::sweep
