#pragma once
/// Evaluates one search candidate analytically: memory fit first, then the closed-form step
/// estimate (training::estimate_training_step), then the objective. Owns its platform (the
/// scenario's models, built once per evaluator); the models cache and are not thread-safe, so
/// each thread builds one evaluator and reuses it for every candidate it evaluates.
#include <memory>
#include <optional>
#include <string>

#include "models/llm/memory_footprint.hpp"
#include "sim/platform/platform.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/objective.hpp"
#include "sim/sweep/search_space.hpp"
#include "sim/training/training_result.hpp"
#include "sim/training/training_simulation.hpp"

namespace clustersim::sweep {

/// Why a candidate was kept or dropped.
enum class CandidateStatus { feasible, does_not_fit, invalid };

/// The analytical evaluation of one candidate.
struct CandidateOutcome {
  CandidateStatus status = CandidateStatus::invalid;
  std::string reason;                 ///< why it was dropped (empty when feasible)
  training::TrainingResult estimate;  ///< closed-form step, memory report filled (feasible only)
  double objective_value = 0;         ///< in objective_unit(objective)
  double score = 0;                   ///< lower ranks first (throughput is negated)
  double energy_per_token_j = 0;      ///< 0 when the accelerator has no power data
  double usd_per_million_tokens = 0;  ///< 0 when the scenario has no cost block
};

class CandidateEvaluator {
 public:
  /// Builds the scenario's platform and the rank placement, once. Throws ConfigError
  /// when `objective` needs data the scenario lacks (cost: a `cost` block, and power.tdp
  /// with capex pricing; energy: the accelerator's power.tdp), naming what is missing.
  CandidateEvaluator(const scenario::Scenario& scenario, Objective objective);
  CandidateEvaluator(const CandidateEvaluator&) = delete;
  CandidateEvaluator& operator=(const CandidateEvaluator&) = delete;

  /// Evaluates `candidate`. With `with_reason` false a dropped candidate's reason is left
  /// empty (the search fills it for one example only, which keeps the hot path cheap).
  /// Energy and cost are computed when the objective needs them or `with_energy` is set (and
  /// the accelerator has power data). Never throws for a candidate the models reject: that
  /// is status `invalid`.
  CandidateOutcome evaluate(const Candidate& candidate, bool with_reason = true, bool with_energy = true);

 private:
  void fill_energy_and_cost(CandidateOutcome& outcome) const;

  training::TrainingWorkload workload_;  ///< rewritten for each candidate
  training::TrainingWorkload base_workload_;
  Objective objective_;
  std::unique_ptr<platform::Platform> platform_;
  /// Refers to workload_ (rewritten in place per candidate) and the platform's models; carries
  /// the scenario's placement and job allocation as the runner's training job does.
  std::optional<training::TrainingSetup> setup_;
};


}  // namespace clustersim::sweep
