#pragma once
/// Where each pipeline stage's wall time goes, watched while the step runs (an executor
/// observer): every instance (replica) and stage keeps its own account, so full mode finds its
/// critical rank without running the step again.
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/exec/observer.hpp"
#include "sim/training/step_graph.hpp"
#include "sim/training/training_result.hpp"

namespace clustersim::training {

/// Attributes every picosecond from the run start to the end of a stage's last task: busy time
/// of its compute stream by task kind (compute and recompute -> compute_s, tp_comm, cp_comm,
/// ep_comm, optimizer); each idle gap before a compute-stream task by the prerequisite whose
/// end released it: a pp_comm transfer -> exposed_pp_s for the part while it was in flight and
/// bubble_s before it started (waiting for the upstream stage), a dp_comm task -> exposed_dp_s
/// (tp, cp, ep likewise; an offload transfer -> offload_s), none (it waited for its stream, or for the other members of its
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

  /// The breakdown of `stage` of `instance` once the run is over.
  StepBreakdown breakdown(int instance, int stage) const;

 private:
  struct Account {
    engine::TimePs previous_end = 0;  ///< end of the compute stream's last task
    engine::TimePs compute = 0, tp = 0, cp = 0, ep = 0, pp = 0, dp = 0, bubble = 0, optimizer = 0, offload = 0;
  };
  /// Per stream x instance: the last ended task's start, end and kind.
  struct StreamState {
    engine::TimePs ended_start = 0;
    engine::TimePs ended_end = -1;
    std::uint8_t ended_kind = 0;
  };
  void attribute_gap(Account& account, engine::TimePs gap, std::uint8_t kind) const;
  std::size_t account_index(int instance, int stage) const {
    return static_cast<std::size_t>(stage) * instances_ + static_cast<std::size_t>(instance);
  }
  std::size_t stream_index(int instance, exec::StreamId stream) const {
    return static_cast<std::size_t>(stream) * instances_ + static_cast<std::size_t>(instance);
  }

  std::vector<StageStreams> stages_;
  std::size_t instances_ = 1;
  std::vector<int> compute_stage_;  ///< per stream: the stage it is the compute stream of, or -1
  std::vector<Account> accounts_;
  std::vector<StreamState> streams_;
};

}  // namespace clustersim::training
