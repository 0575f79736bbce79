#pragma once
/// The task graph of one training step: every pipeline stage's representative rank with its
/// compute stream (kernels and blocking TP collectives, in Megatron's order), side streams for
/// overlapped TP and CP communication, send streams toward the next and previous stage, and
/// data-parallel streams. Communication tasks run as the communication runtime says (closed
/// form or flows; symmetric mode) or are fixed template tasks whose groups the executor
/// synchronises (full mode).
#include <cstdint>
#include <vector>

#include "models/comm/collective_kind.hpp"
#include "sim/exec/task_graph.hpp"
#include "sim/platform/comm_runtime.hpp"
#include "sim/training/rank_layout.hpp"
#include "sim/training/stage_program.hpp"

namespace clustersim::training {

struct TrainingSetup;

/// Which process group a synchronising task of the full-mode template spans.
enum class GroupDimension : std::uint8_t { none, tensor, context, expert, data, expert_data, pipeline };

/// The group collective a template task stands for (full mode).
struct GroupCollective {
  GroupDimension dimension = GroupDimension::none;
  models::CollectiveKind kind = models::CollectiveKind::all_reduce;
  double bytes = 0;
  int stage = 0;
  int to_stage = -1;  ///< pipeline sends: the receiving stage
};

/// The streams of one pipeline stage's rank.
struct StageStreams {
  exec::StreamId compute = -1;       ///< kernels, blocking collectives, the optimizer
  std::vector<exec::StreamId> all;   ///< compute first, then every other stream of the stage
  std::vector<exec::StreamId> sends;  ///< the pipeline send streams (next, previous)
  exec::StreamId host = -1;           ///< the host issuing the ops (-1: host dispatch not modelled)
};

/// A built step: the graph (device d = pipeline stage d), its stages' streams and, in full
/// mode, the group of every synchronising task.
struct StepGraph {
  exec::TaskGraph graph;
  std::vector<StageStreams> stages;
  /// By task id (shorter: none): the group of every collective, in both modes (full mode
  /// synchronises its instances on them; the variability draws of symmetric mode read them).
  std::vector<GroupCollective> collectives;
  /// By task id (shorter: elementwise): the class of each compute kernel built from a stage op.
  std::vector<KernelClass> kernel_classes;
  /// The group collective of `task` (dimension none for tasks that are not one).
  const GroupCollective& collective(exec::TaskId task) const {
    static const GroupCollective none{};
    const auto t = static_cast<std::size_t>(task);
    return t < collectives.size() ? collectives[t] : none;
  }
  /// The kernel class of `task` (elementwise for tasks not built from a stage op).
  KernelClass kernel_class(exec::TaskId task) const {
    const auto t = static_cast<std::size_t>(task);
    return t < kernel_classes.size() ? kernel_classes[t] : KernelClass::elementwise;
  }
};

/// The accelerators of a template task's group collective `info` for full-mode instance
/// `instance` (replica_of): its tensor, context, expert, data or expert-data group on
/// info.stage, or the pipeline pair (stage, to_stage); none for dimension none.
std::vector<int> group_members(const ParallelismConfig& par, const RankLayout& layout, const GroupCollective& info,
                               int instance);

/// Builds one step's graph from the stages' programs. Symmetric mode (`full` false): every
/// communication task runs as `comm` answers for the representative's group and every other
/// replica group that loads the network with it (replica groups inside one scale-up domain are
/// skipped: each GPU has its own NVLink ports). Full mode: the graph is the template each
/// (tp, cp, dp) replica runs, with fixed-duration collectives marked for synchronisation.
StepGraph build_step_graph(const TrainingSetup& setup, const std::vector<StageProgram>& programs,
                           platform::CommRuntime& comm, bool full);

}  // namespace clustersim::training
