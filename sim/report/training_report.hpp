#pragma once
/// Report sinks for a training step: a human summary table and a schema-versioned JSON document.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::report {

/// Version of the JSON document layout; bump when a field is renamed or removed.
inline constexpr int kResultSchemaVersion = 1;

/// Multi-line table with units: throughput, utilisation, breakdown, fingerprint.
std::string training_summary_table(const scenario::Scenario& scenario,
                                   const training::TrainingResult& result);

/// JSON document: {schema_version, scenario{...}, training{...}, breakdown{...}, fingerprint}.
nlohmann::json training_result_json(const scenario::Scenario& scenario,
                                    const training::TrainingResult& result);

/// The step breakdown as {compute_s, exposed_tp_s, ..., offload_s}, seconds.
nlohmann::json breakdown_json(const training::StepBreakdown& breakdown);
/// The per-device memory report (bytes per term, peak stage, capacity).
nlohmann::json memory_json(const training::MemoryReport& memory);

/// 16 lower-case hex digits, the form every report prints a fingerprint in.
std::string fingerprint_hex(std::uint64_t fingerprint);

}  // namespace clustersim::report
