#pragma once
/// Turns a validated Scenario into a result: builds the network and the hardware models it
/// names and runs the workload's simulation. Used by the CLI, `validate` and the goldens.
#include <vector>

#include "models/memory/memory_footprint.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::runner {

/// The footprint inputs of a scenario's training workload (precision sets the activation and
/// weight bytes; sequence parallelism counts only with tp > 1).
models::FootprintInputs footprint_inputs(const scenario::Scenario& scenario);

/// Rank -> accelerator map of `placement` (scenario.hpp defines it): empty for packed (the
/// identity); for scattered, rank r -> (r mod nodes) x per_node + floor(r / nodes). Throws
/// ConfigError for nodes or per_node < 1.
std::vector<int> placement_map(scenario::Placement placement, const topologies::ClusterNetworkSpec& network);

/// Runs `simulation.fidelity` (analytical or flow) and `cluster.placement`. Checks that the workload fits in device memory (throws models::DoesNotFitError, a
/// SimulationError, before simulating anything), simulates one training step, adds exposed
/// offload transfer time, and fills the memory and power reports. Throws ConfigError /
/// SimulationError.
training::TrainingResult run_training(const scenario::Scenario& scenario);

/// Copies the peak stage of a footprint into a result's memory report (used by the runner and
/// the parallelism search).
void fill_memory_report(const models::StageFootprint& peak, double capacity_bytes, training::MemoryReport& report);

}  // namespace clustersim::runner
