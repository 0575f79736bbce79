#pragma once
/// `clustersim search`: enumerates the parallel configurations of a scenario's model and
/// cluster (search_space.hpp), drops those that do not fit in device memory, estimates the
/// rest in closed form on every core (oneTBB), ranks them by the objective and re-simulates
/// the best few with the scenario's own fidelity (runner::run_training), re-sorting those
/// by their simulated objective.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/progress.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/candidate_evaluator.hpp"
#include "sim/sweep/objective.hpp"
#include "sim/sweep/search_space.hpp"

namespace clustersim::sweep {

struct SearchOptions {
  SearchSpaceOptions space;
  Objective objective = Objective::throughput;
  int top_n = 10;      ///< candidates reported, best first
  int resimulate = 5;  ///< of those, how many are re-simulated (0: none)
  int threads = 0;     ///< worker threads (0: every core)
  /// Called as candidates are costed ("search: closed form") and re-simulated ("search:
  /// re-simulating"); may be empty.
  report::ProgressCallback on_progress;
};

/// One reported candidate.
struct RankedCandidate {
  int rank = 0;  ///< 1 = best: by simulation among the re-simulated, by the closed form after them
  int closed_form_rank = 0;  ///< the rank the closed form gave it
  Candidate candidate;
  CandidateOutcome analytical;                   ///< closed-form estimate, energy/cost when computable
  std::optional<training::TrainingResult> simulated;  ///< re-simulation, when it ran and succeeded
  std::string simulation_error;                  ///< why the re-simulation failed (empty otherwise)
};

/// What a search found. Counts: enumerated = feasible + does_not_fit + invalid.
struct SearchResult {
  std::string scenario_name;
  Objective objective = Objective::throughput;
  int accelerators = 0;
  std::int64_t enumerated = 0;
  std::int64_t feasible = 0;
  std::int64_t does_not_fit = 0;
  std::string does_not_fit_example;  ///< first dropped candidate in key order: "label: reason"
  std::int64_t invalid = 0;          ///< rejected by the training models (e.g. unsupported)
  std::string invalid_example;
  std::vector<RankedCandidate> top;  ///< best first; ties broken by Candidate::key()
};

/// Re-sorts the first `resimulated` candidates of `result.top` by their simulated objective
/// (the closed form ranks; the simulation, which sees contention and the schedule, decides
/// among the best few) and renumbers every rank. A candidate whose simulation failed or gave
/// no value for the objective stays behind the simulated ones, in closed-form order.
void rerank_by_simulation(SearchResult& result, std::size_t resimulated);

/// The objective's value of a re-simulated candidate in objective_unit (tokens/s, J/token,
/// USD per million tokens), or nullopt when the simulation did not give it (not re-simulated,
/// failed, or no energy or cost computed).
std::optional<double> simulated_objective_value(const RankedCandidate& ranked, Objective objective);

/// Runs the search. Throws ConfigError for bad options (top_n < 1, resimulate < 0, threads
/// < 0, see also enumerate_candidates and CandidateEvaluator), and SimulationError when no
/// candidate is feasible, saying how many were enumerated, how many did not fit and why.
SearchResult search_parallelism(const scenario::Scenario& scenario, const SearchOptions& options);

}  // namespace clustersim::sweep
