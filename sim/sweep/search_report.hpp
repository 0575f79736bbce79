#pragma once
/// Report sinks of `clustersim search`: a ranked table with per-candidate breakdowns, and a
/// schema-versioned JSON document carrying the same information.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/sweep/parallelism_search.hpp"

namespace clustersim::sweep {

/// Version of the search JSON layout; bump when a field is renamed or removed.
inline constexpr int kSearchSchemaVersion = 1;

/// Counts (enumerated / feasible / dropped with one example reason), then the top-N table:
/// split, micro-batch, ZeRO, recompute, analytical and re-simulated step time (s), tokens/s,
/// MFU, memory per GPU (GiB) and the objective; then each one's time breakdown (s).
std::string search_table(const SearchResult& result);

/// {schema_version, kind: "search", scenario, accelerators, objective{name, unit},
///  counts{enumerated, feasible, does_not_fit, invalid}, does_not_fit_example,
///  invalid_example, top[{rank, config{...}, analytical{...}, simulated{...} | null,
///  simulation_error}]}. Times in s, memory in bytes, energy in J/token, cost in USD/Mtoken.
nlohmann::json search_json(const SearchResult& result);

}  // namespace clustersim::sweep
