#pragma once
/// Turns a validated Scenario into a result: builds the network and the hardware models it
/// names and runs the workload's simulation. Used by the CLI, `validate` and the goldens.
#include "sim/scenario/scenario.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::runner {

/// Simulates one training step of `scenario`. Throws ConfigError / SimulationError.
training::TrainingResult run_training(const scenario::Scenario& scenario);

}  // namespace clustersim::runner
