#pragma once
/// Where each pipeline stage's wall time goes, watched while the step runs (an executor
/// observer): every instance (replica) and stage keeps its own account, so full mode finds its
/// critical rank without running the step again.
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/observer.hpp"
#include "sim/training/step_graph.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::training {

/// Attributes every picosecond from the run start to the end of a stage's last task: busy time
/// of its compute stream by task kind (compute and recompute -> compute_s, tp_comm, cp_comm,
/// ep_comm, optimizer); each idle gap before a compute-stream task by the prerequisite whose
/// end released it: a pp_comm transfer -> exposed_pp_s for the part while it was in flight and
/// bubble_s before it started (waiting for the upstream stage), a dp_comm task -> exposed_dp_s
/// (tp, cp, ep likewise; an offload transfer -> offload_s; the host's wait before the optimizer ->
/// exposed_host_s while it issued, the rest by what it waited for; a task not yet issued when
/// ready (Task::release_ps) -> exposed_host_s until its issue), none (it waited for its stream, or for the other members of its
/// group) -> bubble_s; the tail after the compute stream's last task by the kind of the
/// stage's last-finishing task (its streams in StageStreams::all order on a tie). The parts
/// add up to the stage's end time (exactly, in picoseconds).
class StepBreakdownObserver final : public exec::ExecutionObserver {
 public:
  /// Watches `instances` replicas of a graph with `stages`' streams (of `stream_count` streams
  /// in all) from `start_ps`.
  StepBreakdownObserver(const std::vector<StageStreams>& stages, std::size_t stream_count, int instances,
                        engine::TimePs start_ps);

  void on_task_start(const exec::TaskEvent& event) override;
  void on_task_end(const exec::TaskEvent& event) override;

  /// The breakdown of `stage` of `instance` once the run is over: `graph` is the graph the run
  /// executed and `run` its result (each stream's last task and its end give the tail).
  StepBreakdown breakdown(int instance, int stage, const exec::TaskGraph& graph,
                          const exec::ExecutionResult& run) const;

 private:
  struct Account {
    engine::TimePs previous_end = 0;  ///< end of the compute stream's last task
    engine::TimePs compute = 0, tp = 0, cp = 0, ep = 0, pp = 0, dp = 0, bubble = 0, optimizer = 0, offload = 0, host = 0;
  };
  /// What the observer keeps of a stream: nothing, its compute account, or (pipeline sends)
  /// the start of its last ended task, which a gap it causes is split at.
  enum class Watch : std::uint8_t { none, compute, send, host };
  void attribute_gap(Account& account, engine::TimePs gap, std::uint8_t kind) const;
  /// Attributes the gap from the account's previous end to `until` to what released the task.
  void attribute_cause(Account& account, const exec::TaskEvent& event, engine::TimePs until);
  std::size_t account_index(int instance, int stage) const {
    return static_cast<std::size_t>(stage) * instances_ + static_cast<std::size_t>(instance);
  }
  std::size_t stream_index(int instance, exec::StreamId stream) const {
    return static_cast<std::size_t>(stream) * instances_ + static_cast<std::size_t>(instance);
  }

  std::vector<StageStreams> stages_;
  engine::TimePs run_start_ = 0;  ///< the executor's start: release times count from it
  std::size_t instances_ = 1;
  std::vector<int> compute_stage_;  ///< per stream: the stage it is the compute stream of, or -1
  std::vector<Watch> watch_;        ///< per stream
  std::vector<Account> accounts_;
  std::vector<engine::TimePs> ended_start_;  ///< per send stream x instance: its last ended task's start
  /// Per host stream x instance: its last started task's start, and the kind of the task that
  /// released it (kNoCause: its stream, i.e. the host was busy issuing the ops before it).
  std::vector<engine::TimePs> host_start_;
  std::vector<std::uint8_t> host_cause_;
  static constexpr std::uint8_t kNoCause = 0xff;
};

}  // namespace clustersim::training
