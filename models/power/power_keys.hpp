#pragma once
/// The keys of a scenario's `power` (network gear and link energies) and `cost` sections, each
/// declared once and bound to the PowerSpec / CostSpec member it sets; their defaults are the
/// specs' initializers (estimates, docs/models.md "Power").
#include "models/power/cost_model.hpp"
#include "models/power/power_model.hpp"
#include "sim/config/declarations.hpp"

namespace clustersim::models {

/// The network part of `power`: NIC and switch power, energy per bit per link class
/// (apply_throttling is a platform setting, sim/scenario).
const config::Declarations<PowerSpec>& network_power_keys();
/// Every key of `cost`.
const config::Declarations<CostSpec>& cost_keys();

}  // namespace clustersim::models
