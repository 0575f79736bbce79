#pragma once
/// Many training steps with fresh random draws (`simulation.iterations`): the distribution of
/// the step time under kernel jitter, host noise, network jitter and probabilistic stragglers,
/// and the share of time each cause costs.
///
/// Full mode simulates every iteration in full (every rank draws its own kernels; each
/// collective waits for its slowest member): the reference, affordable up to about a thousand
/// GPUs. Symmetric mode (the fast path) simulates the step once, then replays its task graph
/// per iteration with every task at a fixed duration (asynchronous collectives at the times
/// they took) drawn by SymmetricDraws (the slowest of each synchronising group from its order
/// statistics), on the same executor with the same compute sharing. A node that straggles in
/// an iteration slows the pipeline stage whose ranks it hosts: its collectives wait for it, so
/// the representative of that stage runs at the straggler's speed for the whole step
/// (two stragglers in different stages of different pipelines count as one pipeline holding
/// both, slightly pessimistic).
#include <string>
#include <vector>

#include "sim/platform/platform_spec.hpp"
#include "sim/training/training_result.hpp"
#include "sim/training/training_simulation.hpp"
#include "sim/training/training_step.hpp"

namespace clustersim::training {

/// What a training job's iterations need beyond its setup.
struct IterationSettings {
  int iterations = 1;
  platform::VariabilitySpec variability;  ///< what each iteration draws
  platform::Stragglers stragglers;  ///< probabilistic (and listed) straggler nodes
  int nodes = 1;                    ///< of the platform
  int per_node = 1;                 ///< accelerators per node
  /// Full mode: a fresh session for each iteration, as the job's step had (its fidelity, the
  /// platform's link faults from the start, the run's limits). Unused in symmetric mode.
  SessionFactory session;
};

/// True when `settings` ask for more than the single nominal step.
bool needs_iterations(const IterationSettings& settings);

/// Runs the iterations. Symmetric mode replays `nominal`, which must have run with
/// setup.record_task_times; full mode simulates each iteration anew on a session of
/// settings.session (`nominal` unused). Throws ConfigError for fewer than one iteration,
/// SimulationError for full mode without settings.session.
StepStatistics simulate_iterations(const TrainingSetup& setup, const IterationSettings& settings,
                                   const TrainingStep& nominal);

}  // namespace clustersim::training
