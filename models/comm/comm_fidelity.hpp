#pragma once
/// How communication is timed: in closed form (`analytical`: the plan's latency and bandwidth
/// terms, no contention) or as flows on a shared max-min fair network (`flow`). The one enum
/// for it: `clustersim collective --fidelity`, `simulation.fidelity` and the platform's
/// communication runtime (sim/platform/comm_runtime.hpp) all use it.
#include <cstdint>
#include <string_view>

#include "sim/config/name_table.hpp"

namespace clustersim::models {

enum class CommFidelity : std::uint8_t { analytical, flow };

/// "analytical", "flow".
const config::NameTable<CommFidelity>& comm_fidelity_names();
/// "analytical" or "flow".
std::string_view comm_fidelity_name(CommFidelity fidelity);
/// Parses "analytical" or "flow"; throws ConfigError listing both.
CommFidelity parse_comm_fidelity(std::string_view name);

}  // namespace clustersim::models
