#pragma once
/// Builds the task graph of one training step and runs it on the engine.
#include <cstdint>

#include "models/accelerator/compute_model.hpp"
#include "models/comm/collective_model.hpp"
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

}  // namespace clustersim::training
