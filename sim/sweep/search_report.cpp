#include "sim/sweep/search_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/llm/memory_footprint.hpp"
#include "sim/config/units.hpp"
#include "sim/report/training_report.hpp"

namespace clustersim::sweep {
namespace {

using report::breakdown_json;
using report::memory_json;

nlohmann::json step_json(const training::TrainingResult& r) {
  return {{"step_time_s", r.step_time_s},
          {"tokens_per_s", r.tokens_per_s},
          {"model_tflops_per_gpu", r.model_tflops_per_gpu},
          {"mfu", r.mfu},
          {"hfu", r.hfu},
          {"microbatches", r.microbatches},
          {"breakdown", breakdown_json(r.breakdown)}};
}

}  // namespace

std::string search_table(const SearchResult& result) {
  std::string out = fmt::format("search: {} on {} accelerators, ranked by {} ({})\n", result.scenario_name,
                                result.accelerators, objective_name(result.objective),
                                objective_unit(result.objective));
  out += fmt::format("candidates: {} enumerated, {} feasible, {} do not fit in memory, {} rejected by the models\n",
                     result.enumerated, result.feasible, result.does_not_fit, result.invalid);
  if (!result.does_not_fit_example.empty()) out += fmt::format("  e.g. {}\n", result.does_not_fit_example);
  if (!result.invalid_example.empty()) out += fmt::format("  e.g. {}\n", result.invalid_example);
  out += "\n";
  out += fmt::format("{:>4} {:>4} {:>3} {:>3} {:>5} {:>3} {:>3} {:>3} {:<6} {:>4} {:>4} {:<9} {:>12} {:>12} {:>12} "
                     "{:>6} {:>9} {:>9} {:>12}\n",
                     "rank", "an.", "tp", "pp", "dp", "cp", "ep", "vp", "layers", "mb", "zero", "recompute", "step an. s",
                     "step sim. s", "tokens/s", "MFU %", "MFU an. %", "mem GiB", objective_name(result.objective));
  for (const RankedCandidate& c : result.top) {
    const Candidate& k = c.candidate;
    const training::TrainingResult& a = c.analytical.estimate;
    const std::string simulated = c.simulated ? fmt::format("{:.5g}", c.simulated->step_time_s)
                                  : c.simulation_error.empty() ? std::string("-")
                                                               : std::string("failed");
    // A re-simulated row's throughput, MFU and objective are the simulation's; the closed
    // form's MFU keeps its own column.
    const training::TrainingResult& shown = c.simulated ? *c.simulated : a;
    const double objective = simulated_objective_value(c, result.objective).value_or(c.analytical.objective_value);
    out += fmt::format("{:>4} {:>4} {:>3} {:>3} {:>5} {:>3} {:>3} {:>3} {:<6} {:>4} {:>4} {:<9} {:>12.5g} {:>12} "
                       "{:>12.4g} {:>6.1f} {:>9.1f} {:>9.2f} {:>12}\n",
                       c.rank, c.closed_form_rank, k.tp, k.pp, k.dp, k.cp, k.ep, k.vp, k.ends_lighter ? "ends-1" : "even", k.micro_batch,
                       k.zero, recompute_name(k.recompute), a.step_time_s, simulated, shown.tokens_per_s,
                       100.0 * shown.mfu, 100.0 * a.mfu, a.memory.total_bytes / config::kGiB, fmt::format("{:.4g}", objective));
  }
  const auto resimulated = std::count_if(result.top.begin(), result.top.end(),
                                         [](const RankedCandidate& c) { return c.simulated.has_value(); });
  if (resimulated > 0) {
    out += fmt::format("rank: the {} re-simulated candidates ordered by their simulated {}, then the rest by the closed "
                       "form; an.: the closed-form rank\n"
                       "tokens/s, MFU % and {}: the simulation's where a step sim. s is shown, the closed form's "
                       "elsewhere; MFU an. %: the closed form's\n",
                       resimulated, objective_name(result.objective), objective_name(result.objective));
  }
  if (std::any_of(result.top.begin(), result.top.end(), [](const RankedCandidate& c) { return c.candidate.ends_lighter; })) {
    out += "layers ends-1: the embedding and the loss each take a layer's place, so the first and the last virtual "
           "stage hold one layer fewer\n";
  }
  out += "\nanalytical time breakdown, s (critical pipeline stage):\n";
  out += fmt::format("{:>4} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "rank", "compute", "TP", "CP", "EP",
                     "PP", "DP", "bubble", "optimizer");
  for (const RankedCandidate& c : result.top) {
    const training::StepBreakdown& b = c.analytical.estimate.breakdown;
    out += fmt::format("{:>4} {:>10.4g} {:>9.4g} {:>9.4g} {:>9.4g} {:>9.4g} {:>9.4g} {:>9.4g} {:>9.4g}\n", c.rank,
                       b.compute_s, b.exposed_tp_s, b.exposed_cp_s, b.exposed_ep_s, b.exposed_pp_s, b.exposed_dp_s,
                       b.bubble_s, b.optimizer_s);
  }
  for (const RankedCandidate& c : result.top) {
    if (!c.simulation_error.empty()) {
      out += fmt::format("re-simulation of rank {} failed: {}\n", c.rank, c.simulation_error);
    }
  }
  return out;
}

nlohmann::json search_json(const SearchResult& result) {
  nlohmann::json top = nlohmann::json::array();
  for (const RankedCandidate& c : result.top) {
    const Candidate& k = c.candidate;
    nlohmann::json analytical = step_json(c.analytical.estimate);
    analytical["memory"] = memory_json(c.analytical.estimate.memory);
    analytical["objective_value"] = c.analytical.objective_value;
    analytical["energy_per_token_j"] =
        c.analytical.energy_per_token_j > 0 ? nlohmann::json(c.analytical.energy_per_token_j) : nlohmann::json();
    analytical["usd_per_million_tokens"] = c.analytical.usd_per_million_tokens > 0
                                               ? nlohmann::json(c.analytical.usd_per_million_tokens)
                                               : nlohmann::json();
    nlohmann::json simulated;
    if (c.simulated) {
      simulated = step_json(*c.simulated);
      simulated["fingerprint"] = fmt::format("{:016x}", c.simulated->fingerprint);
    }
    top.push_back({{"rank", c.rank},
                   {"closed_form_rank", c.closed_form_rank},
                   {"config",
                    {{"tp", k.tp},
                     {"pp", k.pp},
                     {"dp", k.dp},
                     {"cp", k.cp},
                     {"ep", k.ep},
                     {"vp", k.vp},
                     {"layers", k.ends_lighter ? "ends-1" : "even"},
                     {"micro_batch", k.micro_batch},
                     {"zero", k.zero},
                     {"recompute", recompute_name(k.recompute)},
                     {"schedule", k.vp > 1 ? "interleaved" : "as in the scenario (1f1b when it asked for interleaved)"}}},
                   {"analytical", analytical},
                   {"simulated", simulated},
                   {"simulation_error", c.simulation_error}});
  }
  return {{"schema_version", kSearchSchemaVersion},
          {"kind", "search"},
          {"scenario", result.scenario_name},
          {"accelerators", result.accelerators},
          {"objective", {{"name", objective_name(result.objective)}, {"unit", objective_unit(result.objective)}}},
          {"counts",
           {{"enumerated", result.enumerated},
            {"feasible", result.feasible},
            {"does_not_fit", result.does_not_fit},
            {"invalid", result.invalid}}},
          {"does_not_fit_example", result.does_not_fit_example},
          {"invalid_example", result.invalid_example},
          {"top", top}};
}

}  // namespace clustersim::sweep
