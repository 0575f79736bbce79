#pragma once
/// The keys of a scenario's `power` (power limit, nodes and network gear) and `cost` sections, each
/// declared once and bound to the PowerSpec / CostSpec member it sets; their defaults are the
/// specs' initializers (estimates, docs/models.md "Power").
#include "models/power/cost_model.hpp"
#include "models/power/power_model.hpp"
#include "sim/config/declarations.hpp"

namespace clustersim::models {

/// `power` but apply_throttling (a platform setting, sim/scenario): the accelerators' power
/// limit, NIC, switch and node power, the power supplies' efficiency.
const config::Declarations<PowerSpec>& platform_power_keys();
/// Every key of `cost`.
const config::Declarations<CostSpec>& cost_keys();

}  // namespace clustersim::models
