#pragma once
/// One training step running in a platform session: its task graph on an executor of the
/// session's engine, its communication through the session's runtime (sharing the network with
/// whatever else runs there), watched by the breakdown observer.
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "sim/exec/executor.hpp"
#include "sim/platform/session.hpp"
#include "sim/platform/workload.hpp"
#include "sim/training/stage_program.hpp"
#include "sim/training/step_breakdown.hpp"
#include "sim/training/step_graph.hpp"
#include "sim/training/training_result.hpp"
#include "sim/training/training_simulation.hpp"

namespace clustersim::training {

/// A platform::Workload of one optimizer step (see simulate_training_step for the modes).
class TrainingStep final : public platform::Workload {
 public:
  /// Validates the setup and costs the stages' programs. The setup's references must outlive
  /// the step. Throws ConfigError / SimulationError.
  explicit TrainingStep(const TrainingSetup& setup);
  ~TrainingStep() override;

  /// Builds the graph on the session's communication runtime and starts it; `on_done` is
  /// called when its last task ends (the link traffic of the step is read then).
  void start(platform::Session& session, std::function<void()> on_done) override;
  /// result() as a WorkloadResult.
  std::unique_ptr<platform::WorkloadResult> finish(platform::Session& session) override;
  /// The step's result once the engine drained. Throws SimulationError for a deadlock or a
  /// step of zero time.
  TrainingResult result(platform::Session& session);
  /// The step time alone once the engine drained (all that a setup with step_time_only
  /// gives). Throws SimulationError as result() does.
  double step_time_s() const;

  const std::vector<StageProgram>& programs() const { return programs_; }
  /// The step's graph (once started).
  const StepGraph& step_graph() const { return step_; }
  /// The executor options the step ran with (compute sharing; full mode: its draws).
  exec::ExecutionOptions execution_options() const;
  /// Every task's nominal duration: a fixed task's own, an asynchronous one's as it ran in
  /// instance 0 (needs TrainingSetup::record_task_times; SimulationError otherwise or before
  /// the run ended).
  std::vector<engine::TimePs> nominal_durations() const;

 private:
  exec::Replication replication(platform::CommRuntime& comm, int instances) const;
  void apply_speeds(int instances);

  const TrainingSetup& setup_;
  std::vector<StageProgram> programs_;
  StepGraph step_;
  std::unique_ptr<exec::Executor> executor_;
  std::unique_ptr<StepBreakdownObserver> breakdown_;
  std::unique_ptr<exec::TaskCountObserver> progress_;  ///< only when the session reports progress
  std::unique_ptr<exec::TaskTimesRecorder> task_times_;  ///< only with TrainingSetup::record_task_times
  std::optional<topologies::LinkTraffic> step_traffic_;
  int instances_ = 1;
};

}  // namespace clustersim::training
