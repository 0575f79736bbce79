#pragma once
/// Report sinks of a serving run: the summary table and the `serving` section of the JSON
/// document (docs/serving.md lists every field).
#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/run_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/serving/serving_workload.hpp"

namespace clustersim::report {

/// {mean, p50, p90, p99, max} in seconds.
nlohmann::json distribution_json(const serving::Distribution& distribution);

/// The `serving` section: throughput_tokens_per_s, input_tokens_per_s, output_tokens_per_s,
/// requests_per_s, ttft_s, tpot_s, itl_s, e2e_s, queue_s, goodput_requests_per_s, rejected,
/// preemptions, kv_cache_utilisation {mean, peak}, prefix_hit_rate, gpu_utilisation,
/// energy_per_token_j, cost_per_million_tokens (null when unknown), slo, limiter, pools,
/// time_series {time_s, queued, kv_cache_utilisation, output_tokens_per_s}.
nlohmann::json serving_json(const serving::ServingResult& result);

/// What produced a serving result: scenario_identity_json (name, file, the --set overrides,
/// topology, simulation fidelity and mode) plus model, framework, precision {weights,
/// activations, kv_cache} and pools [{name, role, accelerator, replicas, tp, pp, ep}] as the
/// scenario asks for them; only the shared part when the primary workload is not serving.
nlohmann::json serving_scenario_json(const scenario::Scenario& scenario);

/// The whole document: {schema_version, scenario (serving_scenario_json), serving, notes, events,
/// fingerprint}.
nlohmann::json serving_result_json(const scenario::Scenario& scenario, const serving::ServingResult& result,
                                   const runner::RunResult& run);

/// The summary table.
std::string serving_summary_table(const scenario::Scenario& scenario, const serving::ServingResult& result,
                                  const runner::RunResult& run);

/// The run's summary metrics as sweep columns (rates, latencies, utilisation, power and cost;
/// availability when faults are modelled).
void serving_columns(const serving::ServingResult& r, std::vector<MetricColumn>& out);

}  // namespace clustersim::report
