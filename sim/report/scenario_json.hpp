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

/// FNV-1a 64 of the resolved scenario's "key=value" lines in key order, as 16 hex digits: two
/// runs with the same hash ran the same inputs.
std::string resolved_hash(const scenario::Scenario& scenario);

/// What `--out DIR` keeps beside result.json to reproduce and compare a run (manifest.json):
/// {schema_version, version (the simulator's), scenario: the identity block, seed, resolved:
/// every key with its value as run (Scenario::resolved), resolved_hash, fingerprint, events}.
nlohmann::json manifest_json(const scenario::Scenario& scenario, std::uint64_t fingerprint, std::uint64_t events,
                             const std::string& version);

}  // namespace clustersim::report
