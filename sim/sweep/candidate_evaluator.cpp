#include "sim/sweep/candidate_evaluator.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "models/memory/memory_footprint.hpp"
#include "models/power/cost_model.hpp"
#include "models/power/power_model.hpp"
#include "models/power/training_activity.hpp"
#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/training/analytical_step.hpp"

namespace clustersim::sweep {

CandidateEvaluator::CandidateEvaluator(const scenario::Scenario& scenario, Objective objective)
    : scenario_(scenario), base_workload_(scenario.training), objective_(objective) {
  if (objective == Objective::energy && !(scenario.cluster.power.tdp_w > 0)) {
    throw ConfigError(fmt::format("objective 'energy' needs the accelerator's power.tdp; the preset '{}' has none",
                                  scenario.cluster.accelerator.name));
  }
  if (objective == Objective::cost && !scenario.cost.any()) {
    throw ConfigError("objective 'cost' needs a cost block in the scenario "
                      "(cost.accelerator_hour_usd or cost.capex_usd_per_accelerator)");
  }
  const bool capex = scenario.cost.capex_usd_per_accelerator.has_value();
  if (objective == Objective::cost && capex && !(scenario.cluster.power.tdp_w > 0)) {
    throw ConfigError(fmt::format("objective 'cost' with capex pricing needs the accelerator's power.tdp for the "
                                  "electricity bill; the preset '{}' has none", scenario.cluster.accelerator.name));
  }
  topology_ = std::make_unique<topologies::Topology>(topologies::Topology::build(scenario.cluster.network));
  compute_ = std::make_unique<models::ComputeModel>(scenario.cluster.accelerator);
  collectives_ = std::make_unique<models::CollectiveModel>(
      *topology_, scenario.simulation.comm, models::collective_hardware(scenario.cluster.accelerator));
  memory_ = std::make_unique<models::MemoryHierarchy>(scenario.cluster.memory_levels, scenario.cluster.host_link);
  // As the runner counts them: one scale-up switch plane per node is part of the node.
  const auto& net = scenario.cluster.network;
  scale_out_switches_ =
      static_cast<double>(std::max<std::int64_t>(0, topology_->summary().switches - net.nodes));
  setup_.emplace(runner::training_setup(scenario_, scenario_.training, *compute_, *collectives_, *topology_));
}

CandidateOutcome CandidateEvaluator::evaluate(const Candidate& candidate, bool with_reason, bool with_energy) {
  CandidateOutcome outcome;
  scenario_.training = apply_candidate(base_workload_, candidate);
  const double capacity = scenario_.cluster.accelerator.hbm_capacity_bytes;
  try {
    const models::FootprintInputs inputs = runner::footprint_inputs(scenario_);
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
    runner::fill_memory_report(footprint.peak(), capacity, outcome.estimate.memory);
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

/// The runner's power and cost arithmetic (runner::run_training, fill_power_report) on the
/// analytical step: one average device, NICs and scale-out switches for the step time.
/// Without power data the energy is unknown (0) and only rental pricing can be costed.
void CandidateEvaluator::fill_energy_and_cost(CandidateOutcome& outcome) const {
  const training::TrainingResult& r = outcome.estimate;
  const auto& w = scenario_.training;
  const auto& net = scenario_.cluster.network;
  const auto& power = scenario_.cluster.power;
  const double gpus = r.gpus;
  const double tokens = static_cast<double>(w.global_batch * w.seq_len);
  if (!(power.tdp_w > 0)) {
    if (scenario_.cost.accelerator_hour_usd) {
      outcome.usd_per_million_tokens =
          models::step_cost(scenario_.cost, r.step_time_s, gpus, 0.0, tokens).usd_per_million_tokens;
    }
    return;
  }
  const double busy_s = r.breakdown.compute_s > 0 ? r.breakdown.compute_s : r.step_time_s;
  const models::FootprintInputs inputs = runner::footprint_inputs(scenario_);
  const models::DeviceActivity activity =
      models::estimate_training_activity(inputs, net.accelerators_per_node, w.grad_bytes_per_param,
                                         r.hardware_flops_per_step / gpus, w.precision, r.step_time_s, busy_s);
  const models::DeviceEnergy device = models::device_energy(power, *memory_, activity);
  const double nics = static_cast<double>(net.nodes) * net.scale_out.nics_per_node;
  const models::ClusterEnergy cluster = models::cluster_energy({device}, gpus, power, nics, scale_out_switches_,
                                                               r.step_time_s, tokens, r.model_flops_per_step);
  outcome.energy_per_token_j = cluster.energy_per_token_j;
  if (scenario_.cost.any()) {
    outcome.usd_per_million_tokens =
        models::step_cost(scenario_.cost, r.step_time_s, gpus, cluster.total_j, tokens).usd_per_million_tokens;
  }
}

}  // namespace clustersim::sweep
