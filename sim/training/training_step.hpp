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

/// A platform::Workload of one optimizer step. Full mode runs every (tp, cp, dp) replica of the
/// pipeline as an instance of the same task graph (exec::Replication): every rank has its own
/// streams and each collective starts when all its member ranks reach it, so a straggler holds
/// up its groups; on a homogeneous cluster it reproduces symmetric mode. Symmetric mode
/// simulates one representative rank per pipeline stage (collectives costed on the real rank
/// groups). Under the session's flow fidelity every collective of the representative ranks is
/// started together with the same collective of every other replica group (so the network
/// carries the whole job's traffic), except replica groups that stay inside one scale-up
/// domain: each GPU has its own NVLink ports, so those use links disjoint from the
/// representative's and are skipped; the result then carries a per-tier link utilisation
/// summary.
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

/// Makes a fresh session for a step that runs alone (the throttle calibration, full mode's
/// iterations): TrainingJob's makes one on its platform with the run's options (fidelity, link
/// faults, limits).
using SessionFactory = std::function<std::unique_ptr<platform::Session>()>;

/// Runs `setup`'s step on `session` (on which nothing else runs) until the engine drains and
/// returns its result. Throws ConfigError for an invalid setup, SimulationError when the task
/// graph cannot complete, EventLimitError past the session's limits.
TrainingResult run_step(const TrainingSetup& setup, platform::Session& session);

/// The step time alone of run_step (the setup with step_time_only; the session records no link
/// utilisation): what each iteration of a tail study reads.
double run_step_time(const TrainingSetup& setup, platform::Session& session);

}  // namespace clustersim::training
