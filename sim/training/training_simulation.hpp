#pragma once
/// Builds the task graph of one training step and runs it on the engine.
#include <cstdint>
#include <vector>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
#include "sim/training/stage_program.hpp"
#include "sim/training/training_config.hpp"
#include "sim/training/training_result.hpp"
#include "topologies/topology.hpp"

namespace clustersim::training {

/// Everything one training-step simulation needs. References must outlive the call.
struct TrainingSetup {
  const TrainingWorkload& workload;
  const models::ComputeModel& compute;
  const models::CollectiveModel& collectives;
  const topologies::Topology& topology;
  std::uint64_t seed = 1;
};

/// Simulates one optimizer step (symmetric mode: one representative rank per pipeline stage;
/// collectives are costed on the real rank groups). Throws ConfigError when the split does
/// not divide the model or batch, SimulationError when the task graph cannot complete.
TrainingResult simulate_training_step(const TrainingSetup& setup);

/// Checks the split against the model, batch and topology; throws ConfigError naming the
/// values (SimulationError for features not implemented yet).
void validate_training_setup(const TrainingSetup& setup);

/// The costed per-micro-batch program of every pipeline stage.
std::vector<StageProgram> build_stage_programs(const TrainingSetup& setup);

/// Fills tokens/s, FLOPs per step, TFLOP/s per GPU, MFU and HFU from `result.step_time_s`.
void fill_step_metrics(const TrainingSetup& setup, const std::vector<StageProgram>& programs,
                       TrainingResult& result);

}  // namespace clustersim::training
