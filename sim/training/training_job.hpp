#pragma once
/// A training workload on a platform (what `workload: {kind: training}` runs): the memory
/// check before anything is simulated, one simulated step (TrainingStep) beside the platform's
/// other workloads, then the memory, power, energy, cost and whole-run reports of the result.
#include <functional>
#include <memory>

#include "models/llm/memory_footprint.hpp"
#include "sim/platform/energy.hpp"
#include "sim/platform/platform.hpp"
#include "sim/platform/workload.hpp"
#include "sim/training/training_config.hpp"
#include "sim/training/training_result.hpp"
#include "sim/training/training_simulation.hpp"
#include "sim/training/step_iterations.hpp"
#include "sim/training/training_step.hpp"

namespace clustersim::training {

/// Copies the peak stage of a footprint into a result's memory report.
void fill_memory_report(const models::StageFootprint& peak, double capacity_bytes, MemoryReport& report);

/// Fills result.run for a run of train_tokens tokens (nothing when train_tokens <= 0) from the
/// step time, throughput, GPUs and (when computed) the power and cost reports.
void fill_run_report(double train_tokens, TrainingResult& result);

/// What one device of the step's critical stage did, for power: kernels for its compute and
/// optimizer time, collectives alone for its exposed communication, waiting for the rest
/// (bubble, host dispatch, offload), and the step's hardware FLOPs per device on the matrix
/// units in the workload's precision.
models::DeviceActivity step_activity(const TrainingWorkload& workload, const TrainingResult& result);
/// The step's power, energy and cost on `platform` (platform::period_energy over step_activity).
/// Precondition: platform::has_power_data(platform).
platform::PeriodEnergy step_energy(const TrainingWorkload& workload, const platform::Platform& platform,
                                   const TrainingResult& result);

/// The goodput of a long run of the job under `failures`: its GPUs, hosts and NICs, and a
/// checkpoint of every rank's weights and optimizer state (the footprint's stages; each
/// weight and optimizer shard written once).
models::GoodputReport training_goodput(const models::FailureSpec& failures, const TrainingWorkload& workload,
                                       const models::TrainingFootprint& footprint, int per_node, int nics_per_node);

/// One training job on a platform.
class TrainingJob final : public platform::Workload {
 public:
  /// Checks the memory footprint (models::DoesNotFitError when it exceeds device memory and
  /// the workload enforces the fit) and prepares the step. `workload` and `platform` must
  /// outlive the job.
  TrainingJob(const TrainingWorkload& workload, const platform::Platform& platform,
              const platform::Allocation& allocation, const platform::SessionOptions& options);

  void start(platform::Session& session, std::function<void()> on_done) override;
  /// The step's TrainingResult with its memory, offload, power, cost and run reports.
  std::unique_ptr<platform::WorkloadResult> finish(platform::Session& session) override;

 private:
  const TrainingWorkload& workload_;
  const platform::Platform& platform_;
  models::FootprintInputs inputs_;
  models::TrainingFootprint footprint_;
  TrainingSetup setup_;
  platform::SessionOptions options_;  ///< the run's: its failures, and the sessions a step runs alone in
  IterationSettings iteration_settings_;
  std::unique_ptr<TrainingStep> step_;
  std::vector<std::string> mode_notes_;  ///< why the mode differs from simulation.mode
};

}  // namespace clustersim::training
