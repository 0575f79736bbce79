#pragma once
/// What produced a result: the part of every result JSON's `scenario` block that all workload
/// kinds share, so a result names the file, the `--set` overrides, the network and the
/// simulation options it came from.
#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"

namespace clustersim::report {

/// {name, file, overrides: the `--set key.path=value` texts as applied, in order (empty
/// without any), topology: the scale-out topology kind (`cluster.network.topology`),
/// simulation: {fidelity, mode} (`simulation.*`)}. Each kind's report adds its own keys.
nlohmann::json scenario_identity_json(const scenario::Scenario& scenario);

}  // namespace clustersim::report
