#pragma once
/// Turns a validated Scenario into a result: builds the network and the hardware models it
/// names and runs the workload's simulation. Used by the CLI, `validate` and the goldens.
#include <vector>

#include "models/memory/memory_footprint.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/training/training_result.hpp"
#include "sim/training/training_simulation.hpp"

namespace clustersim::runner {

/// The footprint inputs of a scenario's training workload (precision sets the activation and
/// weight bytes; sequence parallelism counts only with tp > 1).
models::FootprintInputs footprint_inputs(const scenario::Scenario& scenario);

/// 1 - simulation.comm.overlap_sms / the accelerator's compute units: the speed of compute
/// while a communication kernel shares the GPU (TrainingSetup). Throws ConfigError when the
/// SMs are not fewer than the compute units.
double compute_rate_while_communicating(const scenario::Scenario& scenario);

/// Rank -> accelerator map of `placement` (scenario.hpp defines it): empty for packed (the
/// identity); for scattered, rank r -> (r mod nodes) x per_node + floor(r / nodes). Throws
/// ConfigError for nodes or per_node < 1.
std::vector<int> placement_map(scenario::Placement placement, const topologies::ClusterNetworkSpec& network);

/// The TrainingSetup of `scenario` for `workload` (normally scenario.training): fidelity,
/// background job, placement (a scattered placement stays inside the training job's nodes)
/// and compute sharing. References are kept: all arguments must outlive the setup. Throws
/// ConfigError for a scattered placement with a background job of partial nodes.
training::TrainingSetup training_setup(const scenario::Scenario& scenario, const training::TrainingWorkload& workload,
                                       const models::ComputeModel& compute, const models::CollectiveModel& collectives,
                                       const topologies::Topology& topology);

/// The costed per-micro-batch program of every pipeline stage of the scenario's training
/// workload (what `clustersim ops` prints).
std::vector<training::StageProgram> stage_programs(const scenario::Scenario& scenario);

/// Runs `simulation.fidelity` (analytical or flow) and `cluster.placement`. Checks that the workload fits in device memory (throws models::DoesNotFitError, a
/// SimulationError, before simulating anything), simulates one training step, adds exposed
/// offload transfer time, and fills the memory and power reports. Throws ConfigError /
/// SimulationError.
training::TrainingResult run_training(const scenario::Scenario& scenario);

/// What run_training does with a footprint larger than device memory.
enum class MemoryFit {
  enforce,      ///< throw models::DoesNotFitError before simulating (run_training(scenario))
  report_only,  ///< simulate anyway; result.memory.total_bytes > capacity_bytes tells. For
                ///< `validate`, whose published runs did fit: time is compared on its own.
};
/// run_training with the memory check as `fit` says.
training::TrainingResult run_training(const scenario::Scenario& scenario, MemoryFit fit);

/// Fills result.run for a run of train_tokens tokens (nothing when train_tokens <= 0) from the
/// step time, throughput, GPUs and (when computed) the power and cost reports.
void fill_run_report(double train_tokens, training::TrainingResult& result);

/// Copies the peak stage of a footprint into a result's memory report (used by the runner and
/// the parallelism search).
void fill_memory_report(const models::StageFootprint& peak, double capacity_bytes, training::MemoryReport& report);

}  // namespace clustersim::runner
