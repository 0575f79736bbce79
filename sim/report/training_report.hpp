#pragma once
/// Report sinks for a training step: a human summary table and a schema-versioned JSON document.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/run_report.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/training/stage_program.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::report {

/// Version of the JSON document layout; bump when a field is renamed or removed.
inline constexpr int kResultSchemaVersion = 2;  // 2: power.energy_parts_j by activity class (2026-12-06)

/// Multi-line table with units: throughput, utilisation, breakdown, fingerprint.
std::string training_summary_table(const scenario::Scenario& scenario,
                                   const training::TrainingResult& result);

/// JSON document: {schema_version, scenario{...}, training{...}, breakdown{...}, memory, power,
/// training_run, network, provenance{...}, notes, events, fingerprint}. `scenario` is what
/// produced the result: scenario_identity_json (name, file, the --set overrides, topology,
/// simulation fidelity and mode) plus model, accelerator, gpus, parallelism {tp, pp, dp, cp, ep,
/// vp, sequence_parallel, zero, schedule}, precision, micro_batch, global_batch, seq_len. The
/// provenance section is provenance_json(result).
nlohmann::json training_result_json(const scenario::Scenario& scenario,
                                    const training::TrainingResult& result);

/// Where one step's op time comes from, per pipeline stage and estimator:
/// {basis, critical_stage, stages: [{stage, measured_table_s, fitted_s, roofline_s, collective_model_s,
/// total_s}]}, seconds per optimizer step (result.stage_provenance, from
/// training::step_seconds_by_provenance of the programs the step ran):
/// each op of the stage program (embedding, every local layer, head; forward, backward and
/// recompute) x micro-batches, plus the optimizer step. Op times are the costed ones
/// (uncontended, before compute slows beside communication) and overlapped communication
/// counts in full, so total_s is the stage's work, not its wall time; pipeline sends and the
/// data-parallel / ZeRO collectives are not in the stage programs and not counted.
nlohmann::json provenance_json(const training::TrainingResult& result);

/// The step breakdown as {compute_s, exposed_tp_s, ..., offload_s}, seconds.
nlohmann::json breakdown_json(const training::StepBreakdown& breakdown);
/// The per-device memory report (bytes per term, peak stage, capacity).
nlohmann::json memory_json(const training::MemoryReport& memory);

/// A network tier's name in reports (topologies::Link::tier): scale-up, endpoint-leaf,
/// leaf-spine, spine-core, other.
std::string_view network_tier_name(int tier);

/// 16 lower-case hex digits, the form every report prints a fingerprint in.
std::string fingerprint_hex(std::uint64_t fingerprint);

/// The step's summary metrics as sweep columns (step time, throughput, MFU, breakdown; memory,
/// power, cost and the whole run when computed).
void training_columns(const training::TrainingResult& r, std::vector<MetricColumn>& out);

}  // namespace clustersim::report
