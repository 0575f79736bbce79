#include "sim/sweep/candidate_evaluator.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "models/llm/memory_footprint.hpp"
#include "sim/engine/error.hpp"
#include "sim/platform/energy.hpp"
#include "sim/training/analytical_step.hpp"
#include "sim/training/training_job.hpp"

namespace clustersim::sweep {

CandidateEvaluator::CandidateEvaluator(const scenario::Scenario& scenario, Objective objective)
    : workload_(scenario.training()), base_workload_(scenario.training()), objective_(objective) {
  const auto& cluster = scenario.platform.cluster;
  if (objective == Objective::energy && !platform::has_power_data(cluster.accelerator)) {
    throw ConfigError(fmt::format("objective 'energy' needs the accelerator's power.tdp; the preset '{}' has none",
                                  cluster.accelerator.name));
  }
  const models::CostSpec& cost = scenario.platform.cost;
  if (objective == Objective::cost && !cost.any()) {
    throw ConfigError("objective 'cost' needs a cost block in the scenario "
                      "(cost.accelerator_hour_usd or cost.capex_usd_per_accelerator)");
  }
  if (objective == Objective::cost && cost.capex_usd_per_accelerator.has_value() && !platform::has_power_data(cluster.accelerator)) {
    throw ConfigError(fmt::format("objective 'cost' with capex pricing needs the accelerator's power.tdp for the "
                                  "electricity bill; the preset '{}' has none", cluster.accelerator.name));
  }
  platform_ = std::make_unique<platform::Platform>(scenario.platform);
  setup_.emplace(training::training_setup(workload_, *platform_, scenario.primary_allocation(), scenario.simulation));
}

CandidateOutcome CandidateEvaluator::evaluate(const Candidate& candidate, bool with_reason, bool with_energy) {
  CandidateOutcome outcome;
  workload_ = apply_candidate(base_workload_, candidate);
  const double capacity = platform_->cluster().accelerator.hbm_capacity_bytes;
  try {
    const models::FootprintInputs inputs = training::footprint_inputs(workload_);
    const models::TrainingFootprint footprint = models::training_footprint(inputs);
    if (footprint.peak().total_bytes > capacity) {
      outcome.status = CandidateStatus::does_not_fit;
      if (with_reason) {
        try {
          models::check_fits(footprint, capacity);
        } catch (const models::DoesNotFitError& e) {
          outcome.reason = e.what();
        }
      }
      return outcome;
    }
    outcome.estimate = training::estimate_training_step(*setup_);
    training::fill_memory_report(footprint.peak(), capacity, outcome.estimate.memory);
    outcome.status = CandidateStatus::feasible;
    const bool needs_energy = with_energy || objective_ != Objective::throughput;
    if (needs_energy) fill_energy_and_cost(outcome);
  } catch (const Error& e) {
    outcome = CandidateOutcome{};
    outcome.status = CandidateStatus::invalid;
    if (with_reason) outcome.reason = e.what();
    return outcome;
  }
  switch (objective_) {
    case Objective::throughput:
      outcome.objective_value = outcome.estimate.tokens_per_s;
      outcome.score = -outcome.objective_value;
      break;
    case Objective::cost:
      outcome.objective_value = outcome.usd_per_million_tokens;
      outcome.score = outcome.objective_value;
      break;
    case Objective::energy:
      outcome.objective_value = outcome.energy_per_token_j;
      outcome.score = outcome.objective_value;
      break;
  }
  return outcome;
}

/// The platform's power and cost arithmetic (training::step_energy, as the training job's
/// report) on the analytical step. Without power data the energy is
/// unknown (0) and only rental pricing can be costed.
void CandidateEvaluator::fill_energy_and_cost(CandidateOutcome& outcome) const {
  const training::TrainingResult& r = outcome.estimate;
  const auto& w = workload_;
  const double gpus = r.gpus;
  const double tokens = static_cast<double>(w.global_batch * w.seq_len);
  if (!platform::has_power_data(*platform_)) {
    if (const auto cost = platform::rental_cost(*platform_, r.step_time_s, gpus, tokens)) {
      outcome.usd_per_million_tokens = cost->usd_per_million_tokens;
    }
    return;
  }
  const platform::PeriodEnergy energy = training::step_energy(w, *platform_, r);
  outcome.energy_per_token_j = energy.cluster.energy_per_token_j;
  if (energy.cost) outcome.usd_per_million_tokens = energy.cost->usd_per_million_tokens;
}

}  // namespace clustersim::sweep
